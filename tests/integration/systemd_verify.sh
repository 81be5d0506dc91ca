#!/usr/bin/env bash
# Runs systemd-analyze verify on a unit and fails on any output on stderr
# (systemd-analyze exits 0 on warnings).
set -euo pipefail
unit=$1
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed (apt-get install systemd)"; exit 1; }
err=$(systemd-analyze verify "$unit" 2>&1 >/dev/null) || { echo "$err"; exit 1; }
if [[ -n "$err" ]]; then
  echo "systemd-analyze verify $unit printed:"
  echo "$err"
  exit 1
fi
echo "systemd-analyze verify: $unit is clean"
