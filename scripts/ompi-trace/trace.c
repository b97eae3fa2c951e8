/*
 * LD_PRELOAD shim that records which Open MPI coll_base algorithm runs.
 *
 * Open MPI's tuned component (mca_coll_tuned.so) chooses an algorithm and calls the matching
 * exported function `ompi_coll_base_<collective>_intra_<algorithm>` of libmpi.so through the
 * PLT, so a preloaded library that defines the same symbol sees every call and forwards it to
 * the real one with dlsym(RTLD_NEXT). Each call appends one line to $COMMCOST_OMPI_TRACE.<pid>:
 *
 *   collective algorithm_id function comm_size rank lookup_bytes segsize fanout depth
 *
 * algorithm_id is the tuned component's number for the function (coll_tuned_<c>_algorithm);
 * lookup_bytes is the message size the tuned component's rules-file lookup uses for that
 * collective (allreduce, bcast, reduce: type size x count; allgather, alltoall, gather,
 * scatter: type size x sendcount x comm size; reduce_scatter: type size x sum of recvcounts;
 * reduce_scatter_block: type size x recvcount x comm size;
 * barrier: 0); segsize and fanout are the arguments the tuned component passed (-1 where the
 * function takes none); depth is 0 for a call made by the tuned component's decision and > 0
 * for a call made from inside another algorithm (internal fallbacks, allreduce built from
 * reduce + bcast, ...).
 *
 * Built at run time by scripts/ompi_rules_check.sh and scripts/ompi_collectives_sweep.sh:
 *   mpicc -shared -fPIC -O2 -o trace.so trace.c -ldl
 * Open MPI's public mpi.h gives the handle types; no Open MPI internal header is needed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static FILE *trace_file;
static __thread int depth;

static FILE *out(void) {
    if (!trace_file) {
        const char *prefix = getenv("COMMCOST_OMPI_TRACE");
        char path[4096];
        if (!prefix || !*prefix) return NULL;
        snprintf(path, sizeof path, "%s.%ld", prefix, (long)getpid());
        trace_file = fopen(path, "a");
    }
    return trace_file;
}

__attribute__((destructor)) static void close_trace(void) {
    if (trace_file) fclose(trace_file);
    trace_file = NULL;
}

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "ompi-trace: %s not found in the libraries after the shim\n", name);
        abort();
    }
    return f;
}

static size_t tsize(MPI_Datatype t) {
    int s = 0;
    if (t == MPI_DATATYPE_NULL || MPI_Type_size(t, &s) != MPI_SUCCESS || s < 0) return 0;
    return (size_t)s;
}

static void record(const char *coll, int id, const char *fn, MPI_Comm comm, size_t bytes,
                   long segsize, long fanout) {
    int p = 0, r = 0;
    FILE *f = out();
    if (!f) return;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    fprintf(f, "%s %d %s %d %d %zu %ld %ld %d\n", coll, id, fn, p, r, bytes, segsize, fanout,
            depth);
}

#define CALL(type, fn, ...)                                 \
    static type real_fn;                                    \
    int rc;                                                 \
    if (!real_fn) real_fn = (type)real(#fn);                \
    depth++;                                                \
    rc = real_fn(__VA_ARGS__);                              \
    depth--;                                                \
    return rc;

/* allgather, alltoall: lookup size = type size x sendcount x comm size */
#define A2A_ARGS const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, \
                 MPI_Comm comm, void *module
