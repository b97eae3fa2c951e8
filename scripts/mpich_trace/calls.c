/* Every collective a commcost MPICH selection file prices, once per message size given on the
 * command line, plus MPI_Comm_split, MPI_Comm_dup, a user-defined MPI_Op and MPI_IN_PLACE
 * variants, and once each the collectives the file leaves to MPICH's own table (v-variants,
 * reduce_scatter, scan, non-blocking ones, an intercommunicator); built and run by
 * scripts/mpich_check.sh.
 *
 * Before each call it passes a description of the call to commcost_mark(), which does nothing:
 * the check runs every rank under gdb with a dprintf on commcost_mark and on the entry of each
 * MPICH algorithm function, so the trace shows which algorithm ran for which call.
 * A description: `<collective> comm_size=P count=C type_size=T op=builtin|user
 * inplace=yes|no` (the attributes MPICH's selection keys read).
 *
 * Message sizes are in bytes: the buffer of bcast, reduce, allreduce; the per-pair block of
 * alltoall; for allgather, gather and scatter the total (count = size / P, at least 1).
 * Buffers hold unsigned chars (MPI_UNSIGNED_CHAR, MPI_SUM), so a count is a byte count. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char description[256];

void __attribute__((noinline)) commcost_mark(const char *what)
{
    __asm__ volatile("" : : "r"(what) : "memory");
}

static void mark(const char *collective, MPI_Comm comm, long count, const char *op,
                 int inplace)
{
    int p;
    MPI_Comm_size(comm, &p);
    snprintf(description, sizeof description,
             "%s comm_size=%d count=%ld type_size=1 op=%s inplace=%s", collective, p, count, op,
             inplace ? "yes" : "no");
    commcost_mark(description);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void) type;
    unsigned char *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (unsigned char) (a[i] + b[i]);
}

static void check(int err, const char *what)
{
    if (err != MPI_SUCCESS) {
        fprintf(stderr, "%s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* every priced collective on `comm` with a message of `size` bytes */
static void collectives(MPI_Comm comm, long size, unsigned char *a, unsigned char *b,
                        MPI_Op user)
{
    int p, rank;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int n = (int) size;
    int per = (int) (size / p > 0 ? size / p : 1);
    const MPI_Datatype u8 = MPI_UNSIGNED_CHAR;

    mark("bcast", comm, n, "builtin", 0);
    check(MPI_Bcast(a, n, u8, 0, comm), "MPI_Bcast");

    mark("reduce", comm, n, "builtin", 0);
    check(MPI_Reduce(a, b, n, u8, MPI_SUM, 0, comm), "MPI_Reduce");
    mark("reduce", comm, n, "user", 0);
    check(MPI_Reduce(a, b, n, u8, user, 0, comm), "MPI_Reduce (user op)");
    /* in place at the root (the inplace attribute is the root's) */
    mark("reduce", comm, n, "builtin", rank == 0);
    check(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : a, rank == 0 ? a : NULL, n, u8, MPI_SUM, 0, comm),
          "MPI_Reduce (in place)");

    mark("allreduce", comm, n, "builtin", 0);
    check(MPI_Allreduce(a, b, n, u8, MPI_SUM, comm), "MPI_Allreduce");
    mark("allreduce", comm, n, "user", 0);
    check(MPI_Allreduce(a, b, n, u8, user, comm), "MPI_Allreduce (user op)");
    mark("allreduce", comm, n, "builtin", 1);
    check(MPI_Allreduce(MPI_IN_PLACE, b, n, u8, MPI_SUM, comm), "MPI_Allreduce (in place)");

    mark("alltoall", comm, n, "none", 0);
    check(MPI_Alltoall(a, n, u8, b, n, u8, comm), "MPI_Alltoall");
    mark("alltoall", comm, n, "none", 1);
    check(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, u8, comm),
          "MPI_Alltoall (in place)");

    mark("allgather", comm, per, "none", 0);
    check(MPI_Allgather(a, per, u8, b, per, u8, comm), "MPI_Allgather");
    mark("allgather", comm, per, "none", 1);
    check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, per, u8, comm),
          "MPI_Allgather (in place)");

    mark("gather", comm, per, "none", 0);
    check(MPI_Gather(a, per, u8, b, per, u8, 0, comm), "MPI_Gather");
    mark("scatter", comm, per, "none", 0);
    check(MPI_Scatter(a, per, u8, b, per, u8, 0, comm), "MPI_Scatter");

    mark("barrier", comm, 0, "none", 0);
    check(MPI_Barrier(comm), "MPI_Barrier");
}

/* The collectives the file leaves to MPICH's own table (and an intercommunicator): MPICH
 * fails an assertion on a collective its selection file does not cover, so each is called once
 * at `size` bytes. */
