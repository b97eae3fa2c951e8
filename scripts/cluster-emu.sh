#!/usr/bin/env bash
# An emulated cluster on one Linux machine: N "nodes" as network namespaces, each joined to a
# bridge by a veth pair shaped with a token bucket (tc tbf) in both directions, and Open MPI
# launched across them as across hosts (MPICH too: `mpiexec-mpich`).
#
# Why: on a machine with few cores, 4 or 8 MPI ranks fight for the CPUs and a collective's time
# says more about the scheduler than about the algorithm. Behind rate-limited links the network
# decides from a few KiB up (1 Gbit/s: 1 MiB takes about 8.3 ms on the wire), repeatably.
#
# Usage (as root; needs iproute2 and Open MPI):
#   scripts/cluster-emu.sh up N [--rate 1gbit] [--peakrate] [--name cc]   build nodes 1..N
#   scripts/cluster-emu.sh mpirun [--ppn R] [--nodes K] [--btl LIST] [--shim|--no-shim]
#                                 [--fifo|--no-fifo] -- PROGRAM ARGS...
#                                     run PROGRAM on nodes 1..K (default all; R ranks per node, default 1;
#                                     BTLs default self,tcp for R = 1, self,vader,tcp otherwise)
#   scripts/cluster-emu.sh mpiexec-mpich [--ppn R] [--nodes K] -- [MPIEXEC OPTIONS] PROGRAM ARGS...
#                                     the same with MPICH (Hydra's mpiexec.mpich, ch4:ucx over TCP)
#   scripts/cluster-emu.sh down [--name cc]                 remove everything `up` created
#   scripts/cluster-emu.sh reap [--name cc]                 end every process running in the nodes
#   scripts/cluster-emu.sh status [--name cc]
#   scripts/cluster-emu.sh rsh-NAME HOST CMD...              Open MPI's launcher (internal)
#   CLUSTER_EMU_AGENT=NAME scripts/cluster-emu.sh HOST CMD... Hydra's launcher (internal)
#
# Topology: a star. Node K is namespace NAME-nK with interface eth0 = 10.213.X.K/24 (X derived
# from NAME, so clusters of different names do not collide); the other end of its veth (NAME-vK)
# is a port of the bridge NAME-br (10.213.X.254/24) in the root
# namespace. MTU 9000 everywhere. tbf shapes the node side's egress (what the node sends) and the
# bridge side's egress (what the node receives), burst max(16 KiB, rate x 250 us), limit 16 MB.
# RPS is set on both veth ends so that a flow's packets are not reordered between CPUs.
# --peakrate adds `peakrate 1.05 x rate mtu 9100` to every tbf: a second bucket of one jumbo frame,
# so that a burst of back-to-back packets drains at (about) the rate instead of leaving at line
# speed until the main bucket is empty; a lone packet still passes at once.
#
# Open MPI: mpirun stays in the root namespace and sees the nodes as hosts 10.213.77.K; its
# remote-shell agent is this script (`rsh`), which runs the daemon in the node's namespace with a
# private UTS namespace and hostname node-K (so Open MPI sees distinct nodes and uses shared
# memory only inside a node). Out-of-band and BTL traffic are restricted to the cluster subnet.
# Idle ranks: `mpi_yield_when_idle 1`, and (--shim, the default with one rank per node)
# scripts/ompi_idle_sleep.c preloaded into the ranks (built at run time with cc into
# /run/NAME-idle-sleep.so): after 50 consecutive empty non-blocking polls of Open MPI's progress
# loop a rank sleeps in ppoll() on the same descriptors (at most 1 ms), so a waiting rank leaves
# the core to the one that has work. Only TCP wakes it: a shared-memory (vader) message has no
# descriptor, so its receiver sleeps out the 1 ms. With several ranks per node the shim is
# therefore off by default (measured at 4 nodes x 2 ranks, 3 repeats: a reduce pipelined in 4 KiB
# segments took 21-31 ms per 64 KiB call with the shim, 2.3-2.5 ms without); --shim forces it on,
# --no-shim off. --fifo (the default with one rank per node; --no-fifo turns it off)
# starts each node's orted, and so its ranks, with `chrt -f 1` (SCHED_FIFO priority 1), so that
# other work on the machine does not delay them.
#
# MPICH: mpiexec.mpich stays in the root namespace too, launches its proxies through this script
# (`-launcher rsh -launcher-exec` this script, with CLUSTER_EMU_AGENT naming the cluster, since
# Hydra passes no arguments of its own to the agent) and listens on the bridge (`-iface`). The
# ranks use UCX's TCP transport on eth0 (UCX_TLS=tcp,self, UCX_NET_DEVICES=eth0; with R > 1
# MPICH's own shared memory inside a node). MPICH 4.0's ch4 device busy-polls UCX and never
# yields the core: with more ranks than cores a rank whose message has arrived waits for the
# scheduler's slice (a 4-node osu_bcast of 8 B took 2-5 ms per call on 2 cores). So the ranks
# run with scripts/mpich_trace/ucx_yield.c preloaded (built once into /run/NAME-ucx-yield.so,
# needs cc), which calls sched_yield() when a UCX poll found nothing, as Open MPI's
# `mpi_yield_when_idle 1` above does. Extra mpiexec options go after `--`, before the program.
#
# Everything `up` creates carries the NAME prefix, and `down` removes it (also what a failed `up`
# left behind). The state file /run/NAME-cluster-emu records the node count.
set -euo pipefail

