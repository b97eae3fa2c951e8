#!/usr/bin/env bash
# commcost's simulator against LogGOPSim on the same GOAL files, side by side.
#
# Builds LogGOPSim, its txt2bin and Schedgen (T. Hoefler, T. Schneider, A. Lumsdaine,
# "LogGOPSim — Simulating Large-Scale Applications in the LogGOPS Model", HPDC/LSAP 2010) from
# a copy of its source, outside this repository; makes the GOAL files with Schedgen (or with
# `commcost goal`, which writes the same operations, when Schedgen is not built); compiles
# each with txt2bin; then times, for every workload, in one hyperfine run each:
#   commcost simulate --goal FILE           (read, parse, simulate; text to result)
#   LogGOPSim -f FILE.bin                   (its simulation of the pre-compiled binary)
#   txt2bin -i FILE -o FILE.bin; LogGOPSim  (text to result)
# and the peak resident memory of one run of each (/usr/bin/time), and compares the makespans.
# Prints one Markdown table row per workload.
#
# Usage:
#   LGS_SRC=<LogGOPSim checkout, or its git directory> scripts/loggopsim_bench.sh [options] [WORKLOAD...]
# Options:
#   --runs N        timed runs per command (default 5; the table shows the minimum)
#   --work DIR      where LogGOPSim is built and the files are made (default target/loggopsim-bench)
#   --warmup N      untimed runs before the timed ones (default 1)
#   --prepare       build LogGOPSim and make the files only (no timing; run it first, so that a
#                   timed run times only the simulators)
#   --header        print the table's header first
#   --list          list the workloads and exit
# Workloads (default: all): bcast_p12 bcast_p16 bcast_p20 recdoub_p10 recdoub_p14 recdoub_p16
# dissem_p10 ring_p10. LogGP parameters: L = 3 µs, o = 1 µs, g = 2 µs, G = 1 ns/B (LogGOPSim:
# -L 3000 -o 1000 -g 2000 -G 1 -O 0 -S 2000000000, all messages eager).
#
# Needs: g++, gcc, re2c, gengetopt, libgraphviz-dev, libboost-iostreams-dev (Debian:
# apt-get install re2c gengetopt libgraphviz-dev libboost-iostreams-dev), hyperfine,
# /usr/bin/time, python3, a release build of the CLI (cargo build --release -p commcost-cli).
set -euo pipefail

LGS_COMMIT=76451de16546c7ea39651c183cbc532f4a3457c0
root=$(cd "$(dirname "$0")/.." && pwd)
runs=5
warmup=1
prepare=0
work="$root/target/loggopsim-bench"
header=0
workloads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --prepare) prepare=1; shift ;;
    --work) work=$2; shift 2 ;;
    --header) header=1; shift ;;
    --list) echo "bcast_p12 bcast_p16 bcast_p20 recdoub_p10 recdoub_p14 recdoub_p16 dissem_p10 ring_p10"; exit 0 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) workloads+=("$1"); shift ;;
  esac
