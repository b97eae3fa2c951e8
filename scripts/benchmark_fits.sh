#!/usr/bin/env bash
# The LogGP and pLogP fits of every committed OSU and IMB run, one Markdown table row per file:
# the protocol ranges the fit found (their first sizes; "step" where a level step starts one,
# "slope" where the per-byte time changes), the LogGP model's median / 90th-percentile relative
# error on the run's latency series, that median over the one of the best direct piecewise-
# linear fit with as many pieces, and pLogP's median error on the same series.
#
# Usage: scripts/benchmark_fits.sh [--header] [--plots DIR]
#   --plots DIR   also draw each LogGP model against its run (commcost plot) as DIR/<run>.svg
# Needs a release build of the CLI (cargo build --release -p commcost-cli) and python3.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cc="$root/target/release/commcost"
[ -x "$cc" ] || { echo "build the CLI first: cargo build --release -p commcost-cli" >&2; exit 1; }
command -v python3 > /dev/null || { echo "needs python3" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

header=0
plots=""
while [ $# -gt 0 ]; do
  case "$1" in
    --header) header=1; shift ;;
    --plots) plots=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ "$header" = 1 ]; then
  echo "| run | ranges from (bytes) | LogGP median / p90 | ratio to the direct fit | pLogP median |"
  echo "|---|---|---|---|---|"
fi

# one row: the name shown, the plot's file name, the importer (osu or imb), the input files
# (the latency series first)
row() {
  local name=$1 plot=$2 kind=$3
  shift 3
  # the model file is named after the run: the plot's legend names it
  "$cc" calibrate "$kind" "$@" -o "$scratch/$plot.json" > "$scratch/loggp.txt" 2>&1
  cp "$scratch/$plot.json" "$scratch/loggp.json"
  if [ -n "$plots" ]; then
    "$cc" plot --model "$scratch/$plot.json" --measured "$1" --bytes 1..4M -o "$plots/$plot.svg" > /dev/null
  fi
  "$cc" calibrate "$kind" "$@" --model plogp -o "$scratch/plogp.json" > /dev/null 2>&1
  python3 - "$name" "$scratch" <<'EOF'
import json, re, sys
name, scratch = sys.argv[1], sys.argv[2]
text = open(f"{scratch}/loggp.txt").read()
ranges = []
for start, how in re.findall(r"from\s+(\d+) B \((\w+),", text):
    ranges.append(start + ("" if how == "first" else f" ({how})"))
acc = json.load(open(f"{scratch}/loggp.json"))["provenance"]["accuracy"]
model = acc["latency_series"]
direct = acc["latency_series_direct_piecewise_linear_fit"]["median_relative_error"]
plogp = json.load(open(f"{scratch}/plogp.json"))["provenance"]["accuracy"]["latency_series"]
med = model["median_relative_error"]
ratio = f"{med / direct:.2f}" if direct > 1e-4 else "- (direct fit exact)"
plot = name.lower().replace(" ", "_")
print(f"| [{name}](plots/{plot}.svg) | {', '.join(ranges) or '0'} | {100 * med:.1f} % / {100 * model['p90_relative_error']:.1f} % "
      f"| {ratio} | {100 * plogp['median_relative_error']:.1f} % |")
EOF
}

osu=$root/tests/fixtures/osu
imb=$root/tests/fixtures/imb
for run in vader_1 vader_2 vader_3 vader_4 vader_5 tcp_1 tcp_2 tcp_3 tcp_4 tcp_5 mpich_1; do
  row "OSU $run" "osu_$run" osu "$osu/runs/osu_latency_$run.txt" "$osu/runs/osu_bw_$run.txt"
done
row "OSU fixture" osu_fixture osu "$osu/osu_latency.txt" "$osu/osu_bw.txt"
for run in vader_1 vader_2 vader_3 vader_4 tcp_1 tcp_2 tcp_3 tcp_4; do
  row "IMB $run" "imb_$run" imb "$imb/runs/imb_pingpong_$run.txt"
done
row "IMB fixture" imb_fixture imb "$imb/imb_mpi1_2ranks.txt"
