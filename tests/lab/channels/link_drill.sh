#!/usr/bin/env bash
# Lab drill (two VMs): the link under a channel goes down on b and up again
# 3 s later (docs/channels.md, "Failure drills").
#  - a pings b's echo service over RDMA (`rdmactl ping`); b takes its link
#    down: a's ping fails with the reason (the QP's retries exceeded, or b's
#    close for its port going down, which a's daemon learns once b is back),
#    within 15 s;
#  - b's `rdmactl devices` shows the port DOWN while it is down, ACTIVE after;
#    b's `rdmactl events` shows port-state-changed -> DOWN, then -> ACTIVE;
#  - once the link is up, a's new channel to b is RDMA again.
# Measured times are logged next to their limits ("DRILL ...").
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 ]] || { lab_log "link_drill.sh needs --vms 2"; exit 2; }

# shellcheck source=SCRIPTDIR/peered_rdmad.sh
source "$LAB_ROOT/tests/lab/channels/peered_rdmad.sh"
cleanup() {
  set +e
  ip link set "$LAB_NETDEV" up 2>/dev/null
  peered_rdmad_stop
}
trap cleanup EXIT
peered_rdmad_start
now_ms() { date +%s%3N; }
port_state() { ctl --json devices | python3 -c '
import json, sys
for d in json.load(sys.stdin).get("devices", []):
    if d["name"] == sys.argv[1]:
        print(d["ports"][0]["state"])' "$LAB_DEV"; }
lab_barrier daemons-up 120

if [[ $LAB_NODE == a ]]; then
  # Over RDMA first, so that the ping below is too.
  lab_retry 30 1 ctl connect node-b | grep -q "): RDMA, channel" ||
    fail "step: before; expected rdmactl connect node-b over RDMA"
  ctl ping -c 3000 -i 10 node-b >"$work/ping.txt" 2>&1 &
  ping_pid=$!
  for _ in $(seq 100); do grep -q "seq=5 " "$work/ping.txt" && break; sleep 0.1; done
  grep -q "(RDMA): seq=5 " "$work/ping.txt" || fail "step: ping; expected replies over RDMA"
  lab_barrier ping-running 60
  lab_barrier link-down 60
  t_down=$(now_ms)
  rc=0
  timeout 30 tail --pid="$ping_pid" -f /dev/null || true
  wait "$ping_pid" || rc=$?
  t_failed=$(now_ms)
  ((rc != 0)) || fail "step: b's link down; expected the ping to fail, it exited 0"
  why=$(grep -E "the channel failed|error" "$work/ping.txt" | tail -1)
  lab_log "DRILL link down on b: a's ping failed $((t_failed - t_down)) ms after the link went down (limit 15000 ms): $why"
  ((t_failed - t_down <= 15000)) || fail "step: b's link down; the ping failed only after $((t_failed - t_down)) ms"
  grep -E "seq=|timeout" "$work/ping.txt" | tail -3 >&2
  # The QP's retries, b's close (its port DOWN, or its echo service letting
  # the failed channel go), or b's answer once it is back.
  [[ $why == *"retry"* || $why == *"DOWN"* || $why == *"lost"* || $why == *"closed by peer"* ||
    $why == *"no longer has the channel"* ]] ||
    fail "step: b's link down; expected the reason, saw: $why"
  lab_barrier link-up 60
  t_up=$(now_ms)
  lab_retry 30 1 ctl connect node-b | grep -q "): RDMA, channel" ||
    fail "step: b's link up; expected a new channel over RDMA"
  lab_log "DRILL link up on b: a new channel is RDMA $(($(now_ms) - t_up)) ms after the link came up"
else
  ctl --json events >"$work/events.log" 2>&1 &
  lab_barrier ping-running 60
  ip link set "$LAB_NETDEV" down
  lab_barrier link-down 60
  for _ in $(seq 50); do [[ $(port_state) == DOWN ]] && break; sleep 0.1; done
  [[ $(port_state) == DOWN ]] || fail "step: link down; rdmactl devices says $(port_state)"
  sleep 3
  ip link set "$LAB_NETDEV" up
  for _ in $(seq 100); do [[ $(port_state) == ACTIVE ]] && break; sleep 0.1; done
  [[ $(port_state) == ACTIVE ]] || fail "step: link up; rdmactl devices says $(port_state)"
  lab_barrier link-up 60
  python3 - "$work/events.log" "$LAB_DEV" <<'PY' || fail "step: rdmactl events; expected -> DOWN, then -> ACTIVE"
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip().startswith("{")]
events = [json.loads(l) for l in lines]
msgs = [e.get("message", "") for e in events
        if e.get("kind") == "port-state-changed" and e.get("device") == sys.argv[2]]
down = next(i for i, m in enumerate(msgs) if "-> DOWN" in m)
up = next(i for i, m in enumerate(msgs) if "-> ACTIVE" in m and i > down)
print("events:", msgs[down], "|", msgs[up])
PY
fi
lab_barrier done 120
lab_log "link drill: OK"
