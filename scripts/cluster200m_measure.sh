#!/usr/bin/env bash
# The measurements of tests/fixtures/cluster-200m/: every forced coll_tuned algorithm of nine
# collectives and Open MPI's default on the emulated cluster (200 Mbit/s links with peakrate,
# idle-sleep shim, SCHED_FIFO, one rank per node, btl self,tcp) at P = 4, then the
# point-to-point calibration runs between two nodes, then P = 8.
#
# Usage: scripts/cluster200m_measure.sh OSU_DIR OUT_DIR [p4] [pt2pt] [p8]   (default: all three)
# Environment: P4_REPEATS (6), P8_REPEATS (5), P8_MAX_BYTES (1048576), PT2PT_REPEATS (5).
set -euo pipefail
cd "$(dirname "$0")/.."
osu="$1" out="$2"; shift 2
steps="${*:-p4 pt2pt p8}"
mkdir -p "$out"
common=(--osu "$osu" --no-rules --platform cluster --rate 200mbit --peakrate
  --iterations 100 --warmup 10 --iterations-large 10 --warmup-large 2 --large-from 32768
  --min-bytes 8 --timeout 300)
for step in $steps; do
  case "$step" in
    p4) scripts/selection_sweep.sh "${common[@]}" --cluster 4x1 --max-bytes 1048576 \
          --repeats "${P4_REPEATS:-6}" --out "$out/forced-4x1.csv" ;;
    pt2pt) scripts/pt2pt_sweep.sh --osu "$osu" --out-dir "$out/pt2pt" --rate 200mbit --peakrate \
          --repeats "${PT2PT_REPEATS:-5}" --lat-iterations 10 --lat-warmup 2 --bw-iterations 1 --bw-warmup 1 ;;
    p8) scripts/selection_sweep.sh "${common[@]}" --cluster 8x1 --max-bytes "${P8_MAX_BYTES:-1048576}" \
          --repeats "${P8_REPEATS:-5}" --out "$out/forced-8x1.csv" ;;
    *) echo "cluster200m_measure: unknown step $step (p4, pt2pt, p8)" >&2; exit 2 ;;
  esac
done
