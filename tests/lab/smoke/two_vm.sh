#!/usr/bin/env bash
# Lab smoke test (two VMs): each node has its own rxe0 on eth0 (devinfo.sh),
# then an RC ping-pong across the link, server on a, client on b.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 ]] || { lab_log "two_vm.sh needs --vms 2"; exit 2; }

here=$LAB_ROOT/tests/lab/smoke
"$here/devinfo.sh"
lab_barrier devinfo-done 120
"$here/rc_pingpong.sh"
