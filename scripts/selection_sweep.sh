#!/usr/bin/env bash
# Does a rules file make Open MPI's collectives faster? Run the OSU Micro-Benchmarks' collective
# tests with Open MPI's default decision and with a coll_tuned rules file (for example one
# written by `commcost export ompi-rules`), interleaved and repeated, plus every algorithm of the
# tuned component forced once, and write one CSV of what OSU printed.
#
# Usage:
#   scripts/selection_sweep.sh --osu DIR --rules FILE --out CSV
#       [--platform vader|cluster] [--procs P] [--cluster NODESxRANKS] [--rate 1gbit]
#       [--repeats 3] [--iterations 50] [--max-bytes 1048576] [--only "bcast reduce ..."]
#       [--no-forced]
#
# DIR holds OSU's osu_<collective> binaries built with Open MPI's mpicc (the OSU
# Micro-Benchmarks are not part of this repository; build them from their source).
# --platform vader (default): P ranks on this machine over shared memory (btl self,vader).
# --platform cluster: scripts/cluster-emu.sh builds NODES namespaces behind rate-limited links,
#   RANKS ranks per node (btl self,tcp; self,vader,tcp with several ranks per node), and removes
#   them at the end.
#
# Each OSU run: `-f -i ITER -x W` (W = ITER / 5, at least 2), sizes up to --max-bytes. OSU's
# "Avg Latency" is the mean over ranks of each rank's mean time per call. Order: for each repeat,
# for each collective, default and rules back to back (so the two share the machine's state;
# default first in odd repeats, rules first in even ones); then every
# forced algorithm once (segmentable ones also with each segment size the rules file uses for
# that collective). A lock file (flock; COMMCOST_MEASURE_LOCK, or a default path) is held through
# each chunk of runs (one collective's default and rules runs of one repeat; one collective's forced
# runs), to serialise with other measurements; COMMCOST_MEASURE_GATE names a second file held
# with it.
#
# CSV columns: platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations
# config: default | rules | forced:ID:SEGSIZE
set -euo pipefail
cd "$(dirname "$0")/.."

osu="" rules="" out="" platform="vader" procs=2 cluster="" rate="1gbit" repeats=3 iters=50
max_bytes=1048576 forced=1
only="bcast reduce allreduce allgather alltoall gather scatter reduce_scatter barrier"
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu="$2"; shift 2 ;;
    --rules) rules="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --procs) procs="$2"; shift 2 ;;
    --cluster) cluster="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --repeats) repeats="$2"; shift 2 ;;
    --iterations) iters="$2"; shift 2 ;;
    --max-bytes) max_bytes="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --no-forced) forced=0; shift ;;
    *) echo "selection_sweep: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$osu" ] && [ -n "$rules" ] && [ -n "$out" ] || { echo "selection_sweep: --osu, --rules and --out are required" >&2; exit 2; }
[ -f "$rules" ] || { echo "selection_sweep: --rules $rules: no such file" >&2; exit 2; }
rules="$(readlink -f "$rules")"
osu="$(readlink -f "$osu")"
for c in $only; do [ -x "$osu/osu_$c" ] || { echo "selection_sweep: $osu/osu_$c missing" >&2; exit 2; }; done
lock="${COMMCOST_MEASURE_LOCK:-/tmp/measure.lock}"
gate="${COMMCOST_MEASURE_GATE:-}"
lock_begin() {
  if [ -n "$gate" ]; then exec 8>>"$gate"; flock -x 8; fi
  exec 9>>"$lock"; flock -x 9
}
lock_end() {
  flock -u 9; exec 9>&-
  if [ -n "$gate" ]; then flock -u 8; exec 8>&-; fi
}

case "$platform" in
  vader) label="vader-p$procs" ;;
  cluster)
    [[ "$cluster" =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "selection_sweep: --cluster NODESxRANKS" >&2; exit 2; }
    nodes="${BASH_REMATCH[1]}"; ppn="${BASH_REMATCH[2]}"; procs=$((nodes * ppn))
    label="cluster-${rate}-${nodes}x${ppn}"
    export CLUSTER_EMU_NAME="${CLUSTER_EMU_NAME:-ccsel}"
    scripts/cluster-emu.sh up "$nodes" --rate "$rate"
    trap 'scripts/cluster-emu.sh down' EXIT
    ;;
  *) echo "selection_sweep: --platform vader or cluster" >&2; exit 2 ;;
esac

