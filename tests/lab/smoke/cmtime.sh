#!/usr/bin/env bash
# Lab smoke test (single VM): rdma_cm works on LAB_DEV - cmtime (Debian's
# rdmacm-utils) connects CMTIME_CONNS connections between two processes and
# prints its per-step times. The lab loads ib_cm, iw_cm, rdma_cm and rdma_ucm
# for it; the benchmarks' connect rows use the same tool as their anchor.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 1 ]] || { lab_log "cmtime.sh is a single-VM test"; exit 2; }

conns=${CMTIME_CONNS:-20}
out=$(mktemp)
trap 'rm -f "$out" "$out.server"' EXIT
lab_cmtime 18530 "$conns" "$out" || { lab_log "FAIL: cmtime"; exit 1; }
sed 's/^/cmtime client: /' "$out"
grep -q "^connect *:" "$out" || { lab_log "FAIL: no connect step in cmtime's table"; exit 1; }
lab_log "OK: cmtime connected $conns rdma_cm connections on $LAB_DEV"
