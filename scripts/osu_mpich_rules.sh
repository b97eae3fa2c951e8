#!/usr/bin/env bash
# OSU's collective tests under MPICH with and without a selection JSON file, as CSV.
#
# Usage: scripts/osu_mpich_rules.sh OSU_DIR FILE.json PLATFORM [NP] [REPEATS] > runs.csv
#
# OSU_DIR holds osu_bcast, osu_allreduce, osu_allgather and osu_alltoall built with MPICH's
# mpicc (mpicc.mpich). Each repeat runs every test under three configurations, in an order
# that alternates between repeats: MPICH as installed (`rules:as-installed`), MPICH's own
# table with MPIR_CVAR_DEVICE_COLLECTIVES=none (`default`: what the file's unchanged ranges
# run) and FILE.json with MPIR_CVAR_DEVICE_COLLECTIVES=none (`rules:tune`), on NP ranks
# (default 2) of this machine, REPEATS times (default 5), 8 B - 1 MiB, 200 iterations after
# 20 warm-up calls, OSU's -f (average, minimum and maximum over the ranks).
# Output: platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
osu=$1 file=$(realpath "$2") platform=$3 np=${4:-2} repeats=${5:-5}
for coll in bcast allreduce allgather alltoall; do
  [ -x "$osu/osu_$coll" ] || { echo "no $osu/osu_$coll" >&2; exit 2; }
done
echo "platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations"
for rep in $(seq 1 "$repeats"); do
  if [ $((rep % 2)) = 1 ]; then order="as-installed default tune"; else order="tune default as-installed"; fi
  for coll in bcast allreduce allgather alltoall; do
    for cfg in $order; do
      env=()
      label=$cfg
      case $cfg in
        as-installed) label=rules:as-installed ;;
        default) env=(-genv MPIR_CVAR_DEVICE_COLLECTIVES none) ;;
        tune) label=rules:tune
              env=(-genv MPIR_CVAR_DEVICE_COLLECTIVES none
                   -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$file") ;;
      esac
      timeout 120 mpiexec.mpich -n "$np" "${env[@]}" "$osu/osu_$coll" -f -m 8:1048576 -i 200 -x 20 \
        | awk -v p="$platform" -v c="$coll" -v n="$np" -v l="$label" -v r="$rep" \
            '/^[0-9]/ { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", p, c, n, l, r, $1, $2, $3, $4, $5 }'
    done
  done
done