# Open MPI 4.1.4's algorithm count per collective (ompi_info --param coll tuned --level 9) and
# which ids take a segment size
count_of() {
  case "$1" in
    allgather) echo 6 ;; allreduce) echo 6 ;; alltoall) echo 5 ;; barrier) echo 6 ;;
    bcast) echo 9 ;; gather) echo 3 ;; reduce) echo 7 ;; reduce_scatter) echo 4 ;; scatter) echo 3 ;;
  esac
}
segmentable() {
  case "$1:$2" in bcast:[2-9]|reduce:[2-6]|allreduce:5|gather:3) return 0 ;; *) return 1 ;; esac
}
# the rules file's collective id of each OSU test
ompi_id() {
  case "$1" in
    allgather) echo 0 ;; allreduce) echo 2 ;; alltoall) echo 3 ;; barrier) echo 6 ;; bcast) echo 7 ;;
    gather) echo 9 ;; reduce) echo 11 ;; reduce_scatter) echo 12 ;; scatter) echo 15 ;;
  esac
}
# segment sizes the rules file uses for one collective (comments stripped; rule lines have 4 fields)
segs_in_rules() {
  awk -v id="$(ompi_id "$1")" '
    { sub(/#.*/, "") } NF == 0 { next }
    { for (i = 1; i <= NF; i++) tok[++n] = $i }
    END {
      p = 1; ncoll = tok[p++]
      for (c = 0; c < ncoll; c++) {
        cid = tok[p++]; nblk = tok[p++]
        for (b = 0; b < nblk; b++) {
          p++; nrule = tok[p++]
          for (r = 0; r < nrule; r++) { alg = tok[p+1]; seg = tok[p+3]; p += 4; if (cid == id && alg != 0 && seg != 0) print seg }
        }
      }
    }' "$rules" | sort -un
}

skip=$(( iters / 5 )); [ "$skip" -ge 2 ] || skip=2
run_osu() { # config repeat coll [mca...]
  local config="$1" rep="$2" coll="$3"; shift 3
  local tmp
  tmp="$(mktemp)"
  local cmd=("$osu/osu_$coll" -f -i "$iters" -x "$skip")
  [ "$coll" = barrier ] || cmd+=(-m "$max_bytes")
  if [ "$platform" = cluster ]; then
    CLUSTER_MPIRUN_ARGS="$*" timeout 600 scripts/cluster-emu.sh mpirun --ppn "$ppn" -- "${cmd[@]}" >"$tmp" 2>/dev/null || { echo "FAILED: $config $coll" >&2; rm -f "$tmp"; return 1; }
  else
    local extra=()
    if [ "$procs" -gt 2 ]; then extra=(--oversubscribe --mca mpi_yield_when_idle 1); fi
    # shellcheck disable=SC2068
    timeout 600 mpirun --allow-run-as-root --mca btl self,vader "${extra[@]}" $@ -np "$procs" "${cmd[@]}" >"$tmp" 2>/dev/null || { echo "FAILED: $config $coll" >&2; rm -f "$tmp"; return 1; }
  fi
  awk -v pl="$label" -v c="$coll" -v p="$procs" -v cfg="$config" -v r="$rep" '
    /^#/ || NF == 0 { next }
    c == "barrier" && NF == 4 { printf "%s,%s,%s,%s,%s,0,%s,%s,%s,%s\n", pl, c, p, cfg, r, $1, $2, $3, $4; next }
    NF == 5 { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", pl, c, p, cfg, r, $1, $2, $3, $4, $5 }
  ' "$tmp" >> "$out"
  rm -f "$tmp"
}

rules_mca="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename $rules"
echo "platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations" > "$out"
start=$(date +%s)
for rep in $(seq 1 "$repeats"); do
  for coll in $only; do
    lock_begin
    # alternate which configuration runs first, so that an order effect cannot favour one
    if [ $((rep % 2)) = 1 ]; then
      run_osu default "$rep" "$coll"
      run_osu rules "$rep" "$coll" $rules_mca
    else
      run_osu rules "$rep" "$coll" $rules_mca
      run_osu default "$rep" "$coll"
    fi
    lock_end
  done
  echo "repeat $rep done after $(( $(date +%s) - start )) s" >&2
done
if [ "$forced" = 1 ]; then
  for coll in $only; do
    lock_begin
    for id in $(seq 1 "$(count_of "$coll")"); do
      # two_proc algorithms exist only for P = 2
      case "$coll:$id" in allgather:6|alltoall:5|barrier:5) [ "$procs" = 2 ] || continue ;; esac
      for seg in 0 $(segs_in_rules "$coll"); do
        if [ "$seg" != 0 ] && ! segmentable "$coll" "$id"; then continue; fi
        run_osu "forced:$id:$seg" 1 "$coll" --mca coll_tuned_use_dynamic_rules 1 \
          --mca "coll_tuned_${coll}_algorithm" "$id" --mca "coll_tuned_${coll}_algorithm_segmentsize" "$seg" || true
      done
    done
    lock_end
  done
fi
echo "wrote $out ($(( $(wc -l < "$out") - 1 )) rows) in $(( $(date +%s) - start )) s" >&2
