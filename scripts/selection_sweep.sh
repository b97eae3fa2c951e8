#!/usr/bin/env bash
# Time Open MPI's collectives with the OSU Micro-Benchmarks: Open MPI's default decision
# (`default`), optionally a coll_tuned rules file (for example one written by `commcost export
# ompi-rules`; `rules`), and every algorithm of the tuned component forced (`forced:ID:SEGSIZE`),
# each configuration repeated, in alternating order, and write one CSV of what OSU printed.
#
# Usage:
#   scripts/selection_sweep.sh --osu DIR --out CSV [--rules FILE | --no-rules] [--rules-named NAME=FILE ...]
#       [--platform vader|cluster] [--procs P] [--cluster NODESxRANKS] [--rate 1gbit]
#       [--peakrate] [--shim|--no-shim] [--no-fifo]
#       [--repeats 3] [--first-repeat 1] [--iterations 50] [--warmup W]
#       [--iterations-large N] [--warmup-large W] [--large-from 32768]
#       [--min-bytes 1] [--max-bytes 1048576] [--timeout 600]
#       [--only "bcast reduce ..."] [--no-forced] [--segsizes "0 65536"] [--han]
#
# DIR holds OSU's osu_<collective> binaries built with Open MPI's mpicc (the OSU
# Micro-Benchmarks are not part of this repository; build them from their source).
# --platform vader (default): P ranks on this machine over shared memory (btl self,vader).
# --platform cluster: scripts/cluster-emu.sh builds NODES namespaces behind rate-limited links
#   (--rate; --peakrate adds tbf's peakrate, see cluster-emu.sh), RANKS ranks per node (btl
#   self,tcp; self,vader,tcp with several ranks per node), and removes them at the end (also on
#   failure or interruption). With one rank per node the ranks run with cluster-emu.sh's
#   idle-sleep shim (--no-shim: without; with several ranks per node it is off, --shim: on) and
#   under SCHED_FIFO (--no-fifo: without).
# --rules FILE adds the configuration `rules` (coll_tuned_use_dynamic_rules with FILE); without
#   --rules (or with --no-rules) only the default and the forced algorithms run.
#   --rules-named NAME=FILE (repeatable) adds the configuration `rules:NAME` with FILE, so that
#   several rules files (one from `commcost tune`, one from `commcost export ompi-rules`) are
#   timed in the same sweep.
# --han adds the configuration `han`: Open MPI's hierarchical component (`--mca coll_han_priority
#   100`; it then runs bcast, reduce, allreduce, gather and scatter on communicators spanning
#   several nodes of several ranks).
#
# Each OSU run: `-f -i ITER -x W -m MIN:MAX` (full statistics: average, minimum and maximum over
# ranks of each rank's mean time per call; W defaults to ITER / 5, at least 2). With
# --iterations-large N, sizes from --large-from up run in a second OSU invocation with `-i N`
# (warm-up --warmup-large, default N / 5, at least 1), so that large sizes do not take minutes;
# the CSV's iterations column is what OSU reports for each size. Barrier runs once per
# configuration with --iterations.
#
# Order: for each repeat, for each collective, every configuration of that collective back to
# back: the default, `rules` (with a rules file), each `rules:NAME`, then every forced algorithm (segmentable ones
# also with each segment size the rules file uses for that collective; --segsizes LIST instead
# runs each forced algorithm with each size of LIST, 0 = unsegmented, segment sizes other than 0
# only for the algorithms that take one). Odd repeats go forward
# through the collectives and through each collective's configurations, even repeats backward, so
# that an order effect cannot favour one configuration. --no-forced runs the default and `rules`
# only. Algorithms that cannot run are skipped (two_proc at P > 2); runs that fail or exceed
# --timeout seconds are skipped too. Both are listed in CSV-without-.csv + `-failed.csv`
# (platform,collective,procs,config,repeat,sizes,status).
#
# Optional, for sharing a machine with other measurements: COMMCOST_MEASURE_LOCK names a lock
# file (flock) held through each collective's runs of one repeat; COMMCOST_MEASURE_GATE a second
# file held with it. Without them no lock is taken.
#
# CSV columns: platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations
# config: default | han | rules | rules:NAME | forced:ID:SEGSIZE
set -euo pipefail
cd "$(dirname "$0")/.."

