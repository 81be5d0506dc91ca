#!/usr/bin/env bash
# Lab test (two VMs): daemons that know each other only through etcd.
# etcd runs in VM a on the lab link; rdmad on each node has `[cluster]
# endpoints` and no [[peers]] (docs/cluster.md).
#  1. Each daemon lists both members, has the other as a discovered peer,
#     finds rdmad.echo on both, and pings the other by node name over RDMA.
#  2. b's daemon stops: it leaves the member list at once (its lease is
#     revoked, not left to expire). It starts again: a sees it come back
#     and pings it by name again.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 ]] || { lab_log "cluster/two_vm.sh needs --vms 2"; exit 2; }

# shellcheck source=SCRIPTDIR/../channels/peered_rdmad.sh
source "$LAB_ROOT/tests/lab/channels/peered_rdmad.sh"
trap peered_rdmad_stop EXIT

if [[ $LAB_NODE == a ]]; then
  etcd_ip=$LAB_IP other=node-b
else
  etcd_ip=$LAB_PEER_IP other=node-a
fi
# A TTL far longer than a revoke takes: a member that leaves at once was
# withdrawn, not expired.
lease_ttl_s=30

start_member() {
  rdmad_start_with "node_name = \"node-$LAB_NODE\"" "[cluster]
endpoints = [\"$etcd_ip:2379\"]
lease_ttl_s = $lease_ttl_s"
}

# members_are N: `rdmactl cluster` reaches etcd and lists N members.
members_are() {
  ctl cluster >"$work/cluster.txt" 2>&1 || return 1
  grep -q "reachable, $1 member(s)" "$work/cluster.txt"
}

# ping_by_name: ten echo round trips to the other node, by name, over RDMA.
ping_by_name() {
  ctl ping -c 10 -s 4096 -i 50 "$other" >"$work/ping.txt" 2>&1 &&
    grep -q "(RDMA): seq=10" "$work/ping.txt"
}

# --- etcd on a, on the lab link ---------------------------------------------
if [[ $LAB_NODE == a ]]; then
  url=http://$LAB_IP:2379 peer=http://127.0.0.1:2380
  etcd --name lab-a --data-dir "$work/etcd" --listen-client-urls "$url" \
    --advertise-client-urls "$url" --listen-peer-urls "$peer" \
    --initial-advertise-peer-urls "$peer" --initial-cluster "lab-a=$peer" \
    --log-level warn 2>"$work/etcd.log" &
  lab_wait_listen 2379 60 $! || { cat "$work/etcd.log" >&2; fail "etcd did not start"; }
fi
lab_barrier etcd-up 120

# --- 1. find each other, ping by name ---------------------------------------
start_member
lab_barrier daemons-up 120
lab_retry 30 1 members_are 2 || { cat "$work/cluster.txt" >&2; fail "not 2 members"; }
cat "$work/cluster.txt" >&2
grep -q "^node-$LAB_NODE (this node) *$LAB_IP:7581" "$work/cluster.txt" ||
  fail "this node's record is not its peer address"
grep -q "^$other  *$LAB_PEER_IP:7581" "$work/cluster.txt" || fail "no record of $other"
ctl peers | tee "$work/peers.txt" >&2
grep -q "$other (discovered)" "$work/peers.txt" || fail "$other is not a discovered peer"
ctl services rdmad.echo | tee "$work/services.txt" >&2
grep -Eq "^rdmad.echo +node-a, node-b$" "$work/services.txt" ||
  fail "rdmad.echo is not listed on both nodes"
lab_retry 30 1 ping_by_name || { cat "$work/ping.txt" >&2; fail "ping $other by name"; }
cat "$work/ping.txt" >&2
lab_barrier pinged 120

# --- 2. b leaves and comes back ---------------------------------------------
if [[ $LAB_NODE == b ]]; then
  kill -TERM "$RDMAD_PID"
  wait "$RDMAD_PID" || fail "rdmad on b did not stop cleanly"
  lab_signal b-stopped
  lab_wait_signal b-gone 120 a
  start_member
  lab_signal b-back
else
  lab_wait_signal b-stopped 120 b
  # Well inside the TTL: the lease was revoked on the way out.
  lab_retry 10 1 members_are 1 || { cat "$work/cluster.txt" >&2; fail "b is still listed"; }
  ctl status | tee "$work/status.txt" >&2
  grep -q "cluster: etcd reachable, 0 other member(s)" "$work/status.txt" ||
    fail "status does not say the cluster is alone"
  lab_signal b-gone
  lab_wait_signal b-back 120 b
  lab_retry 30 1 members_are 2 || { cat "$work/cluster.txt" >&2; fail "b did not come back"; }
  lab_retry 30 1 ping_by_name || { cat "$work/ping.txt" >&2; fail "ping b after its restart"; }
  cat "$work/ping.txt" >&2
fi
lab_barrier done 120
lab_log "cluster two_vm: OK"
