# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""A NIXL-compatible agent on rdmad (docs/nixl.md).

``nixl_agent`` and ``nixl_agent_config`` take NIXL's arguments and give
NIXL's answers: registered memory, descriptor lists, metadata exchanged
through rdmad's daemons, transfers posted as one rdmad batch each, and
notifications. Every transfer between two agents runs on one rdmad channel
between them, over RDMA when both hosts have a path and over TCP otherwise.
The backends a NIXL program names ("UCX", ...) are served by rdmad.
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import select
import socket
import threading
import time
import weakref
import queue
from typing import Any, Callable, Iterable, Optional, Union

import rdmad

from rdmad.nixl import _wire
from rdmad.nixl._conn import Conn, Range
from rdmad.nixl._descs import (DRAM_SEG, covers, dlist, nixlBackendError, nixlInvalidParamError,
                               nixlNotAllowedError, nixlNotFoundError, nixlNotSupportedError,
                               nixlRegDList, nixlRepostActiveError, nixlXferDList)
from rdmad.nixl._xfer import (nixl_prepped_dlist_handle, nixl_xfer_handle, nixlNotPostedError,
                              submit)

logger = logging.getLogger("rdmad.nixl")

DEFAULT_COMM_PORT = 8888
NIXL_INIT_AGENT = ""
# The backends NIXL programs name for host memory; rdmad serves them all.
SERVED_BACKENDS = ("UCX", "UCX_MO", "LIBFABRIC", "RDMAD")
_REGIONS_WAIT_S = 15.0  # a new channel's first REGIONS from the other end
_SIDE_RETRY_S = 30.0  # how long a fetch or a send waits for the other agent to listen


class nixl_agent_config:  # noqa: N801
    """NIXL's agent configuration. The progress thread always runs (rdmad's
    channels make progress on their own); the listen thread makes the agent
    reachable by ip and port (``fetch_remote_metadata(name, ip, port)``),
    as the rdmad service ``nixl.port.PORT``; num_threads, sync_mode and
    capture_telemetry are accepted and have no effect."""

    def __init__(self, enable_prog_thread: bool = True, enable_listen_thread: bool = False,
                 listen_port: int = DEFAULT_COMM_PORT, capture_telemetry: bool = False,
                 num_threads: int = 0, backends: Optional[list[str]] = None,
                 sync_mode: Any = None) -> None:
        self.backends = list(backends) if backends is not None else ["UCX"]
        self.enable_pthread = enable_prog_thread
        self.enable_listen = enable_listen_thread
        self.port = listen_port
        self.capture_telemetry = capture_telemetry
        self.num_threads = num_threads
        self.sync_mode = sync_mode


def _notif_bytes(msg: Union[bytes, str, None]) -> bytes:
    if msg is None:
        return b""
    return msg.encode() if isinstance(msg, str) else bytes(msg)


_agents: "weakref.WeakSet[nixl_agent]" = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for agent in list(_agents):
        agent._stop()