osu="" rules="" out="" platform="vader" procs=2 cluster="" rate="1gbit" repeats=3 iters=50
warm="" iters_large="" warm_large="" large_from=32768 min_bytes=1 max_bytes=1048576 forced=1
first_repeat=1 run_timeout=600 peakrate=0 shim="" fifo="" segsizes="" han=0
only="bcast reduce allreduce allgather alltoall gather scatter reduce_scatter barrier"
named_names=() named_files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu="$2"; shift 2 ;;
    --rules) rules="$2"; shift 2 ;;
    --no-rules) rules=""; shift ;;
    --rules-named)
      [[ "$2" =~ ^([A-Za-z0-9_-]+)=(.+)$ ]] || { echo "selection_sweep: --rules-named NAME=FILE" >&2; exit 2; }
      [ -f "${BASH_REMATCH[2]}" ] || { echo "selection_sweep: --rules-named ${BASH_REMATCH[2]}: no such file" >&2; exit 2; }
      named_names+=("${BASH_REMATCH[1]}"); named_files+=("$(readlink -f "${BASH_REMATCH[2]}")"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --procs) procs="$2"; shift 2 ;;
    --cluster) cluster="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --peakrate) peakrate=1; shift ;;
    --no-shim) shim=0; shift ;;
    --shim) shim=1; shift ;;
    --no-fifo) fifo=0; shift ;;
    --repeats) repeats="$2"; shift 2 ;;
    --first-repeat) first_repeat="$2"; shift 2 ;;
    --iterations) iters="$2"; shift 2 ;;
    --warmup) warm="$2"; shift 2 ;;
    --iterations-large) iters_large="$2"; shift 2 ;;
    --warmup-large) warm_large="$2"; shift 2 ;;
    --large-from) large_from="$2"; shift 2 ;;
    --min-bytes) min_bytes="$2"; shift 2 ;;
    --max-bytes) max_bytes="$2"; shift 2 ;;
    --timeout) run_timeout="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --no-forced) forced=0; shift ;;
    --han) han=1; shift ;;
    --segsizes) segsizes="$2"; shift 2 ;;
    *) echo "selection_sweep: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$osu" ] && [ -n "$out" ] || { echo "selection_sweep: --osu and --out are required" >&2; exit 2; }
if [ -n "$rules" ]; then
  [ -f "$rules" ] || { echo "selection_sweep: --rules $rules: no such file" >&2; exit 2; }
  rules="$(readlink -f "$rules")"
fi
osu="$(readlink -f "$osu")"
for c in $only; do [ -x "$osu/osu_$c" ] || { echo "selection_sweep: $osu/osu_$c missing" >&2; exit 2; }; done
failed="${out%.csv}-failed.csv"
lock="${COMMCOST_MEASURE_LOCK:-}"
gate="${COMMCOST_MEASURE_GATE:-}"
lock_begin() {
  if [ -n "$gate" ]; then exec 8>>"$gate"; flock -x 8; fi
  if [ -n "$lock" ]; then exec 9>>"$lock"; flock -x 9; fi
}
lock_end() {
  if [ -n "$lock" ]; then flock -u 9; exec 9>&-; fi
  if [ -n "$gate" ]; then flock -u 8; exec 8>&-; fi
}

emu_opts=()
case "$platform" in
  vader) label="vader-p$procs" ;;
  cluster)
    [[ "$cluster" =~ ^([0-9]+)x([0-9]+)$ ]] || { echo "selection_sweep: --cluster NODESxRANKS" >&2; exit 2; }
    nodes="${BASH_REMATCH[1]}"; ppn="${BASH_REMATCH[2]}"; procs=$((nodes * ppn))
    label="cluster-${rate}-${nodes}x${ppn}"
    export CLUSTER_EMU_NAME="${CLUSTER_EMU_NAME:-ccsel}"
    up_opts=(--rate "$rate")
    if [ "$peakrate" = 1 ]; then up_opts+=(--peakrate); fi
    if [ "$shim" = 0 ]; then emu_opts+=(--no-shim); elif [ "$shim" = 1 ]; then emu_opts+=(--shim); fi
    if [ "$fifo" = 0 ]; then emu_opts+=(--no-fifo); fi
    trap 'scripts/cluster-emu.sh down' EXIT
    trap 'exit 130' INT TERM HUP
    scripts/cluster-emu.sh up "$nodes" "${up_opts[@]}"
    ;;
  *) echo "selection_sweep: --platform vader or cluster" >&2; exit 2 ;;
