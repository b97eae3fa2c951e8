/* bcast_select: an MPI program that picks its broadcast algorithm per message size from a
 * commcost model, at run time, and runs it with its own point-to-point code.
 *
 * It calibrates nothing: it loads a model file (argv[1]; without one, the open-mpi-openib
 * preset), builds a decision table for the communicator size once, and for each message size
 * looks the algorithm up (two binary searches), broadcasts with it, checks every byte arrived
 * and prints the prediction beside the measured time.
 *
 *   cargo build --release -p commcost-capi
 *   capi/install.sh target/capi-prefix
 *   export PKG_CONFIG_PATH=$PWD/target/capi-prefix/lib/pkgconfig
 *   mpicc -O2 capi/examples/bcast_select.c $(pkg-config --cflags --libs commcost-capi) -o bcast_select
 *   LD_LIBRARY_PATH=target/capi-prefix/lib mpirun -np 4 ./bcast_select [MODEL_FILE]
 *
 * The algorithms are the textbook family (CC_FAMILY_TEXTBOOK) of commcost: linear, binomial,
 * scatter-allgather (van de Geijn: binomial scatter, ring allgather) and a pipelined chain. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commcost.h"

#define TAG 7

static void check(int rc, const char *what) {
  if (rc != CC_OK) {
    fprintf(stderr, "bcast_select: %s: error %d: %s\n", what, rc, cc_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Largest piece sent in one MPI call (MPI counts are int). */
#define MAX_CHUNK (1 << 30)

static void send_bytes(const char *buf, uint64_t n, int dest) {
  MPI_Send(buf, (int)n, MPI_BYTE, dest, TAG, MPI_COMM_WORLD);
}

