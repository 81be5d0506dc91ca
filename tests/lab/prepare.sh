#!/usr/bin/env bash
# Prepares the lab's boot image in $LAB_CACHE (default <repo>/build/lab-cache):
#   kernel/<version>/root/   Debian's linux-image package, unpacked (dpkg -x) + depmod
#   image/vmlinuz            the kernel to boot
#   image/initramfs.cpio.gz  busybox-static + the modules the lab needs + vm/init
# Everything is reused when present; the initramfs is rebuilt only when its
# inputs change. The host kernel is never touched: nothing is installed.
#
# Exit codes: 0 ready, 77 lab unavailable (tools or kernel package missing),
# other: error. Environment: LAB_CACHE, LAB_KERNEL_VERSION (e.g. 6.1.0-56-amd64;
# default: whatever Debian's linux-image-amd64 depends on, or the cached one).
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$LAB_DIR/../.." && pwd)
LAB_CACHE=${LAB_CACHE:-$REPO_ROOT/build/lab-cache}

# Modules to load, in order. Their dependencies are resolved from modules.dep;
# modules that are built into the kernel are skipped.
LAB_MODULES=(
  virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
  failover net_failover virtio_net
  netfs fscache 9pnet 9pnet_virtio 9p
  veth crc32_generic
  ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe
  ib_cm iw_cm rdma_cm rdma_ucm
)
# Without these the lab cannot work at all.
LAB_REQUIRED_MODULES=(9pnet_virtio 9p ib_core ib_uverbs rdma_rxe)

say() { echo "lab: $*" >&2; }
unavailable() {
  say "$*"
  exit 77
}

need_tool() {
  command -v "$1" >/dev/null 2>&1 || unavailable "'$1' not found: run tests/lab/setup.sh (Debian package $2)"
}

find_busybox() {
  local b
  for b in /bin/busybox /usr/bin/busybox /usr/lib/busybox-static/busybox; do
    if [[ -x $b ]] && ! ldd "$b" >/dev/null 2>&1; then
      echo "$b"
      return 0
    fi
  done
  return 1
}

# --- kernel -----------------------------------------------------------------

cached_kernel_version() {
  local f=$LAB_CACHE/kernel/current
  [[ -f $f ]] || return 1
  local v
  v=$(<"$f")
  [[ -f $LAB_CACHE/kernel/$v/.complete ]] || return 1
  echo "$v"
}

debian_kernel_version() {
  local dep
  dep=$(apt-cache depends linux-image-amd64 2>/dev/null |
    sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*\)$/\1/p' | head -n 1)
  if [[ -z $dep && $EUID -eq 0 ]]; then
    # A fresh machine has empty package lists.
    apt-get update >&2 || true
    dep=$(apt-cache depends linux-image-amd64 2>/dev/null |
      sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*\)$/\1/p' | head -n 1)
  fi
  [[ -n $dep ]] || return 1
  echo "$dep"
}

fetch_kernel() {
  local version=$1 dir=$LAB_CACHE/kernel/$1
  [[ -f $dir/.complete ]] && return 0
  need_tool apt-get apt
  need_tool dpkg dpkg
  need_tool depmod kmod
  say "fetching Debian kernel package linux-image-$version (once; cached in $dir)"
  rm -rf "$dir"
  mkdir -p "$dir/dl"
  if ! (cd "$dir/dl" && apt-get download -q -o APT::Sandbox::User=root "linux-image-$version" >&2); then
    rm -rf "$dir"
    unavailable "cannot download linux-image-$version (needs Debian's package archive; try apt-get update)"
  fi
  local deb
  deb=$(find "$dir/dl" -maxdepth 1 -name '*.deb' | head -n 1)
  dpkg -x "$deb" "$dir/root"
  rm -rf "$dir/dl"
  depmod -b "$dir/root" "$version"
  [[ -f $dir/root/boot/vmlinuz-$version ]] || {
    say "kernel package has no boot/vmlinuz-$version"
    exit 1
  }
  touch "$dir/.complete"
}

# --- modules ----------------------------------------------------------------

declare -A MOD_DEPS=() MOD_PATH=() MOD_SEEN=()
MOD_ORDER=()

