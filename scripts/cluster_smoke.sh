#!/usr/bin/env bash
# Smoke test of the emulated cluster (scripts/cluster-emu.sh), run by CI: 4 nodes behind
# 1 Gbit/s links, Open MPI's bcast timed by the crate's harness (validation/src/bin/mpi_collectives.rs) at
# three sizes, then the cluster removed. Fails unless
#   - every size was measured on 4 ranks on 4 distinct nodes,
#   - a 1 MiB bcast takes at least the wire time of one 1 MiB message at 1 Gbit/s (8.39 ms:
#     the links are shaped, so the network decides) and less than 8 such times,
#   - nothing the cluster made (namespaces, veths, bridge) is left afterwards.
# Usage: scripts/cluster_smoke.sh HARNESS   (target/release/mpi_collectives)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(readlink -f "${1:?usage: cluster_smoke.sh PATH-TO-mpi_collectives}")"
export CLUSTER_EMU_NAME=ccci
work="$(mktemp -d)"
trap 'scripts/cluster-emu.sh down; rm -rf "$work"' EXIT

scripts/cluster-emu.sh up 4 --rate 1gbit
hosts=$(timeout 60 scripts/cluster-emu.sh mpirun -- hostname 2>/dev/null | sort -u | tr '\n' ' ')
echo "ranks ran on: $hosts"
[ "$hosts" = "node-1 node-2 node-3 node-4 " ] || { echo "expected one rank on each of node-1..node-4"; exit 1; }

timeout 300 scripts/cluster-emu.sh mpirun -- "$bin" --collective bcast \
  --sizes 8,65536,1048576 --samples 5 --warmup 2 --target-us 1000 --output "$work/bcast.csv" \
  >/dev/null 2>&1
cat "$work/bcast.csv"
awk -F, '
  NR == 1 { next }
  { rows++; if ($3 != 4) { print "procs " $3 " != 4"; bad = 1 } }
  $7 == 1048576 {
    wire = 1048576 * 8 / 1e9
    if ($12 < wire) { printf "1 MiB bcast %.6f s is below one message wire time %.6f s: links not shaped\n", $12, wire; bad = 1 }
    if ($12 > 8 * wire) { printf "1 MiB bcast %.6f s is above 8 wire times %.6f s\n", $12, 8 * wire; bad = 1 }
    big = 1
  }
  END {
    if (rows != 3) { print "expected 3 rows, got " rows; bad = 1 }
    if (!big) { print "no 1 MiB row"; bad = 1 }
    exit bad
  }' "$work/bcast.csv"

scripts/cluster-emu.sh down
left=$( { ip netns list | grep -E '^ccci-' || true; ip -o link show | grep -E 'ccci-(v[0-9]+|br)' || true; } | wc -l)
[ "$left" = 0 ] || { echo "cluster-emu down left $left namespaces or links behind"; exit 1; }
echo "cluster smoke test passed"
