#!/usr/bin/env bash
# Benchmarks, in the lab (one VM, rxe0; with --rails 2 also rxe1 for the
# two-rail rows): perftest and rdmad's channels on the
# same device, back to back, then prints the comparison table
# (tests/bench/bench_table.py). See docs/benchmarks.md.
#
#   tests/lab/run --vms 1 --rails 2 --share BUILD --env RDMAD_BUILD_DIR=BUILD \
#       [--share OUT --env BENCH_OUT=OUT] -- tests/bench/lab_bench.sh [--quick] [--ucx]
#
# Every round runs, per row: perftest (server and client on rxe0), then
# `rdmactl bench` against a second daemon's echo service on the same rxe0
# (two daemons as in tests/lab/echo/echo.sh; for 2 B latency and 64 KiB
# Write also tests/bench/python_bench.py, the Python package), then the TCP
# fallback. Then,
# once: an idle channel's CPU, N Connect+Close cycles and the daemons' RSS,
# and N rdma_cm connections by cmtime (rdmacm-utils), the connect anchor.
# Raw outputs go to BENCH_OUT (a temporary directory when unset).
#
# Numbers never fail this script: it fails only when a command fails.
# --quick: one round, short runs (the ctest smoke test lab.bench.smoke).
# --ucx: only the peer anchor's rows, UCX's ucx_perftest and the same
# rdmactl bench runs, in a VM of two vCPUs (tests/lab/run --cpus 2): UCX's
# transport layer busy-polls on both sides, which on one vCPU waits for the
# scheduler's tick every round trip (ctest: lab.bench.ucx_smoke).
# BENCH_ROUNDS overrides the number of rounds (default 2, --quick 1);
# BENCH_MANY the channels open at once (default 1000, --quick 100).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lab/lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 1 ]] || { lab_log "lab_bench.sh is a single-VM script"; exit 2; }

quick=0 ucx=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    --ucx) ucx=1 ;;
    *)
      lab_log "lab_bench.sh: unknown argument $arg"
      exit 2
      ;;
  esac
done
build=${RDMAD_BUILD_DIR:-$LAB_ROOT/build}
out=${BENCH_OUT:-$(mktemp -d)}
here=$LAB_ROOT/tests/bench
work=$(mktemp -d)

# Sizes and iterations per row: perftest and rdmactl get the same counts.
# The UCX rows run in real time (two vCPUs): outside --quick, longer runs
# and at least three rounds, so that one stall of the host decides less of
# a row (UCX and rdmactl the same counts).
if ((quick)); then
  rounds=${BENCH_ROUNDS:-1} lat_iters=200 rate_iters=2000 bw4k_iters=300 bw64k_iters=40
  bw1m_iters=6 kv_batches=2 idle_s=2 connects=20 many=${BENCH_MANY:-100} ucx_warmup=1000
  ucx_rounds=$rounds ucx_lat_iters=$lat_iters ucx_bw_iters=$bw64k_iters
else
  rounds=${BENCH_ROUNDS:-2} lat_iters=1000 rate_iters=20000 bw4k_iters=2000 bw64k_iters=300
  bw1m_iters=30 kv_batches=8 idle_s=5 connects=200 many=${BENCH_MANY:-1000} ucx_warmup=10000
  ucx_rounds=$((rounds < 3 ? 3 : rounds)) ucx_lat_iters=20000 ucx_bw_iters=3000
fi
depth=128 # perftest's default tx depth
kv_blocks=1024 kv_size=16384 # the KV-cache row: a batch of scattered blocks
lat_sizes=(2 4096)
bw_sizes=(65536 1048576)
iters_for() { (($1 == 65536)) && echo "$bw64k_iters" || echo "$bw1m_iters"; }

fail() {
  lab_log "FAIL: $*"
  exit 1
}

# --- anchors: perftest, and UCX (ucx-utils) -------------------------------------
# pair OUT PORT CMD...: a benchmark tool's server (CMD) and client (CMD
# LAB_IP) on this node; the client's output in OUT; fails the run unless
# both exit 0. CMD makes its server listen on TCP port PORT.
pair() {
  local result=$1 port=$2 spid crc=0 src=0
  shift 2
  "$@" >"$work/server.txt" 2>&1 &
  spid=$!
  lab_wait_listen "$port" 60 "$spid" || fail "$* (server) did not start: $(cat "$work/server.txt")"
  "$@" "$LAB_IP" >"$result" 2>&1 || crc=$?
  wait "$spid" || src=$?
  ((crc == 0 && src == 0)) || fail "$*: client exit $crc, server exit $src: $(tail -5 "$result")"
}

