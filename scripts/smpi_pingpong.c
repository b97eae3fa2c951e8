/* Half round trip of a ping-pong between ranks 0 and 1, averaged over 20 round trips after one
 * warm-up, for message sizes given on the command line: `size seconds` per line from rank 0.
 * scripts/simgrid_check.sh runs it under SimGrid's smpirun on a platform written by
 * `commcost export simgrid`. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *buf = malloc(4 << 20);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  const int reps = 20;
  for (int k = 1; k < argc; k++) {
    int n = atoi(argv[k]);
    if (n < 0 || n > (4 << 20)) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = 0;
    for (int r = -1; r < reps; r++) {
      if (r == 0) t0 = MPI_Wtime();
      if (rank == 0) { MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD); MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
      else { MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD); }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0) printf("%d %.9e\n", n, t / (2.0 * reps));
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