name="${CLUSTER_EMU_NAME:-cc}"
# one /24 per cluster name, so that clusters of different names can exist side by side
subnet_of() { echo "10.213.$(( $(printf '%s' "$1" | cksum | cut -d' ' -f1) % 200 + 20 ))"; }
subnet="$(subnet_of "$name")"
self="$(readlink -f "$0")"

die() { echo "cluster-emu: $*" >&2; exit 2; }
need_root() { [ "$(id -u)" = 0 ] || die "must run as root (network namespaces, tc)"; }
state_file() { echo "/run/${name}-cluster-emu"; }

# the largest CPU mask of this machine, for RPS (hex, comma-free for up to 32 CPUs)
cpu_mask() {
  local n
  n=$(nproc --all)
  if [ "$n" -ge 32 ]; then echo ffffffff; else printf '%x' $(( (1 << n) - 1 )); fi
}

# burst in bytes for a tc rate such as 1gbit, 200mbit, 10gbit: max(16 KiB, rate x 250 us)
burst_for() {
  local rate="$1" bits
  case "$rate" in
    *gbit) bits=$(( ${rate%gbit} * 1000000000 )) ;;
    *mbit) bits=$(( ${rate%mbit} * 1000000 )) ;;
    *kbit) bits=$(( ${rate%kbit} * 1000 )) ;;
    *) die "--rate must be an integer with gbit, mbit or kbit (got $rate)" ;;
  esac
  local b=$(( bits / 8 / 4000 ))
  if [ "$b" -lt 16384 ]; then b=16384; fi
  echo "$b"
}

# 1.05 x a tc rate, in kbit (for tbf's peakrate)
peak_for() {
  local rate="$1" kbits
  case "$rate" in
    *gbit) kbits=$(( ${rate%gbit} * 1000000 )) ;;
    *mbit) kbits=$(( ${rate%mbit} * 1000 )) ;;
    *kbit) kbits=$(( ${rate%kbit} )) ;;
    *) die "--rate must be an integer with gbit, mbit or kbit (got $rate)" ;;
  esac
  echo "$(( kbits * 105 / 100 ))kbit"
}

# end every process running in the nodes' namespaces (daemons, ranks left by a killed run)
cmd_reap() {
  local ns pids
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${name}-n[0-9]+$" || true); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [ -n "$pids" ]; then kill -9 $pids 2>/dev/null || true; fi
  done
}

