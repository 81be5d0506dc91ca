# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The Python package against two real daemons (TCP off the lab)."""

import inspect
import json
import os
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import rdmad

EXPECTED = "RDMA" if os.environ.get("LAB_IP") else "TCP"


def test_status_and_peers(pair):
    status = pair.client_a.status()
    assert status["pid"] == pair.a.process.pid
    assert status["version"]
    peers = pair.client_a.peers()
    assert [p["name"] for p in peers] == ["B"]


def test_status_and_members_are_named_and_shaped_as_rdmactl_json_says(pair):
    """The dicts use rdmactl --json's names (status without its device
    summaries, which devices() has)."""
    rdmactl = os.environ["RDMACTL_BINARY"]

    def as_json(*args):
        done = subprocess.run([rdmactl, "--json", "--socket", pair.a.socket, *args],
                              capture_output=True, text=True, timeout=30)
        return json.loads(done.stdout)

    status = pair.client_a.status()
    assert set(status) == set(as_json("status")) - {"devices"}
    assert status["peers"] == 1 and status["cluster"] == ""
    # members(): a dict, as rdmactl --json cluster prints (here FAILED_PRECONDITION: no etcd).
    error = as_json("cluster")["error"]
    assert error["code"] == "FAILED_PRECONDITION"
    with pytest.raises(rdmad.FailedPrecondition):
        pair.client_a.members()


def _transfer(sender, receiver, data):
    """What receiver gets of sender.send(data), received on a thread of its
    own: a message larger than the channel buffers (2 MiB on RDMA) is sent
    only as the peer receives it."""
    got = {}

    def receive():
        try:
            got["data"] = receiver.recv(timeout=60)
        except rdmad.Error as e:
            got["error"] = e

    thread = threading.Thread(target=receive)
    thread.start()
    sender.send(data)
    thread.join()
    if "error" in got:
        raise got["error"]
    return got["data"]


@pytest.mark.parametrize("size", [0, 1, 2, 4096, 65536, 1 << 20, 8 << 20])
def test_messages_of_every_size_both_ways(channels, size):
    a, b = channels
    assert a.transport == EXPECTED, a.info["transport_reason"]
    data = os.urandom(size)
    assert _transfer(a, b, data) == data
    assert _transfer(b, a, memoryview(bytearray(data))) == data


def test_send_takes_any_bytes_like_object(channels):
    a, b = channels
    array = np.arange(1000, dtype=np.float32)
    a.send(array)
    assert np.array_equal(np.frombuffer(b.recv(timeout=10), dtype=np.float32), array)
    with pytest.raises(ValueError):
        a.send(np.arange(100, dtype=np.int64)[::2])  # not contiguous
    with pytest.raises(BufferError):
        a.register(b"immutable bytes")  # registered memory must be writable
    with pytest.raises(ValueError):
        a.recv(timeout=-1)
    with pytest.raises(rdmad.DeadlineExceeded):
        b.recv(timeout=0)


def test_write_and_read_through_a_numpy_region(channels):
    a, b = channels
    exposed = np.zeros(4096, dtype=np.uint8)
    with b.register(exposed) as region:
        b.send(region.descriptor.serialize())
        descriptor = rdmad.RegionDescriptor.parse(a.recv(timeout=10))
        assert descriptor.length == 4096
        local = np.arange(4096, dtype=np.uint32).astype(np.uint8)
        mine = a.register(local)
        a.write(mine, 0, descriptor, 0, 4096)
        assert np.array_equal(exposed, local)
        exposed[:] = 7
        back = np.zeros(4096, dtype=np.uint8)
        theirs = a.register(back)
        a.read(theirs, 0, descriptor, 100, 1000)
        assert (back[:1000] == 7).all() and (back[1000:] == 0).all()
        with pytest.raises(rdmad.OutOfRange):
            a.write(mine, 0, descriptor, 4000, 200)