done
[ ${#workloads[@]} -gt 0 ] || workloads=(bcast_p12 bcast_p16 bcast_p20 recdoub_p10 recdoub_p14 recdoub_p16 dissem_p10 ring_p10)

cc="$root/target/release/commcost"
[ -x "$cc" ] || { echo "build the CLI first: cargo build --release -p commcost-cli" >&2; exit 1; }
for tool in hyperfine python3 /usr/bin/time; do
  command -v "$tool" > /dev/null || { echo "needs $tool" >&2; exit 1; }
done

lgs="$work/lgs/src/LogGOPSim"
sg="$work/lgs/src/Schedgen"
mkdir -p "$work/goal"

# 1. LogGOPSim, txt2bin and Schedgen, -O3 (its CMake build wants MPI, Fortran and Clang for
#    liballprof; these three need only the commands below)
if [ ! -x "$lgs/LogGOPSim" ] || [ ! -x "$lgs/txt2bin" ]; then
  : "${LGS_SRC:?set LGS_SRC to a copy of spcl/LogGOPSim (a checkout or its git directory)}"
  mkdir -p "$work/lgs"
  if git -C "$LGS_SRC" rev-parse --git-dir > /dev/null 2>&1; then
    git -C "$LGS_SRC" archive "$LGS_COMMIT" | tar -x -C "$work/lgs"
  else
    cp -r "$LGS_SRC"/. "$work/lgs"
  fi
  (
    cd "$lgs"
    gengetopt -F loggopsim_cmdline -i loggopsim_cmdline.ggo
    gengetopt -F txt2bin_cmdline -i txt2bin_cmdline.ggo
    re2c -o txt2bin.cpp txt2bin.re
    g++ -std=c++11 -O3 -w txt2bin.cpp txt2bin_cmdline.c -o txt2bin
    g++ -std=c++11 -O3 -w LogGOPSim.cpp loggopsim_cmdline.c -o LogGOPSim -lcgraph
  )
  (
    cd "$sg"
    gengetopt -i schedgen_cmdline.ggo -F schedgen_cmdline
    for f in buffer_element.cpp process_trace.cpp schedgen.cpp; do g++ -O3 -w -std=c++11 -c "$f"; done
    gcc -O3 -c schedgen_cmdline.c
    g++ ./*.o -o schedgen -lboost_iostreams
  ) || echo "Schedgen did not build: the GOAL files are written by commcost goal" >&2
fi

# workload: Schedgen pattern, ranks, bytes
spec() {
  case "$1" in
    bcast_p12) echo "binomialtreebcast 4096 8" ;;
    bcast_p16) echo "binomialtreebcast 65536 8" ;;
    bcast_p20) echo "binomialtreebcast 1048576 8" ;;
    recdoub_p10) echo "allreduce_recdoub 1024 8" ;;
    recdoub_p14) echo "allreduce_recdoub 16384 8" ;;
    recdoub_p16) echo "allreduce_recdoub 65536 8" ;;
    dissem_p10) echo "dissemination 1024 1048576" ;;
    ring_p10) echo "allreduce_ring 1024 1048576" ;;
    *) echo "unknown workload $1 (see --list)" >&2; exit 2 ;;
  esac
}

lgs_args=(-L 3000 -o 1000 -g 2000 -G 1 -O 0 -S 2000000000)

if [ "$header" = 1 ] && [ "$prepare" = 0 ]; then
  echo "| workload | operations | commcost simulate --goal | LogGOPSim (binary) | txt2bin + LogGOPSim | speed-up vs LogGOPSim / vs txt2bin + LogGOPSim | peak RSS commcost | peak RSS LogGOPSim | peak RSS txt2bin | makespan commcost | makespan LogGOPSim |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
fi

for w in "${workloads[@]}"; do
  read -r pattern procs bytes <<< "$(spec "$w")"
  goal="$work/goal/$w.goal"
  bin="$work/goal/$w.bin"
  model="$work/goal/$w.model.json"
  if [ ! -s "$goal" ]; then
    if [ -x "$sg/schedgen" ]; then
      "$sg/schedgen" -p "$pattern" -s "$procs" -d "$bytes" -o "$goal" > /dev/null
    else
      "$cc" goal "$pattern" --procs "$procs" --bytes "$bytes" -o "$goal"
    fi
  fi
  [ -s "$bin" ] || "$lgs/txt2bin" -i "$goal" -o "$bin" > /dev/null
  [ "$prepare" = 1 ] && continue
  printf '{"model":"loggp","latency":3e-6,"overhead":1e-6,"gap":2e-6,"gap_per_byte":1e-9,"processors":%s}\n' \
    "$procs" > "$model"

  ours="$cc simulate --goal $goal --model $model --max-memory 16G --json"
  theirs="$lgs/LogGOPSim -f $bin ${lgs_args[*]}"
  compiled="$lgs/txt2bin -i $goal -o $work/goal/$w.tmp.bin && $theirs"
  json="$work/$w.hyperfine.json"
  hyperfine -i --runs "$runs" --warmup "$warmup" --style none --export-json "$json" \
    -n commcost "$ours" -n loggopsim "$theirs" -n txt2bin+loggopsim "$compiled" > /dev/null 2>&1
  rm -f "$work/goal/$w.tmp.bin"

  # LogGOPSim exits with a failure status when messages are left unmatched
  rss() { { /usr/bin/time -f %M "$@" 2>&1 > /dev/null || true; } | tail -1; }
  rss_ours=$(rss "$cc" simulate --goal "$goal" --model "$model" --max-memory 16G --json)
  rss_theirs=$(rss "$lgs/LogGOPSim" -f "$bin" "${lgs_args[@]}")
  rss_txt2bin=$(rss "$lgs/txt2bin" -i "$goal" -o "$work/goal/$w.tmp.bin")
  rm -f "$work/goal/$w.tmp.bin"

  "$cc" simulate --goal "$goal" --model "$model" --max-memory 16G --json > "$work/$w.commcost.json"
  "$lgs/LogGOPSim" -f "$bin" "${lgs_args[@]}" > "$work/$w.loggopsim.txt" 2>&1 || true

  python3 - "$json" "$w" "$rss_ours" "$rss_theirs" "$rss_txt2bin" "$work/$w.commcost.json" \
    "$work/$w.loggopsim.txt" <<'PY'
import json, re, sys
runs = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
w, rss_ours, rss_theirs, rss_txt2bin = sys.argv[2], *(int(x) for x in sys.argv[3:6])
ours_out = json.load(open(sys.argv[6]))
theirs_out = open(sys.argv[7]).read()
best = {k: v["min"] for k, v in runs.items()}
ops = ours_out.get("operations", "")
ours_ns = round(ours_out["makespan_seconds"] * 1e9, 3)
m = re.search(r"Maximum finishing time at host \d+: (\d+)", theirs_out)
hosts = [int(t) for t in re.findall(r"^Host \d+: (\d+)", theirs_out, re.M)]
stalled = "receive queue on host" in theirs_out or "send queue on host" in theirs_out
if stalled:
    theirs = "stalled (messages left in its queues)"
elif m:
    theirs = m.group(1) + " ns"
elif hosts:
    theirs = f"{max(hosts)} ns"
else:
    theirs = "no result"
def s(t): return f"{t:.3f} s"
def mb(kb): return f"{kb / 1024:.0f} MiB"
ns = f"{ours_ns:.3f}".rstrip("0").rstrip(".")
a, b, c = best["commcost"], best["loggopsim"], best["txt2bin+loggopsim"]
print(f"| {w} | {ops} | {s(a)} | {s(b)} | {s(c)} | {b / a:.2f}× / {c / a:.2f}× | "
      f"{mb(rss_ours)} | {mb(rss_theirs)} | {mb(rss_txt2bin)} | {ns} ns | {theirs} |")
PY
done
