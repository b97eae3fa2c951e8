#!/usr/bin/env bash
# Check that Open MPI obeys a coll_tuned dynamic rules file.
#
# Usage: scripts/ompi_rules_check.sh [--np 2,4] [--run-with OTHER_FILE] [--keep DIR] RULES_FILE
#
# Runs scripts/ompi-trace/calls.c (every collective the tuned component decides, once per
# message size around each boundary of the file) under
#   mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE
# with the LD_PRELOAD shim scripts/ompi-trace/trace.c, which logs every Open MPI
# ompi_coll_base_<collective>_intra_<algorithm> call; parses RULES_FILE independently
# (scripts/ompi-trace/rules.awk) and fails unless every call the file decides ran the algorithm
# (and segment size, chain fan-out) the file selects — allowing only Open MPI 4.1.4's known
# internal fallbacks (scripts/ompi-trace/check.awk lists them).
# --run-with OTHER_FILE gives Open MPI OTHER_FILE but checks against RULES_FILE, and
# --run-with none runs Open MPI with its fixed decisions (no rules file): the negative tests,
# which must fail when what ran differs from what RULES_FILE selects.
# The shim and the program are compiled here with mpicc; nothing binary is committed.
# Exit status: 0 obeyed, 1 not obeyed (or nothing decided by the file), 2 usage/setup error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
nps="2,4"
run_with=""
keep=""
max_size=$((1 << 22))
while [ $# -gt 1 ]; do
  case "$1" in
    --np) nps="$2"; shift 2 ;;
    --run-with) run_with="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
rules="$1"
[ -r "$rules" ] || { echo "cannot read $rules" >&2; exit 2; }
run_file="${run_with:-$rules}"
[ "$run_file" = none ] || [ -r "$run_file" ] || { echo "cannot read $run_file" >&2; exit 2; }
for tool in mpicc mpirun awk; do
  command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 2; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mpicc -shared -fPIC -O2 -o "$work/trace.so" "$here/ompi-trace/trace.c" -ldl
mpicc -O1 -o "$work/calls" "$here/ompi-trace/calls.c"

awk -f "$here/ompi-trace/rules.awk" "$rules" > "$work/rules.txt" || exit 2
# Open MPI needs an absolute path (it is opened by every rank, from its own working directory)
if [ "$run_file" = none ]; then
  rules_mca=(--mca coll_tuned_use_dynamic_rules 0)
else
  rules_mca=(--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename
    "$(cd "$(dirname "$run_file")" && pwd)/$(basename "$run_file")")
fi

# message sizes: around every boundary of the file, plus a few fixed points
sizes="$(awk -v max="$max_size" '
  function add(s) { if (s >= 1 && s <= max) S[s] = 1 }
  { b = $3; add(b - 1); add(b); add(b + 1); e = int((b + 7) / 8) * 8; add(e); add(e - 8); add(e + 8) }
  END { add(1); add(64); add(4096); add(65536); add(1048576); for (s in S) print s }' "$work/rules.txt" | sort -n | tr '\n' ' ')"

echo "rules file: $rules ($(wc -l < "$work/rules.txt") rules)"
if [ -n "$run_with" ]; then echo "Open MPI runs with: $run_with (negative test)"; fi
echo "message sizes (bytes): $sizes"
for np in ${nps//,/ }; do
  COMMCOST_OMPI_TRACE="$work/trace.np$np" LD_PRELOAD="$work/trace.so" \
    timeout 300 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader \
    -x COMMCOST_OMPI_TRACE -x LD_PRELOAD \
    "${rules_mca[@]}" \
    -np "$np" "$work/calls" $sizes
done
if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$work"/trace.np* "$work/rules.txt" "$keep"/; fi
awk -f "$here/ompi-trace/check.awk" "$work/rules.txt" "$work"/trace.np*
