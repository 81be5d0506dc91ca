#!/usr/bin/env bash
# `cmake --install BUILD --prefix DIR` writes only under DIR (GNUInstallDirs,
# relative destinations), and writes what an installation needs.
set -euo pipefail
build=${1:?usage: install_test.sh BUILD_DIR}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/rdmad-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
log=$(mktemp)
trap 'rm -rf "$prefix" "$log"' EXIT
if ! cmake --install "$build" --prefix "$prefix" >"$log" 2>&1; then
  cat "$log"; echo "FAIL: cmake --install failed"; exit 1
fi
outside=$(grep -E '^-- (Installing|Up-to-date): ' "$log" | sed -E 's/^-- [A-Za-z-]+: //' |
          grep -vF "$prefix/" || true)
if [[ -n $outside ]]; then
  echo "FAIL: installed outside the prefix $prefix:"; echo "$outside"; exit 1
fi
rc=0
for f in etc/rdmad/rdmad.toml lib/systemd/system/rdmad.service sbin/rdmad bin/rdmactl \
         include/rdmad/client.h; do
  [[ -e $prefix/$f ]] || { echo "FAIL: $f not installed"; rc=1; }
done
compgen -G "$prefix/lib*/librdmadclient.so*" >/dev/null ||
  compgen -G "$prefix/lib/*/librdmadclient.so*" >/dev/null ||
  { echo "FAIL: librdmadclient.so not installed"; rc=1; }
# The Python package, when the build made it: importable from the prefix.
if compgen -G "$build/python/rdmad/_rdmad*.so" >/dev/null; then
  site=$(compgen -G "$prefix/lib/python3*/dist-packages" | head -1 || true)
  if [[ -z $site ]] || ! (cd "$prefix" && PYTHONPATH=$site /usr/bin/python3 -c \
      'import os, sys, rdmad; assert rdmad.__file__.startswith(sys.argv[1]), rdmad.__file__' \
      "$site"); then
    echo "FAIL: the Python package is not importable from $prefix"; rc=1
  fi
fi
[[ $rc -eq 0 ]] && echo "installed $(grep -cE '^-- (Installing|Up-to-date): ' "$log") files, all under the prefix"
exit $rc