cmd_down() {
  need_root
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${name}-n[0-9]+$" || true); do
    # end every process still running in the node (daemons, ranks) before removing it
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [ -n "$pids" ]; then kill -9 $pids 2>/dev/null || true; fi
    ip netns del "$ns" 2>/dev/null || true
  done
  local dev
  for dev in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' \
      | grep -E "^${name}-(v[0-9]+|br)$" || true); do
    ip link del "$dev" 2>/dev/null || true
  done
  rm -f "$(state_file)" "/run/${name}-ucx-yield.so" "/run/${name}-idle-sleep.so"
}

cmd_up() {
  need_root
  local n="" rate="1gbit" peak=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --rate) rate="$2"; shift 2 ;;
      --peakrate) peak=1; shift ;;
      --no-peakrate) peak=0; shift ;;
      --name) name="$2"; subnet="$(subnet_of "$name")"; shift 2 ;;
      [0-9]*) n="$1"; shift ;;
      *) die "up: unknown argument $1" ;;
    esac
  done
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "up: node count must be 1..64 (got '$n')"
  [[ "$name" =~ ^[a-z][a-z0-9]{0,5}$ ]] || die "--name must be 1-6 lowercase letters/digits, starting with a letter"
  command -v ip >/dev/null && command -v tc >/dev/null || die "needs iproute2 (ip, tc)"
  local burst mask
  burst=$(burst_for "$rate")
  mask=$(cpu_mask)
  local shape="rate $rate burst $burst"
  if [ "$peak" = 1 ]; then shape="$shape peakrate $(peak_for "$rate") mtu 9100"; fi
  cmd_down
  up_done=0
  trap 'if [ "$up_done" != 1 ]; then echo "cluster-emu: up failed, removing what it made" >&2; cmd_down; fi' EXIT
  ip link add "${name}-br" type bridge
  ip link set "${name}-br" mtu 9000
  ip addr add "${subnet}.254/24" dev "${name}-br"
  ip link set "${name}-br" up
  local k ns v
  for k in $(seq 1 "$n"); do
    ns="${name}-n$k"; v="${name}-v$k"
    ip netns add "$ns"
    ip link add "$v" mtu 9000 type veth peer name eth0 netns "$ns"
    ip link set "$v" master "${name}-br"
    ip link set "$v" up
    ip netns exec "$ns" sh -c "
      sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
      ip link set lo up
      ip link set eth0 mtu 9000
      ip addr add ${subnet}.$k/24 dev eth0
      ip link set eth0 up
      tc qdisc add dev eth0 root tbf $shape limit 16mb
      echo $mask > /sys/class/net/eth0/queues/rx-0/rps_cpus 2>/dev/null || true
    "
    # shellcheck disable=SC2086
    tc qdisc add dev "$v" root tbf $shape limit 16mb
    echo "$mask" > "/sys/class/net/$v/queues/rx-0/rps_cpus" 2>/dev/null || true
  done
  # bridge ports forward only after the learning states; wait (bounded) for state 3
  local tries=0 ok
  while :; do
    ok=1
    for k in $(seq 1 "$n"); do
      if [ "$(cat "/sys/class/net/${name}-v$k/brport/state" 2>/dev/null || echo 0)" != 3 ]; then ok=0; fi
    done
    [ "$ok" = 1 ] && break
    tries=$((tries + 1))
    [ "$tries" -le 300 ] || die "bridge ports did not reach the forwarding state in 30 s"
    sleep 0.1
  done
  # every node reaches node 1 (one ping each, bounded; skipped where ping is not installed)
  for k in $(command -v ping >/dev/null && seq 2 "$n"); do
    ip netns exec "${name}-n$k" ping -q -c 1 -W 2 "${subnet}.1" >/dev/null \
      || die "node $k cannot reach node 1"
  done
  echo "$n $rate $peak" > "$(state_file)"
  up_done=1
  echo "cluster-emu: $n nodes ${subnet}.1-$n, links each way: tbf $shape"
}

