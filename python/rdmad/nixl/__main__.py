# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""python3 -m rdmad.nixl PROGRAM.py [ARGS...]: runs a program written for
NIXL's Python API on rdmad, with the ``nixl`` compatibility package first
on its path (and on its children's, through PYTHONPATH)."""

import os
import runpy
import sys

from rdmad.nixl import compat_path


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: python3 -m rdmad.nixl PROGRAM.py [ARGS...]\n"
              "       python3 -m rdmad.nixl -m MODULE [ARGS...]", file=sys.stderr)
        sys.exit(64 if len(sys.argv) < 2 else 0)
    path = compat_path()
    sys.path.insert(0, path)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (path, os.environ.get("PYTHONPATH", "")) if p)
    if sys.argv[1] == "-m" and len(sys.argv) > 2:
        sys.argv = sys.argv[2:]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[1:]
        sys.path.insert(1, os.path.dirname(os.path.abspath(sys.argv[0])))
        runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
