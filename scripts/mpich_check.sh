#!/usr/bin/env bash
# Check that MPICH obeys a collective selection JSON file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE).
#
# Usage: scripts/mpich_check.sh [--np 2,3,4] [--run-with OTHER_FILE|default] [--keep DIR]
#                               [--cache DIR] [--device-collectives none|percoll|all] FILE
#
# Runs scripts/mpich_trace/calls.c (every collective commcost prices for MPICH, on
# MPI_COMM_WORLD, a duplicate and a split communicator, with built-in and user-defined
# operators and MPI_IN_PLACE, plus MPI_Comm_dup and MPI_Comm_split) under MPICH's
# mpiexec.mpich with MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=FILE and
# MPIR_CVAR_DEVICE_COLLECTIVES=none, every rank under `gdb -batch`: a dprintf on the entry of
# every MPICH collective algorithm function logs each call (libmpich is stripped; the entries are
# found by scripts/mpich_trace/locate.py from the functions' own __func__ strings). Then
# scripts/mpich_trace/check.py evaluates FILE independently, as MPICH's csel.c does, for each
# call and fails unless every algorithm that ran is the file's choice. No run may abort.
# --run-with OTHER_FILE gives MPICH OTHER_FILE but checks against FILE, and --run-with default
# runs MPICH with its built-in table: the negative tests, which must fail when what ran differs
# from what FILE selects. --cache DIR keeps the located entries (per library build ID) for the
# next run. --device-collectives sets MPIR_CVAR_DEVICE_COLLECTIVES (default none; under MPICH's
# default, percoll, the ch4 device's node-aware compositions run the file's algorithms on node
# sub-communicators, which on one node have the size of the communicator itself).
# Needs MPICH (mpicc.mpich, mpiexec.mpich), gdb with Python, objdump/readelf (binutils), python3.
# Exit status: 0 obeyed, 1 not obeyed (or a run failed), 2 usage/setup error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
nps="2,3,4"
run_with=""
keep=""
cache=""
device=none
max_size=$((1 << 22))
while [ $# -gt 1 ]; do
  case "$1" in
    --np) nps="$2"; shift 2 ;;
    --run-with) run_with="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --cache) cache="$2"; shift 2 ;;
    --device-collectives) device="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { sed -n '2,28p' "$0" >&2; exit 2; }
case "$device" in none|percoll|all) ;; *) echo "--device-collectives: none, percoll or all" >&2; exit 2 ;; esac
file="$1"
[ -r "$file" ] || { echo "cannot read $file" >&2; exit 2; }
run_file="${run_with:-$file}"
[ "$run_file" = default ] || [ -r "$run_file" ] || { echo "cannot read $run_file" >&2; exit 2; }
for tool in mpicc.mpich mpiexec.mpich gdb objdump readelf python3; do
  command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 2; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mpicc.mpich -O1 -g -o "$work/calls" "$here/mpich_trace/calls.c"
lib="$(ldd "$work/calls" | awk '/libmpich\.so/ { print $3; exit }')"
[ -n "$lib" ] && [ -r "$lib" ] || { echo "the program is not linked with libmpich" >&2; exit 2; }
lib="$(readlink -f "$lib")"

# the algorithm functions of the priced collectives (their names are in the library's .rodata),
# and every algorithm either file names
{
  strings -n 12 "$lib" | grep -E '^MPIR_(Bcast|Reduce|Allreduce|Alltoall|Allgather|Gather|Scatter|Barrier)_(intra|inter|allcomm)_[a-z_]+$' | grep -v '_auto$' || true
  for f in "$file" "$run_file"; do
    [ "$f" = default ] || grep -oE '"algorithm=MPIR_[A-Za-z_]+"' "$f" | sed 's/"algorithm=//; s/"$//'
  done
} | sort -u > "$work/names.txt"
build_id="$(readelf -n "$lib" | awk '/Build ID/ { print $3 }')"
cached="${cache:+$cache/entries.${build_id:-unknown}.txt}"
if [ -n "$cached" ] && [ -s "$cached" ] && [ -z "$(comm -23 "$work/names.txt" "$cached.names")" ]; then
  cp "$cached" "$work/entries.txt"
else
  python3 "$here/mpich_trace/locate.py" "$lib" $(cat "$work/names.txt") > "$work/entries.txt" \
    2> "$work/locate.err" || { cat "$work/locate.err" >&2; exit 2; }
  if [ -n "$cached" ]; then
    mkdir -p "$cache" && cp "$work/entries.txt" "$cached" && cp "$work/names.txt" "$cached.names"
  fi
fi
echo "library: $lib ($(wc -l < "$work/entries.txt") algorithm entries located)"

# message sizes: around every size bound of the file, plus a few fixed points
sizes="$(grep -oE '(avg|total)_msg_size<=?[0-9]+' "$file" | grep -oE '[0-9]+$' | awk -v max="$max_size" '
  function add(s) { if (s >= 1 && s <= max) S[s] = 1 }
  { add($1 - 1); add($1); add($1 + 1) }
  END { add(1); add(2); add(3); add(64); add(4096); add(65536); add(1048576); for (s in S) print s }' \
  | sort -n | tr '\n' ' ')"

{
  echo "set pagination off"
  echo "set confirm off"
  echo "set startup-with-shell off"
  echo "set print thread-events off"
  echo "set print inferior-events off"
  echo "break main"
  echo "run"
  echo "python"
  echo "import gdb"
  echo "lib = '$lib'"
  echo "starts = [int(l.split()[0], 16) for l in gdb.execute('info proc mappings', to_string=True).splitlines() if l.strip().endswith(lib)]"
  echo "base = min(starts)"
  echo "for line in open('$work/entries.txt'):"
  echo "    off, name = line.split()"
  echo "    gdb.execute('dprintf *%d,\"CALL %s\\\\n\"' % (base + int(off, 16), name), to_string=True)"
  echo "end"
  echo 'dprintf commcost_mark,"MARK %s\n",what'
  echo "continue"
} > "$work/trace.gdb"
cat > "$work/rank.sh" <<WRAP
#!/bin/sh
exec gdb -q -batch -nx -x "$work/trace.gdb" --args "$work/calls" "\$@" > "$work/trace.np\$COMMCOST_NP.rank\$PMI_RANK" 2>&1
WRAP
chmod +x "$work/rank.sh"

env_file=()
if [ "$run_file" != default ]; then
  env_file=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE
    "$(cd "$(dirname "$run_file")" && pwd)/$(basename "$run_file")")
fi
echo "selection file: $file"
if [ -n "$run_with" ]; then echo "MPICH runs with: $run_with (negative test)"; fi
echo "message sizes (bytes): $sizes"
status=0
for np in ${nps//,/ }; do
  if ! COMMCOST_NP="$np" timeout 600 mpiexec.mpich -n "$np" "${env_file[@]}" \
      -genv MPIR_CVAR_DEVICE_COLLECTIVES "$device" -genv COMMCOST_NP "$np" \
      "$work/rank.sh" $sizes; then
    echo "FAILED: the run on $np ranks did not complete" >&2
    status=1
  fi
done
if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$work"/trace.np* "$work/entries.txt" "$keep"/; fi
python3 "$here/mpich_trace/check.py" "$file" "$work"/trace.np* || status=1
exit "$status"
