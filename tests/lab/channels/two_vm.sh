#!/usr/bin/env bash
# Lab test (two VMs): rdmad on each node, peered over the lab link.
#  0. On a: `rdmactl topo` places rxe0 at eth0's virtio-net PCI
#     function behind the VM's host bridge (hwloc on the VM's sysfs), and
#     `rdmactl env nccl` names it with the GID `route` chose.
#  1. On a: `rdmactl connect LAB_PEER_IP` reaches b's echo service over RDMA
#     (text and --json), and `rdmactl ping` gets every reply.
#  2. On both: an application on a talks to an application on b
#     (TwoHostTest in rdmad_integration_tests): messages up to 16 MiB,
#     Write/Read, and b hears the close.
#  3. A program written for NIXL (python/tests/nixl_programs/kv_read.py,
#     started with python3 -m rdmad.nixl): its target on b, its initiator
#     on a reaching it by b's IP address and port, over RDMA.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 ]] || { lab_log "two_vm.sh needs --vms 2"; exit 2; }

# shellcheck source=SCRIPTDIR/peered_rdmad.sh
source "$LAB_ROOT/tests/lab/channels/peered_rdmad.sh"
cleanup() {
  peered_rdmad_stop
}
trap cleanup EXIT
peered_rdmad_start
lab_barrier daemons-up 120

# --- 0. the topology of a VM with a PCI NIC (on a) -----------------------------
if [[ $LAB_NODE == a ]]; then
  # The PCI function at or above the netdev's device (virtio-net: its parent).
  pci=$(readlink -f "/sys/class/net/$LAB_NETDEV/device" |
    grep -oE '[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]' | tail -n 1)
  ctl topo
  ctl --json topo >"$work/topo.json"
  python3 - "$work/topo.json" "$LAB_DEV" "$pci" <<'PY' || fail "topo does not place $LAB_DEV at $pci"
import json, sys
t, dev, pci = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
nic = next(n for n in t["nics"] if n["name"] == dev)
assert nic["place"]["pci_address"] == pci and nic["usable"], nic
assert nic["place"]["pcie_path"][0].startswith("host:") and nic["place"]["numa_node"] == 0, nic
print(f"topo: {dev} at {pci}, behind {nic['place']['pcie_path'][0]}")
PY
  ctl env nccl | grep -qxF "export NCCL_IB_GID_INDEX='$LAB_GID_INDEX'" ||
    fail "env nccl does not name GID $LAB_GID_INDEX"
fi

# --- 1. rdmactl connect and ping, a -> b --------------------------------------
if [[ $LAB_NODE == a ]]; then
  lab_retry 30 1 ctl connect "$LAB_PEER_IP" | tee "$work/connect.txt"
  grep -q "): RDMA, channel" "$work/connect.txt" || fail "rdmactl connect did not come up over RDMA"
  ctl --json connect "$LAB_PEER_IP" >"$work/connect.json"
  python3 - "$work/connect.json" <<'PY' || fail "rdmactl --json connect: not RDMA"
import json, sys
doc = json.load(open(sys.argv[1]))
def find(o, key):
    if isinstance(o, dict):
        if key in o: return o[key]
        for v in o.values():
            r = find(v, key)
            if r is not None: return r
    return None
assert find(doc, "transport") == "RDMA", doc
print("connect --json: transport RDMA")
PY
  # Exit code 0: every reply came back intact.
  ctl ping -c 10 -s 4096 -i 50 "$LAB_PEER_IP" | tee "$work/ping.txt" ||
    fail "rdmactl ping lost replies"
  grep -q "(RDMA): seq=10" "$work/ping.txt" || fail "rdmactl ping did not run over RDMA"
fi
lab_barrier connect-done 120

# --- 2. an application on a talks to one on b ---------------------------------
"$build/tests/integration/rdmad_integration_tests" --gtest_filter='TwoHostTest.*' ||
  fail "TwoHostTest on node $LAB_NODE"
lab_barrier apps-done 300

# --- 3. a NIXL program across the two hosts, by IP address ------------------------
nixl_run() {
  env PYTHONPATH="$build/python" python3 -m rdmad.nixl \
    "$LAB_ROOT/python/tests/nixl_programs/kv_read.py" --port 5555 --timeout 300 "$@" \
    >>"$work/nixl.txt" 2>&1
}
if [[ $LAB_NODE == b ]]; then
  nixl_run --mode target --ip "$LAB_IP" &
  nixl_pid=$!
  # Importing torch in the emulated VM takes a while (minutes on a loaded host).
  listen_by=$((SECONDS + 330))
  while ((SECONDS < listen_by)); do
    grep -q "service nixl.port.5555: listener registered" "$work/rdmad.log" && break
    sleep 0.1
  done
  grep -q "service nixl.port.5555: listener registered" "$work/rdmad.log" ||
    { cat "$work/nixl.txt" >&2; fail "the NIXL target did not listen"; }
fi
lab_barrier nixl-target-up 360
if [[ $LAB_NODE == a ]]; then
  nixl_run --mode initiator --ip "$LAB_PEER_IP" ||
    { cat "$work/nixl.txt" >&2; fail "the NIXL program's initiator"; }
  grep -q "Data verification passed" "$work/nixl.txt" || fail "the NIXL read did not verify"
  ctl --json channels >"$work/channels.json"
  python3 - "$work/channels.json" <<'PY' || fail "the NIXL agents' channel was not RDMA"
import json, sys
rows = [c for c in json.load(open(sys.argv[1]))["channels"]
        if c["service"] == "nixl.port.5555" and c["transport"]]
assert rows and {c["transport"] for c in rows} == {"RDMA"}, rows
print("NIXL agents' channel: RDMA")
PY
else
  wait "$nixl_pid" || { cat "$work/nixl.txt" >&2; fail "the NIXL program's target"; }
  grep -q "the initiator read the blocks" "$work/nixl.txt" || fail "the NIXL target saw no read"
fi
lab_barrier nixl-done 300
lab_log "two_vm channels: OK"