anchor_port=18600
# perftest_on DEV GID_INDEX NAME TOOL ARGS...: perftest on DEV; the
# client's output in $out/pt_NAME.txt. perftest NAME TOOL ARGS...: on LAB_DEV.
perftest_on() {
  local dev=$1 gid=$2 name=$3 tool=$4
  shift 4
  anchor_port=$((anchor_port + 1))
  pair "$out/pt_$name.txt" "$anchor_port" \
    "$tool" -d "$dev" -x "$gid" -p "$anchor_port" -F "$@"
}
perftest() { perftest_on "$LAB_DEV" "$LAB_GID_INDEX" "$@"; }

# ucx_perftest NAME ARGS...: UCX's perftest at its transport layer (UCT,
# rc_verbs on LAB_DEV: the transport NIXL's UCX backend drives); the
# client's output in $out/ucx_NAME.txt. The transport layer because UCX
# 1.13's protocol layer (UCP) finds no wire-up transport on Soft-RoCE alone
# ("Destination is unreachable"; ud_verbs aborts on rxe).
ucx_perftest() {
  local name=$1
  shift
  anchor_port=$((anchor_port + 1))
  pair "$out/ucx_$name.txt" "$anchor_port" env UCX_NET_DEVICES="$LAB_DEV:1" \
    UCX_IB_GID_INDEX="$LAB_GID_INDEX" ucx_perftest -d "$LAB_DEV:1" -x rc_verbs \
    -p "$anchor_port" "$@"
}

# --- rdmad: two daemons on rxe0, B serves the echo service ---------------------
cleanup() {
  local rc=$?
  set +e
  lab_kill_bg
  wait 2>/dev/null
  ((rc == 0)) && return
  for n in A B C D E F; do [[ -s $work/$n.log ]] && tail -50 "$work/$n.log" | sed "s/^/rdmad $n: /" >&2; done
}
trap cleanup EXIT
# Channels on one rail (rxe0) but in the two-rail rows (E and F, below).
one_rail=$'[rails]\nper_channel = 1'
# The UCX rows: ucx_perftest busy-polls both ends of a round trip, each on a
# vCPU of its own; ours then do too (qp.spin_us at its most, a second of
# polling before a wait sleeps), as an application tuned for latency would.
ab_toml=$one_rail
((ucx)) && ab_toml+=$'\n\n[qp]\nspin_us = 1000000'
lab_start_rdmad "$work" B 7612 A 7611 info "$ab_toml"
lab_start_rdmad "$work" A 7611 B 7612 info "$ab_toml"

# bench NAME ARGS...: rdmactl --json bench B ARGS into $out/ours_NAME.json.
bench() {
  local name=$1
  shift
  "$build/client/rdmactl" --socket "$work/A/rdmad.sock" --json bench B "$@" \
    >"$out/ours_$name.json" 2>"$work/bench.err" || fail "rdmactl bench $*: $(cat "$work/bench.err")"
}

# pybench NAME ARGS...: tests/bench/python_bench.py (the Python package,
# measuring as rdmactl bench does) against B's echo service into
# $out/ours_py_NAME.json; nothing when the build has no Python package.
pybench() {
  [[ -d $build/python/rdmad ]] || return 0
  local name=$1
  shift
  PYTHONPATH=$build/python /usr/bin/python3 "$here/python_bench.py" \
    --socket "$work/A/rdmad.sock" --peer B "$@" >"$out/ours_py_$name.json" 2>"$work/pybench.err" ||
    fail "python_bench.py $*: $(cat "$work/pybench.err")"
}

