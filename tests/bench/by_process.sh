#!/usr/bin/env bash
# Where a row's time goes, by process: the CPU time per message (or per
# op) of perftest's client and server, of rdmactl and the two daemons, and
# of the kernel's threads, each the difference between a short and a long
# run divided by the difference in messages, so that connecting, warming
# up and closing cancel out. In the lab, on the instruction-counted clock
# (docs/benchmarks.md, "Timing in the lab"):
#
#   LAB_QEMU=$PWD/tests/bench/qemu-icount tests/lab/run --vms 1 \
#       --share BUILD --env RDMAD_BUILD_DIR=BUILD -- tests/bench/by_process.sh [ROW] [ROUNDS]
#
# ROW: rate (8-byte messages, ib_send_bw -e; the default), read or write
# (4 KiB at depth 128, ib_read_bw / ib_write_bw). ROUNDS: 2 by default.
# Clients are timed by getrusage, the daemons and the kernel's threads by
# /proc/PID/stat (100 Hz ticks: runs of several seconds), the machine by
# /proc/stat. Prints a table per round; a number never fails the script.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lab/lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 1 ]] || {
  lab_log "by_process.sh is a single-VM script"
  exit 2
}

row=${1:-rate} rounds=${2:-2}
build=${RDMAD_BUILD_DIR:-$LAB_ROOT/build}
here=$LAB_ROOT/tests/bench
work=$(mktemp -d)
case $row in
  rate)
    # Whole counts of SINK's (one per 256 messages; a run ends on one), so
    # that perftest's runs are as long as ours.
    short=20480 long=61440 unit=message
    pt=(ib_send_bw -e -s 8) ours=(--test bw --size 8)
    ;;
  read | write)
    short=2000 long=6000 unit=op
    pt=("ib_${row}_bw" -s 4096) ours=(--test "$row" --size 4096 --depth 128)
    ;;
  *)
    lab_log "by_process.sh: unknown row $row (rate, read or write)"
    exit 2
    ;;
esac

cleanup() {
  set +e
  lab_kill_bg
  wait 2>/dev/null
}
trap cleanup EXIT
one_rail=$'[rails]\nper_channel = 1'
lab_start_rdmad "$work" B 7612 A 7611 info "$one_rail"
lab_start_rdmad "$work" A 7611 B 7612 info "$one_rail"
lab_await_echo "$work" A B || {
  lab_log "by_process.sh: B's echo service did not start"
  exit 1
}

# timed OUT CMD...: runs CMD (its output in OUT) and prints its CPU
# seconds (user + system, getrusage).
timed() { python3 "$here/by_process.py" timed "$@"; }
snap() { python3 "$here/by_process.py" snap; }
pid_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f\n", ($14 + $15) / hz}' "/proc/$1/stat"; }
# daemons PREFIX A0 B0: each daemon's CPU seconds since A0, B0.
# shellcheck disable=SC2154 # pid_A, pid_B: set by lab_start_rdmad
daemons() {
  echo "${1}daemon_A $(awk -v a="$2" -v b="$(pid_cpu "$pid_A")" 'BEGIN {printf "%.2f", b - a}')"
  echo "${1}daemon_B $(awk -v a="$3" -v b="$(pid_cpu "$pid_B")" 'BEGIN {printf "%.2f", b - a}')"
}

port=19200
# measure N: one run of N messages of perftest, then of ours; prints
# "name seconds" lines.
measure() {
  local n=$1 k0 a0 b0 server
  port=$((port + 1))
  a0=$(pid_cpu "$pid_A") b0=$(pid_cpu "$pid_B") k0=$(snap)
  timed "$work/pts.txt" "${pt[@]}" -d "$LAB_DEV" -x "$LAB_GID_INDEX" -p "$port" -F -n "$n" \
    >"$work/pts.cpu" &
  server=$!
  lab_wait_listen "$port" 60 "$server"
  echo "perftest_client $(timed "$work/ptc.txt" "${pt[@]}" -d "$LAB_DEV" -x "$LAB_GID_INDEX" \
    -p "$port" -F -n "$n" "$LAB_IP")"
  wait "$server"
  echo "perftest_server $(cat "$work/pts.cpu")"
  daemons perftest_ "$a0" "$b0"
  python3 "$here/by_process.py" kernel perftest_ "$k0" "$(snap)"
  a0=$(pid_cpu "$pid_A") b0=$(pid_cpu "$pid_B") k0=$(snap)
  echo "ours_client $(timed "$work/ours.json" "$build/client/rdmactl" --socket "$work/A/rdmad.sock" \
    --json bench B "${ours[@]}" --iters "$n")"
  daemons ours_ "$a0" "$b0"
  python3 "$here/by_process.py" kernel ours_ "$k0" "$(snap)"
}

for ((r = 1; r <= rounds; r++)); do
  measure "$short" >"$work/short.txt"
  measure "$long" >"$work/long.txt"
  lab_log "round $r of $rounds: $row, CPU per $unit from runs of $short and $long"
  python3 "$here/by_process.py" table "$work/short.txt" "$work/long.txt" "$((long - short))" "$unit"
done