def test_a_read_only_region_refuses_writes(channels):
    a, b = channels
    exposed = bytearray(b"x" * 1024)
    region = b.register(exposed, read_only=True)
    assert region.read_only
    b.send(region.descriptor.serialize())
    descriptor = rdmad.RegionDescriptor.parse(a.recv(timeout=10))
    local = bytearray(1024)
    mine = a.register(local)
    a.read(mine, 0, descriptor, 0, 1024)
    assert local == exposed
    with pytest.raises(rdmad.Error):
        a.write(mine, 0, descriptor, 0, 16)
    assert exposed == bytearray(b"x" * 1024)


def test_a_local_region_is_exposed_to_one_channel_until_revoked(pair, channels):
    a, b = channels
    kv = np.arange(2048, dtype=np.uint16).view(np.uint8)
    region = b.register(kv, local=True)
    with pytest.raises(ValueError):
        b.register(bytearray(16), read_only=True, local=True)
    descriptor = b.expose(region)  # read-only by default
    back = bytearray(kv.nbytes)
    mine = a.register(back)
    a.read(mine, 0, descriptor, 0, kv.nbytes)
    assert bytes(back) == kv.tobytes()
    with pytest.raises(rdmad.Error):
        a.write(mine, 0, descriptor, 0, 16)  # ends this channel
    # Another channel's peer cannot use it; nor anyone the region's own.
    for shown in (descriptor, region.descriptor):
        c, d = pair.channel_pair()
        try:
            with pytest.raises(rdmad.Error):
                c.read(c.register(bytearray(16)), 0, shown, 0, 16)
        finally:
            c.close()
            d.close()
    c, d = pair.channel_pair()
    try:
        target = d.register(bytearray(64), local=True)  # an exposure ends with its region
        writable = d.expose(target, writable=True)
        c.write(c.register(bytearray(b"w" * 64)), 0, writable, 0, 64)
        d.revoke(writable)
        with pytest.raises(rdmad.NotFound):
            d.revoke(writable)
        with pytest.raises(rdmad.Error):
            c.read(c.register(bytearray(64)), 0, writable, 0, 64)
    finally:
        c.close()
        d.close()


def test_register_ptr_takes_an_address(channels):
    a, b = channels
    array = np.full(256, 3, dtype=np.uint8)
    region = b.register_ptr(array.ctypes.data, array.nbytes)
    b.send(region.descriptor.serialize())
    descriptor = rdmad.RegionDescriptor.parse(a.recv(timeout=10))
    back = bytearray(256)
    a.read(a.register(back), 0, descriptor, 0, 256)
    assert back == bytes(array)


def test_errors_carry_their_code_and_message(pair, channels):
    a, b = channels
    with pytest.raises(rdmad.DeadlineExceeded) as timed_out:
        a.recv(timeout=0.05)
    assert timed_out.value.code == 4
    assert timed_out.value.code_name == "DEADLINE_EXCEEDED"
    assert isinstance(timed_out.value, rdmad.Error)
    assert isinstance(timed_out.value, TimeoutError)  # what the standard library says
    with pytest.raises(ConnectionError):
        rdmad.Client.open(socket="/nonexistent/rdmad.sock", connect_timeout=0.2)
    assert rdmad.error_class(14) is rdmad.Unavailable
    assert "Unavailable" in rdmad.__all__ and "DeadlineExceeded" in rdmad.__all__
    with pytest.raises(rdmad.NotFound):
        pair.client_a.connect("nobody", "svc", timeout=5)
    with pytest.raises(rdmad.InvalidArgument):
        rdmad.RegionDescriptor.parse(b"short")
    with pytest.raises(rdmad.Unavailable):
        rdmad.Client.open(socket="/nonexistent/rdmad.sock", connect_timeout=0.2)
    b.close()
    with pytest.raises(rdmad.Unavailable):
        a.recv(timeout=10)
    with pytest.raises(rdmad.Cancelled):
        b.recv(timeout=1)


