#!/usr/bin/env bash
# pip install --no-build-isolation ./python, offline, into a venv that sees
# Debian's setuptools and wheel: the package installs and imports from the
# venv (the native module, the Python files and the rdmad.v1 stubs).
# RDMAD_BUILD_DIR is the configured build tree setup.py builds in.
set -euo pipefail
python=${1:?usage: pip_install_test.sh PYTHON BUILD_DIR}
export RDMAD_BUILD_DIR=${2:?usage: pip_install_test.sh PYTHON BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmad-pip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
log=$tmp/pip.log
if ! "$tmp/venv/bin/pip" install --no-build-isolation --no-index --no-cache-dir \
    "$here" >"$log" 2>&1; then
  cat "$log"; echo "FAIL: pip install"; exit 1
fi
cd "$tmp"  # not the source tree: the import must come from the venv
PYTHONPATH= "$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import os, sys
import rdmad, rdmad.v1
venv = sys.argv[1]
for module in (rdmad, rdmad._rdmad, rdmad.v1):
    assert module.__file__.startswith(venv), module.__file__
package = os.path.dirname(rdmad.__file__)
for name in ("_rdmad.pyi", "py.typed", "aio.py", "errors.py"):
    assert os.path.exists(os.path.join(package, name)), name
assert rdmad.v1.RdmadStub and rdmad.v1.GetStatusRequest().DESCRIPTOR.full_name == "rdmad.v1.GetStatusRequest"
print("pip installed rdmad into", package)
PY
"$tmp/venv/bin/pip" uninstall -y -q rdmad
! compgen -G "$tmp/venv/lib/python3*/site-packages/rdmad" >/dev/null ||
  { echo "FAIL: uninstall left files"; exit 1; }
echo "ok"
