/* The C side of the bit-for-bit suite (tests/c_suite.rs compiles and runs it).
 * Calls every function of commcost.h over a grid of inputs and prints one line per result:
 * doubles as their IEEE-754 bits in hex, so that the Rust side compares them exactly.
 * usage: suite MODEL_FILE */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "commcost.h"

static uint64_t bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static const char *PRESETS[] = {"mpich2-tcp", "nmpi-sci", "open-mpi-openib", "open-mpi-gm",
                                "titan-log3p"};
#define N_PRESETS 5
static const uint64_t SIZES[] = {0,     1,     7,      64,      1000,    4096, 12288,
                                 12289, 65536, 1 << 20, 1 << 30, INT64_MAX};
#define N_SIZES 12
static const uint64_t COLL_SIZES[] = {0, 1, 1000, 65536, 1 << 20};
#define N_COLL_SIZES 5
static const uint64_t PROCS[] = {1, 2, 3, 4, 7, 64};
#define N_PROCS 6

static void print_algorithm(const char *tag, const char *model, int family, int coll, uint64_t p,
                            uint64_t s, const CcAlgorithm *a) {
  printf("%s %s %d %d %" PRIu64 " %" PRIu64 " %016" PRIx64 " %u %" PRIu64 " %" PRIu64
         " %s |%s|%s|\n",
         tag, model, family, coll, p, s, bits(a->cost), a->ompi_id, a->segment, a->fanout,
         a->name, a->ompi_name, a->mpich_name);
}

static void model_suite(const char *label, const CcModel *m) {
  for (int i = 0; i < N_SIZES; i++) {
    double t = -1;
    int rc = cc_p2p(m, SIZES[i], &t);
    printf("P2P %s %" PRIu64 " %d %016" PRIx64 "\n", label, SIZES[i], rc, bits(t));
  }
  double many[N_SIZES];
  int rc = cc_p2p_many(m, SIZES, N_SIZES, many);
  for (int i = 0; i < N_SIZES; i++)
    printf("P2P_MANY %s %" PRIu64 " %d %016" PRIx64 "\n", label, SIZES[i], rc, bits(many[i]));
  static const uint64_t LAYOUTS[][3] = {{1, 8, 8},      {16, 8, 1024}, {1024, 8, 8},
                                        {100, 3, 17},   {2, 4096, 8192}, {0, 0, 0},
                                        {2, 16, 8},     {2, 8, 0},     {UINT64_MAX, 2, 4}};
  for (size_t i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0]; i++) {
    const uint64_t *l = LAYOUTS[i];
    double t = -1;
    int rc1 = cc_p2p_vector(m, l[0], l[1], l[2], &t);
    printf("P2P_VECTOR %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %016" PRIx64 "\n", label, l[0],
           l[1], l[2], rc1, bits(t));
    CcQuantities q = {-1, -1, -1, -1, -1};
    int rc2 = cc_quantities(m, l[0], l[1], l[2], &q);
    printf("QUANTITIES %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %016" PRIx64 " %016" PRIx64
           " %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\n",
           label, l[0], l[1], l[2], rc2, bits(q.p2p), bits(q.send_overhead),
           bits(q.recv_overhead), bits(q.send_interval), bits(q.gap));
  }
  for (int family = CC_FAMILY_OMPI; family <= CC_FAMILY_MPICH; family++) {
    for (int coll = CC_BCAST; coll <= CC_SCAN; coll++) {
      for (int pi = 0; pi < N_PROCS; pi++) {
        for (int si = 0; si < N_COLL_SIZES; si++) {
          uint64_t p = PROCS[pi], s = COLL_SIZES[si];
          size_t n = 0;
          int rc = cc_collective_rank(m, family, coll, p, s, NULL, 0, &n);
          printf("RANK_COUNT %s %d %d %" PRIu64 " %" PRIu64 " %d %zu\n", label, family, coll, p,
                 s, rc, n);
          if (rc != CC_OK && rc != CC_ERR_BUFFER_TOO_SMALL) continue;
          CcAlgorithm ranked[256];
          if (n > 256) continue;
          rc = cc_collective_rank(m, family, coll, p, s, ranked, 256, &n);
          if (rc != CC_OK) {
            printf("RANK_FAILED %s %d\n", label, rc);
            continue;
          }
          for (size_t k = 0; k < n; k++) {
            print_algorithm("RANK", label, family, coll, p, s, &ranked[k]);
            CcAlgorithm one;
            rc = cc_collective_cost(m, family, coll, ranked[k].name, p, s, &one);
            if (rc == CC_OK)
              print_algorithm("COST", label, family, coll, p, s, &one);
            else
              printf("COST_FAILED %s %s %d %s\n", label, ranked[k].name, rc, cc_last_error());
          }
          CcAlgorithm best;
          rc = cc_collective_best(m, family, coll, p, s, &best);
          if (rc == CC_OK) print_algorithm("BEST", label, family, coll, p, s, &best);
        }
      }
      /* a decision table, looked up on and between its grid points */
      const uint64_t tp[] = {2, 4, 64};
      const uint64_t ts[] = {1, 1024, 65536, 1 << 20};
      CcTable *t = NULL;
      int rc = cc_table_build(m, family, coll, tp, 3, ts, 4, &t);
      printf("TABLE_BUILD %s %d %d %d\n", label, family, coll, rc);
      if (rc != CC_OK) continue;
      const uint64_t qp[] = {1, 2, 3, 4, 63, 64, 1000};
      const uint64_t qs[] = {0, 1, 1023, 1024, 70000, UINT64_MAX};
      for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++) {
          const CcAlgorithm *a = NULL;
          rc = cc_table_lookup(t, qp[i], qs[j], &a);
          if (rc == CC_OK) print_algorithm("LOOKUP", label, family, coll, qp[i], qs[j], a);
        }
      cc_table_free(t);
    }
  }
}

