#!/usr/bin/env bash
# Lab smoke test (two VMs, --rails 2): each node has rxe0 and rxe1 on two
# netdevs, each with its own link to the other node. ib_write_bw runs on each
# rail in turn (server on a, client on b), and the bytes must have crossed
# that rail's netdev and not the other's.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 && ${LAB_RAILS:-1} == 2 ]] || {
  lab_log "rails.sh needs --vms 2 --rails 2"
  exit 2
}

tx_bytes() { cat "/sys/class/net/$1/statistics/tx_bytes"; }

# rail R DEV GID_INDEX NETDEV OTHER_NETDEV PEER_IP PORT
rail() {
  local r=$1 dev=$2 gid=$3 netdev=$4 other=$5 peer=$6 port=$7
  local -a cmd=(ib_write_bw -d "$dev" -x "$gid" -p "$port" -F -n 200 -s 65536)
  local before other_before sent other_sent src=0
  [[ $(cat "/sys/class/infiniband/$dev/ports/1/state") == *ACTIVE* ]] || {
    lab_log "FAIL: rail $r: $dev is not ACTIVE"
    return 1
  }
  before=$(tx_bytes "$netdev") other_before=$(tx_bytes "$other")
  if [[ $LAB_NODE == a ]]; then
    lab_bg "rail $r server" "${cmd[@]}"
    local spid=$LAB_BG_PID
    lab_wait_listen "$port" 30 "$spid"
    lab_signal "rail$r-server-up"
    wait "$spid" || src=$?
    ((src == 0)) || { lab_log "FAIL: rail $r: server exit $src"; return 1; }
  else
    lab_wait_signal "rail$r-server-up" 120 a
    "${cmd[@]}" "$peer" 2>&1 | sed -u "s/^/rail $r client: /"
    sent=$(($(tx_bytes "$netdev") - before))
    other_sent=$(($(tx_bytes "$other") - other_before))
    lab_log "rail $r: $sent bytes out of $netdev, $other_sent out of $other"
    # 200 x 64 KiB written: the data went out of this rail's netdev; the other
    # carried at most the perftest's TCP handshake.
    ((sent >= 200 * 65536)) || { lab_log "FAIL: rail $r: only $sent bytes on $netdev"; return 1; }
    ((other_sent < 1024 * 1024)) || {
      lab_log "FAIL: rail $r: $other_sent bytes on $other too"
      return 1
    }
  fi
  lab_barrier "rail$r-done" 120
}

trap lab_kill_bg EXIT
# perftest's handshake goes over TCP to the peer's address on the same rail.
peer0=$LAB_PEER_IP peer1=$LAB_PEER_IP1
rail 0 "$LAB_DEV" "$LAB_GID_INDEX" "$LAB_NETDEV" "$LAB_NETDEV1" "$peer0" 18530
rail 1 "$LAB_DEV1" "$LAB_GID_INDEX1" "$LAB_NETDEV1" "$LAB_NETDEV" "$peer1" 18531
trap - EXIT
lab_log "OK: ib_write_bw on both rails, each on its own link"
