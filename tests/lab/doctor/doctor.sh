#!/usr/bin/env bash
# Lab test (two VMs): rdmactl doctor over Soft-RoCE, then each thing it
# checks broken on purpose on node a and named: rdma_ucm unloaded, the
# locked-memory limit lowered, the netdev's MTU changed (the RoCE MTUs of
# the two ends differ), a user outside the socket's group, the address (and
# so the RoCE v2 GID) removed. Each is put back before the next.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 ]] || {
  lab_log "doctor.sh needs --vms 2"
  exit 2
}
# shellcheck source=SCRIPTDIR/../channels/peered_rdmad.sh
source "$LAB_ROOT/tests/lab/channels/peered_rdmad.sh"
cleanup() {
  ip link set "$LAB_NETDEV" mtu 1500 2>/dev/null || true
  ip addr add "$LAB_IP/$LAB_PREFIX" dev "$LAB_NETDEV" 2>/dev/null || true
  peered_rdmad_stop
}
trap cleanup EXIT
peered_rdmad_start
lab_barrier daemons-up 120

# doctor [PREFIX...] -- [ARGS...]: runs rdmactl --json doctor ARGS (under
# PREFIX), its JSON in $work/doctor.json and its exit status in rc.
doctor() {
  local prefix=()
  while [[ $1 != -- ]]; do prefix+=("$1"); shift; done
  shift
  set +e
  "${prefix[@]}" "$build/client/rdmactl" --socket "$RDMAD_SOCKET" --json doctor "$@" \
    >"$work/doctor.json"
  rc=$?
  set -e
}
# check NAME: "STATUS|DETAIL|FIX" of that check in the last doctor run.
check() {
  python3 - "$work/doctor.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = {c["name"]: c for c in d["checks"]}.get(sys.argv[2])
print("none||" if c is None else c["status"] + "|" + c["detail"] + "|" + c["fix"])
PY
}
expect() { # NAME STATUS TEXT: the check has that status and TEXT in its detail or fix
  local got
  got=$(check "$1")
  [[ ${got%%|*} == "$2" && $got == *"$3"* ]] || {
    cat "$work/doctor.json" >&2
    fail "doctor's $1 check: expected $2 with '$3', got: $got"
  }
  lab_log "doctor: $1 $2: ${got#*|}"
}

if [[ $LAB_NODE == a ]]; then
  # Healthy: the path, a channel and a Write over RDMA.
  lab_retry 30 1 ctl ping node-b --count 1 >/dev/null
  doctor -- node-b
  expect peer ok "up: rdmad"
  expect path ok "$LAB_DEV port 1"
  expect channel ok "over RDMA: $LAB_DEV"
  expect write ok "4 KiB written and read back"
  expect dev-access ok "read-write"
  expect ports ok "ACTIVE"
  expect gids ok "$LAB_IP on $LAB_NETDEV"
  # The VMs' emulated clocks drift apart by up to about a second: the
  # offset must be measured and named, ok or warn.
  clock=$(check clock)
  [[ $clock == ok\|*"node-b's clock is"* || $clock == warn\|*"node-b's clock is"* ]] ||
    fail "doctor's clock check: $clock"
  lab_log "doctor: clock ${clock%%|*}: $(cut -d'|' -f2 <<<"$clock")"
  [[ $rc -le 1 ]] || fail "a healthy host exits $rc"

  # rdma_ucm unloaded (rmmod: the VM has the module loaded but not its
  # file, and nothing after this needs it; the VM goes with the test).
  if [[ -e /sys/module/rdma_ucm/refcnt ]]; then
    rmmod rdma_ucm || fail "rdma_ucm cannot be unloaded (refcnt $(cat /sys/module/rdma_ucm/refcnt))"
  fi
  doctor --
  expect modules warn "rdma_ucm is not"

  # The locked-memory limit lowered below one channel.
  doctor prlimit --memlock=65536:65536 --
  expect memlock fail "not one channel fits"
  [[ $rc == 2 ]] || fail "a failed check exits $rc, not 2"

  # A user outside the socket's group.
  chmod 755 "$work"
  doctor setpriv --reuid=65534 --regid=65534 --clear-groups --
  expect socket fail "usermod -aG"
  chmod 700 "$work"

  # The MTU changed on a alone: the two ends' RoCE MTUs differ.
  ip link set "$LAB_NETDEV" mtu 1000
  differ() {
    doctor -- node-b
    [[ $(check path) == warn* ]]
  }
  lab_retry 30 1 differ || true
  expect path warn "the MTUs differ (here 512, the peer 1024)"
  ip link set "$LAB_NETDEV" mtu 1500

  # The address, and with it its RoCE v2 GID, removed.
  ip addr del "$LAB_IP/$LAB_PREFIX" dev "$LAB_NETDEV"
  gid_gone() { ! ctl --json gids | grep -q "\"$LAB_IP\""; }
  lab_retry 30 1 gid_gone || fail "the GID of $LAB_IP did not go"
  doctor --
  expect gids warn "$LAB_NETDEV has no IP address"
  ip addr add "$LAB_IP/$LAB_PREFIX" dev "$LAB_NETDEV"
fi
lab_barrier doctor-done 600
lab_log "OK: rdmactl doctor names each thing broken"
