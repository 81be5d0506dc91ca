#!/usr/bin/env bash
# Lab test (two VMs, --rails 2): rdmad on each node, peered over rail 0;
# each VM has rxe0 and rxe1 on two links.
#  1. On a: `rdmactl route` to b chooses rxe0, and a channel's plan names
#     rxe1 as a further rail (the daemon's log says so).
#  2. On both: TwoHostRailsTest (rdmad_integration_tests): a striped 8 MiB
#     Write and Read with bytes on both rails, the daemon's table showing
#     them; then a's rail-1 link down in the middle: the next Write
#     completes whole, the rail is out. TwoHostRailsBatchTest: Submit's
#     batches striped, b checking each is whole at its notification; a's
#     rail-1 link down while a batch is in flight: it completes, no error.
#     TwoHostRailsPlanTest: a process balanced onto rxe1 by the host-wide
#     rail plan (another holds rxe0) stripes its channel on rxe1 alone.
#  3. On a: `rdmactl channels --json` showed the rails (checked in the test);
#     the daemon logged the rail taken out.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 && ${LAB_RAILS:-1} == 2 ]] || {
  lab_log "rails.sh needs --vms 2 --rails 2"
  exit 2
}

# shellcheck source=SCRIPTDIR/peered_rdmad.sh
source "$LAB_ROOT/tests/lab/channels/peered_rdmad.sh"
cleanup() {
  ip link set "$LAB_NETDEV1" up 2>/dev/null
  peered_rdmad_stop
}
trap cleanup EXIT
# A QP gives up after 7 tries of 0.5 s rather than of 67 ms: on a loaded
# host a VM can stall for longer than half a second, and the first rail
# must outlast that (a rail's link going down fails its QP at once).
peered_rdmad_start $'[qp]\ntimeout = 17'
lab_barrier daemons-up 120

if [[ $LAB_NODE == a ]]; then
  ctl route "$LAB_PEER_IP" | tee "$work/route.txt"
  grep -q "$LAB_DEV" "$work/route.txt" || fail "route to $LAB_PEER_IP does not take $LAB_DEV"
fi

"$build/tests/integration/rdmad_integration_tests" --gtest_filter='TwoHostRails*' ||
  fail "TwoHostRails tests on node $LAB_NODE"
lab_barrier rails-done 300

if [[ $LAB_NODE == a ]]; then
  grep -q "rails to $LAB_PEER_IP: also $LAB_DEV1" "$work/rdmad.log" ||
    fail "the daemon did not plan $LAB_DEV1 as a further rail"
fi
lab_log "OK: striping over rxe0 and rxe1, and a rail's link down"