#define A2A_CALL sb, sc, st, rb, rc_, rt, comm, module
typedef int (*a2a_t)(A2A_ARGS);
#define WRAP_A2A(coll, id, name)                                                            \
    int ompi_coll_base_##coll##_intra_##name(A2A_ARGS) {                                    \
        int p = 0;                                                                          \
        MPI_Comm_size(comm, &p);                                                            \
        record(#coll, id, #name, comm, tsize(st) * (size_t)sc * (size_t)p, -1, -1);         \
        CALL(a2a_t, ompi_coll_base_##coll##_intra_##name, A2A_CALL)                         \
    }
WRAP_A2A(allgather, 1, basic_linear)
WRAP_A2A(allgather, 2, bruck)
WRAP_A2A(allgather, 3, recursivedoubling)
WRAP_A2A(allgather, 4, ring)
WRAP_A2A(allgather, 5, neighborexchange)
WRAP_A2A(allgather, 6, two_procs)
WRAP_A2A(alltoall, 1, basic_linear)
WRAP_A2A(alltoall, 2, pairwise)
WRAP_A2A(alltoall, 3, bruck)
WRAP_A2A(alltoall, 5, two_procs)

typedef int (*a2a_sync_t)(A2A_ARGS, int);
int ompi_coll_base_alltoall_intra_linear_sync(A2A_ARGS, int max_requests) {
    int p = 0;
    MPI_Comm_size(comm, &p);
    record("alltoall", 4, "linear_sync", comm, tsize(st) * (size_t)sc * (size_t)p, -1, -1);
    CALL(a2a_sync_t, ompi_coll_base_alltoall_intra_linear_sync, A2A_CALL, max_requests)
}

/* gather, scatter: lookup size = type size x sendcount x comm size */
#define ROOTED_ARGS const void *sb, int sc, MPI_Datatype st, void *rb, int rc_, MPI_Datatype rt, \
                    int root, MPI_Comm comm, void *module
#define ROOTED_CALL sb, sc, st, rb, rc_, rt, root, comm, module
typedef int (*rooted_t)(ROOTED_ARGS);
typedef int (*rooted_int_t)(ROOTED_ARGS, int);
#define WRAP_ROOTED(coll, id, name)                                                         \
    int ompi_coll_base_##coll##_intra_##name(ROOTED_ARGS) {                                 \
        int p = 0;                                                                          \
        MPI_Comm_size(comm, &p);                                                            \
        record(#coll, id, #name, comm, tsize(st) * (size_t)sc * (size_t)p, -1, -1);         \
        CALL(rooted_t, ompi_coll_base_##coll##_intra_##name, ROOTED_CALL)                   \
    }
#define WRAP_ROOTED_INT(coll, id, name)                                                     \
    int ompi_coll_base_##coll##_intra_##name(ROOTED_ARGS, int extra) {                      \
        int p = 0;                                                                          \
        MPI_Comm_size(comm, &p);                                                            \
        record(#coll, id, #name, comm, tsize(st) * (size_t)sc * (size_t)p, -1, -1);         \
        CALL(rooted_int_t, ompi_coll_base_##coll##_intra_##name, ROOTED_CALL, extra)        \
    }
WRAP_ROOTED(gather, 1, basic_linear)
WRAP_ROOTED(gather, 2, binomial)
WRAP_ROOTED_INT(gather, 3, linear_sync)
WRAP_ROOTED(scatter, 1, basic_linear)
WRAP_ROOTED(scatter, 2, binomial)
WRAP_ROOTED_INT(scatter, 3, linear_nb)

/* allreduce: lookup size = type size x count */
#define AR_ARGS const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, \
                void *module
#define AR_CALL sb, rb, count, dt, op, comm, module
typedef int (*ar_t)(AR_ARGS);
typedef int (*ar_seg_t)(AR_ARGS, unsigned int);
#define WRAP_AR(id, name)                                                                   \
    int ompi_coll_base_allreduce_intra_##name(AR_ARGS) {                                    \
        record("allreduce", id, #name, comm, tsize(dt) * (size_t)count, -1, -1);            \
        CALL(ar_t, ompi_coll_base_allreduce_intra_##name, AR_CALL)                          \
    }
WRAP_AR(1, basic_linear)
WRAP_AR(2, nonoverlapping)
WRAP_AR(3, recursivedoubling)
WRAP_AR(4, ring)
WRAP_AR(6, redscat_allgather)
int ompi_coll_base_allreduce_intra_ring_segmented(AR_ARGS, unsigned int segsize) {
    record("allreduce", 5, "ring_segmented", comm, tsize(dt) * (size_t)count, (long)segsize, -1);
    CALL(ar_seg_t, ompi_coll_base_allreduce_intra_ring_segmented, AR_CALL, segsize)
}

/* reduce: lookup size = type size x count */
#define RED_ARGS const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root, \
                 MPI_Comm comm, void *module
#define RED_CALL sb, rb, count, dt, op, root, comm, module
typedef int (*red_t)(RED_ARGS);
typedef int (*red_seg_t)(RED_ARGS, unsigned int, int);
typedef int (*red_chain_t)(RED_ARGS, unsigned int, int, int);
int ompi_coll_base_reduce_intra_basic_linear(RED_ARGS) {
    record("reduce", 1, "basic_linear", comm, tsize(dt) * (size_t)count, -1, -1);
    CALL(red_t, ompi_coll_base_reduce_intra_basic_linear, RED_CALL)
}
int ompi_coll_base_reduce_intra_chain(RED_ARGS, unsigned int segsize, int fanout, int maxreq) {
    record("reduce", 2, "chain", comm, tsize(dt) * (size_t)count, (long)segsize, fanout);
    CALL(red_chain_t, ompi_coll_base_reduce_intra_chain, RED_CALL, segsize, fanout, maxreq)
}
#define WRAP_RED_SEG(id, name)                                                              \
    int ompi_coll_base_reduce_intra_##name(RED_ARGS, unsigned int segsize, int maxreq) {    \
        record("reduce", id, #name, comm, tsize(dt) * (size_t)count, (long)segsize, -1);    \
        CALL(red_seg_t, ompi_coll_base_reduce_intra_##name, RED_CALL, segsize, maxreq)      \
    }
WRAP_RED_SEG(3, pipeline)
WRAP_RED_SEG(4, binary)
WRAP_RED_SEG(5, binomial)
WRAP_RED_SEG(6, in_order_binary)
int ompi_coll_base_reduce_intra_redscat_gather(RED_ARGS) {
    record("reduce", 7, "redscat_gather", comm, tsize(dt) * (size_t)count, -1, -1);
    CALL(red_t, ompi_coll_base_reduce_intra_redscat_gather, RED_CALL)
}

/* reduce_scatter: lookup size = type size x sum of recvcounts */
#define RS_ARGS const void *sb, void *rb, const int *rcounts, MPI_Datatype dt, MPI_Op op, \
                MPI_Comm comm, void *module
#define RS_CALL sb, rb, rcounts, dt, op, comm, module
typedef int (*rs_t)(RS_ARGS);
#define WRAP_RS(id, name)                                                                   \
    int ompi_coll_base_reduce_scatter_intra_##name(RS_ARGS) {                               \
        int p = 0;                                                                          \
        size_t total = 0;                                                                   \
        MPI_Comm_size(comm, &p);                                                            \
        for (int i = 0; i < p; i++) total += (size_t)rcounts[i];                            \
        record("reduce_scatter", id, #name, comm, tsize(dt) * total, -1, -1);               \
        CALL(rs_t, ompi_coll_base_reduce_scatter_intra_##name, RS_CALL)                     \
    }
WRAP_RS(1, nonoverlapping)
WRAP_RS(2, basic_recursivehalving)
WRAP_RS(3, ring)
WRAP_RS(4, butterfly)

/* barrier: lookup size 0 */
typedef int (*bar_t)(MPI_Comm, void *);
#define WRAP_BAR(id, name)                                                                  \
    int ompi_coll_base_barrier_intra_##name(MPI_Comm comm, void *module) {                  \
        record("barrier", id, #name, comm, 0, -1, -1);                                      \
        CALL(bar_t, ompi_coll_base_barrier_intra_##name, comm, module)                      \
    }
WRAP_BAR(1, basic_linear)
WRAP_BAR(2, doublering)
WRAP_BAR(3, recursivedoubling)
WRAP_BAR(4, bruck)
WRAP_BAR(5, two_procs)
WRAP_BAR(6, tree)

/* bcast: lookup size = type size x count */
#define BC_ARGS void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, void *module
#define BC_CALL buf, count, dt, root, comm, module
typedef int (*bc_t)(BC_ARGS);
typedef int (*bc_seg_t)(BC_ARGS, unsigned int);
typedef int (*bc_seg_int_t)(BC_ARGS, unsigned int, int);
int ompi_coll_base_bcast_intra_basic_linear(BC_ARGS) {
    record("bcast", 1, "basic_linear", comm, tsize(dt) * (size_t)count, -1, -1);
    CALL(bc_t, ompi_coll_base_bcast_intra_basic_linear, BC_CALL)
}
int ompi_coll_base_bcast_intra_chain(BC_ARGS, unsigned int segsize, int chains) {
    record("bcast", 2, "chain", comm, tsize(dt) * (size_t)count, (long)segsize, chains);
    CALL(bc_seg_int_t, ompi_coll_base_bcast_intra_chain, BC_CALL, segsize, chains)
}
#define WRAP_BC_SEG(id, name)                                                               \
    int ompi_coll_base_bcast_intra_##name(BC_ARGS, unsigned int segsize) {                  \
        record("bcast", id, #name, comm, tsize(dt) * (size_t)count, (long)segsize, -1);     \
        CALL(bc_seg_t, ompi_coll_base_bcast_intra_##name, BC_CALL, segsize)                 \
    }
WRAP_BC_SEG(3, pipeline)
WRAP_BC_SEG(4, split_bintree)
WRAP_BC_SEG(5, bintree)
WRAP_BC_SEG(6, binomial)
WRAP_BC_SEG(8, scatter_allgather)
WRAP_BC_SEG(9, scatter_allgather_ring)
int ompi_coll_base_bcast_intra_knomial(BC_ARGS, unsigned int segsize, int radix) {
    record("bcast", 7, "knomial", comm, tsize(dt) * (size_t)count, (long)segsize, radix);
    CALL(bc_seg_int_t, ompi_coll_base_bcast_intra_knomial, BC_CALL, segsize, radix)
}

/* reduce_scatter_block: lookup size = type size x recvcount x comm size */
#define RSB_ARGS const void *sb, void *rb, int rcount, MPI_Datatype dt, MPI_Op op, \
                 MPI_Comm comm, void *module
#define RSB_CALL sb, rb, rcount, dt, op, comm, module
typedef int (*rsb_t)(RSB_ARGS);
#define WRAP_RSB(id, name, sym)                                                             \
    int sym(RSB_ARGS) {                                                                     \
        int p = 0;                                                                          \
        MPI_Comm_size(comm, &p);                                                            \
        record("reduce_scatter_block", id, #name, comm,                                     \
               tsize(dt) * (size_t)rcount * (size_t)p, -1, -1);                             \
        CALL(rsb_t, sym, RSB_CALL)                                                          \
    }
WRAP_RSB(1, basic_linear, ompi_coll_base_reduce_scatter_block_basic_linear)
WRAP_RSB(2, recursivedoubling, ompi_coll_base_reduce_scatter_block_intra_recursivedoubling)
WRAP_RSB(3, recursivehalving, ompi_coll_base_reduce_scatter_block_intra_recursivehalving)
WRAP_RSB(4, butterfly, ompi_coll_base_reduce_scatter_block_intra_butterfly)
