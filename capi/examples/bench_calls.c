/* Calls per second of the C ABI (docs/PERFORMANCE.md; scripts/bindings_bench.sh runs it beside
 * the Rust and Python figures): the calls of bench_calls.rs through commcost.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "commcost.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void report(const char *label, double calls, double seconds) {
  printf("c    %-34s %12.3e calls/s\n", label, calls / seconds);
}

int main(void) {
  CcModel *m = NULL;
  if (cc_model_preset("open-mpi-openib", &m) != CC_OK) return 1;
  enum { N = 4096 };
  static uint64_t sizes[N];
  for (uint64_t i = 0; i < N; i++) sizes[i] = (i * 7919) % (1u << 22);
  const int rounds = 5000;
  volatile double sink = 0;
  double t0 = now();
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < N; i++) {
      double t;
      cc_p2p(m, sizes[i], &t);
      sink += t;
    }
  report("p2p (one call per size)", (double)rounds * N, now() - t0);

  const size_t big = 10000000;
  uint64_t *many = malloc(big * sizeof *many);
  double *out = malloc(big * sizeof *out);
  if (!many || !out) return 1;
  for (size_t i = 0; i < big; i++) many[i] = (i * 7919) % (1u << 22);
  t0 = now();
  cc_p2p_many(m, many, big, out);
  report("p2p_many (10 M sizes, one call)", (double)big, now() - t0);
  sink += out[big - 1];

  const int n = 20000;
  CcAlgorithm a;
  t0 = now();
  for (int i = 0; i < n; i++) cc_collective_best(m, CC_FAMILY_OMPI, CC_BCAST, 64, 65536, &a);
  report("best bcast (Open MPI, P=64, 64 KiB)", n, now() - t0);

  uint64_t procs[10], grid[23];
  for (int k = 0; k < 10; k++) procs[k] = (uint64_t)1 << (k + 1);
  for (int k = 0; k < 23; k++) grid[k] = (uint64_t)1 << k;
  CcTable *table = NULL;
  if (cc_table_build(m, CC_FAMILY_OMPI, CC_BCAST, procs, 10, grid, 23, &table) != CC_OK) return 1;
  const uint64_t lookups = 20000000;
  const CcAlgorithm *cell = NULL;
  uint64_t ids = 0;
  t0 = now();
  for (uint64_t i = 0; i < lookups; i++) {
    cc_table_lookup(table, 1 + (i & 1023), i & 0x3fffff, &cell);
    ids += cell->ompi_id;
  }
  report("table lookup", (double)lookups, now() - t0);
  sink += (double)ids;
  cc_table_free(table);
  cc_model_free(m);
  free(many);
  free(out);
  return sink < 0;
}
