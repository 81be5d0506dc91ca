#!/usr/bin/env bash
# One demo session: start rdmad from the repo's default config on a socket in
# a temp dir, show `rdmactl status`, the devices, their GIDs and the route to
# the lab's peer address, stop it cleanly. Runs inside the lab VM
# (scripts/demo) or, where the lab is unavailable, on the host.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RDMAD_BUILD_DIR:-$root/build}
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
sock=$run/rdmad.sock

if command -v ibv_devices >/dev/null; then
  echo "== RDMA devices seen by libibverbs"
  ibv_devices || true
fi
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
echo "== stopping rdmad (SIGTERM)"
kill -TERM "$pid"
wait "$pid"
echo "== rdmad exited with status $?"
