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
until the fd says there may be news. The reader stays registered while
coroutines keep coming back to the channel (no ``epoll_ctl`` per wait), and
is removed when the fd is found readable twice with nobody waiting, or when
the channel is gone. Any number of coroutines may wait on the same channel
(one receiving messages, one notifications, several transfers); each
retries its own call when woken. accept and reject wait
on the listener's request fd the same way. connect and connect_many run the
handshake (round trips through rdmad and the peer) in the loop's default
executor, so that the loop keeps serving meanwhile.
"""

import asyncio
import functools
import select
import weakref
from typing import Any, Callable, Dict, List, Tuple, TypeVar, Union

from rdmad._rdmad import Channel, Client, Listener, PreparedTransfer, Transfer
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

class _Watch:
    """The loop's reader on one channel's (or listener's) fd, kept while
    coroutines keep waiting on it: the futures waiting now, and how often
    the fd was readable with nobody waiting."""

    __slots__ = ("owner", "loop", "fd", "waiters", "idle", "__weakref__")

    def __init__(self, owner: Any, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self.owner = weakref.ref(owner)
        self.loop = loop
        self.fd = fd
        self.waiters: List["asyncio.Future[None]"] = []
        self.idle = -1  # not watching

    def fire(self) -> None:
        waiters = self.waiters
        if waiters:
            self.waiters = []
            self.idle = 0
            for future in waiters:
                if not future.done():
                    future.set_result(None)
            return
        # Level-triggered: readable until the woken coroutine looks (arms)
        # on its next turn, so one fire with nobody waiting is expected; a
        # second means nobody is coming.
        self.idle += 1
        if self.idle > 1:
            self.stop()

    def stop(self) -> None:
        if self.idle >= 0:
            self.idle = -1
            self.loop.remove_reader(self.fd)

    async def wait(self) -> None:
        if self.idle < 0:
            self.loop.add_reader(self.fd, self.fire)
            self.idle = 0
        future: "asyncio.Future[None]" = self.loop.create_future()
        self.waiters.append(future)
        try:
            await future
        finally:
            if future.cancelled() and future in self.waiters:
                self.waiters.remove(future)


# (loop, id(owner)) -> its watch.
_watches: Dict[Tuple[asyncio.AbstractEventLoop, int], _Watch] = {}


def _forget(key: Tuple[asyncio.AbstractEventLoop, int], watch: _Watch) -> None:
    watch.stop()
    if _watches.get(key) is watch:
        del _watches[key]


def _watch(owner: Any, fd_of: Callable[[], int]) -> _Watch:
    """owner's watch in the running loop."""
    loop = asyncio.get_running_loop()
    key = (loop, id(owner))
    watch = _watches.get(key)
    if watch is None or watch.owner() is not owner:
        if watch is not None:
            _forget(key, watch)
        watch = _watches[key] = _Watch(owner, loop, fd_of())
        weakref.finalize(owner, _forget, key, watch)
    return watch


async def _news(channel: Channel) -> None:
    """Returns once the channel may have news (or at once if it has some)."""
    watch = _watch(channel, channel.completion_fd)
    if channel.arm():
        await watch.wait()
        return
    # Something waits already, maybe for another coroutine on this
    # channel: let them all look again.
    if watch.waiters:
        watch.fire()
    await asyncio.sleep(0)


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
    message = channel.try_recv()  # no exception for "nothing yet"
    if message is not None:
        return message
    watch = _watch(channel, channel.completion_fd)
    while True:
        if channel.arm():
            await watch.wait()
        else:
            if watch.waiters:
                watch.fire()
            await asyncio.sleep(0)
        message = channel.try_recv()
        if message is not None:
            return message


async def recv_notification(channel: Channel) -> bytes:
    """The peer's next notification (bytes)."""
    return await _take(channel, channel.recv_notification)


async def wait(channel: Channel, transfer: Union[Transfer, PreparedTransfer]) -> None:
    """Returns once transfer (from channel.submit, or a posted channel.prepare) is done;
    raises its failure."""
    while not transfer.poll():
        await _news(channel)


async def _take_request(listener: Listener, call: Callable[..., T]) -> T:
    """call(timeout=0) once a request waits on the listener, in the loop's executor."""
    fd = listener.request_fd()
    while True:
        if not select.select([fd], [], [], 0)[0]:
            await _watch(listener, listener.request_fd).wait()
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
