# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Two rdmads (A and B) that know each other as peers.

On the host they listen on loopback and their channels run over TCP; in the
RDMA lab (LAB_IP set) on the VM's address, and the channels are RDMA on its
Soft-RoCE device. RDMAD_BINARY names the daemon (CTest sets it), PYTHONPATH
the built package.
"""

import os
import random
import socket
import subprocess
import threading
import time

import pytest

import rdmad


IP = os.environ.get("LAB_IP", "127.0.0.1")
# The tests' shared peer key (daemon.peer_key_file) off loopback; the same
# as tests/integration/daemon_process.h's.
TEST_PEER_KEY = "7e57" * 16


_handed_out = set()


def _free_port():
    """A port below the kernel's ephemeral range (where no outgoing
    connection can take it before the daemon binds it), free on every
    address, never the same twice in this process."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    if low <= 12000:
        low = 32768
    for _ in range(1000):
        port = random.randrange(10000, low)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free port below the ephemeral range")


class Daemon:
    def __init__(self, name, directory, port):
        self.name = name
        self.socket = os.path.join(directory, name, "rdmad.sock")
        self.port = port
        self.config = os.path.join(directory, name + ".toml")
        self.log = os.path.join(directory, name + ".log")
        self.process = None

    def daemon_section(self):
        """[daemon] for this daemon: its socket and peer port, and off
        loopback the tests' shared peer key."""
        key = os.path.join(os.path.dirname(self.config), "peer.key")
        if IP != "127.0.0.1" and not os.path.exists(key):
            with open(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(TEST_PEER_KEY + "\n")
        return (f'[daemon]\nsocket = "{self.socket}"\nsocket_group = ""\n'
                f'log_level = "debug"\npeer_address = "{IP}"\npeer_port = {self.port}\n'
                + ("" if IP == "127.0.0.1" else f'peer_key_file = "{key}"\n'))

    def launch(self, config):
        """Starts the daemon with config (the file's text)."""
        with open(self.config, "w") as f:
            f.write(config)
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [os.environ["RDMAD_BINARY"], "--config", self.config],
                stdout=log, stderr=subprocess.STDOUT)

    def start(self, peer):
        self.launch(self.daemon_section()
                    + f'\n[[peers]]\nname = "{peer.name}"\naddress = "{IP}:{peer.port}"\n')

    def client(self, timeout=10.0):
        """A Client, once the daemon answers and lists its peer."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if os.path.exists(self.socket):
                    client = rdmad.Client.open(socket=self.socket)
                    if client.peers():
                        return client
            except rdmad.Error:
                pass
            code = self.process.poll()
            if code is not None:
                raise RuntimeError(
                    f"rdmad {self.name} exited with status {code} before it came up:\n"
                    + self.logs())
            if time.monotonic() > deadline:
                raise RuntimeError(f"rdmad {self.name} did not come up in {timeout} s:\n"
                                   + self.logs())
            time.sleep(0.05)

    def logs(self):
        with open(self.log) as f:
            return f.read()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Pair:
    def __init__(self, directory):
        ports = [_free_port(), _free_port()]
        self.a = Daemon("A", directory, ports[0])
        self.b = Daemon("B", directory, ports[1])
        self.a.start(self.b)
        self.b.start(self.a)
        self.client_a = self.a.client()
        self.client_b = self.b.client()
        self._services = 0

    def channel_pair(self):
        """(initiator on A, acceptor on B) over a fresh service."""
        self._services += 1
        service = f"py.{self._services}"
        with self.client_b.listen(service) as listener:
            accepted = {}
            thread = threading.Thread(
                target=lambda: accepted.update(ch=listener.accept(timeout=30)))
            thread.start()
            deadline = time.monotonic() + 10
            while True:
                try:
                    initiator = self.client_a.connect("B", service)
                    break
                except rdmad.Unavailable:  # B not yet up for A
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            thread.join()
        return initiator, accepted["ch"]

    def stop(self):
        import gc

        self.client_a.close()
        self.client_b.close()
        gc.collect()  # what the tests left goes before its daemons
        self.a.stop()
        self.b.stop()


_pair = None  # the session's Pair, for the failure reports


@pytest.fixture(scope="session")
def pair(tmp_path_factory):
    global _pair
    p = Pair(str(tmp_path_factory.mktemp("rdmad")))
    _pair = p
    yield p
    _pair = None
    p.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries both daemons' logs."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and _pair is not None:
        for d in (_pair.a, _pair.b):
            state = d.process.poll() if d.process else None
            title = f"rdmad {d.name} log" + ("" if state is None else f" (exited: {state})")
            try:
                report.sections.append((title, d.logs()[-65536:]))
            except OSError as e:
                report.sections.append((title, f"unreadable: {e}"))


@pytest.fixture
def channels(pair):
    a, b = pair.channel_pair()
    yield a, b
    a.close()
    b.close()