static void recv_bytes(char *buf, uint64_t n, int src) {
  MPI_Recv(buf, (int)n, MPI_BYTE, src, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void bcast_linear(char *buf, uint64_t n, int rank, int p, int root) {
  if (rank == root) {
    for (int r = 0; r < p; r++)
      if (r != root) send_bytes(buf, n, r);
  } else {
    recv_bytes(buf, n, root);
  }
}

/* Binomial tree on ranks relative to the root: receive from the parent, then send to the
 * children, largest subtree first. */
static void bcast_binomial(char *buf, uint64_t n, int rank, int p, int root) {
  int rel = (rank - root + p) % p;
  int mask = 1;
  while (mask < p) {
    if (rel & mask) {
      recv_bytes(buf, n, (rank - mask + p) % p);
      break;
    }
    mask <<= 1;
  }
  mask >>= 1;
  while (mask > 0) {
    if (rel + mask < p) send_bytes(buf, n, (rank + mask) % p);
    mask >>= 1;
  }
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Bytes of chunk `i` (chunks of c bytes; the last ones may be short or empty). */
static uint64_t chunk_len(uint64_t n, uint64_t c, uint64_t i) {
  uint64_t start = c * i;
  return start >= n ? 0 : min_u64(c, n - start);
}

/* Van de Geijn: binomial scatter of ceil(n/p)-byte chunks, then a ring allgather. */
static void bcast_scatter_allgather(char *buf, uint64_t n, int rank, int p, int root) {
  int rel = (rank - root + p) % p;
  uint64_t c = (n + (uint64_t)p - 1) / (uint64_t)p;
  /* scatter: process rel ends up with chunks rel .. rel + subtree - 1 */
  int mask = 1;
  while (mask < p) {
    if (rel & mask) {
      uint64_t start = c * (uint64_t)rel;
      uint64_t len = start >= n ? 0 : min_u64(c * (uint64_t)mask, n - start);
      if (len > 0) recv_bytes(buf + start, len, (rank - mask + p) % p);
      break;
    }
    mask <<= 1;
  }
  mask >>= 1;
  while (mask > 0) {
    if (rel + mask < p) {
      uint64_t start = c * (uint64_t)(rel + mask);
      uint64_t len = start >= n ? 0 : min_u64(c * (uint64_t)mask, n - start);
      if (len > 0) send_bytes(buf + start, len, (rank + mask) % p);
    }
    mask >>= 1;
  }
  /* ring allgather: in step i send chunk rel - i to the right, receive rel - i - 1 */
  int right = (rank + 1) % p, left = (rank - 1 + p) % p;
  for (int i = 0; i < p - 1; i++) {
    uint64_t out = (uint64_t)((rel - i + p) % p), in = (uint64_t)((rel - i - 1 + p) % p);
    uint64_t out_len = chunk_len(n, c, out), in_len = chunk_len(n, c, in);
    MPI_Sendrecv(buf + c * out * (out_len > 0), (int)out_len, MPI_BYTE, right, TAG,
                 buf + c * in * (in_len > 0), (int)in_len, MPI_BYTE, left, TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  }
}

/* Pipelined chain root -> root+1 -> ...: segments of `segment` bytes, each forwarded as soon
 * as it arrived. */
static void bcast_pipelined(char *buf, uint64_t n, uint64_t segment, int rank, int p, int root) {
  int rel = (rank - root + p) % p;
  int prev = (rank - 1 + p) % p, next = (rank + 1) % p;
  if (segment == 0 || segment > MAX_CHUNK) segment = MAX_CHUNK;
  for (uint64_t off = 0; off < n || (n == 0 && off == 0); off += segment) {
    uint64_t len = min_u64(segment, n - off);
    if (rel > 0) recv_bytes(buf + off, len, prev);
    if (rel < p - 1) send_bytes(buf + off, len, next);
    if (n == 0) break;
  }
}

static void run(const CcAlgorithm *a, char *buf, uint64_t n, int rank, int p) {
  const int root = 0;
  if (strcmp(a->name, "linear") == 0) {
    bcast_linear(buf, n, rank, p, root);
  } else if (strcmp(a->name, "binomial") == 0) {
    bcast_binomial(buf, n, rank, p, root);
  } else if (strcmp(a->name, "scatter-allgather") == 0) {
    bcast_scatter_allgather(buf, n, rank, p, root);
  } else if (strncmp(a->name, "pipelined:segment=", 18) == 0) {
    bcast_pipelined(buf, n, strtoull(a->name + 18, NULL, 10), rank, p, root);
  } else {
    fprintf(stderr, "bcast_select: no implementation of `%s`\n", a->name);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  CcModel *model = NULL;
  if (argc > 1)
    check(cc_model_load(argv[1], &model), argv[1]);
  else
    check(cc_model_preset("open-mpi-openib", &model), "preset");

  /* the decision table for this communicator, computed once */
  uint64_t procs[1] = {(uint64_t)p};
  uint64_t sizes[23];
  for (int i = 0; i < 23; i++) sizes[i] = (uint64_t)1 << i; /* 1 B .. 4 MiB */
  CcTable *table = NULL;
  check(cc_table_build(model, CC_FAMILY_TEXTBOOK, CC_BCAST, procs, 1, sizes, 23, &table),
        "table");

  const uint64_t messages[] = {1, 100, 4096, 65536, 1 << 20, 4 << 20};
  const int reps = 5;
  char *buf = malloc(4 << 20);
  char *want = malloc(4 << 20);
  if (!buf || !want) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    printf("%10s  %-28s %14s %14s  %s\n", "bytes", "algorithm", "predicted_us", "measured_us",
           "mpich_name");
  int bad = 0;
  for (size_t k = 0; k < sizeof messages / sizeof messages[0]; k++) {
    uint64_t n = messages[k];
    const CcAlgorithm *a = NULL;
    check(cc_table_lookup(table, (uint64_t)p, n, &a), "lookup");
    /* the table's cost is at its grid point; price the exact size */
    CcAlgorithm priced;
    check(cc_collective_cost(model, CC_FAMILY_TEXTBOOK, CC_BCAST, a->name, (uint64_t)p, n,
                             &priced),
          "cost");
    double exact = priced.cost;
    for (uint64_t i = 0; i < n; i++) want[i] = (char)((i * 131 + k) & 0xff);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
      if (rank == 0)
        memcpy(buf, want, n);
      else
        memset(buf, 0, n);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      run(a, buf, n, rank, p);
      double t = MPI_Wtime() - t0;
      double slowest;
      MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (slowest < best) best = slowest;
      if (memcmp(buf, want, n) != 0) bad = 1;
    }
    if (rank == 0)
      printf("%10llu  %-28s %14.2f %14.2f  %s\n", (unsigned long long)n, a->name, exact * 1e6,
             best * 1e6, a->mpich_name[0] ? a->mpich_name : "-");
  }
  /* every candidate the model ranks, run once per size: each implementation is checked, not
   * only the ones the table picks on this communicator */
  int checked = 0;
  for (size_t k = 0; k < sizeof messages / sizeof messages[0]; k++) {
    uint64_t n = messages[k];
    CcAlgorithm ranked[8];
    size_t count = 0;
    check(cc_collective_rank(model, CC_FAMILY_TEXTBOOK, CC_BCAST, (uint64_t)p, n, ranked, 8,
                             &count),
          "rank");
    for (size_t i = 0; i < count; i++) {
      for (uint64_t j = 0; j < n; j++) want[j] = (char)((j * 7 + i) & 0xff);
      if (rank == 0)
        memcpy(buf, want, n);
      else
        memset(buf, 0, n);
      run(&ranked[i], buf, n, rank, p);
      if (memcmp(buf, want, n) != 0) bad = 1;
      checked++;
    }
  }
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf(any_bad ? "DATA MISMATCH\n" : "all broadcasts delivered every byte (%d runs of every candidate)\n", checked);
  free(buf);
  free(want);
  cc_table_free(table);
  cc_model_free(model);
  MPI_Finalize();
  return any_bad;
}