esac

# Open MPI 4.1.4's algorithm count per collective (ompi_info --param coll tuned --level 9) and
# which ids take a segment size
count_of() {
  case "$1" in
    allgather) echo 6 ;; allreduce) echo 6 ;; alltoall) echo 5 ;; barrier) echo 6 ;;
    bcast) echo 9 ;; gather) echo 3 ;; reduce) echo 7 ;; reduce_scatter) echo 4 ;; scatter) echo 3 ;;
  esac
}
segmentable() {
  case "$1:$2" in bcast:[2-9]|reduce:[2-6]|allreduce:5|gather:3) return 0 ;; *) return 1 ;; esac
}
# the rules file's collective id of each OSU test
ompi_id() {
  case "$1" in
    allgather) echo 0 ;; allreduce) echo 2 ;; alltoall) echo 3 ;; barrier) echo 6 ;; bcast) echo 7 ;;
    gather) echo 9 ;; reduce) echo 11 ;; reduce_scatter) echo 12 ;; scatter) echo 15 ;;
  esac
}
# segment sizes the rules file uses for one collective (comments stripped; rule lines have 4 fields)
segs_in_rules() {
  [ -n "$rules" ] || return 0
  awk -v id="$(ompi_id "$1")" '
    { sub(/#.*/, "") } NF == 0 { next }
    { for (i = 1; i <= NF; i++) tok[++n] = $i }
    END {
      p = 1; ncoll = tok[p++]
      for (c = 0; c < ncoll; c++) {
        cid = tok[p++]; nblk = tok[p++]
        for (b = 0; b < nblk; b++) {
          p++; nrule = tok[p++]
          for (r = 0; r < nrule; r++) { alg = tok[p+1]; seg = tok[p+3]; p += 4; if (cid == id && alg != 0 && seg != 0) print seg }
        }
      }
    }' "$rules" | sort -un
}
# every configuration of one collective, in forward order
configs_of() {
  local coll="$1" id seg
  echo default
  if [ "$han" = 1 ]; then echo han; fi
  if [ -n "$rules" ]; then echo rules; fi
  local k
  for k in "${!named_names[@]}"; do echo "rules:${named_names[$k]}"; done
  [ "$forced" = 1 ] || return 0
  for id in $(seq 1 "$(count_of "$coll")"); do
    for seg in ${segsizes:-0 $(segs_in_rules "$coll")}; do
      if [ "$seg" != 0 ] && ! segmentable "$coll" "$id"; then continue; fi
      echo "forced:$id:$seg"
    done
  done
}
# two_proc algorithms exist only for P = 2 (Open MPI 4.1.4 aborts with MPI_ERR_UNSUPPORTED_OPERATION)
cannot_run() {
  case "$1:$2" in allgather:forced:6:*|alltoall:forced:5:*|barrier:forced:5:*) [ "$procs" != 2 ] ;; *) return 1 ;; esac
}
reverse() { awk '{ l[NR] = $0 } END { for (i = NR; i >= 1; i--) print l[i] }'; }

[ -n "$warm" ] || { warm=$(( iters / 5 )); [ "$warm" -ge 2 ] || warm=2; }
if [ -n "$iters_large" ] && [ -z "$warm_large" ]; then
  warm_large=$(( iters_large / 5 )); [ "$warm_large" -ge 1 ] || warm_large=1
fi
# OSU invocations per configuration: "ITER WARMUP MIN MAX" (MAX 0: barrier, no sizes)
bands_of() {
  if [ "$1" = barrier ]; then echo "$iters $warm 0 0"; return; fi
  if [ -z "$iters_large" ] || [ "$max_bytes" -lt "$large_from" ]; then
    echo "$iters $warm $min_bytes $max_bytes"
  elif [ "$min_bytes" -ge "$large_from" ]; then
    echo "$iters_large $warm_large $min_bytes $max_bytes"
  else
    echo "$iters $warm $min_bytes $(( large_from / 2 ))"
    echo "$iters_large $warm_large $large_from $max_bytes"
  fi
}

