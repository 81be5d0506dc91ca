#!/usr/bin/env bash
# Lab test: rdmad's discovery on the real rxe device (single VM).
#  1. `rdmactl --json devices` agrees field by field with `ibv_devinfo -v`
#     and `rdma -j link`; `rdmactl --json gids` lists the same GIDs.
#  2. `rdmactl route LAB_IP` picks LAB_DEV port 1, GID LAB_GID_INDEX, RoCE v2,
#     MTU 1024, and says why.
#  3. `rdmactl topo` places LAB_DEV at its netdev's PCI function (hwloc on
#     the VM's sysfs; a veth has none), usable for rails; `topo --plan` plans
#     it, and `env nccl` names it with the GID `route` chose.
#  4. While rdmad runs: `rdma link add` -> a device-added event and the device
#     listed within 1 s, and in the topology off the PCIe tree (a veth);
#     `rdma link delete` -> gone; netdev down/up -> port state events; a new
#     IP address -> a new GID.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"

build=${RDMAD_BUILD_DIR:-$LAB_ROOT/build}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
sock=$work/rdmad.sock
ctl() { "$build/client/rdmactl" --socket "$sock" "$@"; }
fail() {
  lab_log "FAIL: $*"
  exit 1
}

"$build/daemon/rdmad" --config "$LAB_ROOT/etc/rdmad/rdmad.toml" --socket "$sock" \
  2>"$work/rdmad.log" &
daemon=$!
cleanup() {
  set +e
  kill $(jobs -p) 2>/dev/null
  wait 2>/dev/null
  rdma link delete rxe_t2 2>/dev/null
  sed 's/^/rdmad: /' "$work/rdmad.log" >&2
}
trap cleanup EXIT
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
ctl status

# --- 1. the inventory against independent tools ----------------------------
ctl devices
ctl --json devices >"$work/devices.json"
ibv_devinfo -v >"$work/devinfo.txt"
rdma -j link >"$work/link.json"
python3 "$here/compare_devinfo.py" "$work/devices.json" "$work/devinfo.txt" \
  "$work/link.json" "$LAB_DEV" || fail "rdmactl devices disagrees with ibv_devinfo / rdma link"

ctl gids "$LAB_DEV"
ctl --json gids "$LAB_DEV" >"$work/gids.json"
python3 - "$work/gids.json" "$work/devices.json" "$LAB_DEV" <<'EOF' || fail "gids disagrees with devices"
import json, sys
gids = json.load(open(sys.argv[1]))["gids"]
dev = next(d for d in json.load(open(sys.argv[2]))["devices"] if d["name"] == sys.argv[3])
want = sorted((p["port"], g["index"], g["gid"], g["type"]) for p in dev["ports"] for g in p["gids"])
got = sorted((g["port"], g["index"], g["gid"], g["type"]) for g in gids if g["device"] == sys.argv[3])
assert got == want, f"{got} != {want}"
print(f"gids: {len(got)} GIDs agree with devices")
EOF

# --- 2. the route ------------------------------------------------------------
ctl route "$LAB_IP" | tee "$work/route.txt"
grep -q "why:" "$work/route.txt" || fail "route gives no reasons"
ctl --json route "$LAB_IP" >"$work/route.json"
python3 - "$work/route.json" "$LAB_DEV" "$LAB_GID_INDEX" "$LAB_IP" <<'EOF' || fail "wrong route"
import json, sys
r = json.load(open(sys.argv[1]))
dev, index, ip = sys.argv[2], int(sys.argv[3]), sys.argv[4]
assert r["device"] == dev and r["port"] == 1, r
assert r["gid_index"] == index and r["gid_type"] == "RoCE v2", r
assert r["source_ip"] == ip and r["mtu"] == 1024, r
assert r["qp"]["type"] == "RC" and r["qp"]["timeout"] == 14, r
assert any("GID" in x for x in r["reasons"]) and any("MTU" in x or "mtu" in x for x in r["reasons"]), r
print(f"route: {dev} port 1 GID {index} RoCE v2 MTU 1024")
EOF

# --- 3. the topology ----------------------------------------------------------
ctl topo
ctl --json topo >"$work/topo.json"
# On a virtio-net NIC (two VMs) the device sits at its PCI function; on the
# one VM's veth it is off the PCIe tree, and then as far as hwloc knows.
# The PCI function at or above the netdev's device (virtio-net: its parent).
pci=
if [[ -e /sys/class/net/$LAB_NETDEV/device ]]; then
  pci=$(readlink -f "/sys/class/net/$LAB_NETDEV/device" |
    grep -oE '[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]' | tail -n 1)
