#!/usr/bin/env bash
# A row's user-space instructions per message (or op, or round trip) at
# the client: perftest's client against rdmactl's, each counted by
# valgrind's callgrind over a run of N and one of 3N and divided by the 2N
# between them, so connecting, warming up and closing cancel out. Every
# thread of the process is counted (rdmactl's gRPC and traffic reports
# too). On Soft-RoCE these instructions are a row's only client cost that
# perftest and rdmad do not share (docs/benchmarks.md, "Instructions per
# op"). In the lab (one VM):
#
#   tests/lab/run --vms 1 --timeout 1800 --share BUILD \
#       --env RDMAD_BUILD_DIR=BUILD -- tests/bench/instructions.sh [ROW] [N]
#
# ROW: lat (8-byte round trips, ib_send_lat -e), rate (8-byte messages,
# ib_send_bw -e; the default), read or write (4 KiB at depth 128,
# ib_read_bw / ib_write_bw). N: 1000 by default. A count never fails the
# script; a run that fails does.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lab/lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 1 ]] || {
  lab_log "instructions.sh is a single-VM script"
  exit 2
}
command -v valgrind >/dev/null || {
  lab_log "instructions.sh: valgrind is not installed"
  exit 2
}

row=${1:-rate} n=${2:-1000}
build=${RDMAD_BUILD_DIR:-$LAB_ROOT/build}
work=$(mktemp -d)
case $row in
  lat) pt=(ib_send_lat -e -s 8) ours=(--test lat --size 8) unit="round trip" ;;
  rate) pt=(ib_send_bw -e -s 8) ours=(--test bw --size 8) unit=message ;;
  read | write)
    pt=("ib_${row}_bw" -s 4096) ours=(--test "$row" --size 4096 --depth 128) unit=op
    ;;
  *)
    lab_log "instructions.sh: unknown row $row (lat, rate, read or write)"
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
for _ in $(seq 150); do
  [[ -S $work/A/rdmad.sock ]] && grep -q "echo service: listening" "$work/B.log" && break
  sleep 0.1
done

# counted OUT CMD...: runs CMD under callgrind (its output in OUT.txt) and
# prints the instructions it executed.
counted() {
  local out=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out.cg" "$@" >"$out.txt" 2>"$out.vg" || {
    lab_log "instructions.sh: $* failed:"
    tail -5 "$out.txt" "$out.vg" >&2
    return 1
  }
  grep -o 'Collected : [0-9]*' "$out.vg" | awk '{print $3}'
}

port=19500
# perftest_run ITERS: the client's instructions.
perftest_run() {
  port=$((port + 1))
  "${pt[@]}" -d "$LAB_DEV" -x "$LAB_GID_INDEX" -p "$port" -F -n "$1" >"$work/pts.txt" 2>&1 &
  local server=$!
  lab_wait_listen "$port" 60 "$server"
  counted "$work/ptc_$1" "${pt[@]}" -d "$LAB_DEV" -x "$LAB_GID_INDEX" -p "$port" -F -n "$1" \
    "$LAB_IP"
  wait "$server"
}
# ours_run ITERS: rdmactl's instructions (valgrind slows its connect past
# the default timeout).
ours_run() {
  counted "$work/ours_$1" "$build/client/rdmactl" --connect-timeout 60000 \
    --socket "$work/A/rdmad.sock" --json bench B "${ours[@]}" --iters "$1"
}

per() { awk -v a="$1" -v b="$2" -v n="$((2 * n))" 'BEGIN {printf "%.0f", (b - a) / n}'; }
p1=$(perftest_run "$n") p3=$(perftest_run "$((3 * n))")
o1=$(ours_run "$n") o3=$(ours_run "$((3 * n))")
pt_per=$(per "$p1" "$p3") ours_per=$(per "$o1" "$o3")
lab_log "$row: user-space instructions per $unit at the client, runs of $n and $((3 * n))"
printf '%-24s %10s\n' "${pt[0]} client" "$pt_per" "rdmactl" "$ours_per"
printf '%-24s %+10d\n' "more" "$((ours_per - pt_per))"
