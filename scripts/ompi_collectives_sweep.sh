#!/usr/bin/env bash
# Time every Open MPI (coll tuned) algorithm of nine collectives, forced one at a time, and Open
# MPI's default choice, on 2, 4 and 8 processes of this machine; record which algorithm the
# default runs (LD_PRELOAD trace, scripts/ompi-trace/trace.c).
#
# Usage: scripts/ompi_collectives_sweep.sh [--procs "2 4 8"] [--out DIR] [--quick]
#            [--cluster NODES[xRANKS] [--rate 1gbit]] [--only "bcast allreduce ..."]
#
# --cluster runs every mpirun on an emulated cluster (scripts/cluster-emu.sh: NODES network
# namespaces behind rate-limited links, RANKS ranks per node, default 1) that the script builds
# and removes; --procs is then ignored (P = NODES x RANKS).
#
# Writes DIR/ompi_runs.csv (one row per collective, P, algorithm, segment size, message size:
# see validation/src/bin/mpi_collectives.rs) and DIR/ompi_default_choice.csv (collective, P, lookup bytes,
# the algorithm Open MPI's fixed decision ran). With more processes than cores the ranks run
# with --oversubscribe --mca mpi_yield_when_idle 1.
#
# Optional, for sharing a machine with other measurements (all off unless set):
# COMMCOST_MEASURE_LOCK names a lock file (flock) each mpirun holds, one short run at a time;
# COMMCOST_AUTOGROUP_NICE (e.g. -15) starts each run in a session of its own with that autogroup
# priority (where the kernel allows it); COMMCOST_BUILD_NICE (e.g. 19) builds the harness under
# `nice -n` that value.
set -euo pipefail
cd "$(dirname "$0")/.."
procs="2 4 8"
out="target/ompi-sweep"
quick=0
cluster=""
rate="1gbit"
only="bcast allreduce reduce allgather alltoall barrier reduce_scatter_block gather scatter"
while [ $# -gt 0 ]; do
  case "$1" in
    --procs) procs="$2"; shift 2 ;;
    --cluster) cluster="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
lock="${COMMCOST_MEASURE_LOCK:-}"
boost="${COMMCOST_AUTOGROUP_NICE:-}"
# run a command, with the lock and the autogroup priority where asked for (see above)
locked() {
  local pre=()
  if [ -n "$lock" ] && command -v flock >/dev/null; then pre=(flock "$lock"); fi
  if [ -n "$boost" ] && [ -w /proc/self/autogroup ] && command -v setsid >/dev/null; then
    setsid -w "${pre[@]}" sh -c 'echo "$0" > /proc/self/autogroup 2>/dev/null; exec "$@"' "$boost" "$@"
  else
    "${pre[@]}" "$@"
  fi
}

build_nice=()
if [ -n "${COMMCOST_BUILD_NICE:-}" ]; then build_nice=(nice -n "$COMMCOST_BUILD_NICE"); fi
"${build_nice[@]}" cargo build --release --quiet -p commcost-validation --features mpi --bin mpi_collectives
bin="$(pwd)/target/release/mpi_collectives"
mkdir -p "$out"
runs="$out/ompi_runs.csv"
rm -f "$runs"
work="$(mktemp -d)"
trap 'rm -rf "$work"; if [ -n "$cluster" ]; then scripts/cluster-emu.sh down; fi' EXIT
mpicc -shared -fPIC -O2 -o "$work/trace.so" scripts/ompi-trace/trace.c -ldl

# per-rank bytes: whole buffer (bcast, reduce, allreduce), one block (the others)
if [ "$quick" = 1 ]; then
  big="8,2048,131072"; blocks="8,2048,32768"; samples=3; target=500
else
  big="8,32,128,512,2048,8192,32768,131072,524288,1048576"
  blocks="8,32,128,512,2048,8192,32768,131072"; samples=15; target=1000
