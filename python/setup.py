# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Builds the native module with the project's CMake for pip (pyproject.toml).

The package is built from the rdmad source tree this directory is in:
CMake configures the tree (without its tests) in setuptools' build_temp,
builds the targets _rdmad and rdmad_python_v1 and the wheel takes
BUILD/python/rdmad as it is. RDMAD_BUILD_DIR names a configured build
tree to build in instead; without it, the tree's own build/ is used when it
was configured for this very interpreter (scripts/build's), so that pip
does not build the whole project a second time.
"""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def _existing_build():
    """SOURCE/build when it is configured for the interpreter running pip."""
    cache = os.path.join(SOURCE, "build", "CMakeCache.txt")
    try:
        with open(cache) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, value = line.partition("=")
        if name.split(":")[0] in ("Python3_EXECUTABLE", "_Python3_EXECUTABLE"):
            if os.path.realpath(value) == os.path.realpath(sys.executable):
                return os.path.dirname(cache)
    return None


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not os.path.exists(os.path.join(SOURCE, "CMakeLists.txt")):
            sys.exit("rdmad: build the package from the rdmad source tree (python/ in it)")
        build = os.environ.get("RDMAD_BUILD_DIR") or _existing_build()
        if build:
            print(f"rdmad: building in {build} (RDMAD_BUILD_DIR chooses another)")
        else:
            build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
            subprocess.run(
                ["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 "-DRDMAD_BUILD_TESTS=OFF", "-DPython3_EXECUTABLE=" + sys.executable],
                check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(
            ["cmake", "--build", build, "-j", jobs, "--target", "_rdmad", "rdmad_python_v1"],
            check=True)
        built = os.path.join(build, "python", "rdmad")
        target = os.path.join(os.path.abspath(self.build_lib), "rdmad")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(built, target, ignore=shutil.ignore_patterns("__pycache__"))
        # setuptools copies the extension from here into the wheel.
        name = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(name), exist_ok=True)
        native = [f for f in os.listdir(built) if f.startswith("_rdmad") and f.endswith(".so")]
        if len(native) != 1:
            sys.exit(f"rdmad: expected one _rdmad module in {built}, found {native}")
        shutil.copyfile(os.path.join(built, native[0]), name)


setup(ext_modules=[Extension("rdmad._rdmad", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