cmd_status() {
  local f
  f="$(state_file)"
  [ -f "$f" ] || { echo "cluster-emu: no cluster named $name"; return 1; }
  read -r n rate peak < "$f"
  echo "cluster-emu: $n nodes, $rate links$([ "${peak:-0}" = 1 ] && echo ", peakrate $(peak_for "$rate")")"
  ip netns list | grep -E "^${name}-n[0-9]+" || true
}

# Open MPI's plm_rsh agent: `rsh [ssh-like options] HOST COMMAND...`
cmd_rsh() {
  while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
  local host="$1"; shift
  local k="${host##*.}"
  [[ "$host" == "${subnet}."* ]] && [[ "$k" =~ ^[0-9]+$ ]] || die "rsh: not a cluster host: $host"
  local fifo=()
  # SCHED_FIFO for the daemon and (inherited) its ranks, when cmd_mpirun asked for it
  if [ "${CLUSTER_EMU_FIFO:-0}" = 1 ]; then fifo=(chrt -f 1); fi
  exec ip netns exec "${name}-n$k" unshare --uts "${fifo[@]}" sh -c "hostname node-$k; exec sh -c \"\$0\"" "$*"
}

# the idle-sleep shim for Open MPI's ranks, built once per cluster name (needs cc)
build_idle_shim() {
  local shim="/run/${name}-idle-sleep.so" src
  src="$(dirname "$self")/ompi_idle_sleep.c"
  if [ ! -f "$shim" ] || [ "$src" -nt "$shim" ]; then
    cc -O2 -shared -fPIC -o "$shim.tmp.$$" "$src" -ldl && mv -f "$shim.tmp.$$" "$shim" \
      || die "cannot build $shim from $src"
  fi
  echo "$shim"
}

cmd_mpirun() {
  local ppn=1 btl="" use="" shim="" fifo=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --ppn) ppn="$2"; shift 2 ;;
      --nodes) use="$2"; shift 2 ;;
      --btl) btl="$2"; shift 2 ;;
      --shim) shim=1; shift ;;
      --no-shim) shim=0; shift ;;
      --fifo) fifo=1; shift ;;
      --no-fifo) fifo=0; shift ;;
      --name) name="$2"; subnet="$(subnet_of "$name")"; shift 2 ;;
      --) shift; break ;;
      *) die "mpirun: unknown option $1 (put the program after --)" ;;
    esac
  done
  [ $# -gt 0 ] || die "mpirun: no program given (after --)"
  [[ "$ppn" =~ ^[0-9]+$ ]] && [ "$ppn" -ge 1 ] || die "--ppn must be a positive integer"
  local f n rate
  f="$(state_file)"
  [ -f "$f" ] || die "no cluster named $name: run '$0 up N' first"
  read -r n rate _ < "$f"
  if [ -n "$use" ]; then
    [[ "$use" =~ ^[0-9]+$ ]] && [ "$use" -ge 1 ] && [ "$use" -le "$n" ] || die "--nodes must be 1..$n"
    n="$use"
  fi
  if [ -z "$btl" ]; then
    if [ "$ppn" = 1 ]; then btl="self,tcp"; else btl="self,vader,tcp"; fi
  fi
  if [ -z "$fifo" ]; then
    if [ "$ppn" = 1 ]; then fifo=1; else fifo=0; fi
  fi
  if [ -z "$shim" ]; then
    if [ "$ppn" = 1 ]; then shim=1; else shim=0; fi
  fi
  local hosts="" k
  for k in $(seq 1 "$n"); do hosts="${hosts:+$hosts,}${subnet}.$k:$ppn"; done
  local pre=()
  if [ "$shim" = 1 ]; then pre=(-x "LD_PRELOAD=$(build_idle_shim)"); fi
  export CLUSTER_EMU_FIFO="$fifo"
  # Collectives' message and MPI env passes through -x; extra mpirun options via $CLUSTER_MPIRUN_ARGS
  # shellcheck disable=SC2086
  exec mpirun --allow-run-as-root --host "$hosts" --map-by "ppr:$ppn:node" --bind-to none \
    --mca plm_rsh_agent "$self rsh-$name" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include "${subnet}.0/24" --mca btl_tcp_if_include "${subnet}.0/24" \
    --mca btl "$btl" --mca mpi_yield_when_idle 1 "${pre[@]}" \
    ${CLUSTER_MPIRUN_ARGS:-} "$@"
}

