# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Programs written for NIXL's Python agent, run unchanged on rdmad: each
side a process of its own on its own rdmad (A and B), started with
``python3 -m rdmad.nixl``. On the host the channel between the agents is
TCP; in the RDMA lab it is RDMA on rxe0."""

import os
import subprocess
import sys

import pytest

import rdmad
import rdmad.nixl

pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = "RDMA" if os.environ.get("LAB_IP") else "TCP"
PROGRAMS = os.path.join(HERE, "nixl_programs")


def _start(pair, daemon, program, *args):
    env = dict(os.environ, RDMAD_SOCKET=daemon.socket, RDMAD_NIXL_HOST=daemon.name)
    return subprocess.Popen(
        [sys.executable, "-m", "rdmad.nixl", os.path.join(PROGRAMS, program), *args],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _agents_channels(pair, services):
    """The transports of the channels A's rdmad listed to those services
    (but those that failed in their handshake, which have none: a side
    channel tried before the other agent listened)."""
    return {c["transport"] for c in pair.client_a.channels()
            if c["service"] in services and c["transport"]}


def _finish(*processes, timeout=240):
    """Each process's (exit status, output); all are ended even on a timeout."""
    results = []
    try:
        for p in processes:
            out, _ = p.communicate(timeout=timeout)
            results.append((p.returncode, out))
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return results


def test_a_prefill_decode_program_for_nixl_reads_the_kv_blocks(pair):
    port = str(20000 + os.getpid() % 20000)
    target = _start(pair, pair.b, "kv_read.py", "--mode", "target", "--ip", "B", "--port", port)
    initiator = _start(pair, pair.a, "kv_read.py", "--mode", "initiator", "--ip", "B",
                       "--port", port)
    (code_i, out_i), (code_t, out_t) = _finish(initiator, target)
    assert code_i == 0, out_i
    assert code_t == 0, out_t
    assert "Data verification passed" in out_i
    assert "the initiator read the blocks" in out_t
    assert _agents_channels(pair, {f"nixl.port.{port}"}) == {EXPECTED}


def test_every_other_agent_call_between_two_processes(pair, tmp_path):
    server = _start(pair, pair.b, "agent_calls.py", "--role", "server", "--dir", str(tmp_path))
    client = _start(pair, pair.a, "agent_calls.py", "--role", "client", "--dir", str(tmp_path))
    (code_c, out_c), (code_s, out_s) = _finish(client, server)
    both = f"--- server ---\n{out_s}\n--- client ---\n{out_c}"
    assert code_c == 0 and "client: done" in out_c, both
    assert code_s == 0 and "server: done" in out_s, both
    assert _agents_channels(pair, {"nixl.agent.server", "nixl.agent.client"}) == {EXPECTED}


def test_the_compat_package_is_only_on_the_path_when_asked_for():
    plain = subprocess.run([sys.executable, "-c", "import nixl; print(nixl.__file__)"],
                           capture_output=True, text=True)
    # Without asking, `nixl` is a real NIXL if one is installed, never ours.
    assert plain.returncode != 0 or rdmad.nixl.compat_path() not in plain.stdout
    asked = subprocess.run(
        [sys.executable, "-c", "import nixl._api, nixl.logging; print(nixl._api.nixl_agent)"],
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(
            [rdmad.nixl.compat_path(), os.environ.get("PYTHONPATH", "")])),
        capture_output=True, text=True)
    assert asked.returncode == 0, asked.stderr
    assert "rdmad.nixl._api.nixl_agent" in asked.stdout


def test_descriptor_lists_take_nixls_forms_and_refuse_the_rest(pair, monkeypatch):
    import numpy as np
    import pickle
    import torch

    monkeypatch.setenv("RDMAD_SOCKET", pair.a.socket)
    agent = rdmad.nixl.nixl_agent("lists")
    try:
        t = torch.zeros(16, 8, dtype=torch.float16)
        whole = agent.get_xfer_descs(t)
        assert list(whole) == [(t.data_ptr(), 256, 0)]
        by_row = agent.get_xfer_descs([t[i] for i in range(16)])
        assert [d[0] - t.data_ptr() for d in by_row] == [16 * i for i in range(16)]
        arr = agent.get_xfer_descs(np.array([[1, 2, 0], [3, 4, 0]], dtype=np.uint64), "DRAM")
        assert list(arr) == [(1, 2, 0), (3, 4, 0)]
        memory = np.zeros(4096, dtype=np.uint8)
        rows = np.array([[memory.ctypes.data, 1024, 0], [memory.ctypes.data + 2048, 1024, 0]],
                        dtype=np.uint64)
        registered = agent.register_memory(rows, "DRAM")  # an N x 3 array, as NIXL takes it
        assert list(registered) == [(memory.ctypes.data, 1024, 0, ""),
                                    (memory.ctypes.data + 2048, 1024, 0, "")]
        agent.deregister_memory(registered)
        reg = agent.get_reg_descs([(10, 20, 0, "a")], "DRAM")
        assert reg.trim() == agent.get_xfer_descs([(10, 20, 0)], "DRAM")
        assert pickle.loads(agent.get_serialized_descs(reg)) == reg
        with pytest.raises(rdmad.nixl.nixlInvalidParamError):
            agent.get_xfer_descs([(1, 2)], "DRAM")  # a 3-tuple needed
        with pytest.raises(rdmad.nixl.nixlInvalidParamError):
            agent.get_xfer_descs([(1, 2, 0)])  # a mem_type needed for tuples
        with pytest.raises(rdmad.nixl.nixlInvalidParamError, match=r"\.contiguous\(\)"):
            agent.get_xfer_descs(t.t())
        with pytest.raises(rdmad.nixl.nixlNotSupportedError):
            agent.get_reg_descs(torch.empty(4, device="meta"))
        with pytest.raises(rdmad.nixl.nixlNotFoundError):
            agent.create_backend("GDS")
        with pytest.raises(rdmad.nixl.nixlNotFoundError):
            agent.initialize_xfer("READ", whole, whole, "nobody")
    finally:
        agent.close()