run_osu() { # config repeat coll iter warmup min max [mca...]
  local config="$1" rep="$2" coll="$3" it="$4" wu="$5" lo="$6" hi="$7"; shift 7
  local tmp rc=0
  tmp="$(mktemp)"
  local cmd=("$osu/osu_$coll" -f -i "$it" -x "$wu")
  [ "$coll" = barrier ] || cmd+=(-m "$lo:$hi")
  if [ "$platform" = cluster ]; then
    CLUSTER_MPIRUN_ARGS="$*" timeout -k 10 "$run_timeout" scripts/cluster-emu.sh mpirun --ppn "$ppn" \
      "${emu_opts[@]}" -- "${cmd[@]}" </dev/null >"$tmp" 2>/dev/null || rc=$?
  else
    local extra=()
    if [ "$procs" -gt 2 ]; then extra=(--oversubscribe --mca mpi_yield_when_idle 1); fi
    # shellcheck disable=SC2068
    timeout -k 10 "$run_timeout" mpirun --allow-run-as-root --mca btl self,vader "${extra[@]}" $@ \
      -np "$procs" "${cmd[@]}" </dev/null >"$tmp" 2>/dev/null || rc=$?
  fi
  if [ "$rc" != 0 ]; then
    local status="exit $rc"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status="timeout ${run_timeout}s"; fi
    echo "FAILED ($status): $config $coll $lo-$hi repeat $rep" >&2
    echo "$label,$coll,$procs,$config,$rep,$lo-$hi,$status" >> "$failed"
    rm -f "$tmp"
    # a killed run may leave daemons and ranks in the nodes: end them
    if [ "$platform" = cluster ]; then scripts/cluster-emu.sh reap || true; fi
    return 1
  fi
  awk -v pl="$label" -v c="$coll" -v p="$procs" -v cfg="$config" -v r="$rep" '
    /^#/ || NF == 0 { next }
    c == "barrier" && NF == 4 { printf "%s,%s,%s,%s,%s,0,%s,%s,%s,%s\n", pl, c, p, cfg, r, $1, $2, $3, $4; next }
    NF == 5 { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", pl, c, p, cfg, r, $1, $2, $3, $4, $5 }
  ' "$tmp" >> "$out"
  rm -f "$tmp"
}

mca_of() { # coll config
  local coll="$1" config="$2"
  case "$config" in
    default) ;;
    han) echo "--mca coll_han_priority 100" ;;
    rules) echo "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename $rules" ;;
    rules:*)
      local k
      for k in "${!named_names[@]}"; do
        if [ "rules:${named_names[$k]}" = "$config" ]; then
          echo "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename ${named_files[$k]}"
        fi
      done ;;
    forced:*)
      local id seg
      id="$(echo "$config" | cut -d: -f2)"; seg="$(echo "$config" | cut -d: -f3)"
      echo "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_${coll}_algorithm $id --mca coll_tuned_${coll}_algorithm_segmentsize $seg" ;;
  esac
}

if [ "$first_repeat" = 1 ] || [ ! -f "$out" ]; then
  echo "platform,collective,procs,config,repeat,bytes,avg_us,min_us,max_us,iterations" > "$out"
  echo "platform,collective,procs,config,repeat,sizes,status" > "$failed"
fi
start=$(date +%s)
for rep in $(seq "$first_repeat" "$repeats"); do
  colls="$(printf '%s\n' $only)"
  if [ $((rep % 2)) = 0 ]; then colls="$(echo "$colls" | reverse)"; fi
  for coll in $colls; do
    lock_begin
    cfgs="$(configs_of "$coll")"
    if [ $((rep % 2)) = 0 ]; then cfgs="$(echo "$cfgs" | reverse)"; fi
    for config in $cfgs; do
      if cannot_run "$coll" "$config"; then
        echo "$label,$coll,$procs,$config,$rep,all,skipped: two_proc needs P = 2" >> "$failed"
        continue
      fi
      while read -r it wu lo hi; do
        # shellcheck disable=SC2046
        run_osu "$config" "$rep" "$coll" "$it" "$wu" "$lo" "$hi" $(mca_of "$coll" "$config") || true
      done < <(bands_of "$coll")
    done
    lock_end
    echo "repeat $rep $coll done after $(( $(date +%s) - start )) s" >&2
  done
  echo "repeat $rep done after $(( $(date +%s) - start )) s" >&2
done
echo "wrote $out ($(( $(wc -l < "$out") - 1 )) rows) in $(( $(date +%s) - start )) s" >&2