# nixlbench ROUND: tests/bench/nixl_bench.py: the KV-cache pattern through
# NIXL's agent API (rdmad.nixl; a target agent on B, the initiator on A)
# into $out/ours_nixl_rROUND.json, and the same blocks with rdmad's own
# Channel.submit into $out/ours_nixl_submit_rROUND.json; nothing when the
# build has no Python package.
nixlbench() {
  [[ -d $build/python/rdmad/nixl ]] || return 0
  local r=$1 port=$((7700 + $1)) target
  local py=(env PYTHONPATH="$build/python" /usr/bin/python3 "$here/nixl_bench.py")
  local shape=(--blocks "$kv_blocks" --size "$kv_size")
  "${py[@]}" --socket "$work/B/rdmad.sock" --mode target --port "$port" "${shape[@]}" \
    2>"$work/nixl_target.err" &
  target=$!
  "${py[@]}" --socket "$work/A/rdmad.sock" --mode nixl --peer B --port "$port" "${shape[@]}" \
    --iters "$kv_batches" >"$out/ours_nixl_r$r.json" 2>"$work/nixl.err" || {
    kill "$target" 2>/dev/null
    fail "nixl_bench.py --mode nixl: $(cat "$work/nixl.err")"
  }
  wait "$target" || fail "nixl_bench.py --mode target: $(cat "$work/nixl_target.err")"
  "${py[@]}" --socket "$work/A/rdmad.sock" --mode submit --peer B "${shape[@]}" \
    --iters "$kv_batches" >"$out/ours_nixl_submit_r$r.json" 2>"$work/nixl.err" ||
    fail "nixl_bench.py --mode submit: $(cat "$work/nixl.err")"
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# await_echo CLIENT SERVER: CLIENT's socket is up and SERVER's echo service listens.
await_echo() { lab_await_echo "$work" "$1" "$2" || fail "$2's echo service did not start"; }

# --- the peer anchor, two vCPUs (--ucx) -------------------------------------------
if ((ucx)); then
  (($(nproc) >= 2)) || fail "--ucx needs two vCPUs (tests/lab/run --cpus 2), this VM has $(nproc)"
  await_echo A B
  # The same warm-up on both sides (ucx_warmup): ucx_perftest's own default
  # (-w 10000) before its timed round trips; ours otherwise starts 16 round
  # trips after the connect, while the daemons' and the application's
  # threads still finish it (on two vCPUs, beside two spinning ends).
  printf 'ucx_vm_cpus=%s\nucx_warmup=%s\nucx_rounds=%s\nucx_lat_iters=%s\nucx_bw_iters=%s\n' \
    "$(nproc)" "$ucx_warmup" "$ucx_rounds" "$ucx_lat_iters" "$ucx_bw_iters" >"$out/meta_vm_ucx.txt"
  for ((r = 1; r <= ucx_rounds; r++)); do
    lab_log "UCX, two vCPUs: round $r of $ucx_rounds"
    ucx_perftest "am_lat_8_r$r" -t am_lat -s 8 -n "$ucx_lat_iters" -w "$ucx_warmup"
    ucx_perftest "put_lat_8_r$r" -t put_lat -s 8 -n "$ucx_lat_iters" -w "$ucx_warmup"
    bench "ucx_lat_r$r" --test lat --sizes 8 --iters "$ucx_lat_iters" --warmup "$ucx_warmup"
    ucx_perftest "put_bw_65536_r$r" -t put_bw -D zcopy -s 65536 -n "$ucx_bw_iters"
    bench "ucx_write_65536_d${depth}_r$r" --test write --size 65536 --iters "$ucx_bw_iters" \
      --depth "$depth"
  done
  lab_log "OK: the UCX rows done (results in $out)"
  exit 0
fi

# --- the run ---------------------------------------------------------------------
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "vm_kernel=$(uname -r)"
  echo "vm_cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "vm_cpus=$(nproc)"
  echo "vm_mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
  echo "device=$LAB_DEV, active MTU $(ibv_devinfo -d "$LAB_DEV" | awk '/active_mtu/ {print $2; exit}')"
  echo "perftest=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null || echo unknown)"
  echo "rdma_core=$(dpkg-query -W -f '${Version}' rdma-core 2>/dev/null || echo unknown)"
  for v in rounds quick lat_iters rate_iters bw4k_iters bw64k_iters bw1m_iters kv_batches kv_blocks kv_size idle_s connects many depth; do
    echo "$v=${!v}"
  done
} >"$out/meta_vm.txt"

await_echo A B

