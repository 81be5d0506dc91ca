#!/usr/bin/env bash
# The suite's last test: fails if a process started by a test is still alive.
# Every test runs with RDMAD_TEST_TREE set to the build tree (tests/CMakeLists.txt)
# and its children inherit it, so a process whose environment carries that
# value was started by this build's tests: a daemon, a helper, the lab's qemu.
# Waits up to 10 s (a daemon killed as its test ends may still be exiting),
# then names what is left, kills it and fails.
set -u
tree=${1:?usage: no_leftovers.sh BUILD_TREE}
mark="RDMAD_TEST_TREE=$tree"

# This script and its parents (ctest) are not leftovers.
declare -A mine=()
p=$$
while [[ -n $p && $p != 0 ]]; do
  mine[$p]=1
  p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
done

leftovers() {
  local d pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ -n ${mine[$pid]:-} ]] && continue
    # A zombie or a process that just went has no readable environment.
    if { tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qxF -- "$mark"; then
      echo "$pid"
    fi
  done
}

for _ in $(seq 100); do
  left=$(leftovers)
  [[ -z $left ]] && { echo "no process started by the tests is left"; exit 0; }
  sleep 0.1
done
echo "processes started by the tests are still running:"
for pid in $left; do
  printf '  %s: %s\n' "$pid" "$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"
done
# shellcheck disable=SC2086
kill -9 $left 2>/dev/null
exit 1
