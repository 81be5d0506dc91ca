# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Batched transfers, notifications, recv_into and asyncio."""

import asyncio
import os
import threading

import numpy as np
import pytest

import rdmad


def _exposed(a, b, size):
    """b's numpy region of size bytes, and a's descriptor of it."""
    memory = np.zeros(size, dtype=np.uint8)
    region = b.register(memory)
    b.send(region.descriptor.serialize())
    return memory, region, rdmad.RegionDescriptor.parse(a.recv(timeout=10))


def test_a_batch_of_scattered_writes_and_reads_with_a_notification(channels):
    a, b = channels
    remote_memory, _, remote = _exposed(a, b, 64 * 1024)
    blocks = np.random.default_rng(5).integers(0, 256, 16 * 1024, dtype=np.uint8)
    local = a.register(blocks)
    # 16 blocks of 1 KiB, written in reverse order to scattered places.
    ops = [rdmad.Op.write(local, i * 1024, remote, (15 - i) * 4096, 1024) for i in range(16)]
    transfer = a.submit(ops, notification=b"kv ready")
    transfer.wait(timeout=30)
    assert transfer.poll() and transfer.failed_op == -1
    assert b.recv_notification(timeout=10) == b"kv ready"
    for i in range(16):
        assert np.array_equal(remote_memory[(15 - i) * 4096:][:1024], blocks[i * 1024:][:1024])
    back = np.zeros(2048, dtype=np.uint8)
    mine = a.register(back)
    a.submit([rdmad.Op.read(mine, 0, remote, 15 * 4096, 1024),
              rdmad.Op.read(mine, 1024, remote, 0, 1024)]).wait(timeout=30)
    assert np.array_equal(back[:1024], blocks[:1024])
    assert np.array_equal(back[1024:], blocks[15 * 1024:])


def test_a_bad_batch_is_refused_before_anything_starts(channels):
    a, b = channels
    remote_memory, _, remote = _exposed(a, b, 4096)
    local = a.register(np.full(4096, 9, dtype=np.uint8))
    with pytest.raises(rdmad.OutOfRange):
        a.submit([rdmad.Op.write(local, 0, remote, 0, 1024),
                  rdmad.Op.write(local, 0, remote, 4000, 1024)])
    with pytest.raises(rdmad.InvalidArgument):
        a.submit([rdmad.Op.write(local, 0, remote, 0, 8)], notification=b"x" * 257)
    with pytest.raises(TypeError):
        rdmad.Op.write(12345, 0, remote, 0, 8)  # neither a region nor memory
    with pytest.raises(BufferError):
        rdmad.Op.read(b"immutable", 0, remote, 0, 8)  # nothing may be read into it
    assert not remote_memory.any()


def test_a_prepared_batch_posted_again_moves_fresh_data(channels):
    a, b = channels
    remote_memory, _, remote = _exposed(a, b, 16 * 1024)
    blocks = np.zeros(8 * 1024, dtype=np.uint8)
    local = a.register(blocks)
    layer = a.prepare([rdmad.Op.write(local, i * 1024, remote, (7 - i) * 2048, 1024)
                       for i in range(8)])
    with pytest.raises(rdmad.FailedPrecondition):
        layer.wait(timeout=0)  # never posted
    for round_ in range(3):
        blocks[:] = round_ + 1
        layer.post(notification=b"layer %d" % round_)
        assert b.recv_notification(timeout=10) == b"layer %d" % round_
        layer.wait(timeout=30)
        assert layer.poll() and layer.failed_op == -1
        for i in range(8):
            assert (remote_memory[(7 - i) * 2048:][:1024] == round_ + 1).all()
    with pytest.raises(rdmad.InvalidArgument):
        layer.post(notification=b"x" * 257)
    with pytest.raises(rdmad.OutOfRange):
        a.prepare([rdmad.Op.write(local, 0, remote, 16 * 1024 - 8, 1024)])
    back = bytearray(1024)  # memory, no region: registered with the prepared batch
    read = a.prepare([rdmad.Op.read(back, 0, remote, 7 * 2048, 1024)])
    read.post()
    asyncio.run(rdmad.aio.wait(a, read))
    assert back == bytes([3]) * 1024


def test_recv_into_lands_a_message_in_a_region(channels):
    a, b = channels
    target = np.zeros(1 << 20, dtype=np.uint8)
    region = b.register(target)
    data = np.random.default_rng(7).integers(0, 256, 300_000, dtype=np.uint8)
    thread = threading.Thread(target=a.send, args=(data,))
    thread.start()
    assert b.recv_into(region, offset=100, timeout=30) == data.size
    thread.join()
    assert np.array_equal(target[100:100 + data.size], data)
    assert not target[:100].any() and not target[100 + data.size:].any()
    a.send(b"0123456789")
    with pytest.raises(rdmad.OutOfRange):
        b.recv_into(region, 0, max_len=4, timeout=10)
    assert bytes(target[:4]) == b"0123"


