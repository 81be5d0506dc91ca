#!/usr/bin/env bash
# Lab test (two VMs): Prometheus scrapes rdmad over a real RDMA channel.
# rdmad on each node with [metrics] enabled; on a, Debian's prometheus
# server scrapes a's daemon every second while `rdmactl ping` holds a
# channel to b's echo service over RDMA. A query over Prometheus's HTTP API
# then sees the channel established over RDMA, the session to b up,
# rxe0's hardware counters grown by the ping's packets, and the bytes the
# ping's library reported (exactly its messages'); `rdmactl bench` Writes
# show as one-sided bytes with their completions. b's own /metrics has its
# echo service's side: the ping's messages received.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$LAB_ROOT/tests/lab/lib.sh"
[[ $LAB_VMS == 2 ]] || {
  lab_log "metrics.sh needs --vms 2"
  exit 2
}

# shellcheck source=SCRIPTDIR/../channels/peered_rdmad.sh
source "$LAB_ROOT/tests/lab/channels/peered_rdmad.sh"
cleanup() {
  [[ -n ${prom_pid:-} ]] && kill "$prom_pid" 2>/dev/null
  peered_rdmad_stop
}
trap cleanup EXIT
peered_rdmad_start $'[metrics]\nenabled = true\nport = 9581'
lab_barrier daemons-up 120

if [[ $LAB_NODE == a ]]; then
  grep -q "serving Prometheus metrics on http://127.0.0.1:9581/metrics" "$work/rdmad.log" ||
    fail "the daemon does not say it serves metrics"
  cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: rdmad
    static_configs:
      - targets: ['127.0.0.1:9581']
YML
  /usr/bin/prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address=127.0.0.1:9090 2>"$work/prometheus.log" &
  prom_pid=$!
  query() { # PromQL -> the first result's value, or nothing
    python3 - "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = "http://127.0.0.1:9090/api/v1/query?query=" + urllib.parse.quote(sys.argv[1])
try:
    doc = json.load(urllib.request.urlopen(url, timeout=5))
except Exception:
    sys.exit(0)
r = doc.get("data", {}).get("result", [])
if r:
    print(r[0]["value"][1])
PY
  }
  scraped() { [[ $(query 'up{job="rdmad"}') == 1 ]]; }
  if ! lab_retry 120 1 scraped; then
    ip addr show lo >&2
    cat "$work/prometheus.log" >&2
    fail "Prometheus does not scrape rdmad"
  fi
  # A channel over RDMA, held for 6 s of scrapes.
  lab_retry 30 1 ctl ping "$LAB_PEER_IP" --count 30 --interval 200 | tee "$work/ping.txt"
  grep -q "(RDMA): seq=30" "$work/ping.txt" || fail "the ping's channel was not RDMA"
  sleep 2 # the last scrape after it
  seen=$(query 'max_over_time(rdmad_channels{transport="rdma",state="established"}[2m])')
  [[ $seen == 1 ]] || fail "Prometheus never saw the RDMA channel established (got '$seen')"
  up=$(query 'rdmad_peer_up')
  [[ $up == 1 ]] || fail "Prometheus does not see the session to b up (got '$up')"
  grown=$(query "increase(rdmad_port_hw_counter_total{device=\"$LAB_DEV\",counter=\"sent_pkts\"}[2m])")
  python3 -c "import sys; sys.exit(0 if float('${grown:-0}') >= 30 else 1)" ||
    fail "$LAB_DEV's sent_pkts did not grow by the ping's 30 messages (got '$grown')"
  # The ping's library: a 16-byte header and 30 messages of 64 bytes.
  sent=$(query 'sum(rdmad_channel_bytes_total{op="send",service="rdmad.echo"})')
  [[ $sent == 1936 ]] || fail "the ping's 1936 bytes sent are counted as '$sent'"
  ctl bench "$LAB_PEER_IP" --test write --size 64K --iters 200 >"$work/bench.txt" ||
    fail "rdmactl bench --test write: $(cat "$work/bench.txt")"
  sleep 3 # its last report, then a scrape
  written=$(query 'sum(rdmad_channel_bytes_total{op="write",service="rdmad.echo"})')
  python3 -c "import sys; sys.exit(0 if float('${written:-0}') >= 200 * 65536 else 1)" ||
    fail "the bench's 200 Writes of 64 KiB are counted as '$written' bytes"
  done_count=$(query 'sum(rdmad_transfer_duration_seconds_count{service="rdmad.echo"})')
  python3 -c "import sys; sys.exit(0 if float('${done_count:-0}') >= 1 else 1)" ||
    fail "no one-sided completion counted (got '$done_count')"
  lab_log "Prometheus saw: an RDMA channel established, the peer up, $LAB_DEV sent_pkts +$grown," \
    "the ping's $sent bytes, the bench's $written bytes written in $done_count completions"
fi
lab_barrier metrics-done 300
if [[ $LAB_NODE == b ]]; then
  # b's echo service is an application of b's rdmad: its side of the ping.
  received=$(python3 - <<'PY'
import re, urllib.request
text = urllib.request.urlopen("http://127.0.0.1:9581/metrics", timeout=5).read().decode()
m = re.search(r'^rdmad_channel_operations_total\{op="recv",peer="[^"]*",service="rdmad.echo"\} (\S+)$',
              text, re.M)
print(m.group(1) if m else "")
PY
  )
  python3 -c "import sys; sys.exit(0 if float('${received:-0}') >= 31 else 1)" ||
    fail "b's echo service's messages received are counted as '$received' (the ping sent 31)"
  lab_log "b counted its echo service's $received messages received"
fi
lab_barrier traffic-done 60
lab_log "OK: Prometheus scrapes rdmad over RDMA"
