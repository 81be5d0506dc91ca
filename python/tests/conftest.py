# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Two rdmads (A and B) that know each other as peers.

On the host they listen on loopback and their channels run over TCP; in the
RDMA lab (LAB_IP set) on the VM's address, and the channels are RDMA on its
Soft-RoCE device. RDMAD_BINARY names the daemon (CTest sets it), PYTHONPATH
the built package.
"""

import os
import socket
import subprocess
import threading
import time

import pytest

import rdmad


IP = os.environ.get("LAB_IP", "127.0.0.1")


def _free_port():
    with socket.socket() as s:
        s.bind((IP, 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, name, directory, port):
        self.name = name
        self.socket = os.path.join(directory, name, "rdmad.sock")
        self.port = port
        self.config = os.path.join(directory, name + ".toml")
        self.log = os.path.join(directory, name + ".log")
        self.process = None

    def start(self, peer):
        with open(self.config, "w") as f:
            f.write(
                f'[daemon]\nsocket = "{self.socket}"\nsocket_group = ""\n'
                f'log_level = "debug"\npeer_address = "{IP}"\npeer_port = {self.port}\n'
                + ("" if IP == "127.0.0.1" else "peer_insecure = true\n")
                + f'\n[[peers]]\nname = "{peer.name}"\naddress = "{IP}:{peer.port}"\n'
            )
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [os.environ["RDMAD_BINARY"], "--config", self.config],
                stdout=log, stderr=subprocess.STDOUT)

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
            if time.monotonic() > deadline:
                raise RuntimeError(f"rdmad {self.name} did not come up:\n" + self.logs())
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


@pytest.fixture(scope="session")
def pair(tmp_path_factory):
    p = Pair(str(tmp_path_factory.mktemp("rdmad")))
    yield p
    p.stop()


@pytest.fixture
def channels(pair):
    a, b = pair.channel_pair()
    yield a, b
    a.close()
    b.close()
