# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""asyncio for rdmad channels, without a thread per call.

    await rdmad.aio.send(channel, b"hello")
    message = await rdmad.aio.recv(channel)
    note = await rdmad.aio.recv_notification(channel)
    await rdmad.aio.wait(channel, transfer)      # a Channel.submit batch
    channel = await rdmad.aio.accept(listener)
    await rdmad.aio.reject(listener, "busy")
    channel = await rdmad.aio.connect(client, "nodeB", "kv")
    channels = await rdmad.aio.connect_many(client, "nodeB", "kv", 8)

Each waits on the channel's completion fd with ``loop.add_reader``: it tries
the non-blocking call, arms the channel when nothing is there, and sleeps
until the fd says there may be news. Any number of coroutines may wait on
the same channel (one receiving messages, one notifications, several
transfers); each retries its own call when woken. accept and reject wait
on the listener's request fd the same way. connect and connect_many run the
handshake (round trips through rdmad and the peer) in the loop's default
executor, so that the loop keeps serving meanwhile.
"""

import asyncio
import functools
import select
from typing import Any, Callable, Dict, List, Tuple, TypeVar

from rdmad._rdmad import Channel, Client, Listener, Transfer
from rdmad.errors import DeadlineExceeded, OutOfRange, Unimplemented

__all__ = [
    "send",
    "recv",
    "recv_notification",
    "wait",
    "accept",
    "reject",
    "connect",
    "connect_many",
]

T = TypeVar("T")

# (loop, fd) -> the futures waiting for that fd to become readable.
_waiters: Dict[Tuple[asyncio.AbstractEventLoop, int], List["asyncio.Future[None]"]] = {}


def _wake(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    for future in _waiters.pop((loop, fd), []):
        if not future.done():
            future.set_result(None)
    loop.remove_reader(fd)


async def _readable(fd: int) -> None:
    """Returns once fd is readable; every coroutine waiting on fd shares one reader."""
    loop = asyncio.get_running_loop()
    future: "asyncio.Future[None]" = loop.create_future()
    waiting = _waiters.setdefault((loop, fd), [])
    if not waiting:
        loop.add_reader(fd, _wake, loop, fd)
    waiting.append(future)
    try:
        await future
    finally:
        if (loop, fd) in _waiters and future in _waiters[(loop, fd)]:
            _waiters[(loop, fd)].remove(future)
            if not _waiters[(loop, fd)]:
                _wake(loop, fd)


async def _news(channel: Channel) -> None:
    """Returns once the channel may have news (or at once if it has some)."""
    loop = asyncio.get_running_loop()
    fd = channel.completion_fd()
    if not channel.arm():
        # Something waits already, maybe for another coroutine on this
        # channel: let them all look again.
        if (loop, fd) in _waiters:
            _wake(loop, fd)
        await asyncio.sleep(0)
        return
    await _readable(fd)


async def _take(channel: Channel, call: Callable[..., T]) -> T:
    """call(timeout=0)'s answer, awaiting the channel's news until it has one."""
    while True:
        try:
            return call(timeout=0)
        except DeadlineExceeded:
            pass
        await _news(channel)


async def send(channel: Channel, data: Any) -> None:
    """Sends one message (any bytes-like object) without stalling the loop:
    at once when the channel's buffers have room, which is the common case;
    else (the peer is behind, or the message is a rendezvous on RDMA) in
    the loop's default executor, where send waits."""
    try:
        if channel.try_send(data):
            return
    except (OutOfRange, Unimplemented):
        pass
    await _off_loop(channel.send, data)


async def recv(channel: Channel) -> bytes:
    """The next whole message (bytes)."""
    while True:
        message = channel.try_recv()  # no exception for "nothing yet"
        if message is not None:
            return message
        await _news(channel)


async def recv_notification(channel: Channel) -> bytes:
    """The peer's next notification (bytes)."""
    return await _take(channel, channel.recv_notification)


async def wait(channel: Channel, transfer: Transfer) -> None:
    """Returns once transfer (from channel.submit) is done; raises its failure."""
    while not transfer.poll():
        await _news(channel)


async def _take_request(listener: Listener, call: Callable[..., T]) -> T:
    """call(timeout=0) once a request waits on the listener, in the loop's executor."""
    fd = listener.request_fd()
    while True:
        if not select.select([fd], [], [], 0)[0]:
            await _readable(fd)
            continue
        try:
            return await _off_loop(call, timeout=0)
        except DeadlineExceeded:
            # Another accept or reject took the request; or what waits is
            # the rest of an accepted batch, which only accept takes: look
            # again a little later rather than spin on the readable fd.
            if select.select([fd], [], [], 0)[0]:
                await asyncio.sleep(0.01)


async def accept(listener: Listener) -> Channel:
    """The next channel to the listener's service.

    Waits on the listener's request fd; once a request is there, the
    handshake (a few round trips through rdmad and the peer) runs in the
    loop's default executor, so that the loop keeps serving meanwhile.
    Any number of coroutines may accept on one listener.
    """
    return await _take_request(listener, listener.accept)


async def reject(listener: Listener, reason: str) -> None:
    """Refuses the next request to the listener's service (the initiator
    gets PermissionDenied), waiting for it as accept does."""
    await _take_request(listener, functools.partial(listener.reject, reason))


async def _off_loop(call: Callable[..., T], *args: Any, **options: Any) -> T:
    """call(*args, **options) in the loop's default executor."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(call, *args, **options))


async def connect(client: Client, peer: str, service: str, **options: Any) -> Channel:
    """client.connect(peer, service, **options) without stalling the loop."""
    return await _off_loop(client.connect, peer, service, **options)


async def connect_many(client: Client, peer: str, service: str, count: int,
                       **options: Any) -> List[Channel]:
    """client.connect_many(peer, service, count, **options) without stalling the loop."""
    return await _off_loop(client.connect_many, peer, service, count, **options)
