#!/bin/bash
# RDMA lab: stage 2, runs as root inside the VM, chrooted into the host's root
# filesystem (see vm/init). Copied into the run directory by tests/lab/run and
# started as /run/lab/stage2.sh NODE.
#
# Sets up the environment, the network and the Soft-RoCE device, waits for the
# other node (two-VM mode), then runs /run/lab/job.sh (the user's SCRIPT) or an
# interactive shell. Its exit code is the node's result.
set -uo pipefail

node=${1:?node}
# shellcheck source=/dev/null
source "/run/lab/env.$node" || exit 125

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8
export TERM=${LAB_TERM:-dumb}
umask 022
ulimit -l unlimited 2>/dev/null || true
ulimit -c 0 2>/dev/null || true

say() { echo "lab[$node]: $*"; }
fail() {
  say "SETUP FAILED: $*"
  : >"/run/lab/abort" 2>/dev/null || true
  exit 125
}

# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh" || fail "cannot source lib.sh"

echo "lab-$node" >/proc/sys/kernel/hostname
ip link set lo up || fail "loopback"

if [[ $LAB_VMS == 1 ]]; then
  LAB_NETDEV=veth0
  ip link add veth0 type veth peer name veth1 || fail "veth"
  ip addr add "$LAB_IP/24" dev veth0 || fail "address on veth0"
  ip link set veth0 up || fail "veth0 up"
  ip link set veth1 up || fail "veth1 up"
else
  LAB_NETDEV=eth0
  [[ -e /sys/class/net/eth0 ]] || fail "no eth0 (virtio-net not loaded?)"
  ip addr add "$LAB_IP/24" dev eth0 || fail "address on eth0"
  ip link set eth0 up || fail "eth0 up"
fi
export LAB_NETDEV

rdma link add "$LAB_DEV" type rxe netdev "$LAB_NETDEV" || fail "rdma link add $LAB_DEV (rdma_rxe loaded? crc32_generic?)"

# Wait until the port is ACTIVE and the IPv4-mapped RoCE v2 GID is there.
ipv4_gid() {
  local IFS=. a b c d
  read -r a b c d <<<"$1"
  printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
}
want_gid=$(ipv4_gid "$LAB_IP")
port=/sys/class/infiniband/$LAB_DEV/ports/1
LAB_GID_INDEX=
for ((i = 0; i < 100; i++)); do
  if [[ $(cat "$port/state" 2>/dev/null) == *ACTIVE* ]]; then
    for g in "$port"/gids/*; do
      if [[ $(cat "$g" 2>/dev/null) == "$want_gid" ]]; then
        LAB_GID_INDEX=${g##*/}
        break 2
      fi
    done
  fi
  sleep 0.1
done
[[ -n $LAB_GID_INDEX ]] || fail "$LAB_DEV: port not ACTIVE or no GID for $LAB_IP after 10 s"
export LAB_GID_INDEX

[[ -e /dev/infiniband/uverbs0 ]] || fail "/dev/infiniband/uverbs0 missing"

if [[ $LAB_VMS != 1 ]]; then
  lab_barrier lab-ready 120 || fail "peer node did not come up"
fi

cd "$LAB_ROOT" || fail "cd $LAB_ROOT"

if [[ ${LAB_SHELL:-0} == 1 ]]; then
  # shellcheck disable=SC2086 # "rows R cols C"
  [[ -n ${LAB_STTY:-} ]] && stty $LAB_STTY </dev/ttyS0 2>/dev/null
  cat <<EOF
lab[$node]: interactive shell on $(hostname) ($LAB_DEV on $LAB_NETDEV, $LAB_IP, GID index $LAB_GID_INDEX).
lab[$node]: the checkout is $LAB_ROOT; exit the shell to power off (or Ctrl-A x to kill qemu).
EOF
  setsid -c bash --rcfile /run/lab/shellrc -i </dev/ttyS0 >/dev/ttyS0 2>&1
  exit 0
fi

if [[ ${LAB_IDLE:-0} == 1 ]]; then
  say "idle (no script); waiting for the lab to end"
  while :; do sleep 3600; done
fi

say "running: $(</run/lab/job.cmd)"
bash /run/lab/job.sh </dev/null
rc=$?
say "script exited with $rc"
exit "$rc"