/* Threads sharing one model and one table: every result equals the single-threaded one, and
 * each thread's error message is its own. */
#define N_THREADS 4
typedef struct {
  const CcModel *m;
  const CcTable *t;
  int id;
  int failures;
} Worker;

static void *work(void *arg) {
  Worker *w = arg;
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < N_SIZES; i++) {
      double a = -1, b = -2;
      cc_p2p(w->m, SIZES[i], &a);
      cc_p2p(w->m, SIZES[i], &b);
      if (bits(a) != bits(b)) w->failures++;
      const CcAlgorithm *x = NULL;
      if (cc_table_lookup(w->t, (uint64_t)(2 + i), SIZES[i], &x) != CC_OK || !x) w->failures++;
    }
    /* an error of this thread's own, then its message */
    char name[32];
    snprintf(name, sizeof name, "no-such-%d", w->id);
    CcModel *none = NULL;
    if (cc_model_preset(name, &none) != CC_ERR_UNKNOWN_NAME) w->failures++;
    if (!strstr(cc_last_error(), name)) w->failures++;
  }
  return NULL;
}

static int threads_suite(void) {
  CcModel *m = NULL;
  if (cc_model_preset("open-mpi-gm", &m) != CC_OK) return 1;
  const uint64_t tp[] = {2, 8, 64};
  const uint64_t ts[] = {1, 4096, 1 << 20};
  CcTable *t = NULL;
  if (cc_table_build(m, CC_FAMILY_OMPI, CC_ALLREDUCE, tp, 3, ts, 3, &t) != CC_OK) return 1;
  pthread_t threads[N_THREADS];
  Worker workers[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    workers[i] = (Worker){m, t, i, 0};
    if (pthread_create(&threads[i], NULL, work, &workers[i]) != 0) return 1;
  }
  int failures = 0;
  for (int i = 0; i < N_THREADS; i++) {
    pthread_join(threads[i], NULL);
    failures += workers[i].failures;
  }
  /* and the shared results equal this thread's */
  for (int i = 0; i < N_SIZES; i++) {
    double a = -1;
    cc_p2p(m, SIZES[i], &a);
    printf("THREAD_P2P open-mpi-gm %" PRIu64 " 0 %016" PRIx64 "\n", SIZES[i], bits(a));
  }
  cc_table_free(t);
  cc_model_free(m);
  printf("THREADS %d\n", failures);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: suite MODEL_FILE HOSTILE_DIR\n");
    return 2;
  }
  printf("VERSION %s\n", cc_version());
  for (int i = 0; i < N_PRESETS; i++) {
    CcModel *m = NULL;
    int rc = cc_model_preset(PRESETS[i], &m);
    printf("PRESET %s %d\n", PRESETS[i], rc);
    if (rc != CC_OK) return 1;
    model_suite(PRESETS[i], m);
    cc_model_free(m);
  }
  CcModel *file = NULL;
  int rc = cc_model_load(argv[1], &file);
  printf("LOAD %d %s\n", rc, cc_last_error());
  if (rc != CC_OK) return 1;
  model_suite("file", file);
  cc_model_free(file);

  /* errors: codes, and a message naming the argument */
  CcModel *m = NULL;
  double t;
  CcAlgorithm a;
  size_t n;
  rc = cc_model_preset("no-such", &m);
  printf("ERR unknown-preset %d %s\n", rc, cc_last_error());
  rc = cc_model_preset(NULL, &m);
  printf("ERR null-name %d %s\n", rc, cc_last_error());
  rc = cc_model_preset("nmpi-sci", NULL);
  printf("ERR null-out %d %s\n", rc, cc_last_error());
  printf("ERR missing-file %d\n", cc_model_load("/nonexistent/model.json", &m));
  /* model files read as the CLI reads them: every case prints its code and message */
  {
    static const char *const FILES[] = {"fifo.json",  "dup.json",       "version.json",
                                        "local.json", "multi.json#c",   "bom.json",
                                        "multi.json", "multi.json#b"};
    char path[4096];
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
      CcModel *h = NULL;
      snprintf(path, sizeof path, "%s/%s", argv[2], FILES[i]);
      rc = cc_model_load(path, &h);
      printf("ERR mf-%s %d %s\n", FILES[i], rc, rc == CC_OK ? "" : cc_last_error());
      if (rc == CC_OK) {
        rc = cc_p2p(h, 8, &t);
        printf("MF_P2P %s %d %" PRIx64 "\n", FILES[i], rc, bits(t));
      }
      cc_model_free(h);
    }
    rc = cc_model_load("/dev/zero", &m);
    printf("ERR mf-dev-zero %d %s\n", rc, cc_last_error());
  }
  printf("ERR bad-json %d\n", cc_model_from_json("{\"model\": \"loggp\"", &m));
  rc = cc_model_from_json("{\"model\": \"pram\", \"unit_cost\": -1}", &m);
  printf("ERR bad-field %d %s\n", rc, cc_last_error());
  printf("ERR not-utf8 %d\n", cc_model_preset("\xff\xfe", &m));
  printf("ERR null-model %d\n", cc_p2p(NULL, 8, &t));
  rc = cc_model_from_json("{\"model\": \"pram\", \"unit_cost\": 1e-6}", &m);
  printf("JSON %d\n", rc);
  if (rc != CC_OK) return 1;
  printf("ERR null-result %d\n", cc_p2p(m, 8, NULL));
  printf("ERR null-many %d\n", cc_p2p_many(m, NULL, 3, &t));
  printf("ERR empty-many %d\n", cc_p2p_many(m, NULL, 0, NULL));
  rc = cc_collective_best(m, 7, CC_BCAST, 4, 8, &a);
  printf("ERR bad-family %d %s\n", rc, cc_last_error());
  rc = cc_collective_best(m, 0, -1, 4, 8, &a);
  printf("ERR bad-collective %d %s\n", rc, cc_last_error());
  printf("ERR bad-collective-high %d\n", cc_collective_best(m, 0, 10, 4, 8, &a));
  printf("ERR ompi-scan %d\n", cc_collective_best(m, CC_FAMILY_OMPI, CC_SCAN, 4, 8, &a));
  printf("ERR textbook-reduce-scatter %d\n",
         cc_collective_best(m, CC_FAMILY_TEXTBOOK, CC_REDUCE_SCATTER, 4, 8, &a));
  printf("ERR zero-procs %d\n", cc_collective_best(m, 0, CC_BCAST, 0, 8, &a));
  printf("ERR unknown-algorithm %d\n", cc_collective_cost(m, 0, CC_BCAST, "fastest", 4, 8, &a));
  printf("ERR zero-segment %d\n",
         cc_collective_cost(m, 1, CC_BCAST, "pipelined:segment=0", 4, 8, &a));
  printf("ERR small-buffer %d\n", cc_collective_rank(m, 0, CC_BCAST, 4, 8, &a, 1, &n));
  printf("ERR null-count %d\n", cc_collective_rank(m, 0, CC_BCAST, 4, 8, &a, 1, NULL));
  CcTable *tab = NULL;
  const uint64_t up[] = {4, 2};
  const uint64_t us[] = {1};
  rc = cc_table_build(m, 0, CC_BCAST, up, 2, us, 1, &tab);
  printf("ERR unsorted-axis %d %s\n", rc, cc_last_error());
  printf("ERR empty-axis %d\n", cc_table_build(m, 0, CC_BCAST, up, 0, us, 1, &tab));
  /* a grid far beyond the cell limit is refused before its arrays are read */
  printf("ERR huge-axis %d\n", cc_table_build(m, 0, CC_BCAST, up, (size_t)1 << 40, us, 1, &tab));
  printf("ERR null-table %d\n", cc_table_lookup(NULL, 4, 8, NULL));
  /* sizes above 2^63 - 1 (a negative Fortran integer(c_int64_t)) are refused, naming them */
  rc = cc_p2p(m, UINT64_MAX, &t);
  printf("ERR huge-size %d %s\n", rc, cc_last_error());
  rc = cc_collective_best(m, CC_FAMILY_OMPI, CC_BCAST, (uint64_t)INT64_MAX + 1, 8, &a);
  printf("ERR huge-procs %d %s\n", rc, cc_last_error());
  /* parameters without JSON */
  {
    CcModel *made = NULL;
    double tm = -1;
    rc = cc_loggp_new(5e-6, 1e-6, 2e-6, 1e-9, &made);
    cc_p2p(made, 1024, &tm);
    printf("LOGGP_NEW %d %016" PRIx64 "\n", rc, bits(tm));
    cc_model_free(made);
    made = NULL;
    tm = -1;
    rc = cc_logp_new(5e-6, 1e-6, 2e-6, 8, &made);
    cc_p2p(made, 20, &tm);
    printf("LOGP_NEW %d %016" PRIx64 "\n", rc, bits(tm));
    cc_model_free(made);
    {
      /* the other constructors: pram, mlines, plogp, loggp ranges (as the open-mpi-openib preset) */
      const uint64_t sizes[3] = {1, 1024, 65536};
      const double so[3] = {1e-6, 2e-6, 3e-5}, ro[3] = {1.5e-6, 2.5e-6, 2.5e-5},
                   g[3] = {2e-6, 4e-6, 5e-5};
      const uint64_t starts[2] = {1, 12289};
      const double l2[2] = {0, 0}, o2[2] = {2.98e-6, 2.98e-6}, g2[2] = {5.14e-6, 2.139e-5},
                   gb2[2] = {7.3e-10, 1.03e-9};
      rc = cc_pram_new(3e-6, &made);
      cc_p2p(made, 1024, &tm);
      printf("PRAM_NEW %d %016" PRIx64 "\n", rc, bits(tm));
      cc_model_free(made);
      rc = cc_mlines_new(1e-5, 1e-9, 2e-8, 64, &made);
      cc_p2p(made, 8000, &tm);
      printf("MLINES_NEW %d %016" PRIx64 "\n", rc, bits(tm));
      cc_model_free(made);
      rc = cc_plogp_new(3e-6, sizes, 3, so, ro, g, 2, &made);
      cc_p2p(made, 4096, &tm);
      printf("PLOGP_NEW %d %016" PRIx64 "\n", rc, bits(tm));
      cc_model_free(made);
      rc = cc_loggp_ranges_new(2, starts, l2, o2, g2, gb2, 12288, &made);
      cc_p2p(made, 65536, &tm);
      printf("RANGES_NEW %d %016" PRIx64 "\n", rc, bits(tm));
      cc_model_free(made);
      rc = cc_plogp_new(3e-6, sizes, 3, so, ro, NULL, 2, &made);
      printf("ERR null-plogp-gap %d %s\n", rc, cc_last_error());
      rc = cc_loggp_ranges_new(2, starts, l2, o2, g2, gb2, UINT64_MAX, &made);
      printf("ERR huge-rendezvous %d %s\n", rc, cc_last_error());
      rc = cc_mlines_new(1e-5, 1e-9, 2e-8, 0, &made);
      printf("ERR bad-mlines %d %s\n", rc, cc_last_error());
      rc = cc_pram_new(-1, &made);
      printf("ERR bad-pram %d %s\n", rc, cc_last_error());
    }
    rc = cc_loggp_new(-1e-6, 1e-6, 2e-6, 1e-9, &made);
    printf("ERR bad-loggp %d %s\n", rc, cc_last_error());
    rc = cc_logp_new(5e-6, 1e-6, 2e-6, 0, &made);
    printf("ERR bad-logp %d %s\n", rc, cc_last_error());
  }
  rc = cc_p2p(m, 8, &t);
  printf("OK-after-error %d [%s]\n", rc, cc_last_error());
  cc_model_free(m);
  cc_model_free(NULL);
  cc_table_free(NULL);
  if (threads_suite() != 0) return 1;
  printf("END\n");
  return 0;
}
