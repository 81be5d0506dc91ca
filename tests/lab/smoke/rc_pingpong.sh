#!/usr/bin/env bash
# Lab smoke test: ibv_rc_pingpong (RC QP send/recv) over LAB_DEV.
# Single-VM: server and client are two processes on the one rxe device.
# Two-VM: the server runs on node a, the client on node b.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"

port=18515
iters=${PINGPONG_ITERS:-200}
# Two TCG VMs: ~40 ms per 4 KiB round trip; keep it short.
[[ $LAB_VMS == 1 ]] || iters=${PINGPONG_ITERS:-50}
common=(ibv_rc_pingpong -d "$LAB_DEV" -g "$LAB_GID_INDEX" -p "$port" -n "$iters" -s 4096 -e)

server() {
  lab_log "server: ${common[*]}"
  "${common[@]}"
}
client() {
  lab_log "client: ${common[*]} $LAB_PEER_IP"
  "${common[@]}" "$LAB_PEER_IP"
}

if [[ $LAB_VMS == 1 ]]; then
  trap lab_kill_bg EXIT
  lab_bg server server
  spid=$LAB_BG_PID
  lab_wait_listen "$port" 30 "$spid"
  crc=0
  client 2>&1 | sed -u 's/^/client: /' || crc=$?
  src=0
  wait "$spid" || src=$?
  trap - EXIT
  ((crc == 0 && src == 0)) || { lab_log "FAIL: client exit $crc, server exit $src"; exit 1; }
elif [[ $LAB_NODE == a ]]; then
  trap lab_kill_bg EXIT
  lab_bg server server
  spid=$LAB_BG_PID
  lab_wait_listen "$port" 30 "$spid"
  lab_signal pingpong-server-up
  src=0
  wait "$spid" || src=$?
  trap - EXIT
  ((src == 0)) || { lab_log "FAIL: server exit $src"; exit 1; }
else
  lab_wait_signal pingpong-server-up 120 a
  client
fi
lab_log "OK: ibv_rc_pingpong, $iters iterations"
