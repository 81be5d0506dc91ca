#!/usr/bin/env bash
# Installs (or checks) the Debian packages the RDMA lab needs on the host.
#
#   tests/lab/setup.sh            install what is missing (needs root; idempotent)
#   tests/lab/setup.sh --check    only report; exit 0 if complete, 77 if not
#
# The lab VM chroots into the host's own root filesystem, so the RDMA
# userspace (rdma-core, ibverbs-utils, perftest, rdmacm-utils, ucx-utils,
# iproute2) must be installed on the host even though the host kernel has
# no RDMA support.
set -euo pipefail

LAB_PACKAGES=(
  qemu-system-x86  # the VM (TCG)
  busybox-static   # the initramfs userland
  cpio             # builds the initramfs
  kmod             # depmod for the unpacked kernel
  rdma-core        # rdma-core userspace (used inside the VM via the shared root)
  ibverbs-providers
  ibverbs-utils    # ibv_devinfo, ibv_rc_pingpong
  perftest         # ib_send_lat, ib_write_bw
  rdmacm-utils     # cmtime, rping: rdma_cm's own tools (a connection-rate anchor)
  ucx-utils        # ucx_perftest: UCX's put latency and bandwidth (the peer anchor)
  iproute2         # ip, rdma, ss
  python3          # lab scripts compare JSON outputs
)

lab_missing_packages() {
  local p status
  for p in "${LAB_PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || printf '%s\n' "$p"
  done
}

main() {
  local mode=install
  case "${1:-}" in
    --check) mode=check ;;
    "") ;;
    -h | --help)
      sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
      return 0
      ;;
    *)
      echo "setup.sh: unknown argument: $1" >&2
      return 2
      ;;
  esac

  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "lab: this host has no dpkg; the lab needs a Debian (bookworm) host" >&2
    return 77
  fi

  local missing
  mapfile -t missing < <(lab_missing_packages)
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  if [[ $mode == check ]]; then
    echo "lab: missing Debian packages: ${missing[*]}" >&2
    echo "lab: install them with: sudo tests/lab/setup.sh" >&2
    echo "lab:   (or: apt-get install -y --no-install-recommends ${missing[*]})" >&2
    return 77
  fi
  if ((EUID != 0)); then
    echo "lab: missing Debian packages: ${missing[*]}; run tests/lab/setup.sh as root" >&2
    return 77
  fi
  echo "lab: installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # On a fresh machine the package lists are empty: update once, then install.
  if ! apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
    apt-get update >&2
    apt-get install -y --no-install-recommends "${missing[@]}" >&2
  fi
  mapfile -t missing < <(lab_missing_packages)
  if ((${#missing[@]} != 0)); then
    echo "lab: still missing after install: ${missing[*]}" >&2
    return 1
  fi
}

main "$@"