def test_a_rejected_connect_is_permission_denied(pair):
    listener = pair.client_b.listen("py.rejecting")
    thread = threading.Thread(target=lambda: listener.reject("not today", timeout=30))
    thread.start()
    with pytest.raises(rdmad.PermissionDenied) as denied:
        pair.client_a.connect("B", "py.rejecting")
    thread.join()
    assert "not today" in denied.value.message


def test_blocking_calls_release_the_gil(pair):
    """Two threads blocked in recv on two channels: both get their message."""
    (a1, b1), (a2, b2) = pair.channel_pair(), pair.channel_pair()
    got = {}

    def wait(name, channel):
        got[name] = channel.recv(timeout=20)

    threads = [threading.Thread(target=wait, args=(n, c)) for n, c in (("1", b1), ("2", b2))]
    for t in threads:
        t.start()
    time.sleep(0.3)  # both are blocked in recv now; the GIL is free
    started = time.monotonic()
    a2.send(b"two")
    a1.send(b"one")
    for t in threads:
        t.join()
    assert got == {"1": b"one", "2": b"two"}
    assert time.monotonic() - started < 10
    for c in (a1, b1, a2, b2):
        c.close()


def test_channels_close_as_context_managers(pair):
    a, b = pair.channel_pair()
    with a:
        a.send(b"x")
        assert b.recv(timeout=10) == b"x"
    with pytest.raises(rdmad.Cancelled):
        a.send(b"after")
    with b:
        with pytest.raises(rdmad.Unavailable):
            b.recv(timeout=10)


def test_send_and_recv_take_their_arguments_either_way(channels):
    a, b = channels
    a.send(data=b"by keyword")
    assert b.recv(10) == b"by keyword"
    a.send(bytearray(b"mutable"))
    assert b.recv(timeout=10.0) == b"mutable"
    a.send(memoryview(b"xview")[1:])
    assert b.recv(10) == b"view"
    with pytest.raises(TypeError):
        a.send()
    with pytest.raises(TypeError):
        a.send(b"x", b"y")
    with pytest.raises(TypeError):
        a.send(12345)  # not bytes-like
    with pytest.raises(TypeError):
        b.recv(timeout=1, other=2)
    with pytest.raises(TypeError):
        b.recv(timeout="soon")
    assert inspect.signature(rdmad.Channel.recv).parameters["timeout"].default is None
    assert list(inspect.signature(rdmad.Channel.send).parameters) == ["self", "data"]


def test_connect_many_opens_a_batch(pair):
    listener = pair.client_b.listen("py.many")
    accepted = []
    thread = threading.Thread(
        target=lambda: accepted.extend(listener.accept(timeout=30) for _ in range(5)))
    thread.start()
    initiators = pair.client_a.connect_many("B", "py.many", 5)
    thread.join()
    assert len(initiators) == 5 and len(accepted) == 5
    assert len({c.info["id"] for c in initiators}) == 5
    for i, channel in enumerate(initiators):
        channel.send(b"worker %d" % i)
    got = sorted(c.recv(timeout=30) for c in accepted)
    assert got == [b"worker %d" % i for i in range(5)]
    with pytest.raises(rdmad.InvalidArgument):
        pair.client_a.connect_many("B", "py.many", 0)
    listener.close()
    with pytest.raises(rdmad.NotFound):  # nobody listens any more
        pair.client_a.connect_many("B", "py.many", 2)
    for channel in initiators + accepted:
        channel.close()