def test_an_agent_drops_a_peer_that_lies_or_sends_garbage_and_goes_on(pair, monkeypatch):
    """A raw rdmad channel to an agent's service, as an attacker on a peer
    host would open one: metadata naming another agent than its hello, and
    bytes that are no message, each end that channel only."""
    import time

    from rdmad.nixl import _wire

    monkeypatch.setenv("RDMAD_SOCKET", pair.b.socket)
    agent = rdmad.nixl.nixl_agent("guarded")
    try:
        def ended(channel):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    channel.recv(timeout=0.2)  # the agent's hello and regions, then its close
                except rdmad.DeadlineExceeded:
                    continue
                except rdmad.Error:
                    return True
            return False

        liar = pair.client_a.connect("B", "nixl.agent.guarded")
        liar.send(_wire.encode(_wire.HELLO, {"agent": "mallory"}))
        forged = _wire.Metadata(agent="victim", host="A", service="nixl.agent.victim")
        liar.send(_wire.encode(_wire.METADATA, {"metadata": forged.encode().decode()}))
        assert ended(liar), "the agent kept a channel that sent another agent's metadata"
        assert not agent.check_remote_metadata("victim")
        for garbage in (b"\x00", b"Z" * 64, b"R{not json", b'R{"regions": [[1, 2]]}'):
            channel = pair.client_a.connect("B", "nixl.agent.guarded")
            channel.send(garbage)
            assert ended(channel), f"the agent kept a channel that sent {garbage!r}"
        # The agent goes on: a well-behaved peer still gets its metadata.
        honest = pair.client_a.connect("B", "nixl.agent.guarded")
        honest.send(_wire.encode(_wire.HELLO, {"agent": "honest"}))
        honest.send(_wire.encode(_wire.FETCH, {"agent": "guarded"}))
        deadline = time.monotonic() + 10
        while True:
            kind, body = _wire.decode(honest.recv(timeout=10))
            if kind == _wire.METADATA:
                assert _wire.Metadata.decode(body["metadata"].encode()).agent == "guarded"
                break
            assert time.monotonic() < deadline
        honest.close()
    finally:
        agent.close()


def test_an_agent_answers_others_while_one_peer_never_reads_its_answers(pair, monkeypatch):
    """A peer that asks for metadata again and again and never reads the
    answers holds up only its own answers: the agent still takes every
    channel's messages and answers another peer at once. Two agents that
    fetch each other's metadata at the same moment need the same (else each
    agent's progress thread waits for the other's to take its answer)."""
    import time

    import numpy as np

    from rdmad.nixl import _wire

    monkeypatch.setenv("RDMAD_SOCKET", pair.b.socket)
    agent = rdmad.nixl.nixl_agent("busy")
    memory = np.zeros(1 << 16, dtype=np.uint8)
    base = memory.ctypes.data
    # About 5 KiB of metadata per answer: 200 of them fill an RDMA channel's
    # ring (a TCP channel's reader takes 32 MiB: there the test cannot bite).
    agent.register_memory([(base + 256 * i, 128, 0, "") for i in range(200)], "DRAM")
    hog = pair.client_a.connect("B", "nixl.agent.busy")
    try:
        hog.send(_wire.encode(_wire.HELLO, {"agent": "hog"}))
        fetch = _wire.encode(_wire.FETCH, {"agent": "busy"})
        sent, deadline = 0, time.monotonic() + 30
        while sent < 200:  # goes only while the agent takes them
            if hog.try_send(fetch):
                sent += 1
                continue
            assert time.monotonic() < deadline, f"the agent stopped taking messages after {sent}"
            time.sleep(0.001)
        honest = pair.client_a.connect("B", "nixl.agent.busy")
        honest.send(_wire.encode(_wire.HELLO, {"agent": "honest"}))
        honest.send(_wire.encode(_wire.FETCH, {"agent": "busy"}))
        deadline = time.monotonic() + 30
        while True:
            try:
                kind, body = _wire.decode(honest.recv(timeout=1))
            except rdmad.DeadlineExceeded:
                kind = b""
            if kind == _wire.METADATA:
                assert len(_wire.Metadata.decode(body["metadata"].encode()).ranges) == 200
                break
            assert time.monotonic() < deadline, "no answer while another peer's answers wait"
        honest.close()
    finally:
        hog.close()
        agent.close()
