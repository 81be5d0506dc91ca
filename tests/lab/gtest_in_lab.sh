#!/usr/bin/env bash
# Runs a GoogleTest binary in the RDMA lab; its exit code is passed through.
#
#   tests/lab/run [--vms 2] -- tests/lab/gtest_in_lab.sh BINARY [gtest args...]
#   tests/lab/gtest_in_lab.sh BINARY [gtest args...]     (from the host)
#
# Inside the lab (LAB_NODE is set) it runs BINARY in the checkout with the lab
# environment (LAB_NODE, LAB_IP, LAB_PEER_IP, LAB_DEV, LAB_GID_INDEX, ...; see
# tests/lab/lib.sh), so a device test can pick its device and, in two-VM mode,
# its role. Called on the host, it boots the lab itself:
#   tests/lab/run $LAB_RUN_OPTS --share <BINARY's dir> -- gtest_in_lab.sh BINARY ...
# (LAB_RUN_OPTS: e.g. "--vms 2 --timeout 120"). Tests whose binary is outside
# the checkout need its directory shared: this is done for you from the host.
# Output: gtest's own; --gtest_output=xml:PATH works for PATH in the checkout or
# a shared directory.
set -euo pipefail

if (($# < 1)); then
  echo "usage: gtest_in_lab.sh BINARY [gtest args...]" >&2
  exit 2
fi
binary=$1
shift

if [[ -z ${LAB_NODE:-} ]]; then
  # On the host: boot the lab and come back here inside it.
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  [[ -e $binary ]] || {
    echo "gtest_in_lab.sh: no such binary: $binary" >&2
    exit 2
  }
  binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
  read -r -a opts <<<"${LAB_RUN_OPTS:-}"
  exec "$here/run" ${opts[@]+"${opts[@]}"} --share "$(dirname "$binary")" \
    -- "$here/gtest_in_lab.sh" "$binary" "$@"
fi

if [[ ! -x $binary ]]; then
  echo "gtest_in_lab.sh[$LAB_NODE]: not an executable in the lab: $binary" >&2
  exit 127
fi
echo "gtest_in_lab.sh[$LAB_NODE]: $binary $* (device $LAB_DEV, GID index $LAB_GID_INDEX, $LAB_IP -> $LAB_PEER_IP)"
export GTEST_COLOR=${GTEST_COLOR:-no}
exec "$binary" "$@"
