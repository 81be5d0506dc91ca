#!/usr/bin/env bash
# Lab test (two VMs): Prometheus scrapes rdmad over a real RDMA channel.
# rdmad on each node with [metrics] enabled; on a, Debian's prometheus
# server scrapes a's daemon every second while `rdmactl ping` holds a
# channel to b's echo service over RDMA. A query over Prometheus's HTTP API
# then sees the channel established over RDMA, the session to b up, and
# rxe0's hardware counters grown by the ping's packets.
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
  lab_log "Prometheus saw: an RDMA channel established, the peer up, $LAB_DEV sent_pkts +$grown"
fi
lab_barrier metrics-done 300
lab_log "OK: Prometheus scrapes rdmad over RDMA"
