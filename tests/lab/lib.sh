# shellcheck shell=bash
# Helpers for RDMA lab scripts (scripts run by tests/lab/run inside the VMs).
#
#   source "$LAB_ROOT/tests/lab/lib.sh"
#
# Environment set by the lab in every VM:
#   LAB_NODE       a or b
#   LAB_VMS        1 or 2
#   LAB_IP         this node's address (192.0.2.1 on a, 192.0.2.2 on b)
#   LAB_PEER_IP    the other node's address (single-VM: the same as LAB_IP)
#   LAB_DEV        the RDMA device (rxe0)
#   LAB_NETDEV     its netdev (veth0 single-VM, the first NIC two-VM: eth0)
#   LAB_GID_INDEX  GID index of the IPv4-mapped RoCE v2 GID (normally 1)
#   LAB_RAILS      1 or 2 (tests/lab/run --rails): Soft-RoCE devices per VM
#   LAB_PREFIX     the rails' prefix length: 24 (one rail), 25 (two: halves of 192.0.2.0/24)
#   LAB_IP1, LAB_PEER_IP1, LAB_DEV1 (rxe1), LAB_NETDEV1 (veth2 single-VM, the
#                  second NIC two-VM), LAB_GID_INDEX1: rail 1, with --rails 2
#   LAB_ROOT       the checkout (also the script's working directory)
#   LAB_RUN_DIR    /run/lab: the per-run directory, shared by all nodes and the host
#
# Cross-node synchronisation goes through files in LAB_RUN_DIR (a 9p share of
# one host directory, uncached), so it needs no network and consumes no
# connection of a server under test.

LAB_RUN_DIR=${LAB_RUN_DIR:-/run/lab}

lab_log() { echo "lab[${LAB_NODE:-?}]: $*" >&2; }

# lab_peer_key DIR: the labs' shared peer key (daemon.peer_key_file), the
# same on every VM (tests/integration/daemon_process.h has it too), written
# to DIR/peer.key with mode 0600; prints the path.
LAB_PEER_KEY=7e577e577e577e577e577e577e577e577e577e577e577e577e577e577e577e57
lab_peer_key() {
  local path=$1/peer.key
  (umask 077 && echo "$LAB_PEER_KEY" >"$path")
  echo "$path"
}

# lab_start_rdmad DIR NAME PORT PEER PEER_PORT [LOG_LEVEL [EXTRA_TOML]]: one
# of two rdmad on this node that are each other's peer (both on LAB_IP,
# peer port PORT): config DIR/NAME.toml (EXTRA_TOML between the [daemon]
# table and the peer), socket DIR/NAME/rdmad.sock, log DIR/NAME.log, rdmad
# from RDMAD_BUILD_DIR (else LAB_ROOT/build); its pid in pid_NAME.
lab_start_rdmad() {
  local dir=$1 name=$2
  cat >"$dir/$name.toml" <<EOF
[daemon]
socket = "$dir/$name/rdmad.sock"
socket_group = ""
log_level = "${6:-info}"
peer_address = "$LAB_IP"
peer_port = $3
peer_key_file = "$(lab_peer_key "$dir")"

${7:-}

[[peers]]
name = "$4"
address = "$LAB_IP:$5"
EOF
  # LAB_RDMAD_PREFIX: an array the daemon runs under (valgrind, ...), if set.
  "${LAB_RDMAD_PREFIX[@]+"${LAB_RDMAD_PREFIX[@]}"}" "${RDMAD_BUILD_DIR:-$LAB_ROOT/build}/daemon/rdmad" \
    --config "$dir/$name.toml" 2>"$dir/$name.log" &
  eval "pid_$name=\$!"
}

# lab_await_echo DIR CLIENT SERVER [SECONDS]: waits until CLIENT's socket
# (DIR/CLIENT/rdmad.sock) is up and SERVER's echo service listens (its log,
# DIR/SERVER.log, says so); false after SECONDS (15).
lab_await_echo() {
  local tries=$((${4:-15} * 10)) i
  for ((i = 0; i < tries; i++)); do
    [[ -S $1/$2/rdmad.sock ]] && grep -q "echo service: listening" "$1/$3.log" && return 0
    sleep 0.1
  done
  return 1
}

# True when the host or another node has given up on this run.
lab_aborted() { [[ -e $LAB_RUN_DIR/abort ]]; }

# lab_retry ATTEMPTS DELAY CMD [ARGS...]: run CMD until it succeeds, at most
# ATTEMPTS times, sleeping DELAY seconds in between. Returns CMD's last status.
lab_retry() {
  local attempts=$1 delay=$2 i rc=0
  shift 2
  for ((i = 1; i <= attempts; i++)); do
    "$@" && return 0
    rc=$?
    ((i < attempts)) || break
    lab_aborted && return "$rc"
    sleep "$delay"
  done
  return "$rc"
}