fi
sizes_of() { case "$1" in bcast|reduce|allreduce) echo "$big" ;; *) echo "$blocks" ;; esac; }
# Open MPI 4.1.4 algorithm names (ompi_info --param coll tuned --level 9), index = id - 1
declare -A names=(
  [allgather]="linear bruck recursive_doubling ring neighbor two_proc"
  [allreduce]="basic_linear nonoverlapping recursive_doubling ring segmented_ring rabenseifner"
  [alltoall]="linear pairwise modified_bruck linear_sync two_proc"
  [barrier]="linear double_ring recursive_doubling bruck two_proc tree"
  [bcast]="basic_linear chain pipeline split_binary_tree binary_tree binomial knomial scatter_allgather scatter_allgather_ring"
  [gather]="basic_linear binomial linear_sync"
  [reduce]="linear chain pipeline binary binomial in-order_binary rabenseifner"
  [reduce_scatter_block]="basic_linear recursive_doubling recursive_halving butterfly"
  [scatter]="basic_linear binomial linear_nb"
)
# algorithms that take a segment size: also run with SEG bytes per segment
seg=16384
segmented() {
  case "$1:$2" in
    bcast:[2-9]|reduce:[2-6]|allreduce:5) return 0 ;;
    *) return 1 ;;
  esac
}
if [ -n "$cluster" ]; then
  [[ "$cluster" =~ ^([0-9]+)(x([0-9]+))?$ ]] || { echo "--cluster NODES[xRANKS]" >&2; exit 2; }
  nodes="${BASH_REMATCH[1]}"; ppn="${BASH_REMATCH[3]:-1}"
  procs=$((nodes * ppn))
  export CLUSTER_EMU_NAME="${CLUSTER_EMU_NAME:-ccsw}"
  scripts/cluster-emu.sh up "$nodes" --rate "$rate"
fi
run() { # np mca... -- args...
  local np="$1"; shift
  if [ -n "$cluster" ]; then
    # mpirun options before the program go through CLUSTER_MPIRUN_ARGS
    local opts=() prog=()
    while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
      case "$1" in
        -x) opts+=("$1" "$2"); shift 2 ;;
        --mca) opts+=("$1" "$2" "$3"); shift 3 ;;
        *) opts+=("$1"); shift ;;
      esac
    done
    CLUSTER_MPIRUN_ARGS="${opts[*]}" locked timeout 300 scripts/cluster-emu.sh mpirun --ppn "$ppn" -- "$@" >/dev/null
    return
  fi
  local extra=()
  if [ "$np" -gt 2 ]; then extra=(--oversubscribe --mca mpi_yield_when_idle 1); fi
  locked timeout 300 mpirun --allow-run-as-root --mca btl self,vader "${extra[@]}" -np "$np" "$@" >/dev/null
}

start=$(date +%s)
for np in $procs; do
  for coll in $only; do
    i=0
    for name in ${names[$coll]}; do
      i=$((i + 1))
      if [ "$name" = two_proc ] && [ "$np" != 2 ]; then continue; fi
      for s in 0 $seg; do
        if [ "$s" != 0 ] && ! segmented "$coll" "$i"; then continue; fi
        run "$np" --mca coll_tuned_use_dynamic_rules 1 --mca "coll_tuned_${coll}_algorithm" "$i" \
          --mca "coll_tuned_${coll}_algorithm_segmentsize" "$s" \
          "$bin" --collective "$coll" --algorithm "$i" --name "$name" --segsize "$s" \
          --sizes "$(sizes_of "$coll")" --samples "$samples" --target-us "$target" --output "$runs"
      done
    done
    run "$np" "$bin" --collective "$coll" --sizes "$(sizes_of "$coll")" \
      --samples "$samples" --target-us "$target" --output "$runs"
  done
  echo "P = $np done after $(( $(date +%s) - start )) s"
done

# which algorithm the default ran: the same harness, once per size, under the trace shim
for np in $procs; do
  for coll in $only; do
    COMMCOST_OMPI_TRACE="$work/default.np$np.$coll" LD_PRELOAD="$work/trace.so" \
      run "$np" -x COMMCOST_OMPI_TRACE -x LD_PRELOAD \
      "$bin" --collective "$coll" --sizes "$(sizes_of "$coll")" --samples 1 --warmup 0 \
      --target-us 1 --output "$work/discard.csv"
  done
done
{
  echo "collective,procs,bytes,algorithm_id,algorithm"
  # depth-0 calls only, one line per (collective, P, size); the harness's own barrier and
  # 8-byte max-allreduce are decided by the same rules, so they agree with the timed calls
  cat "$work"/default.np*.* | awk '$9 == 0 { print $1 "," $4 "," $6 "," $2 "," $3 }' | sort -u
} > "$out/ompi_default_choice.csv"
echo "wrote $runs ($(($(wc -l < "$runs") - 1)) rows) and $out/ompi_default_choice.csv in $(( $(date +%s) - start )) s"
