#!/usr/bin/env bash
# Lab smoke test: the Soft-RoCE device is there and usable (any mode).
# ibv_devinfo must show LAB_DEV with port 1 PORT_ACTIVE and link layer
# Ethernet, and the IPv4-mapped RoCE v2 GID must be at LAB_GID_INDEX.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"

info=$(ibv_devinfo -v -d "$LAB_DEV")
echo "$info" | grep -E 'hca_id|state|link_layer|active_mtu|GID\[ *'"$LAB_GID_INDEX"'\]'

grep -q "hca_id:[[:space:]]*$LAB_DEV\$" <<<"$info" || { lab_log "FAIL: $LAB_DEV not listed"; exit 1; }
grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$info" || { lab_log "FAIL: port not PORT_ACTIVE"; exit 1; }
grep -q 'link_layer:[[:space:]]*Ethernet' <<<"$info" || { lab_log "FAIL: link layer is not Ethernet"; exit 1; }
grep -Eq "GID\[ *$LAB_GID_INDEX\]:[[:space:]]*::ffff:$LAB_IP, RoCE v2" <<<"$info" ||
  { lab_log "FAIL: GID[$LAB_GID_INDEX] is not ::ffff:$LAB_IP (RoCE v2)"; exit 1; }
rdma link show "$LAB_DEV/1" | grep -q 'state ACTIVE' || { lab_log "FAIL: rdma link not ACTIVE"; exit 1; }
lab_log "OK: $LAB_DEV PORT_ACTIVE, Ethernet, GID[$LAB_GID_INDEX] ::ffff:$LAB_IP RoCE v2"