cmd_mpiexec_mpich() {
  local ppn=1 use=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --ppn) ppn="$2"; shift 2 ;;
      --nodes) use="$2"; shift 2 ;;
      --name) name="$2"; subnet="$(subnet_of "$name")"; shift 2 ;;
      --) shift; break ;;
      *) die "mpiexec-mpich: unknown option $1 (put the program after --)" ;;
    esac
  done
  [ $# -gt 0 ] || die "mpiexec-mpich: no program given (after --)"
  [[ "$ppn" =~ ^[0-9]+$ ]] && [ "$ppn" -ge 1 ] || die "--ppn must be a positive integer"
  command -v mpiexec.mpich >/dev/null || die "mpiexec-mpich: mpiexec.mpich not found (Debian: apt-get install mpich)"
  local f n rate
  f="$(state_file)"
  [ -f "$f" ] || die "no cluster named $name: run '$0 up N' first"
  read -r n rate _ < "$f"
  if [ -n "$use" ]; then
    [[ "$use" =~ ^[0-9]+$ ]] && [ "$use" -ge 1 ] && [ "$use" -le "$n" ] || die "--nodes must be 1..$n"
    n="$use"
  fi
  local shim="/run/${name}-ucx-yield.so" src
  src="$(dirname "$self")/mpich_trace/ucx_yield.c"
  if [ ! -f "$shim" ] || [ "$src" -nt "$shim" ]; then
    cc -O2 -shared -fPIC -o "$shim" "$src" -ldl || die "mpiexec-mpich: cannot build $shim from $src"
  fi
  local hosts="" k
  for k in $(seq 1 "$n"); do hosts="${hosts:+$hosts,}${subnet}.$k"; done
  CLUSTER_EMU_AGENT="$name" exec mpiexec.mpich -launcher rsh -launcher-exec "$self" \
    -iface "${name}-br" -hosts "$hosts" -ppn "$ppn" -n $((n * ppn)) \
    -genv UCX_TLS "tcp,self" -genv UCX_NET_DEVICES eth0 -genv LD_PRELOAD "$shim" "$@"
}

[ $# -gt 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2; }
# Hydra's launcher: `SCRIPT HOST CMD` with CLUSTER_EMU_AGENT set by cmd_mpiexec_mpich
if [ -n "${CLUSTER_EMU_AGENT:-}" ] && [[ "$1" =~ ^[0-9.]+$ ]]; then
  name="$CLUSTER_EMU_AGENT"; subnet="$(subnet_of "$name")"; cmd_rsh "$@"
fi
sub="$1"; shift
case "$sub" in
  up) cmd_up "$@" ;;
  down)
    while [ $# -gt 0 ]; do case "$1" in --name) name="$2"; shift 2 ;; *) die "down: unknown argument $1" ;; esac; done
    cmd_down ;;
  reap)
    while [ $# -gt 0 ]; do case "$1" in --name) name="$2"; shift 2 ;; *) die "reap: unknown argument $1" ;; esac; done
    need_root; cmd_reap ;;
  status)
    while [ $# -gt 0 ]; do case "$1" in --name) name="$2"; shift 2 ;; *) die "status: unknown argument $1" ;; esac; done
    cmd_status ;;
  rsh-*) name="${sub#rsh-}"; subnet="$(subnet_of "$name")"; cmd_rsh "$@" ;;
  mpirun) cmd_mpirun "$@" ;;
  mpiexec-mpich) cmd_mpiexec_mpich "$@" ;;
  *) die "unknown subcommand $sub (up, mpirun, mpiexec-mpich, down, status)" ;;
esac
