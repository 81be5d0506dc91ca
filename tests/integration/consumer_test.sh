#!/usr/bin/env bash
# Builds a small application against the *installed* client library, both
# with CMake (find_package(rdmad)) and with pkg-config (rdmadclient.pc, C++17),
# runs both, and checks that the library exports its public API only.
set -euo pipefail
build=${1:?usage: consumer_test.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rdmad-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "FAIL: install"; exit 1; }
lib=$(dirname "$(find "$prefix" -name 'librdmadclient.so' | head -n1)")
[[ -n $lib ]] || { echo "FAIL: librdmadclient.so not installed"; exit 1; }
expect="log level error; connect: UNAVAILABLE"

# 1. CMake: find_package(rdmad) and rdmad::rdmadclient.
cmake -S "$here/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; echo "FAIL: the CMake consumer did not build"; exit 1; }
out=$(LD_LIBRARY_PATH=$lib "$work/cmake/consumer")
[[ $out == "$expect" ]] || { echo "FAIL: CMake consumer printed: $out"; exit 1; }

# 2. pkg-config: the .pc file finds its prefix from where it is.
export PKG_CONFIG_PATH=$lib/pkgconfig
flags=$(pkg-config --cflags --libs rdmadclient)
c++ -std=c++17 -o "$work/pc-consumer" "$here/consumer/main.cc" $flags ||
  { echo "FAIL: the pkg-config consumer did not build with: $flags"; exit 1; }
out=$(LD_LIBRARY_PATH=$lib "$work/pc-consumer")
[[ $out == "$expect" ]] || { echo "FAIL: pkg-config consumer printed: $out"; exit 1; }

# 3. Exactly the public API is exported: every defined dynamic symbol is in
# namespace rdmad (or its classes' vtables and typeinfo), none internal. A
# weak std:: or protobuf template instantiation (as -O3 emits) fails here.
syms=$(nm -DC --defined-only "$lib/librdmadclient.so" | cut -d' ' -f3-)
leaks=$(echo "$syms" | grep -E 'rdmad::(internal|echo|v1)::|google::protobuf::|grpc::' || true)
foreign=$(echo "$syms" | grep -vE '^(rdmad::|(typeinfo|typeinfo name|vtable|VTT) for rdmad::|RDMADCLIENT_0$)' || true)
[[ -z $leaks && -z $foreign ]] ||
  { echo "FAIL: symbols beyond the public API exported:"; printf '%s\n' "$leaks" "$foreign" | head -20; exit 1; }
echo "both consumers built and ran ($out); pkg-config: $flags"