class nixl_agent:  # noqa: N801
    """NIXL's agent, served by the local rdmad (docs/nixl.md).

    Thread safety: every method may be called from any thread; a progress
    thread of the agent's own accepts channels and receives messages and
    notifications."""

    def __init__(self, agent_name: str, nixl_conf: Optional[nixl_agent_config] = None,
                 instantiate_all: bool = False) -> None:
        if not isinstance(agent_name, str) or not agent_name:
            raise nixlInvalidParamError("agent_name: a non-empty string")
        conf = nixl_conf or nixl_agent_config()
        self.name = agent_name
        self.notifs: dict[str, list[bytes]] = {}
        self.plugin_list = list(SERVED_BACKENDS)
        self.backends: dict[str, int] = {}
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._client = rdmad.Client.open()
        self._ranges: dict[Range, Any] = {}  # registered: (addr, len, dev) -> what keeps it alive
        self._remote_md: dict[str, _wire.Metadata] = {}
        self._conns: list[Conn] = []
        # Ended channels the progress thread drains, then closes (_lost).
        self._ending: list[Conn] = []
        self._new_notifs: dict[str, list[bytes]] = {}
        self._stopping = False
        self._wake_r, self._wake_w = os.pipe()
        # The side channel's calls, in the order they were made, on a thread
        # of their own (a daemon thread: never waited for at exit; _stop ends it).
        self._jobs: queue.Queue[Optional[Callable[[], None]]] = queue.Queue()
        self._side_thread = threading.Thread(target=self._side_loop, name=f"nixl-md-{agent_name}",
                                             daemon=True)
        self._listeners: list[rdmad.Listener] = []
        self._host = self._own_host()
        self._service = _wire.agent_service(agent_name)
        try:
            self._listeners.append(self._client.listen(self._service))
            if conf.enable_listen and conf.port:  # port 0: NIXL's "any port": none needed
                self._listeners.append(self._client.listen(_wire.port_service(conf.port)))
        except rdmad.Error:
            for listener in self._listeners:
                listener.close()
            self._client.close()
            raise
        for backend in (self.plugin_list if instantiate_all else conf.backends):
            if backend in SERVED_BACKENDS:
                self.create_backend(backend)
            else:
                logger.warning("Skipping backend registration %s due to the missing plugin "
                               "(rdmad serves %s)", backend, ", ".join(SERVED_BACKENDS))
        self._thread = threading.Thread(target=self._progress, name=f"nixl-{agent_name}",
                                        daemon=True)
        self._thread.start()
        self._side_thread.start()
        _agents.add(self)
        logger.info("Initialized NIXL agent %s on rdmad (service %s)", agent_name, self._service)

    # --- Backends: rdmad serves them ---

    def get_plugin_list(self) -> list[str]:
        return list(self.plugin_list)

    def get_plugin_mem_types(self, backend: str) -> list[str]:
        return ["DRAM"] if backend in SERVED_BACKENDS else []

    def get_plugin_params(self, backend: str) -> dict[str, str]:
        return {}

    def get_backend_mem_types(self, backend: str) -> list[str]:
        return ["DRAM"] if backend in self.backends else []

    def get_backend_params(self, backend: str) -> dict[str, str]:
        return {}

    def create_backend(self, backend: str, initParams: Optional[dict[str, str]] = None) -> None:  # noqa: N803
        if backend not in SERVED_BACKENDS:
            raise nixlNotFoundError(f"no plugin {backend!r}: rdmad serves "
                                    f"{', '.join(SERVED_BACKENDS)} (docs/nixl.md)")
        self.backends[backend] = len(self.backends) + 1

    def query_xfer_backend(self, handle: nixl_xfer_handle) -> str:
        return next(iter(self.backends), "RDMAD")

    # --- Descriptors ---

    def get_xfer_descs(self, descs: Any, mem_type: Optional[str] = None,
                       is_sorted: bool = False) -> Optional[nixlXferDList]:
        out = dlist(nixlXferDList, nixlRegDList, descs, mem_type, is_sorted, ())
        assert out is None or isinstance(out, nixlXferDList)
        return out

    def get_reg_descs(self, descs: Any, mem_type: Optional[str] = None,
                      is_sorted: bool = False) -> Optional[nixlRegDList]:
        out = dlist(nixlRegDList, nixlXferDList, descs, mem_type, is_sorted, ("",))
        assert out is None or isinstance(out, nixlRegDList)
        return out

    def get_serialized_descs(self, descs: Any) -> bytes:
        return pickle.dumps(descs)

    def deserialize_descs(self, serialized_descs: bytes) -> Any:
        return pickle.loads(serialized_descs)  # as NIXL: only from agents you trust

    # --- Memory ---

    def register_memory(self, reg_list: Any, mem_type: Optional[str] = None,
                        is_sorted: bool = False, backends: Optional[list[str]] = None
                        ) -> nixlRegDList:
        descs = self.get_reg_descs(reg_list, mem_type, is_sorted)
        if descs is None:
            raise nixlInvalidParamError("nothing to register")
        if descs.getType() != DRAM_SEG:
            raise nixlNotFoundError(f"no backend of agent {self.name} registers "
                                    f"{descs.getType().name} memory (rdmad: DRAM only)")
        keep = reg_list if not isinstance(reg_list, nixlRegDList) else None
        for d in descs:
            if d[1] == 0:
                raise nixlInvalidParamError(f"{d}: an empty range")
        with self._lock:
            for d in descs:
                self._ranges[(d[0], d[1], d[2])] = keep
        self._show_all()
        return descs

    def deregister_memory(self, dereg_list: nixlRegDList,
                          backends: Optional[list[str]] = None) -> None:
        with self._lock:
            missing = [d[:3] for d in dereg_list if (d[0], d[1], d[2]) not in self._ranges]
            if missing:
                raise nixlNotFoundError(f"{missing[0]} is not registered")
            for d in dereg_list:
                self._ranges.pop((d[0], d[1], d[2]), None)
        self._show_all()

    def _show_all(self) -> None:
        """Every connection learns the registered ranges."""
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            self._show(conn)

    def _show(self, conn: Conn) -> None:
        """conn learns the registered ranges (not with the agent's lock held:
        registering and sending may wait)."""
        with self._lock:
            ranges = list(self._ranges)
        try:
            conn.show(ranges)
        except rdmad.Error as e:
            self._lost(conn, str(e))

    # --- Metadata ---

    def _metadata(self, ranges: Optional[Iterable[Range]] = None,
                  connection: bool = True) -> _wire.Metadata:
        with self._lock:
            chosen = list(self._ranges) if ranges is None else list(ranges)
        return _wire.Metadata(agent=self.name, host=self._host, service=self._service,
                              ranges=chosen, connection=connection)

    def get_agent_metadata(self) -> bytes:
        return self._metadata().encode()

    def get_partial_agent_metadata(self, descs: nixlRegDList, inc_conn_info: bool = False,
                                   backends: Optional[list[str]] = None) -> bytes:
        ranges = [(d[0], d[1], d[2]) for d in descs]
        return self._metadata(ranges, inc_conn_info).encode()

    def add_remote_agent(self, metadata: bytes) -> str:
        try:
            md = _wire.Metadata.decode(metadata)
        except _wire.WireError as e:
            raise nixlInvalidParamError(str(e)) from None
        self._load(md)
        return md.agent

    def _load(self, md: _wire.Metadata) -> None:
        with self._cond:
            known = self._remote_md.get(md.agent)
            if known is not None and not md.connection:  # partial: keeps the address
                md.host, md.service, md.connection = known.host, known.service, known.connection
                md.ranges = sorted(set(known.ranges) | set(md.ranges))
            self._remote_md[md.agent] = md
            self._cond.notify_all()

    def remove_remote_agent(self, agent: str) -> None:
        with self._lock:
            if self._remote_md.pop(agent, None) is None:
                raise nixlNotFoundError(f"no remote agent {agent}")
            conns = [c for c in self._conns if c.remote == agent]
        for conn in conns:
            self._drop(conn)

    def check_remote_metadata(self, agent: str, descs: Optional[nixlXferDList] = None) -> bool:
        with self._lock:
            md = self._remote_md.get(agent)
            if md is None:
                return False
            return descs is None or all(covers(md.ranges, d) for d in descs)

    def send_local_metadata(self, ip_addr: str = "", port: int = DEFAULT_COMM_PORT) -> None:
        self._side(ip_addr, port, _wire.METADATA,
                   lambda: {"metadata": self.get_agent_metadata().decode()})

    def send_partial_agent_metadata(self, descs: nixlRegDList, inc_conn_info: bool = False,
                                    backends: Optional[list[str]] = None, ip_addr: str = "",
                                    port: int = DEFAULT_COMM_PORT) -> None:
        md = self.get_partial_agent_metadata(descs, inc_conn_info)
        self._side(ip_addr, port, _wire.METADATA, lambda: {"metadata": md.decode()})

    def fetch_remote_metadata(self, remote_agent: str, ip_addr: str = "",
                              port: int = DEFAULT_COMM_PORT) -> None:
        if not ip_addr:
            self._jobs.put(lambda: self._fetch_by_name(remote_agent))
            return
        self._side(ip_addr, port, _wire.FETCH, lambda: {"agent": remote_agent})

    def invalidate_local_metadata(self, ip_addr: str = "", port: int = DEFAULT_COMM_PORT) -> None:
        if not ip_addr:
            with self._lock:
                conns = [c for c in self._conns if c.remote is not None]
            for conn in conns:
                self._try_send(conn, _wire.INVALIDATE, {"agent": self.name})
            return
        self._side(ip_addr, port, _wire.INVALIDATE, lambda: {"agent": self.name}, wait=False)

    def _side(self, ip: str, port: int, kind: bytes, body: Any, wait: bool = True) -> None:
        """Sends kind to the agent listening at ip and port, off the caller's
        thread (NIXL's side channel is asynchronous too); wait: for it to
        listen, if it does not yet."""
        if not ip:
            if not os.environ.get("NIXL_ETCD_ENDPOINTS"):
                raise nixlInvalidParamError("no ip_addr, and NIXL_ETCD_ENDPOINTS is not set")
            return  # the agent's service is in rdmad's cluster already
        def run() -> None:
            try:
                service = _wire.port_service(port)
                conn = self._connect_soon(ip, service) if wait else self._connect(ip, service)
                conn.send(kind, body())
            except (rdmad.Error, OSError) as e:
                logger.error("agent %s: %s to %s:%d: %s", self.name, kind.decode(), ip, port, e)
        self._jobs.put(run)

    def _side_loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def _connect_soon(self, peer: str, service: str) -> Conn:
        """_connect, tried again for a while when the other agent is not
        listening yet (or its host's rdmad is not reachable yet): programs
        start their two sides in any order."""
        deadline = time.monotonic() + _SIDE_RETRY_S
        delay = 0.02
        while True:
            try:
                return self._connect(peer, service)
            except (rdmad.NotFound, rdmad.Unavailable):
                if self._stopping or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _fetch_by_name(self, remote_agent: str) -> None:
        """Fetches remote_agent's metadata from the member of rdmad's cluster
        that has its service, waiting a while for it to be published."""
        service = _wire.agent_service(remote_agent)
        deadline = time.monotonic() + _SIDE_RETRY_S
        try:
            while True:
                members = self._client.members(service=service)["members"]
                hosts = [m["name"] for m in members if not m.get("self")] or \
                        [m["name"] for m in members]
                if hosts:
                    break
                if self._stopping or time.monotonic() > deadline:
                    raise nixlNotFoundError(f"no member of rdmad's cluster has agent "
                                            f"{remote_agent} (service {service})")
                time.sleep(0.1)
            self._connect_soon(hosts[0], service).send(_wire.FETCH, {"agent": remote_agent})
        except (rdmad.Error, nixlNotFoundError) as e:
            logger.error("agent %s: fetching %s: %s", self.name, remote_agent, e)

    def _own_host(self) -> str:
        host = os.environ.get("RDMAD_NIXL_HOST")
        if host:
            return host
        try:
            for m in self._client.members()["members"]:
                if m.get("self"):
                    return str(m["name"])
        except rdmad.Error:
            pass
        return socket.gethostname()

    # --- Connections ---

    def make_connection(self, remote_agent: str, backends: Optional[list[str]] = None) -> None:
        self._conn_to(remote_agent)

    def _conn_to(self, agent: str) -> Conn:
        with self._lock:
            for conn in self._conns:
                if conn.remote == agent and conn.error is None:
                    return conn
            md = self._remote_md.get(agent)
        if md is None:
            raise nixlNotFoundError(f"no metadata of agent {agent} (add_remote_agent or "
                                    "fetch_remote_metadata first)")
        if not md.connection:
            raise nixlNotFoundError(f"agent {agent}'s metadata has no connection info")
        conn = self._connect(md.host, md.service)
        with self._lock:
            if conn.remote is None:
                conn.remote = agent  # as its metadata names it; its HELLO confirms
        return conn

    def _connect(self, peer: str, service: str) -> Conn:
        with self._lock:
            for conn in self._conns:
                if conn.address == (peer, service) and conn.error is None:
                    return conn
        channel = self._client.connect(peer, service)
        conn = Conn(channel, (peer, service))
        self._adopt(conn)
        return conn

    def _adopt(self, conn: Conn) -> None:
        """A new channel: say who we are and what we registered."""
        try:
            conn.send(_wire.HELLO, {"agent": self.name})
            with self._lock:
                self._conns.append(conn)
            self._show(conn)
        except rdmad.Error as e:
            conn.error = str(e)
            conn.close()
            raise
        os.write(self._wake_w, b"x")

    def _lost(self, conn: Conn, why: str, drained: bool = False) -> None:
        """conn ended: it goes (the next use connects again). What the other
        end sent before the end is still taken: unless drained (or the agent
        stops), the progress thread drains conn once more, then closes it,
        so that a send that failed here does not throw away what waits."""
        with self._cond:
            if conn.error is None:
                conn.error = why
                logger.warning("agent %s: the channel to %s ended: %s", self.name,
                               conn.remote or "an agent", why)
            if conn in self._conns:
                self._conns.remove(conn)
            now = drained or self._stopping
            if not now and conn not in self._ending:
                self._ending.append(conn)
            self._cond.notify_all()
        if now:
            conn.close()
        else:
            os.write(self._wake_w, b"x")

    def _drop(self, conn: Conn) -> None:
        """Closes conn at once: this agent is done with it."""
        with self._cond:
            if conn.error is None:
                conn.error = "closed by this agent"
                logger.warning("agent %s: the channel to %s ended: %s", self.name,
                               conn.remote or "an agent", conn.error)
            if conn in self._conns:
                self._conns.remove(conn)
            self._cond.notify_all()
        conn.close()

    def _try_send(self, conn: Conn, kind: bytes, body: Any) -> bool:
        try:
            conn.send(kind, body)
            return True
        except rdmad.Error as e:
            self._lost(conn, str(e))
            return False

    # --- Notifications ---

    def send_notif(self, remote_agent_name: str, notif_msg: Union[bytes, str],
                   backend: Optional[str] = None) -> None:
        conn = self._conn_to(remote_agent_name)
        if not self._try_send(conn, _wire.NOTIF, _notif_bytes(notif_msg)):
            raise nixlBackendError(f"the channel to {remote_agent_name} ended: {conn.error}")

    def _notify(self, agent: str, msg: bytes) -> None:
        with self._cond:
            self._new_notifs.setdefault(agent, []).append(msg)
            self._cond.notify_all()

    def _take_notifs(self) -> dict[str, list[bytes]]:
        with self._lock:
            new, self._new_notifs = self._new_notifs, {}
        return new

    def get_new_notifs(self, backends: Optional[list[str]] = None) -> dict[str, list[bytes]]:
        return self._take_notifs()

    def update_notifs(self, backends: Optional[list[str]] = None) -> dict[str, list[bytes]]:
        for agent, msgs in self._take_notifs().items():
            self.notifs.setdefault(agent, []).extend(msgs)
        return self.notifs

    def check_remote_xfer_done(self, remote_agent_name: str, lookup_tag: Union[bytes, str],
                               backends: Optional[list[str]] = None,
                               tag_is_prefix: bool = True) -> bool:
        self.update_notifs()
        tag = _notif_bytes(lookup_tag)
        for msg in self.notifs.get(remote_agent_name, []):
            if (msg.startswith(tag) if tag_is_prefix else tag in msg):
                self.notifs[remote_agent_name].remove(msg)
                return True
        return False

    # --- Transfers ---

    def initialize_xfer(self, operation: str, local_descs: nixlXferDList,
                        remote_descs: nixlXferDList, remote_agent: str,
                        notif_msg: Union[bytes, str] = b"",
                        backends: Optional[list[str]] = None) -> nixl_xfer_handle:
        if operation not in ("READ", "WRITE"):
            raise nixlInvalidParamError(f"operation: READ or WRITE, not {operation!r}")
        if not isinstance(local_descs, nixlXferDList) or not isinstance(remote_descs,
                                                                        nixlXferDList):
            raise nixlInvalidParamError("local_descs and remote_descs: nixlXferDList")
        if len(local_descs) != len(remote_descs) or not len(local_descs):
            raise nixlInvalidParamError(f"{len(local_descs)} local and {len(remote_descs)} "
                                        "remote descriptors: the same number, at least one")
        for i, (l, r) in enumerate(zip(local_descs, remote_descs)):
            if l[1] != r[1]:
                raise nixlInvalidParamError(f"descriptor {i}: {l[1]} local bytes, {r[1]} remote")
        with self._lock:
            md = self._remote_md.get(remote_agent)
            if md is None:
                raise nixlNotFoundError(f"no metadata of agent {remote_agent}")
            for i, l in enumerate(local_descs):
                if not any(covers([r], l) for r in self._ranges):
                    raise nixlNotFoundError(f"local descriptor {i} {l} is not registered")
            for i, r in enumerate(remote_descs):
                if not covers(md.ranges, r):
                    raise nixlNotFoundError(f"remote descriptor {i} {r} is not registered by "
                                            f"{remote_agent}")
        return nixl_xfer_handle(self, operation, local_descs, remote_descs, remote_agent,
                                _notif_bytes(notif_msg))

    def prep_xfer_dlist(self, agent_name: str, xfer_list: Any, mem_type: Optional[str] = None,
                        is_sorted: bool = False, backends: Optional[list[str]] = None
                        ) -> nixl_prepped_dlist_handle:
        descs = self.get_xfer_descs(xfer_list, mem_type, is_sorted)
        if descs is None:
            raise nixlInvalidParamError("xfer_list: no descriptors")
        remote = None if agent_name in ("", "NIXL_INIT_AGENT") else agent_name
        return nixl_prepped_dlist_handle(self, remote, descs)

    def make_prepped_xfer(self, operation: str, local_xfer_side: nixl_prepped_dlist_handle,
                          local_indices: list[int], remote_xfer_side: nixl_prepped_dlist_handle,
                          remote_indices: list[int], notif_msg: Union[bytes, str] = b"",
                          backends: Optional[list[str]] = None, skip_desc_merge: bool = False
                          ) -> nixl_xfer_handle:
        if local_xfer_side.remote is not None or remote_xfer_side.remote is None:
            raise nixlInvalidParamError("a local side (NIXL_INIT_AGENT) and a remote side")
        try:
            local = nixlXferDList(DRAM_SEG, [local_xfer_side.descs[i] for i in local_indices])
            remote = nixlXferDList(DRAM_SEG, [remote_xfer_side.descs[i] for i in remote_indices])
        except IndexError:
            raise nixlInvalidParamError("an index past its prepared list") from None
        return self.initialize_xfer(operation, local, remote, remote_xfer_side.remote,
                                    notif_msg)

    def transfer(self, handle: nixl_xfer_handle, notif_msg: Union[bytes, str] = b"") -> str:
        if handle._released:
            raise nixlInvalidParamError("the transfer handle was released")
        if handle._state == "PROC" and self.check_xfer_state(handle) == "PROC":
            raise nixlRepostActiveError("the transfer is still in flight")
        notif = _notif_bytes(notif_msg) or handle.notif
        try:
            self._post(handle, notif)
        except (rdmad.Error, LookupError, TimeoutError) as e:
            logger.error("agent %s: transfer to %s: %s", self.name, handle.remote_agent, e)
            handle._state = "ERR"
            return "ERR"
        return self.check_xfer_state(handle)

    def _post(self, handle: nixl_xfer_handle, notif: bytes) -> None:
        conn = self._conn_to(handle.remote_agent)
        with self._cond:
            if not self._cond.wait_for(lambda: conn.regions_known or conn.error is not None,
                                       timeout=_REGIONS_WAIT_S):
                raise TimeoutError(f"agent {handle.remote_agent} did not show its memory")
            if conn.error is not None:
                raise nixlBackendError(f"the channel to {handle.remote_agent} ended: {conn.error}")
        submit(handle, conn, notif)

    def check_xfer_state(self, handle: nixl_xfer_handle) -> str:
        if handle._state in ("INIT",):
            raise nixlNotPostedError("the transfer was not posted")
        if handle._state != "PROC":
            return handle._state
        assert handle._transfer is not None and handle._conn is not None
        try:
            done = handle._transfer.poll()
        except rdmad.Error as e:
            logger.error("agent %s: transfer to %s failed: %s", self.name, handle.remote_agent, e)
            handle._state = "ERR"
            return "ERR"
        if not done:
            return "PROC"
        if handle._late_notif is not None:  # too long to ride on the batch: follows it
            note, handle._late_notif = handle._late_notif, None
            if not self._try_send(handle._conn, _wire.NOTIF, note):
                handle._state = "ERR"
                return "ERR"
        handle._state = "DONE"
        return "DONE"

    def release_xfer_handle(self, handle: nixl_xfer_handle) -> None:
        if handle._state == "PROC" and self.check_xfer_state(handle) == "PROC":
            raise nixlNotAllowedError("the transfer is still in flight; release it once done")
        handle._released = True
        handle._transfer = None
        handle._prepared = None

    def release_dlist_handle(self, handle: nixl_prepped_dlist_handle) -> None:
        handle.release()

    def get_xfer_telemetry(self, handle: nixl_xfer_handle) -> Any:
        raise nixlNotSupportedError("transfer telemetry: not on rdmad (rdmactl counters)")

    # --- The progress thread ---

    def _progress(self) -> None:
        while not self._stopping:
            with self._lock:
                conns = list(self._conns)
            watched = [self._wake_r] + [listener.request_fd() for listener in self._listeners]
            waiting = False
            for conn in conns:
                try:
                    watched.append(conn.channel.completion_fd())
                    waiting = waiting or not conn.channel.arm()
                except rdmad.Error as e:
                    self._lost(conn, str(e))
            try:
                readable, _, _ = select.select(watched, [], [], 0 if waiting else 0.1)
            except (OSError, ValueError):
                readable = []
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
            self._finish_ending()
            for listener in self._listeners:
                if listener.request_fd() in readable:
                    self._accept(listener)
            for conn in conns:
                self._receive(conn)

    def _accept(self, listener: rdmad.Listener) -> None:
        try:
            channel = listener.accept(timeout=0)
        except rdmad.DeadlineExceeded:
            time.sleep(0.01)  # another's request, or the rest of a batch: look again soon
            return
        except rdmad.Error as e:
            logger.warning("agent %s: accepting on %s: %s", self.name, listener.service, e)
            return
        try:
            self._adopt(Conn(channel))
        except rdmad.Error as e:
            logger.warning("agent %s: a new channel ended at once: %s", self.name, e)

    def _drain(self, conn: Conn) -> Optional[str]:
        """Takes every message, then every notification, waiting on conn;
        the channel's end, if either queue reported it."""
        ended: Optional[str] = None
        try:
            while (message := conn.channel.try_recv()) is not None:
                self._on_message(conn, message)
        except rdmad.Error as e:
            ended = str(e)
        while True:
            try:
                note = conn.channel.recv_notification(timeout=0)
            except rdmad.DeadlineExceeded:
                break
            except rdmad.Error as e:
                ended = ended or str(e)
                break
            self._notify(conn.remote or "", note)
        return ended

    def _receive(self, conn: Conn) -> None:
        """Takes what waits on conn. A channel the other end closed still
        gives everything sent before the close, messages and notifications,
        before it is dropped: the end is final and queued behind them, but
        the notifications may report it while messages came in behind the
        first loop, so an ended channel is drained once more."""
        try:
            ended = self._drain(conn)
            if ended is not None:
                self._drain(conn)
        except _wire.WireError as e:
            logger.warning("agent %s: %s sent garbage (%s); closing the channel", self.name,
                           conn.remote or "an agent", e)
            self._drop(conn)
            return
        if ended is not None:
            self._lost(conn, ended, drained=True)

    def _finish_ending(self) -> None:
        """Channels another thread found ended: what they still hold is
        taken, then they are closed (on the progress thread)."""
        with self._lock:
            ending, self._ending = self._ending, []
        for conn in ending:
            try:
                self._drain(conn)
            except _wire.WireError:
                pass  # it ended anyway
            conn.close()

    def _on_message(self, conn: Conn, message: bytes) -> None:
        kind, body = _wire.decode(message)
        if kind == _wire.NOTIF:
            self._notify(conn.remote or "", body)
        elif kind == _wire.HELLO:
            with self._cond:
                conn.remote = _wire.text(body.get("agent"), "agent", 256)
                self._cond.notify_all()
        elif kind == _wire.REGIONS:
            with self._cond:
                conn.learn_regions(body)
                # What an agent shows on its connection is registered: its
                # metadata covers it too, also when that metadata was fetched
                # before the agent registered (a race the program cannot see).
                md = self._remote_md.get(conn.remote or "")
                if md is not None:
                    md.ranges = sorted(set(md.ranges) | set(conn.remote_regions))
                self._cond.notify_all()
        elif kind == _wire.METADATA:
            md = _wire.Metadata.decode(_wire.text(body.get("metadata"), "metadata",
                                                  _wire.MAX_JSON).encode())
            if conn.remote is not None and md.agent != conn.remote:
                raise _wire.WireError(f"{conn.remote} sent the metadata of {md.agent}")
            self._load(md)
        elif kind == _wire.FETCH:
            wanted = _wire.text(body.get("agent"), "agent", 256)
            failed = lambda e: self._lost(conn, str(e))  # noqa: E731
            if wanted == self.name:
                conn.answer(_wire.METADATA,
                            lambda: {"metadata": self.get_agent_metadata().decode()}, failed)
            else:
                error = {"error": f"this is agent {self.name}, not {wanted}"}
                conn.answer(_wire.ERROR, lambda: error, failed)
        elif kind == _wire.INVALIDATE:
            agent = _wire.text(body.get("agent"), "agent", 256)
            if agent == conn.remote:
                with self._lock:
                    self._remote_md.pop(agent, None)
        elif kind == _wire.ERROR:
            logger.error("agent %s: %s answered: %s", self.name, conn.remote or "an agent",
                         body.get("error"))

    def _stop(self) -> None:
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
            conns, self._conns = list(self._conns) + self._ending, []
            self._ending = []
        os.write(self._wake_w, b"x")
        self._jobs.put(None)
        for thread in (self._thread, self._side_thread):
            if threading.current_thread() is not thread:
                thread.join(timeout=5)
        for conn in conns:
            conn.close()
        for listener in self._listeners:
            listener.close()
        self._client.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def close(self) -> None:
        """Ends the agent: its channels, its services, its thread."""
        self._stop()

    def __del__(self) -> None:
        try:
            self._stop()
        except Exception:  # noqa: BLE001 - at interpreter exit, best effort
            pass
