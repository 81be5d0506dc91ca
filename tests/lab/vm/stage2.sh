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

# The netdev whose MAC address is this (two-VM mode: qemu's NICs).
netdev_by_mac() {
  local d
  for d in /sys/class/net/*; do
    [[ $(cat "$d/address" 2>/dev/null) == "$1" ]] && echo "${d##*/}" && return 0
  done
  return 1
}

# The IPv4-mapped RoCE v2 GID of an address.
ipv4_gid() {
  local IFS=. a b c d
  read -r a b c d <<<"$1"
  printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
}

# Rail R: a netdev with address IP, Soft-RoCE device DEV on it; prints the
# netdev and the GID index once the port is ACTIVE and the GID is there.
setup_rail() {
  local r=$1 ip=$2 dev=$3 netdev mac
  if [[ $LAB_VMS == 1 ]]; then
    netdev=veth$((2 * r))
    ip link add "$netdev" type veth peer name "veth$((2 * r + 1))" || fail "veth for rail $r"
    ip link set "veth$((2 * r + 1))" up || fail "veth$((2 * r + 1)) up"
  else
    mac=52:54:00:00:0$((r + 2)):0$([[ $node == a ]] && echo 1 || echo 2)
    netdev=$(netdev_by_mac "$mac") || fail "no NIC with MAC $mac (virtio-net not loaded?)"
  fi
  ip addr add "$ip/$LAB_PREFIX" dev "$netdev" || fail "address on $netdev"
  ip link set "$netdev" up || fail "$netdev up"
  rdma link add "$dev" type rxe netdev "$netdev" ||
    fail "rdma link add $dev (rdma_rxe loaded? crc32_generic?)"
  local want port=/sys/class/infiniband/$dev/ports/1 i g
  want=$(ipv4_gid "$ip")
  for ((i = 0; i < 100; i++)); do
    if [[ $(cat "$port/state" 2>/dev/null) == *ACTIVE* ]]; then
      for g in "$port"/gids/*; do
        if [[ $(cat "$g" 2>/dev/null) == "$want" ]]; then
          echo "$netdev ${g##*/}"
          return 0
        fi
      done
    fi
    sleep 0.1
  done
  fail "$dev: port not ACTIVE or no GID for $ip after 10 s"
}

LAB_PREFIX=${LAB_PREFIX:-24}
read -r LAB_NETDEV LAB_GID_INDEX < <(setup_rail 0 "$LAB_IP" "$LAB_DEV") || exit 125
[[ -n $LAB_GID_INDEX ]] || fail "rail 0 did not come up"
export LAB_NETDEV LAB_GID_INDEX
if [[ ${LAB_RAILS:-1} == 2 ]]; then
  read -r LAB_NETDEV1 LAB_GID_INDEX1 < <(setup_rail 1 "$LAB_IP1" "$LAB_DEV1") || exit 125
  [[ -n $LAB_GID_INDEX1 ]] || fail "rail 1 did not come up"
  export LAB_NETDEV1 LAB_GID_INDEX1
fi

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