for ((r = 1; r <= rounds; r++)); do
  lab_log "round $r of $rounds"
  for s in "${lat_sizes[@]}"; do perftest "lat_${s}_r$r" ib_send_lat -e -s "$s" -n "$lat_iters"; done
  bench "lat_rdma_r$r" --test lat --sizes "2,8,4096" --iters "$lat_iters"
  pybench "lat_2_r$r" --test lat --size 2 --iters "$lat_iters"
  for s in "${bw_sizes[@]}"; do perftest "bw_${s}_r$r" ib_send_bw -e -s "$s" -n "$(iters_for "$s")"; done
  for s in "${bw_sizes[@]}"; do bench "bw_${s}_rdma_r$r" --test bw --size "$s" --iters "$(iters_for "$s")"; done
  perftest "bw_8_r$r" ib_send_bw -e -s 8 -n "$rate_iters"
  bench "bw_8_rdma_r$r" --test bw --size 8 --iters "$rate_iters"
  for op in write read; do
    for s in "${bw_sizes[@]}"; do perftest "${op}_${s}_r$r" "ib_${op}_bw" -s "$s" -n "$(iters_for "$s")"; done
    for s in "${bw_sizes[@]}"; do bench "${op}_${s}_rdma_r$r" --test "$op" --size "$s" --iters "$(iters_for "$s")"; done
  done
  pybench "write_65536_r$r" --test write --size 65536 --iters "$bw64k_iters"
  # 8 channels at once from Python: asyncio against a thread per channel.
  for mode in threads aio; do
    pybench "conc8_${mode}_r$r" --test concurrent --channels 8 --mode "$mode" --size 2 \
      --iters "$lat_iters"
  done
  # Many in flight, as perftest: single-op Submit batches, $depth deep.
  for op in write read; do
    perftest "${op}_4096_r$r" "ib_${op}_bw" -s 4096 -n "$bw4k_iters"
    bench "${op}_4096_d${depth}_rdma_r$r" --test "$op" --size 4096 --iters "$bw4k_iters" --depth "$depth"
    bench "${op}_65536_d${depth}_rdma_r$r" --test "$op" --size 65536 --iters "$bw64k_iters" \
      --depth "$depth"
  done
  # The KV-cache pattern, and perftest moving the same bytes in messages of a block.
  perftest "kv_${kv_size}_r$r" ib_write_bw -s "$kv_size" -n "$((kv_blocks * kv_batches))"
  bench "kv_rdma_r$r" --test kv --size "$kv_size" --blocks "$kv_blocks" --iters "$kv_batches"
  nixlbench "$r"
  bench "lat_tcp_r$r" --test lat --sizes "2,4096" --iters "$lat_iters" --tcp
  for t in bw write read; do
    for s in "${bw_sizes[@]}"; do bench "${t}_${s}_tcp_r$r" --test "$t" --size "$s" --iters "$(iters_for "$s")" --tcp; done
  done
done

lab_log "idle channel, ${idle_s} s"
bench idle --test idle --duration "$idle_s"
lab_log "$connects Connect+Close cycles"
# shellcheck disable=SC2154 # pid_A, pid_B: set by lab_start_rdmad
echo "{\"before\": {\"A\": $(rss_kib "$pid_A"), \"B\": $(rss_kib "$pid_B")}," >"$out/rss.json"
bench connect --test connect --iters "$connects"
lab_log "$connects pooled Connect+Close cycles (warm acquire)"
bench connect_pooled --test connect --pooled --iters "$connects"
lab_log "cmtime: $connects rdma_cm connections (the connect rows' anchor)"
lab_cmtime 18590 "$connects" "$out/pt_cmtime.txt" || fail "cmtime"
sleep 1 # let the echo service's channels wind down
echo " \"after\": {\"A\": $(rss_kib "$pid_A"), \"B\": $(rss_kib "$pid_B")}, \"channels\": $connects}" >>"$out/rss.json"

# Many channels at once, between two more daemons (C initiates, D accepts)
# whose queue pairs are 31 send entries deep: Soft-RoCE maps 512 bytes per
# send-queue entry into the application (a NIC: 64) and rounds each queue
# up to 2^k entries counting one spare, so at the default 127 a channel's
# queues cost ~90 KiB of the VM's 1 GiB, and 1,000 channels on both ends do
# not fit. Registered memory does not depend on the depth; the connect rate
# does a little (the kernel zeroes the queues). The initiator opens them as
# an application with many channels to one peer should: Client::ConnectMany,
# batches of 64.
lab_log "$many channels open at once (C to D), then cmtime with as many"
many_toml=$'[qp]\nsend_depth = 31\n\n[limits]\nmax_channels_per_peer = 2048\n\n'"$one_rail"
lab_start_rdmad "$work" D 7614 C 7613 info "$many_toml"
lab_start_rdmad "$work" C 7613 D 7614 info "$many_toml"
for _ in $(seq 150); do
  [[ -S $work/C/rdmad.sock && -S $work/D/rdmad.sock ]] && break
  sleep 0.1
