# shellcheck shell=bash
# Sourced by the two-VM channel scripts: rdmad on this node, peered with
# the other node's ("node-a"/"node-b") over the lab link. Sets build, work,
# RDMAD_SOCKET, ctl and fail; peered_rdmad_start starts the daemon (its pid
# in RDMAD_PID) and waits for its socket; peered_rdmad_stop (from the
# script's EXIT trap) stops every background job and prints the daemon's log.

build=${RDMAD_BUILD_DIR:-$LAB_ROOT/build}
work=$(mktemp -d)
export RDMAD_SOCKET=$work/rdmad.sock
ctl() { "$build/client/rdmactl" --socket "$RDMAD_SOCKET" "$@"; }
fail() {
  lab_log "FAIL: $*"
  exit 1
}

# rdmad_start_with DAEMON_KEYS TABLES: start rdmad with this node's [daemon]
# table (plus DAEMON_KEYS) and TABLES after it, and wait until it answers.
rdmad_start_with() {
  cat >"$work/rdmad.toml" <<TOML
[daemon]
socket = "$RDMAD_SOCKET"
socket_group = ""
log_level = "debug"
peer_address = "$LAB_IP"
peer_key_file = "$(lab_peer_key "$work")"
$1

$2
TOML
  rm -f "$RDMAD_SOCKET"
  "$build/daemon/rdmad" --config "$work/rdmad.toml" 2>>"$work/rdmad.log" &
  RDMAD_PID=$!
  # Up to a minute: a TCG VM on a loaded host starts slowly.
  for _ in $(seq 600); do [[ -S $RDMAD_SOCKET ]] && break; sleep 0.1; done
  for _ in 1 2 3; do ctl status >/dev/null 2>&1 && return 0; sleep 1; done
  ctl status >/dev/null || fail "rdmad did not start within a minute"
}

# peered_rdmad_start [TABLES]: TABLES go before the [[peers]] entry.
peered_rdmad_start() {
  rdmad_start_with "" "${1:-}

[[peers]]
name = \"node-$([[ $LAB_NODE == a ]] && echo b || echo a)\"
address = \"$LAB_PEER_IP\""
}

peered_rdmad_stop() {
  set +e
  kill $(jobs -p) 2>/dev/null
  wait 2>/dev/null
  sed 's/^/rdmad: /' "$work/rdmad.log" >&2
}
