#!/usr/bin/env bash
# Point-to-point calibration data between two nodes of the emulated cluster: OSU's osu_latency,
# osu_bw and osu_bibw, repeated, in alternating order, each run's output kept as OSU printed it
# (what `commcost calibrate osu` reads).
#
# Usage:
#   scripts/pt2pt_sweep.sh --osu DIR --out-dir DIR [--rate 200mbit] [--peakrate] [--no-shim]
#       [--no-fifo] [--repeats 5] [--lat-iterations 10] [--lat-warmup 2]
#       [--bw-iterations 1] [--bw-warmup 1] [--timeout 600]
#
# DIR holds osu_latency, osu_bw and osu_bibw (OSU 5.3 built with Open MPI's mpicc). OSU 5.3's
# point-to-point tests always run 0 (latency) or 1 B up to 4 MiB and take one iteration count
# for all sizes (-i, warm-up -x); osu_bw and osu_bibw send windows of 64 messages per iteration,
# so one timed iteration of 4 MiB moves 256 MiB per direction (about 11 s at 200 Mbit/s).
# Builds a 2-node cluster with scripts/cluster-emu.sh (one rank per node, btl self,tcp, the
# idle-sleep shim and SCHED_FIFO unless turned off) and removes it at the end, also on failure.
# Writes OUT-DIR/osu_<test>-r<repeat>.txt; odd repeats run latency, bw, bibw, even repeats
# the reverse. A failed or timed-out run is reported on stderr and its file removed.
set -euo pipefail
cd "$(dirname "$0")/.."

osu="" outdir="" rate="200mbit" peakrate=0 repeats=5 lat_i=10 lat_x=2 bw_i=1 bw_x=1
run_timeout=600 emu_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu="$2"; shift 2 ;;
    --out-dir) outdir="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --peakrate) peakrate=1; shift ;;
    --no-shim) emu_opts+=(--no-shim); shift ;;
    --no-fifo) emu_opts+=(--no-fifo); shift ;;
    --repeats) repeats="$2"; shift 2 ;;
    --lat-iterations) lat_i="$2"; shift 2 ;;
    --lat-warmup) lat_x="$2"; shift 2 ;;
    --bw-iterations) bw_i="$2"; shift 2 ;;
    --bw-warmup) bw_x="$2"; shift 2 ;;
    --timeout) run_timeout="$2"; shift 2 ;;
    *) echo "pt2pt_sweep: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$osu" ] && [ -n "$outdir" ] || { echo "pt2pt_sweep: --osu and --out-dir are required" >&2; exit 2; }
osu="$(readlink -f "$osu")"
for t in latency bw bibw; do [ -x "$osu/osu_$t" ] || { echo "pt2pt_sweep: $osu/osu_$t missing" >&2; exit 2; }; done
mkdir -p "$outdir"
export CLUSTER_EMU_NAME="${CLUSTER_EMU_NAME:-ccp2p}"
up_opts=(--rate "$rate")
if [ "$peakrate" = 1 ]; then up_opts+=(--peakrate); fi
trap 'scripts/cluster-emu.sh down' EXIT
trap 'exit 130' INT TERM HUP
scripts/cluster-emu.sh up 2 "${up_opts[@]}"

start=$(date +%s)
for rep in $(seq 1 "$repeats"); do
  tests="latency bw bibw"
  if [ $((rep % 2)) = 0 ]; then tests="bibw bw latency"; fi
  for t in $tests; do
    if [ "$t" = latency ]; then args=(-i "$lat_i" -x "$lat_x"); else args=(-i "$bw_i" -x "$bw_x"); fi
    f="$outdir/osu_$t-r$rep.txt"
    if ! timeout -k 10 "$run_timeout" scripts/cluster-emu.sh mpirun --nodes 2 "${emu_opts[@]}" -- \
        "$osu/osu_$t" "${args[@]}" </dev/null >"$f" 2>/dev/null; then
      echo "FAILED: osu_$t repeat $rep" >&2
      rm -f "$f"
      scripts/cluster-emu.sh reap || true
    fi
  done
  echo "repeat $rep done after $(( $(date +%s) - start )) s" >&2
done