done
many_bin=$build/tests/rdmad_many_channels
"$many_bin" accept --socket "$work/D/rdmad.sock" --channels "$many" \
  >"$out/ours_many_accept.json" 2>"$work/many_accept.err" &
apid=$!
for _ in $(seq 300); do
  grep -q listening "$work/many_accept.err" && break
  kill -0 "$apid" 2>/dev/null || break
  sleep 0.1
done
grep -q listening "$work/many_accept.err" || fail "many-channels acceptor: $(cat "$work/many_accept.err")"
# shellcheck disable=SC2154 # pid_C, pid_D: set by lab_start_rdmad
echo "{\"before\": {\"C\": $(rss_kib "$pid_C"), \"D\": $(rss_kib "$pid_D")}," >"$out/rss_many.json"
# The initiator's one line comes through a FIFO that this shell blocks on:
# a loop that looked for it every 0.1 s would fork a sleep each time, and on
# the VM's one CPU those forks and execs cost the timed connects ~15 %.
mkfifo "$work/many_connect.fifo"
"$many_bin" connect D --socket "$work/C/rdmad.sock" --channels "$many" --threads 4 --batch 64 \
  --hold-s 3 \
  >"$work/many_connect.fifo" 2>"$work/many_connect.err" &
cpid=$!
line=""
IFS= read -r -t 600 line <"$work/many_connect.fifo" || true
echo "$line" >"$out/ours_many_connect.json"
echo " \"open\": {\"C\": $(rss_kib "$pid_C"), \"D\": $(rss_kib "$pid_D")}, \"channels\": $many," \
  "\"send_depth\": 31}" >>"$out/rss_many.json"
wait "$cpid" || fail "many-channels initiator: $(cat "$work/many_connect.err")"
wait "$apid" || fail "many-channels acceptor: $(cat "$work/many_accept.err")"
lab_cmtime 18591 "$many" "$out/pt_cmtime_many.txt" || fail "cmtime -c $many"

# Two rails (tests/lab/run --rails 2): between two more daemons (E
# initiates, F serves the echo service) whose channels stripe over rxe0 and
# rxe1. Anchor: ib_write_bw / ib_read_bw on each rail alone, summed; both
# rails share the VM's one CPU, so the ratio is reported without a target.
# Then the failover row: rail 1's link down under a stream of 1 MiB Writes
# (tests/bench/rails_bench.py).
if [[ ${LAB_RAILS:-1} == 2 ]]; then
  lab_log "two rails: perftest on rxe0 and on rxe1 alone, one channel over both (E to F)"
  lab_start_rdmad "$work" F 7616 E 7615
  lab_start_rdmad "$work" E 7615 F 7616
  await_echo E F
  for ((r = 1; r <= rounds; r++)); do
    for op in write read; do
      perftest_on "$LAB_DEV" "$LAB_GID_INDEX" "rail0_${op}_1048576_r$r" "ib_${op}_bw" \
        -s 1048576 -n "$bw1m_iters"
      perftest_on "$LAB_DEV1" "$LAB_GID_INDEX1" "rail1_${op}_1048576_r$r" "ib_${op}_bw" \
        -s 1048576 -n "$bw1m_iters"
      "$build/client/rdmactl" --socket "$work/E/rdmad.sock" --json bench F --test "$op" \
        --size 1048576 --iters "$bw1m_iters" >"$out/ours_rails_${op}_1048576_r$r.json" \
        2>"$work/bench.err" || fail "rdmactl bench (two rails) $op: $(cat "$work/bench.err")"
    done
  done
  if [[ -d $build/python/rdmad ]]; then
    PYTHONPATH=$build/python /usr/bin/python3 "$here/rails_bench.py" --socket "$work/E/rdmad.sock" \
      --peer F --netdev "$LAB_NETDEV1" >"$out/ours_rails_failover.json" 2>"$work/rails.err" ||
      fail "rails_bench.py: $(cat "$work/rails.err")"
  fi
fi

python3 "$here/bench_table.py" "$out" || fail "bench_table.py could not read the results in $out"
lab_log "OK: benchmarks done (results in $out)"
