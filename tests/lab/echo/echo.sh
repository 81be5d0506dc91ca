#!/usr/bin/env bash
# Lab test: rdmad's echo service, rdmactl connect and ping over RDMA (one VM).
# Two daemons, A and B, share rxe0: both listen on LAB_IP with their own
# socket and peer port, each the other's [[peers]] entry. Then from A:
#  1. `rdmactl connect B` comes up over RDMA on LAB_DEV, with QPNs, GIDs and
#     the path MTU (1024 on rxe over a 1500-byte veth); --json agrees.
#  2. `rdmactl ping B -c 20 -s 4096` gets 20 verified replies over RDMA with
#     ordered percentiles; 1 MiB messages too.
#  3. `--tcp` forces TCP and says so.
#
#   tests/lab/run --share BUILD --env RDMAD_BUILD_DIR=BUILD -- tests/lab/echo/echo.sh
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"

build=${RDMAD_BUILD_DIR:-$LAB_ROOT/build}
work=$(mktemp -d)
fail() {
  lab_log "FAIL: $*"
  exit 1
}
ctl() { "$build/client/rdmactl" --socket "$work/A/rdmad.sock" "$@"; }

port_a=7611
port_b=7612
lab_start_rdmad "$work" B "$port_b" A "$port_a" debug
lab_start_rdmad "$work" A "$port_a" B "$port_b" debug
cleanup() {
  set +e
  lab_kill_bg
  wait 2>/dev/null
  for n in A B; do sed "s/^/rdmad $n: /" "$work/$n.log" >&2; done
}
trap cleanup EXIT
lab_await_echo "$work" A B 10 || fail "B's echo service did not start"

# --- 1. connect ----------------------------------------------------------------
ctl connect B | tee "$work/connect.txt"
grep -q "(rdmad.echo): RDMA, channel" "$work/connect.txt" || fail "connect did not use RDMA"
grep -q "local       $LAB_DEV port 1, GID " "$work/connect.txt" || fail "connect: no local device"
ctl --json connect B >"$work/connect.json"
python3 - "$work/connect.json" "$LAB_DEV" <<'EOF' || fail "connect --json"
import json, sys
j = json.load(open(sys.argv[1]))
c, dev = j["channel"], sys.argv[2]
assert c["transport"] == "RDMA", c
assert c["local_device"] == dev and c["peer_device"] == dev, c
assert c["local_qpn"] > 0 and c["peer_qpn"] > 0 and c["local_qpn"] != c["peer_qpn"], c
assert c["gid_type"] == "RoCE v2" and c["local_gid"] and c["peer_gid"], c
assert c["mtu"] == 1024, c
assert c["handshake_ms"] > 0 and j["round_trip_us"] > 0, j
print(f"connect: RDMA on {dev}, QPNs {c['local_qpn']:#x}/{c['peer_qpn']:#x}, MTU {c['mtu']}")
EOF

# --- 2. ping -------------------------------------------------------------------
ctl ping B -c 20 -s 4096 -i 0 | tee "$work/ping.txt"
grep -q "4096 bytes from B (RDMA): seq=20" "$work/ping.txt" || fail "ping: no RDMA replies"
grep -q "20 sent, 20 received, 0 lost" "$work/ping.txt" || fail "ping: replies lost"
ctl --json ping B -c 20 -s 1048576 -i 0 >"$work/ping.json"
python3 - "$work/ping.json" <<'EOF' || fail "ping --json"
import json, sys
j = json.load(open(sys.argv[1]))
r = j["rtt_us"]
assert j["channel"]["transport"] == "RDMA", j["channel"]
assert j["received"] == 20 and j["lost"] == 0 and j["corrupt"] == 0, j
assert 0 < r["min"] <= r["p50"] <= r["p99"] <= r["max"], r
assert len(j["samples_us"]) == 20
print(f"ping 1 MiB over RDMA: min {r['min']:.1f} p50 {r['p50']:.1f} p99 {r['p99']:.1f} us")
EOF

# --- 3. forced TCP ------------------------------------------------------------------
ctl connect B --tcp | tee "$work/tcp.txt"
grep -q "(rdmad.echo): TCP, channel" "$work/tcp.txt" || fail "--tcp did not use TCP"
lab_log "echo: connect and ping over RDMA and TCP OK"
