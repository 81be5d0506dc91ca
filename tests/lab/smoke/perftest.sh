#!/usr/bin/env bash
# Lab smoke test (single VM): perftest's ib_send_lat and ib_write_bw between two
# processes on LAB_DEV (rxe loops back), with short iteration counts.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 1 ]] || { lab_log "perftest.sh is a single-VM test"; exit 2; }

# run_pair NAME PORT ARGS...: server and client of one perftest tool.
run_pair() {
  local tool=$1 port=$2 spid crc=0 src=0
  shift 2
  local -a cmd=("$tool" -d "$LAB_DEV" -x "$LAB_GID_INDEX" -p "$port" -F "$@")
  lab_log "$tool: ${cmd[*]}"
  lab_bg "$tool server" "${cmd[@]}"
  spid=$LAB_BG_PID
  lab_wait_listen "$port" 30 "$spid"
  "${cmd[@]}" "$LAB_IP" 2>&1 | sed -u "s/^/$tool client: /" || crc=$?
  wait "$spid" || src=$?
  if ((crc != 0 || src != 0)); then
    lab_log "FAIL: $tool client exit $crc, server exit $src"
    return 1
  fi
}

trap lab_kill_bg EXIT
run_pair ib_send_lat 18516 -e -n "${LAT_ITERS:-1000}" -s 64
run_pair ib_write_bw 18517 -n "${BW_ITERS:-500}" -s 65536
trap - EXIT
lab_log "OK: ib_send_lat and ib_write_bw"
