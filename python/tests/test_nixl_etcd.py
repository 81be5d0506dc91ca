# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""NIXL's metadata through etcd: two rdmads that know each other only as
members of a cluster (a real etcd, Debian's etcd-server), and two agent
processes that find each other by name with NIXL_ETCD_ENDPOINTS set."""

import os
import shutil
import subprocess
import sys
import time

import pytest

import rdmad
from conftest import Daemon, _free_port

pytest.importorskip("torch")

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nixl_programs")
ETCD = shutil.which("etcd")


class Member(Daemon):
    """A daemon with [cluster] and no [[peers]]: it finds the others in etcd."""

    def start_member(self, endpoint):
        self.launch(self.daemon_section() + f'node_name = "{self.name}"\n\n[cluster]\n'
                    f'endpoints = ["{endpoint}"]\nlease_ttl_s = 5\n')


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if ETCD is None:
        pytest.skip("no etcd (scripts/bootstrap installs etcd-server)")
    d = str(tmp_path_factory.mktemp("cluster"))
    client_port, peer_port = _free_port(), _free_port()
    endpoint = f"127.0.0.1:{client_port}"
    etcd_log = open(os.path.join(d, "etcd.log"), "w")
    etcd = subprocess.Popen(
        [ETCD, "--name", "t", "--data-dir", os.path.join(d, "etcd.data"),
         "--listen-client-urls", f"http://{endpoint}", "--advertise-client-urls",
         f"http://{endpoint}", "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
         "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
         "--initial-cluster", f"t=http://127.0.0.1:{peer_port}", "--log-level", "warn"],
        stdout=etcd_log, stderr=subprocess.STDOUT)
    members = [Member(name, d, _free_port()) for name in ("na", "nb")]
    try:
        for m in members:
            m.start_member(endpoint)
        clients = []
        for m in members:
            deadline = time.monotonic() + 60
            while True:
                try:
                    client = rdmad.Client.open(socket=m.socket)
                    if len(client.members()["members"]) == 2:
                        clients.append(client)
                        break
                    client.close()
                except rdmad.Error:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{m.name} did not see both members:\n" + m.logs())
                time.sleep(0.2)
        yield members, f"http://{endpoint}"
        for client in clients:
            client.close()
    finally:
        for m in members:
            m.stop()
        etcd.terminate()
        etcd.wait(10)
        etcd_log.close()


def test_two_agents_find_each_other_by_name_through_etcd(cluster):
    members, endpoint = cluster
    procs = []
    for member, role in zip(members, ("two", "one")):
        env = dict(os.environ, RDMAD_SOCKET=member.socket, NIXL_ETCD_ENDPOINTS=endpoint)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "rdmad.nixl", os.path.join(PROGRAMS, "etcd_pair.py"),
             "--role", role], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True))
    outs = []
    try:
        for p in procs:
            outs.append((p.communicate(timeout=240)[0], p.returncode))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    logs = "\n".join(m.logs()[-20000:] for m in members)
    for (out, code), role in zip(outs, ("two", "one")):
        assert code == 0 and f"{role}: done" in out, "\n".join(o for o, _ in outs) + logs
