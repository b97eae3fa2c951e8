/*
 * Calls each collective that Open MPI's tuned component decides (allgather, allreduce,
 * alltoall, barrier, bcast, gather, reduce, reduce_scatter, reduce_scatter_block, scatter) once
 * per message size given on the command line, so that scripts/ompi_rules_check.sh can see,
 * through the ompi-trace shim, which algorithm Open MPI ran for each size.
 *
 * Sizes are in Open MPI's rules-file lookup convention (bytes, MPI_BYTE elements):
 * allreduce, bcast, reduce, reduce_scatter: count = size; allgather, alltoall, gather,
 * scatter, reduce_scatter_block: block count = size / comm size (the lookup size is then comm
 * size x block count; the shim records the size Open MPI actually looked up). Reductions use
 * MPI_BOR on MPI_BYTE.
 * Every rank passes the same send count and type (even where MPI ignores them off the root),
 * so that every rank's lookup gives the same algorithm.
 *
 * Usage: mpirun -np P calls SIZE...   (built at run time: mpicc -O1 -o calls calls.c)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int p, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t max = 0;
    for (int i = 1; i < argc; i++) {
        size_t s = strtoull(argv[i], NULL, 10);
        if (s > max) max = s;
    }
    /* alltoall and gather/scatter receive buffers hold comm size x per-rank count <= max */
    size_t cap = max + (size_t)p + 64;
    char *a = calloc(cap, 1), *b = calloc(cap, 1);
    int *rcounts = calloc((size_t)p, sizeof(int));
    if (!a || !b || !rcounts) {
        fprintf(stderr, "calls: out of memory for %zu bytes\n", cap);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 1; i < argc; i++) {
        size_t s = strtoull(argv[i], NULL, 10);
        int n = (int)s, per = (int)(s / (size_t)p);
        MPI_Allreduce(a, b, n, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
        MPI_Bcast(a, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Reduce(a, b, n, MPI_BYTE, MPI_BOR, 0, MPI_COMM_WORLD);
        for (int r = 0; r < p; r++) rcounts[r] = per + (r < (int)(s % (size_t)p) ? 1 : 0);
        MPI_Reduce_scatter(a, b, rcounts, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
        MPI_Reduce_scatter_block(a, b, per, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
        MPI_Allgather(a, per, MPI_BYTE, b, per, MPI_BYTE, MPI_COMM_WORLD);
        MPI_Alltoall(a, per, MPI_BYTE, b, per, MPI_BYTE, MPI_COMM_WORLD);
        MPI_Gather(a, per, MPI_BYTE, b, per, MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Scatter(a, per, MPI_BYTE, b, per, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(a);
    free(b);
    free(rcounts);
    MPI_Finalize();
    return 0;
}