load_modules_dep() {
  local moddir=$1 line path deps name
  while IFS= read -r line; do
    path=${line%%:*}
    deps=${line#*:}
    name=${path##*/}
    name=${name%%.ko*}
    MOD_PATH[$name]=$path
    MOD_DEPS[$path]=$deps
  done <"$moddir/modules.dep"
}

add_module_path() {
  local path=$1 dep i
  [[ -n ${MOD_SEEN[$path]:-} ]] && return 0
  MOD_SEEN[$path]=1
  local -a deps
  read -r -a deps <<<"${MOD_DEPS[$path]:-}"
  # modules.dep lists dependencies so that the last one must be loaded first.
  for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
    add_module_path "${deps[$i]}"
  done
  MOD_ORDER+=("$path")
}

resolve_modules() {
  local moddir=$1 m required
  load_modules_dep "$moddir"
  for m in "${LAB_MODULES[@]}"; do
    if [[ -n ${MOD_PATH[$m]:-} ]]; then
      add_module_path "${MOD_PATH[$m]}"
    elif grep -qE "/${m//_/[_-]}\.ko(\..*)?$" "$moddir/modules.builtin" 2>/dev/null; then
      : # built in
    else
      required=
      [[ " ${LAB_REQUIRED_MODULES[*]} " == *" $m "* ]] && required=1
      if [[ -n $required ]]; then
        say "kernel $KVER has no module $m (and it is not built in)"
        exit 1
      fi
      say "warning: kernel $KVER has no module $m (and it is not built in); continuing"
    fi
  done
}

copy_module() {
  local src=$1 dst=$2
  case $src in
    *.ko) cp "$src" "$dst" ;;
    *.ko.xz) xz -dc "$src" >"$dst" ;;
    *.ko.zst) zstd -qdc "$src" >"$dst" ;;
    *.ko.gz) gzip -dc "$src" >"$dst" ;;
    *)
      say "unknown module format: $src"
      exit 1
      ;;
  esac
}

# --- initramfs --------------------------------------------------------------

build_initramfs() {
  local root=$LAB_CACHE/kernel/$KVER/root moddir
  moddir=$root/lib/modules/$KVER
  resolve_modules "$moddir"

  local busybox stamp
  busybox=$(find_busybox) || unavailable "no static busybox found: run tests/lab/setup.sh (Debian package busybox-static)"
  stamp=$(
    {
      echo "kernel $KVER"
      printf 'module %s\n' "${MOD_ORDER[@]}"
      sha256sum "$busybox" "$LAB_DIR/vm/init" "${BASH_SOURCE[0]}" | cut -d' ' -f1
    } | sha256sum | cut -d' ' -f1
  )
  local img=$LAB_CACHE/image
  if [[ -f $img/stamp && $(<"$img/stamp") == "$stamp" && -f $img/initramfs.cpio.gz && -f $img/vmlinuz ]]; then
    return 0
  fi

  say "building initramfs for $KVER"
  local work=$LAB_CACHE/image.tmp.$$
  rm -rf "$work"
  mkdir -p "$work/root"/{bin,dev,proc,sys,etc,newroot,lib/modules}
  cp "$busybox" "$work/root/bin/busybox"
  cp "$LAB_DIR/vm/init" "$work/root/init"
  chmod 0755 "$work/root/init" "$work/root/bin/busybox"
  if ((EUID == 0)); then
    mknod -m 0600 "$work/root/dev/console" c 5 1
  fi
  local path name
  : >"$work/root/etc/lab-modules"
  for path in "${MOD_ORDER[@]}"; do
    name=${path##*/}
    name=${name%%.ko*}.ko
    copy_module "$moddir/$path" "$work/root/lib/modules/$name"
    echo "$name" >>"$work/root/etc/lab-modules"
  done
  (cd "$work/root" && find . -print0 | LC_ALL=C sort -z |
    cpio --quiet -o -0 -H newc -R 0:0 | gzip -6 -n) >"$work/initramfs.cpio.gz"
  cp "$root/boot/vmlinuz-$KVER" "$work/vmlinuz"
  echo "$KVER" >"$work/kernel-version"
  echo "$stamp" >"$work/stamp"
  rm -rf "$work/root" "$img"
  mv "$work" "$img"
}

main() {
  need_tool cpio cpio
  need_tool gzip gzip
  need_tool flock util-linux
  mkdir -p "$LAB_CACHE"
  # Several lab runs may start at once (ctest -j): serialise preparation.
  exec 9>"$LAB_CACHE/.lock"
  flock 9

  if [[ -n ${LAB_KERNEL_VERSION:-} ]]; then
    KVER=$LAB_KERNEL_VERSION
  elif ! KVER=$(cached_kernel_version); then
    command -v apt-cache >/dev/null 2>&1 || unavailable "no apt-cache: the lab needs a Debian host to fetch its kernel"
    KVER=$(debian_kernel_version) ||
      unavailable "cannot find Debian's linux-image-amd64 package (run apt-get update)"
  fi
  fetch_kernel "$KVER"
  echo "$KVER" >"$LAB_CACHE/kernel/current"
  build_initramfs
}

main "$@"
