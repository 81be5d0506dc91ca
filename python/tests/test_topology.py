# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The host's topology and the rail plan from Python, on an rdmad that reads
the 8-GPU fixture server (rails.topology_xml): the same matrix as rdmactl
topo, and plans for this process and for other processes, balanced and
given back when a process exits."""

import os
import subprocess
import sys
import time

import pytest

import rdmad
from conftest import Daemon, _free_port

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                       "fixtures", "topology", "gpu8-nic8-2socket.xml")

pytestmark = pytest.mark.skipif(not os.path.exists(FIXTURE), reason="no topology fixture here")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = Daemon("T", str(tmp_path_factory.mktemp("topo")), _free_port())
    d.launch(d.daemon_section() + f'[echo]\nenabled = false\n[rails]\ntopology_xml = '
             f'"{os.path.abspath(FIXTURE)}"\n')
    deadline = time.monotonic() + 10
    while not os.path.exists(d.socket):
        assert d.process.poll() is None and time.monotonic() < deadline, d.logs()
        time.sleep(0.05)
    yield d
    d.stop()


def _plan_in_child(socket, gpu="", cpus=""):
    """A process that plans and waits on stdin; returns it and its plan's
    first device."""
    code = ("import sys, rdmad\n"
            f"c = rdmad.Client.open(socket={socket!r})\n"
            f"print(c.plan_rails(gpu={gpu!r}, cpus={cpus!r}).rails[0].device, flush=True)\n"
            "sys.stdin.read()\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    return p, p.stdout.readline().strip()


def test_the_matrix_and_the_gpus(server):
    with rdmad.Client.open(socket=server.socket) as c:
        t = c.topology()
    assert t.source.endswith("gpu8-nic8-2socket.xml") and t.error == ""
    fixture = [n for n in t.nics if n.name.startswith("mlx5_")]
    assert [n.name for n in fixture] == [f"mlx5_{i}" for i in range(8)]
    assert fixture[0].to_gpus == ["PIX", "PXB", "NODE", "NODE", "SYS", "SYS", "SYS", "SYS"]
    assert fixture[0].place.numa_node == 0 and fixture[0].place.cpus == "0-7"
    assert all(n.usable for n in fixture), "a device only the XML names counts as usable"
    # This host's own devices (the lab's rxe0) are listed too, off the file's tree.
    for own in (n for n in t.nics if not n.name.startswith("mlx5_")):
        assert own.place.pci_address == "" and set(own.to_gpus) == {"SYS"}, own
    assert [g.place.pci_address for g in t.gpus][:2] == ["0000:11:00.0", "0000:19:00.0"]
    assert t.gpus[0].vendor == "NVIDIA" and t.gpus[0].class_id == 0x0302


def test_a_plan_per_process_spread_and_given_back(server):
    with rdmad.Client.open(socket=server.socket) as c:
        plan = c.plan_rails(gpu="3")
        assert [r.device for r in plan.rails] == ["mlx5_3"] and plan.rails[0].path == "PIX"
        assert "mlx5_3 is PIX" in plan.reason
        mine = [p for p in c.topology().plans if p.pid == os.getpid()]
        assert len(mine) == 1 and mine[0].place == "gpu 0000:59:00.0"
        # Two other processes on socket 1's CPUs take two of its devices.
        first, dev1 = _plan_in_child(server.socket, cpus="8-15")
        second, dev2 = _plan_in_child(server.socket, cpus="8-15")
        try:
            assert {dev1, dev2} == {"mlx5_4", "mlx5_5"}
            loads = {n.name: n.plans for n in c.topology().nics}
            assert loads["mlx5_4"] == 1 and loads["mlx5_5"] == 1 and loads["mlx5_3"] == 1
            # One exits: its device is the next one's.
            first.communicate("")
            third, dev3 = _plan_in_child(server.socket, cpus="8-15")
            third.communicate("")
            assert dev3 == dev1
        finally:
            for p in (first, second):
                if p.poll() is None:
                    p.communicate("")
        # Explained, not recorded.
        before = len(c.topology().plans)
        assert c.plan_rails(gpu="0000:d9:00.0", explain_only=True).rails[0].device == "mlx5_7"
        assert len(c.topology().plans) == before


def test_bad_requests(server):
    with rdmad.Client.open(socket=server.socket) as c:
        with pytest.raises(rdmad.NotFound):
            c.plan_rails(gpu="8")
        with pytest.raises(rdmad.InvalidArgument):
            c.plan_rails(cpus="x-y")
