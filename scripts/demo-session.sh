#!/usr/bin/env bash
# One demo session: start rdmad from the repo's default config on a socket in
# a temp dir, show `rdmactl status`, the devices, their GIDs and the route to
# the lab's peer address; start a second rdmad standing in for another host
# (its peer listener on the VM's address) and open a channel to its echo
# service with `rdmactl connect` and `rdmactl ping`, and run the kv_transfer
# example between them, in C++ and in Python - over RDMA in the lab; stop both cleanly. Runs inside the lab VM (scripts/demo) or, where the lab
# is unavailable, on the host (where channels fall back to TCP).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RDMAD_BUILD_DIR:-$root/build}
run=$(mktemp -d)
# On a failure, node B's log (rdmad A logs to the terminal) before the temp dir goes.
on_exit() {
  local rc=$?
  if ((rc != 0)) && [[ -s $run/b.log ]]; then
    echo "== node B's log (the demo failed with status $rc)" >&2
    sed 's/^/node B: /' "$run/b.log" >&2
  fi
  kill "${pid_b:-}" "${pid:-}" 2>/dev/null || true
  rm -rf "$run"
}
trap on_exit EXIT
sock=$run/rdmad.sock

if command -v ibv_devices >/dev/null; then
  echo "== RDMA devices seen by libibverbs"
  ibv_devices || true
fi
# Both daemons share a peer key (daemon.peer_key_file): node B listens for
# peers on the VM's address, where every peer call must prove who calls.
"$build/client/rdmactl" peer-key "$run/peer.key" >/dev/null
export RDMAD_DAEMON_PEER_KEY_FILE=$run/peer.key
echo "== starting rdmad (config etc/rdmad/rdmad.toml, socket $sock)"
"$build/daemon/rdmad" --config "$root/etc/rdmad/rdmad.toml" --socket "$sock" &
pid=$!
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.1; done
echo "== rdmactl status"
"$build/client/rdmactl" --socket "$sock" status
echo "== rdmactl devices"
"$build/client/rdmactl" --socket "$sock" devices
echo "== rdmactl gids"
"$build/client/rdmactl" --socket "$sock" gids
if [[ -n ${LAB_PEER_IP:-} ]]; then
  echo "== rdmactl route $LAB_PEER_IP (the path rdmad plans to that peer, and why)"
  "$build/client/rdmactl" --socket "$sock" route "$LAB_PEER_IP"
fi
echo "== rdmactl status --json"
"$build/client/rdmactl" --socket "$sock" --json status

# A second daemon, "node B", listening for peers on the VM's address.
b_ip=${LAB_IP:-127.0.0.1}
b_port=7582
echo "== starting a second rdmad (node B) with its peer listener on $b_ip:$b_port"
RDMAD_DAEMON_PEER_ADDRESS=$b_ip RDMAD_DAEMON_PEER_PORT=$b_port \
  "$build/daemon/rdmad" --config "$root/etc/rdmad/rdmad.toml" --socket "$run/b.sock" \
  2>"$run/b.log" &
pid_b=$!
for _ in $(seq 100); do [[ -S $run/b.sock ]] && break; sleep 0.1; done
echo "== rdmactl connect $b_ip:$b_port (a channel to node B's echo service)"
"$build/client/rdmactl" --socket "$sock" connect "$b_ip:$b_port"
echo "== rdmactl ping -c 5 -s 4096 $b_ip:$b_port"
"$build/client/rdmactl" --socket "$sock" ping -c 5 -s 4096 "$b_ip:$b_port"
echo "== examples/kv_transfer: decode pulls KV blocks from prefill in batches, notified"
"$build/examples/kv_transfer" prefill --socket "$run/b.sock" --blocks 256 --rounds 2 \
  >"$run/prefill.log" 2>&1 &
pid_prefill=$!
for _ in $(seq 100); do grep -q "listening" "$run/prefill.log" 2>/dev/null && break; sleep 0.1; done
"$build/examples/kv_transfer" decode "$b_ip:$b_port" --socket "$sock"
wait "$pid_prefill"
cat "$run/prefill.log"
if [[ -d $build/python/rdmad ]] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "== examples/kv_transfer.py: the same in Python, numpy arrays registered"
  export PYTHONPATH=$build/python
  /usr/bin/python3 "$root/examples/kv_transfer.py" prefill --socket "$run/b.sock" \
    --service kv.py --blocks 256 --rounds 2 >"$run/prefill.py.log" 2>&1 &
  pid_prefill=$!
  for _ in $(seq 100); do grep -q "listening" "$run/prefill.py.log" 2>/dev/null && break; sleep 0.1; done
  /usr/bin/python3 "$root/examples/kv_transfer.py" decode "$b_ip:$b_port" --socket "$sock" \
    --service kv.py
  wait "$pid_prefill"
  cat "$run/prefill.py.log"
fi
echo "== rdmactl channels (node B's table)"
"$build/client/rdmactl" --socket "$run/b.sock" channels
echo "== rdmactl peers"
"$build/client/rdmactl" --socket "$sock" peers

echo "== stopping both daemons (SIGTERM)"
kill -TERM "$pid_b" "$pid"
rc=0
wait "$pid_b" || rc=$?
echo "== node B exited with status $rc"
wait "$pid"
echo "== rdmad exited with status $?"
