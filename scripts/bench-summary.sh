#!/usr/bin/env bash
# Summarise criterion output as "benchmark [low estimate high]" lines.
# Usage: cargo bench -p commcost-benches --bench NAME 2>/dev/null | scripts/bench-summary.sh
awk '/time:/ { if ($1 != "time:") name = $1; match($0, /\[.*\]/); print name, substr($0, RSTART, RLENGTH); next }
     { name = $1 }'