static void others(long size, unsigned char *a, unsigned char *b, MPI_Op user)
{
    int p, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = (int) size, per = (int) (size / p > 0 ? size / p : 1);
    int *counts = malloc(sizeof(int) * (size_t) p), *displs = malloc(sizeof(int) * (size_t) p);
    if (!counts || !displs)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (int i = 0; i < p; i++) {
        counts[i] = per;
        displs[i] = i * per;
    }
    const MPI_Datatype u8 = MPI_UNSIGNED_CHAR;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request r;
    mark("other allgatherv", w, per, "none", 0);
    check(MPI_Allgatherv(a, per, u8, b, counts, displs, u8, w), "MPI_Allgatherv");
    mark("other alltoallv", w, per, "none", 0);
    check(MPI_Alltoallv(a, counts, displs, u8, b, counts, displs, u8, w), "MPI_Alltoallv");
    mark("other gatherv", w, per, "none", 0);
    check(MPI_Gatherv(a, per, u8, b, counts, displs, u8, 0, w), "MPI_Gatherv");
    mark("other scatterv", w, per, "none", 0);
    check(MPI_Scatterv(a, counts, displs, u8, b, per, u8, 0, w), "MPI_Scatterv");
    mark("other reduce_scatter", w, per, "builtin", 0);
    check(MPI_Reduce_scatter(a, b, counts, u8, MPI_SUM, w), "MPI_Reduce_scatter");
    mark("other reduce_scatter_block", w, per, "user", 0);
    check(MPI_Reduce_scatter_block(a, b, per, u8, user, w), "MPI_Reduce_scatter_block");
    mark("other scan", w, n, "builtin", 0);
    check(MPI_Scan(a, b, n, u8, MPI_SUM, w), "MPI_Scan");
    mark("other exscan", w, n, "builtin", 0);
    check(MPI_Exscan(a, b, n, u8, MPI_SUM, w), "MPI_Exscan");
    mark("other iallreduce", w, n, "builtin", 0);
    check(MPI_Iallreduce(a, b, n, u8, MPI_SUM, w, &r), "MPI_Iallreduce");
    check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    mark("other ibcast", w, n, "none", 0);
    check(MPI_Ibcast(a, n, u8, 0, w, &r), "MPI_Ibcast");
    check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    mark("other ibarrier", w, 0, "none", 0);
    check(MPI_Ibarrier(w, &r), "MPI_Ibarrier");
    check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    mark("other ialltoall", w, per, "none", 0);
    check(MPI_Ialltoall(a, per, u8, b, per, u8, w, &r), "MPI_Ialltoall");
    check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    /* an intercommunicator between the even and the odd ranks */
    MPI_Comm half, inter;
    mark("other comm_split", w, 0, "none", 0);
    check(MPI_Comm_split(w, rank % 2, rank, &half), "MPI_Comm_split");
    mark("other intercomm_create", w, 0, "none", 0);
    check(MPI_Intercomm_create(half, 0, w, rank % 2 ? 0 : 1, 7, &inter),
          "MPI_Intercomm_create");
    int root = rank % 2 ? 0 : (rank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    mark("other inter_bcast", w, n, "none", 0);
    check(MPI_Bcast(a, n, u8, root, inter), "MPI_Bcast (intercommunicator)");
    mark("other inter_allreduce", w, n, "builtin", 0);
    check(MPI_Allreduce(a, b, n, u8, MPI_SUM, inter), "MPI_Allreduce (intercommunicator)");
    mark("other inter_barrier", w, 0, "none", 0);
    check(MPI_Barrier(inter), "MPI_Barrier (intercommunicator)");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    free(counts);
    free(displs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long max = 1;
    for (int i = 1; i < argc; i++) {
        long s = atol(argv[i]);
        if (s < 1 || s > (1L << 24)) {
            if (rank == 0)
                fprintf(stderr, "message size %s not in 1..16777216\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (s > max)
            max = s;
    }
    /* alltoall needs P blocks of the largest size */
    size_t bytes = (size_t) max * (size_t) p;
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b)
        MPI_Abort(MPI_COMM_WORLD, 3);
    memset(a, 1, bytes);
    memset(b, 0, bytes);
    MPI_Op user;
    MPI_Op_create(user_sum, 1, &user);

    /* communicator management, which runs collectives inside MPICH */
    MPI_Comm dup, split;
    mark("comm_dup", MPI_COMM_WORLD, 0, "none", 0);
    check(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
    /* ranks 0 .. P-2 together, the last alone: a communicator of P - 1 */
    mark("comm_split", MPI_COMM_WORLD, 0, "none", 0);
    check(MPI_Comm_split(MPI_COMM_WORLD, rank == p - 1, rank, &split), "MPI_Comm_split");
    int split_size;
    MPI_Comm_size(split, &split_size);

    for (int i = 1; i < argc; i++) {
        long s = atol(argv[i]);
        collectives(MPI_COMM_WORLD, s, a, b, user);
        if (i == 1) /* a duplicate decides as its parent: once is enough */
            collectives(dup, s, a, b, user);
        if (split_size >= 2)
            collectives(split, s, a, b, user);
    }
    others(1, a, b, user);
    others(max, a, b, user);
    commcost_mark("end");
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Op_free(&user);
    free(a);
    free(b);
    if (rank == 0)
        printf("calls done on %d ranks, %d message sizes\n", p, argc - 1);
    MPI_Finalize();
    return 0;
}