def test_close_channel_by_its_id(pair):
    a, b = pair.channel_pair()
    channel_id = a.info["id"]
    entry = next(c for c in pair.client_a.channels() if c["id"] == channel_id)
    # Every field of the table, its owner included (this process).
    assert entry["owner_uid"] == os.getuid() and entry["owner_pid"] == os.getpid(), entry
    assert entry["role"] == "initiator" and entry["state"] == "established", entry
    # A TCP channel has no rails, in the table nor on the channel; an RDMA
    # one its first at least, on the device its info names.
    if entry["transport"] == "TCP":
        assert entry["rails"] == [] and a.rails() == [] and b.rails() == [], entry
    else:
        assert len(entry["rails"]) == len(a.rails()) >= 1, entry
        assert a.rails()[0]["device"] == a.info["local_device"], a.rails()
    pair.client_a.close_channel(channel_id, "drained")
    # Both ends see the channel end, with the reason it was closed for.
    with pytest.raises(rdmad.Error) as at_b:
        b.recv(timeout=30)
    with pytest.raises(rdmad.Error) as at_a:
        a.recv(timeout=30)
    assert "drained" in str(at_a.value)
    assert "drained" in str(at_b.value)
    with pytest.raises(rdmad.NotFound):
        pair.client_a.close_channel(0xFFFFFFFF, "no such channel")
    with pytest.raises(rdmad.NotFound):  # the text rdmactl prints will do
        pair.client_a.close_channel("0x00000000ffffffff", "no such channel")
    with pytest.raises(rdmad.InvalidArgument):
        pair.client_a.close_channel("not an id")
    a.close()
    b.close()


class _Alarm(Exception):
    pass


@pytest.mark.parametrize("call", ["recv", "recv_into", "recv_notification", "accept", "reject",
                                  "connect", "events"])
def test_a_blocking_call_lets_a_signal_handler_run_at_once(pair, channels, call):
    """Ctrl-C (here SIGALRM, whose handler raises) interrupts a blocked call
    within ~100 ms, not when its timeout ends (or never, for events)."""
    a, b = channels
    listener = pair.client_b.listen("py.signal")
    region = b.register(bytearray(64))
    events = pair.client_a.events()
    blocking = {
        "recv": lambda: b.recv(timeout=5),
        "recv_into": lambda: b.recv_into(region, timeout=5),
        "recv_notification": lambda: b.recv_notification(timeout=5),
        "accept": lambda: listener.accept(timeout=5),
        "reject": lambda: listener.reject("busy", timeout=5),
        # Nobody accepts: the handshake waits for the listener.
        "connect": lambda: pair.client_a.connect("B", "py.signal", timeout=5),
        "events": lambda: next(events),
    }[call]

    def alarm(signum, frame):
        raise _Alarm()

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        started = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(_Alarm):
            blocking()
        took = time.monotonic() - started
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        listener.close()
        events.close()
    assert took < 1.5, f"{call} ran its handler after {took:.2f} s"
    # The call is whole afterwards: the next message comes through.
    a.send(b"after the signal")
    assert b.recv(timeout=10) == b"after the signal"


def test_a_timeout_spent_in_slices_names_the_whole_timeout(channels):
    a, b = channels
    started = time.monotonic()
    with pytest.raises(rdmad.DeadlineExceeded) as timed_out:
        b.recv(timeout=0.35)
    assert 0.3 <= time.monotonic() - started < 2
    assert "350 ms" in str(timed_out.value)


def test_an_immutable_buffer_registers_read_only_for_the_peer_to_read(channels):
    a, b = channels
    data = b"an immutable KV block"
    exposed = b.register(data, read_only=True)
    assert exposed.read_only
    b.send(exposed.descriptor.serialize())
    descriptor = rdmad.RegionDescriptor.parse(a.recv(timeout=10))
    back = bytearray(len(data))
    a.read(a.register(back), 0, descriptor, 0, len(data))
    assert back == data
    # This side never writes into it.
    own = rdmad.RegionDescriptor.parse(exposed.descriptor.serialize())
    with pytest.raises(ValueError, match="immutable"):
        b.recv_into(exposed, timeout=1)
    with pytest.raises(ValueError, match="immutable"):
        b.read(exposed, 0, own, 0, 4)
    with pytest.raises(ValueError, match="immutable"):
        rdmad.Op.read(exposed, 0, own, 0, 4)
    with pytest.raises(BufferError):
        b.register(data)  # writable registration needs writable memory


def test_a_closed_channel_registers_nothing(channels):
    a, b = channels
    a.close()
    with pytest.raises(rdmad.Error):
        a.register(bytearray(64))
    with pytest.raises(rdmad.Error):
        a.register_ptr(0x1000, 64)