fi
python3 - "$work/topo.json" "$LAB_DEV" "$pci" "$LAB_NETDEV" <<'EOF' || fail "topo misplaces $LAB_DEV"
import json, sys
t = json.load(open(sys.argv[1]))
dev, pci, netdev = sys.argv[2], sys.argv[3], sys.argv[4]
nic = next(n for n in t["nics"] if n["name"] == dev)
assert t["source"] == "sysfs" and t["error"] == "" and t["numa_nodes"] >= 1, t
assert nic["netdev"] == netdev and nic["usable"], nic
assert nic["place"]["pci_address"] == pci, nic
if pci:
    assert nic["place"]["pcie_path"][0].startswith("host:"), nic
    assert nic["place"]["numa_node"] == 0 and nic["place"]["cpus"], nic
else:
    assert nic["place"]["pcie_path"] == [] and nic["to_nics"][t["nics"].index(nic)] == "X", nic
print(f"topo: {dev} on {netdev} at {pci or 'no PCI function (a veth)'}, usable")
EOF
near=NODE
[[ -n $pci ]] || near=SYS
ctl topo --plan | tee "$work/plan.txt"
grep -Eq "^(any CPU|CPUs [0-9,-]+): $LAB_DEV \\($near\\)" "$work/plan.txt" ||
  fail "topo --plan does not plan $LAB_DEV ($near)"
# NCCL's environment names the device, the GID `route` chose and the netdev.
ctl env nccl | tee "$work/env.txt"
for line in "export NCCL_IB_HCA='=$LAB_DEV:1'" "export NCCL_IB_GID_INDEX='$LAB_GID_INDEX'" \
  "export NCCL_SOCKET_IFNAME='=$LAB_NETDEV'"; do
  grep -qxF "$line" "$work/env.txt" || fail "env nccl lacks: $line"
done

# --- 4. live changes -----------------------------------------------------------
# Each change must reach WatchEvents within 1 s of the command that makes it
# (the daemon's event stamp minus the command's start; rdmactl is slow to
# start under TCG, so it is not part of the measure); after the event the
# listing shows the change.
now_ms() { date +%s%3N; }
expect_event() { # KIND DEVICE TEXT T_BEFORE T_AFTER
  python3 "$here/wait_event.py" "$work/events.log" "$@" || fail "$1 $2 '$3'"
}
listed() { ctl --json devices | grep -q "\"name\": \"$1\""; }
has_gid_ip() { ctl --json gids "$LAB_DEV" | grep -q "\"ip\": \"$1\""; }

ctl --json events >"$work/events.log" 2>&1 &
for _ in $(seq 100); do
  [[ $(ctl --json status | grep -o '"event_subscribers": [0-9]*') == *1 ]] && break
  sleep 0.1
done

t_before=$(now_ms)
rdma link add rxe_t2 type rxe netdev veth1
t0=$(now_ms)
expect_event device-added rxe_t2 rxe_t2 "$t_before" "$t0"
listed rxe_t2 || fail "rxe_t2 not listed after its event"
# The topology is read again after the event (hwloc is slow under TCG).
in_topo() {
  ctl --json topo | python3 -c '
import json, sys
t = json.load(sys.stdin)
nic = next(n for n in t["nics"] if n["name"] == "rxe_t2")
assert nic["place"]["pci_address"] == "", nic
print("topo: rxe_t2 (on a veth) listed, off the PCIe tree")' 2>/dev/null
}
for _ in $(seq 50); do in_topo && break; sleep 0.2; done
in_topo || fail "rxe_t2 not in the topology within 10 s of its event"

t_before=$(now_ms)
timeout 10 rdma link delete rxe_t2 || fail "rdma link delete rxe_t2 failed or hung"
t0=$(now_ms)
expect_event device-removed rxe_t2 rxe_t2 "$t_before" "$t0"
! listed rxe_t2 || fail "rxe_t2 still listed after its removal event"

t_before=$(now_ms)
ip link set "$LAB_NETDEV" down
t0=$(now_ms)
expect_event port-state-changed "$LAB_DEV" "-> DOWN" "$t_before" "$t0"
t_before=$(now_ms)
ip link set "$LAB_NETDEV" up
t0=$(now_ms)
expect_event port-state-changed "$LAB_DEV" "-> ACTIVE" "$t_before" "$t0"

t_before=$(now_ms)
ip addr add 192.0.2.99/24 dev "$LAB_NETDEV"
t0=$(now_ms)
expect_event gid-added "$LAB_DEV" 192.0.2.99 "$t_before" "$t0"
has_gid_ip 192.0.2.99 || fail "no GID for 192.0.2.99 after its event"
t_before=$(now_ms)
ip addr del 192.0.2.99/24 dev "$LAB_NETDEV"
t0=$(now_ms)
expect_event gid-removed "$LAB_DEV" 192.0.2.99 "$t_before" "$t0"
! has_gid_ip 192.0.2.99 || fail "GID for 192.0.2.99 still listed after its event"
lab_log "OK: discovery agrees with ibv_devinfo and rdma link; route; live changes within 1 s"