def test_asyncio_waits_on_the_completion_fd_without_threads(pair):
    (a1, b1), (a2, b2) = pair.channel_pair(), pair.channel_pair()
    remote_memory, _, remote = _exposed(a2, b2, 4096)
    local = a2.register(np.full(4096, 5, dtype=np.uint8))

    async def main():
        threads = threading.active_count()
        receive = asyncio.ensure_future(rdmad.aio.recv(b1))
        note = asyncio.ensure_future(rdmad.aio.recv_notification(b2))
        await asyncio.sleep(0.2)
        assert not receive.done() and not note.done()
        assert threading.active_count() == threads  # no thread per call
        a1.send(b"to b1")
        transfer = a2.submit([rdmad.Op.write(local, 0, remote, 0, 4096)], notification=b"n")
        await asyncio.wait_for(rdmad.aio.wait(a2, transfer), 30)
        assert await asyncio.wait_for(receive, 30) == b"to b1"
        assert await asyncio.wait_for(note, 30) == b"n"
        assert (remote_memory == 5).all()
        # Two coroutines on one channel: a message and a notification.
        both = asyncio.gather(rdmad.aio.recv(b2), rdmad.aio.recv_notification(b2))
        await asyncio.sleep(0.1)
        a2.submit([rdmad.Op.write(local, 0, remote, 0, 8)], notification=b"second").wait(30)
        a2.send(b"message")
        assert await asyncio.wait_for(both, 30) == [b"message", b"second"]

    asyncio.run(main())
    for c in (a1, b1, a2, b2):
        c.close()


def test_asyncio_accepts_on_the_request_fd(pair):
    """Two coroutines accept on one listener without a thread waiting."""

    async def main():
        loop = asyncio.get_running_loop()
        with pair.client_b.listen("py.async") as listener:
            threads = threading.active_count()
            accepts = [asyncio.ensure_future(rdmad.aio.accept(listener)) for _ in range(2)]
            await asyncio.sleep(0.2)
            assert not any(a.done() for a in accepts)
            assert threading.active_count() == threads  # no thread per waiting call
            initiators = [
                await loop.run_in_executor(None, pair.client_a.connect, "B", "py.async")
                for _ in range(2)
            ]
            accepted = await asyncio.wait_for(asyncio.gather(*accepts), 30)
        for i, channel in enumerate(initiators):
            channel.send(b"from %d" % i)
        got = sorted([await asyncio.wait_for(rdmad.aio.recv(c), 30) for c in accepted])
        assert got == [b"from 0", b"from 1"]
        for channel in initiators + accepted:
            channel.close()

    asyncio.run(main())


def test_asyncio_rejects_on_the_request_fd(pair):
    """A coroutine refuses the next request; the initiator is PermissionDenied."""

    async def main():
        loop = asyncio.get_running_loop()
        with pair.client_b.listen("py.async.reject") as listener:
            refusal = asyncio.ensure_future(rdmad.aio.reject(listener, "full up"))
            await asyncio.sleep(0.2)
            assert not refusal.done()
            with pytest.raises(rdmad.PermissionDenied) as denied:
                await loop.run_in_executor(None, pair.client_a.connect, "B", "py.async.reject")
            await asyncio.wait_for(refusal, 30)
        assert "full up" in denied.value.message

    asyncio.run(main())


def test_asyncio_connects_and_accepts_in_one_loop(pair):
    """connect and connect_many leave the loop free: the accepts they wait
    for run in the same loop meanwhile."""

    async def main():
        with pair.client_b.listen("py.async.connect") as listener:
            accepts = [asyncio.ensure_future(rdmad.aio.accept(listener)) for _ in range(3)]
            one = await asyncio.wait_for(
                rdmad.aio.connect(pair.client_a, "B", "py.async.connect"), 30)
            more = await asyncio.wait_for(
                rdmad.aio.connect_many(pair.client_a, "B", "py.async.connect", 2), 30)
            accepted = await asyncio.wait_for(asyncio.gather(*accepts), 30)
        initiators = [one] + more
        for i, channel in enumerate(initiators):
            channel.send(b"async %d" % i)
        got = sorted([await asyncio.wait_for(rdmad.aio.recv(c), 30) for c in accepted])
        assert got == [b"async 0", b"async 1", b"async 2"]
        with pytest.raises(rdmad.NotFound):
            await rdmad.aio.connect(pair.client_a, "B", "py.async.nobody")
        for channel in initiators + accepted:
            channel.close()

    asyncio.run(main())


def test_asyncio_sends_without_stalling_the_loop(channels):
    """aio.send: a thousand messages to a receiver in the same loop that reads
    only now and then (the buffers fill: the sends that would wait go to a
    thread, and the loop keeps serving the receiver), and one larger than the
    channel buffers (a rendezvous on RDMA)."""
    a, b = channels
    big = os.urandom(3 << 20)

    async def main():
        async def sender():
            for i in range(1000):
                await rdmad.aio.send(a, i.to_bytes(4, "little") * 500)
            await rdmad.aio.send(a, big)

        async def receiver():
            got = []
            for i in range(1000):
                if i % 100 == 0:
                    await asyncio.sleep(0.01)  # behind now and then
                got.append(int.from_bytes((await rdmad.aio.recv(b))[:4], "little"))
            return got, await rdmad.aio.recv(b)

        _, (got, last) = await asyncio.wait_for(asyncio.gather(sender(), receiver()), 60)
        assert got == list(range(1000))
        assert last == big

    asyncio.run(main())
    assert a.try_send(b"x") is True
    assert b.recv(timeout=10) == b"x"
