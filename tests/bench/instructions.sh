#!/usr/bin/env bash
# A row's user-space instructions per message (or op, or round trip):
# perftest's client against rdmactl's, and for the message rows (lat,
# rate) perftest's server against the echo service's daemon, each counted
# by valgrind's callgrind over a run of N and one of 3N and divided by the
# 2N between them, so connecting, warming up and closing cancel out. Every
# thread of a process is counted (gRPC's, the traffic reports, the
# daemon's other threads over the run). On Soft-RoCE these instructions are a row's only client cost that
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
servers=0  # the message rows' servers too (their work is user space)
[[ $row == lat || $row == rate ]] && servers=1
if ((servers)); then
  # The echo service's daemon under callgrind; callgrind_control dumps
  # its counts since the dump before, as B.cg.1, B.cg.2, ...
  LAB_RDMAD_PREFIX=(valgrind --tool=callgrind --callgrind-out-file="$work/B.cg")
fi
lab_start_rdmad "$work" B 7612 A 7611 info "$one_rail"
unset LAB_RDMAD_PREFIX
lab_start_rdmad "$work" A 7611 B 7612 info "$one_rail"
lab_await_echo "$work" A B 120 || {
  lab_log "instructions.sh: B's echo service did not start"
  exit 1
}
# A daemon under callgrind answers its peer slowly: wait until A has B up.
for _ in $(seq 300); do
  "$build/client/rdmactl" --socket "$work/A/rdmad.sock" --json peers 2>/dev/null |
    grep -q '"state": *"up"' && break
  sleep 1
done

# counted OUT CMD...: runs CMD under callgrind (its output in OUT.txt) and
# prints the instructions it executed.
counted() {
  local out=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out.cg" "$@" >"$out.txt" 2>"$out.vg" || {
    lab_log "instructions.sh: $* failed:"
    tail -n 5 "$out.txt" "$out.vg" >&2
    return 1
  }
  grep -o 'Collected : [0-9]*' "$out.vg" | awk '{print $3}'
}

port=19500
# perftest_run ITERS: the client's instructions, then the server's (under
# callgrind too for the message rows; else "-").
perftest_run() {
  port=$((port + 1))
  local server_cmd=("${pt[@]}" -d "$LAB_DEV" -x "$LAB_GID_INDEX" -p "$port" -F -n "$1")
  if ((servers)); then
    counted "$work/pts_$1" "${server_cmd[@]}" >"$work/pts_$1.count" &
  else
    "${server_cmd[@]}" >"$work/pts_$1.txt" 2>&1 &
  fi
  local server=$!
  lab_wait_listen "$port" 120 "$server"
  counted "$work/ptc_$1" "${server_cmd[@]}" "$LAB_IP"
  wait "$server"
  if ((servers)); then cat "$work/pts_$1.count"; else echo -; fi
}
# dumped: the daemon's instructions since its last dump.
dumps=0
# shellcheck disable=SC2154 # pid_B: set by lab_start_rdmad
dumped() {
  callgrind_control -d "$pid_B" >/dev/null
  dumps=$((dumps + 1))
  for _ in $(seq 600); do
    [[ -s $work/B.cg.$dumps ]] && break
    sleep 0.1
  done
  awk '/^(summary|totals):/ {print $2; exit}' "$work/B.cg.$dumps"
}
# ours_run ITERS: rdmactl's instructions (valgrind slows its connect past
# the default timeout), then the daemon's over the run (or "-").
ours_run() {
  ((servers)) && dumped >/dev/null
  counted "$work/ours_$1" "$build/client/rdmactl" --connect-timeout 60000 \
    --socket "$work/A/rdmad.sock" --json bench B "${ours[@]}" --iters "$1"
  if ((servers)); then dumped; else echo -; fi
}

# per A B [RUN]: instructions per unit from the counts of the two runs;
# RUN: what one iteration count makes rdmactl send (SINK, the rate row,
# ends a run on one of its counts, every 256 messages).
per() {
  [[ $1 == - ]] && echo - && return
  local short=$n long=$((3 * n))
  if [[ ${3:-} == ours && $row == rate ]]; then
    short=$(((short + 255) / 256 * 256)) long=$(((long + 255) / 256 * 256))
  fi
  awk -v a="$1" -v b="$2" -v d="$((long - short))" 'BEGIN {printf "%.0f", (b - a) / d}'
}
# Not in subshells: the port and the dump count go on between runs.
perftest_run "$n" >"$work/p1"
perftest_run "$((3 * n))" >"$work/p3"
ours_run "$n" >"$work/o1"
ours_run "$((3 * n))" >"$work/o3"
mapfile -t p1 <"$work/p1"
mapfile -t p3 <"$work/p3"
mapfile -t o1 <"$work/o1"
mapfile -t o3 <"$work/o3"
lab_log "$row: user-space instructions per $unit, runs of $n and $((3 * n))"
printf '%-30s %10s %10s\n' "" "perftest" "ours"
printf '%-30s %10s %10s\n' "client (${pt[0]}; rdmactl)" \
  "$(per "${p1[0]}" "${p3[0]}")" "$(per "${o1[0]}" "${o3[0]}" ours)"
printf '%-30s %10s %10s\n' "server (${pt[0]}; daemon B)" \
  "$(per "${p1[1]}" "${p3[1]}")" "$(per "${o1[1]}" "${o3[1]}" ours)"
