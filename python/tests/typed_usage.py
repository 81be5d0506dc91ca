# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Not a test module: what an application writes, for `mypy --strict`
(the python.mypy test) to check against the package's annotations and the
native module's stubs. It is type-checked, never run."""

import asyncio
from typing import List, Optional

import rdmad


async def pull(client: rdmad.Client, peer: str) -> List[bytes]:
    channel = await rdmad.aio.connect(client, peer, "kv")
    replies: List[bytes] = []
    with channel:
        channel.send(b"hello")
        await rdmad.aio.send(channel, bytearray(b"again"))
        sent: bool = channel.try_send(b"no wait")
        replies.append(await rdmad.aio.recv(channel))
        probe: Optional[bytes] = channel.try_recv() if sent else None
        if probe is not None:
            replies.append(probe)
        transfer = channel.submit([], notification=b"done")
        await rdmad.aio.wait(channel, transfer)
        again: rdmad.PreparedTransfer = channel.prepare([])
        for round_ in range(2):
            again.post(notification=b"round %d" % round_)
            await rdmad.aio.wait(channel, again)
        failed: int = again.failed_op
    return replies


def serve(client: rdmad.Client) -> int:
    with client.listen("kv") as listener:
        try:
            channel = listener.accept(timeout=1.0)
        except TimeoutError:  # rdmad.DeadlineExceeded is one
            return 0
        except ConnectionError as e:  # rdmad.Unavailable is one
            assert isinstance(e, rdmad.Error)
            return e.code
    with channel:
        region = channel.register(b"immutable", read_only=True)
        descriptor: rdmad.RegionDescriptor = region.descriptor
        channel.send(descriptor.serialize())
        return channel.recv_into(channel.register(bytearray(64)), timeout=None)


def main() -> None:
    with rdmad.Client.open() as client:
        asyncio.run(pull(client, "nodeB"))
        serve(client)
