# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""rdmad for Python: channels over RDMA (or TCP) brokered by the local rdmad.

    import rdmad
    client = rdmad.Client.open()
    with client.connect("nodeB", "kv") as channel:
        channel.send(b"hello")
        reply = channel.recv(timeout=5)

Blocking calls release the GIL. Errors are :class:`rdmad.Error` subclasses,
one per status code (``rdmad.Unavailable``, ``rdmad.DeadlineExceeded``, ...).
See docs/python.md.
"""

from rdmad.errors import *  # noqa: F401,F403  (the exception classes)
from rdmad.errors import Error, error_class  # noqa: F401
from rdmad import aio  # noqa: F401,E402  (asyncio: rdmad.aio.recv, ...)
from rdmad._rdmad import (  # noqa: F401
    Channel,
    Client,
    Events,
    Listener,
    MemoryRegion,
    Op,
    RegionDescriptor,
    Transfer,
)

__all__ = [
    "Channel",
    "Client",
    "Error",
    "Events",
    "Listener",
    "MemoryRegion",
    "Op",
    "RegionDescriptor",
    "Transfer",
    "aio",
    "error_class",
]
