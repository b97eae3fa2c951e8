#!/usr/bin/env bash
# One repeat of MPICH's default against a selection file, with the OSU collective benchmarks.
#
# Usage: scripts/mpich_osu_compare.sh --osu DIR --repeat K [--np 2] [--sizes 8:1048576]
#                                     [--iter N] [--cluster NODESxPPN] [--collectives LIST]
#                                     [--also FILE2] FILE >> results.csv
#
# --collectives bcast,allreduce runs only those (default: all eight), to split a repeat.
# --cluster 4x1 runs every benchmark on the emulated cluster (scripts/cluster-emu.sh
# mpiexec-mpich --nodes 4 --ppn 1; the cluster must be up, CLUSTER_EMU_NAME names it) instead
# of `mpiexec.mpich -n NP` on this machine. --iter N passes `-i N -x N/10` to OSU (timed and warm-up
# iterations per size; OSU 5.3 default 1000 / 100 above 8 KiB, 200 warm-up).
#
# DIR holds the OSU Micro-Benchmarks collective tests (osu_bcast, osu_allreduce, osu_reduce,
# osu_allgather, osu_alltoall, osu_gather, osu_scatter, osu_barrier) built with mpicc.mpich.
# For each collective it runs, back to back in an order that rotates with K, the
# configurations `default`, MPICH as shipped (its built-in table, MPIR_CVAR_DEVICE_COLLECTIVES
# at its default, percoll); `default-none`, the built-in table with
# MPIR_CVAR_DEVICE_COLLECTIVES=none; `file`, MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=FILE with
# MPIR_CVAR_DEVICE_COLLECTIVES=none; with --also, `also`, the same with FILE2. It prints CSV
# rows `repeat,collective,config,bytes,latency_us` (OSU's average latency). Run it several
# times (K = 0, 1, 2, ...) and summarise with scripts/mpich_trace/summary.py: a cell counts as
# faster or slower only when every repeat agrees.
set -euo pipefail
osu=""
repeat=""
np=2
sizes="8:1048576"
also=""
cluster=""
iter=""
collectives="bcast,allreduce,reduce,allgather,alltoall,gather,scatter,barrier"
while [ $# -gt 1 ]; do
  case "$1" in
    --osu) osu="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --iter) iter="$2"; shift 2 ;;
    --cluster) cluster="$2"; shift 2 ;;
    --collectives) collectives="$2"; shift 2 ;;
    --also) also="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] && [ -n "$osu" ] && [[ "$repeat" =~ ^[0-9]+$ ]] || { sed -n '2,25p' "$0" >&2; exit 2; }
launch=(mpiexec.mpich -n "$np")
limit=300
if [ -n "$cluster" ]; then
  [[ "$cluster" =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "--cluster must be NODESxPPN, e.g. 4x1" >&2; exit 2; }
  launch=("$(dirname "$(readlink -f "$0")")/cluster-emu.sh" mpiexec-mpich
          --nodes "${BASH_REMATCH[1]}" --ppn "${BASH_REMATCH[2]}" --)
  limit=60
fi
if [ -n "$iter" ]; then
  [[ "$iter" =~ ^[0-9]+$ ]] || { echo "--iter must be a positive integer" >&2; exit 2; }
fi
file="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ -r "$file" ] || { echo "cannot read $1" >&2; exit 2; }

run() { # collective config
  local bench="$osu/osu_$1" opts=(-m "$sizes")
  [ "$1" = barrier ] && opts=()
  if [ -n "$iter" ]; then opts+=(-i "$iter" -x $(( iter / 10 > 0 ? iter / 10 : 1 ))); fi
  [ -x "$bench" ] || { echo "$bench not found" >&2; exit 2; }
  case "$2" in
    file) set -- "$1" "$2" -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$file" \
            -genv MPIR_CVAR_DEVICE_COLLECTIVES none ;;
    also) set -- "$1" "$2" -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$also" \
            -genv MPIR_CVAR_DEVICE_COLLECTIVES none ;;
    default-none) set -- "$1" "$2" -genv MPIR_CVAR_DEVICE_COLLECTIVES none ;;
  esac
  local collective="$1" config="$2"
  shift 2
  # a run that does not finish within its timeout is repeated (at most 3 attempts): on the
  # emulated cluster a launch occasionally stalls. A run counts once OSU printed its last row
  # (size max of --sizes; barrier: its one value), even if the processes then linger in
  # MPI_Finalize (MPICH 4.0.2 over UCX's TCP transport sometimes does): the run is then ended.
  local out="" attempt tmp last="${sizes##*:}" pid t
  tmp="$(mktemp)"
  for attempt in 1 2 3; do
    timeout -k 5 "$limit" "${launch[@]}" "$@" "$bench" "${opts[@]}" > "$tmp" &
    pid=$!
    for ((t = 0; t < limit * 5; t++)); do
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      if [ "$collective" = barrier ] && grep -qE '^[[:space:]]*[0-9.]+[[:space:]]*$' "$tmp"; then break; fi
      if grep -qE "^$last[[:space:]]" "$tmp"; then break; fi
      sleep 0.2
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    out="$(cat "$tmp")"
    if [ "$collective" = barrier ] && grep -qE '^[[:space:]]*[0-9.]+[[:space:]]*$' "$tmp"; then break; fi
    if grep -qE "^$last[[:space:]]" "$tmp"; then break; fi
    echo "mpich_osu_compare: $collective $config attempt $attempt failed" >&2
    out=""
  done
  rm -f "$tmp"
  [ -n "$out" ] || { echo "mpich_osu_compare: $collective $config failed 3 times" >&2; exit 1; }
  printf '%s\n' "$out" \
    | awk -v r="$repeat" -v c="$collective" -v k="$config" '
        /^[0-9]/ { print r "," c "," k "," $1 "," $2 }
        /^[ \t]*[0-9.]+[ \t]*$/ { print r "," c "," k ",0," $1 }'
}

configs=(default default-none file)
if [ -n "$also" ]; then configs+=(also); fi
n=${#configs[@]}
for collective in ${collectives//,/ }; do
  case "$collective" in
    bcast|allreduce|reduce|allgather|alltoall|gather|scatter|barrier) ;;
    *) echo "--collectives: unknown collective $collective" >&2; exit 2 ;;
  esac
  for ((i = 0; i < n; i++)); do
    run "$collective" "${configs[$(((i + repeat) % n))]}"
  done
done