# lab_wait_listen PORT [TIMEOUT [PID]]: wait until a TCP port is listening on
# THIS node (checked with ss, so it does not connect to the server). With PID
# (the server's), give up as soon as that process is gone.
lab_wait_listen() {
  local port=$1 timeout=${2:-30} pid=${3:-} end
  end=$((SECONDS + timeout))
  while ((SECONDS < end)); do
    if ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
      return 0
    fi
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      lab_log "process $pid exited before listening on port $port"
      return 1
    fi
    sleep 0.1
  done
  lab_log "timeout: nothing listens on port $port after ${timeout}s"
  return 1
}

# lab_wait_port HOST PORT [TIMEOUT]: wait until HOST:PORT accepts a TCP
# connection. Note: this connects (and closes at once), which a server that
# accepts only one connection (ibv_rc_pingpong, perftest) counts as its
# client. For those, use lab_wait_listen on the server node + lab_signal.
lab_wait_port() {
  local host=$1 port=$2 timeout=${3:-30} end
  end=$((SECONDS + timeout))
  while ((SECONDS < end)); do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
      return 0
    fi
    lab_aborted && return 1
    sleep 0.2
  done
  lab_log "timeout: $host:$port not reachable after ${timeout}s"
  return 1
}

# lab_signal NAME: tell the other node(s) that event NAME happened.
lab_signal() {
  mkdir -p "$LAB_RUN_DIR/signals"
  : >"$LAB_RUN_DIR/signals/$1.${LAB_NODE:-a}"
}

# lab_wait_signal NAME [TIMEOUT [NODE]]: wait until NODE (default: any other
# node) has done lab_signal NAME. Fails on timeout or when the run is aborted.
lab_wait_signal() {
  local name=$1 timeout=${2:-60} from=${3:-} end f
  end=$((SECONDS + timeout))
  while ((SECONDS < end)); do
    for f in "$LAB_RUN_DIR/signals/$name".*; do
      [[ -e $f ]] || continue
      if [[ -n $from ]]; then
        [[ $f == *".$from" ]] && return 0
      elif [[ $f != *".${LAB_NODE:-a}" ]]; then
        return 0
      fi
    done
    if lab_aborted; then
      lab_log "run aborted while waiting for '$name'"
      return 1
    fi
    sleep 0.1
  done
  lab_log "timeout: no signal '$name' after ${timeout}s"
  return 1
}

# lab_barrier NAME [TIMEOUT]: wait until every node has reached barrier NAME.
lab_barrier() {
  local name=$1 timeout=${2:-60} end n all
  lab_signal "barrier-$name"
  end=$((SECONDS + timeout))
  while ((SECONDS < end)); do
    all=1
    for n in a b; do
      [[ $n == b && ${LAB_VMS:-1} == 1 ]] && continue
      [[ -e $LAB_RUN_DIR/signals/barrier-$name.$n ]] || all=0
    done
    ((all)) && return 0
    if lab_aborted; then
      lab_log "run aborted at barrier '$name'"
      return 1
    fi
    sleep 0.1
  done
  lab_log "timeout at barrier '$name' after ${timeout}s"
  return 1
}

# lab_bg NAME CMD [ARGS...]: start CMD in the background with its output
# prefixed by "NAME: "; its pid is in LAB_BG_PID. Wait for it with `wait`.
lab_bg() {
  local name=$1
  shift
  "$@" > >(sed -u "s/^/$name: /") 2>&1 &
  # shellcheck disable=SC2034 # for the caller
  LAB_BG_PID=$!
}

# lab_kill_bg: kill background jobs left over (use from an EXIT trap).
lab_kill_bg() {
  local -a pids
  mapfile -t pids < <(jobs -pr)
  ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null
  return 0
}

# lab_cmtime PORT CONNS OUT: rdma_cm's cmtime (rdmacm-utils) between two
# processes on LAB_DEV - a server bound to LAB_IP (it serves until killed),
# then a client that connects CONNS connections; the client's per-step table
# goes to OUT. Returns non-zero (with the reason logged) when the client fails.
lab_cmtime() {
  local port=$1 conns=$2 out=$3 spid crc=0
  [[ -e /dev/infiniband/rdma_cm ]] || { lab_log "no /dev/infiniband/rdma_cm (rdma_ucm not loaded)"; return 1; }
  cmtime -b "$LAB_IP" -p "$port" >"$out.server" 2>&1 &
  spid=$!
  # The server's rdma_cm listener is no TCP socket: wait for its cm_id.
  for _ in $(seq 100); do
    rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN" && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
  done
  timeout 120 cmtime -s "$LAB_IP" -p "$port" -c "$conns" >"$out" 2>&1 || crc=$?
  kill "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
  if ((crc != 0)); then
    lab_log "cmtime: client exit $crc: $(tail -3 "$out") / server: $(tail -3 "$out.server")"
    return 1
  fi
}
