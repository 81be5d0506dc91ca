# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""rdmad for Python: channels over RDMA (or TCP) brokered by the local rdmad.

    import rdmad
    client = rdmad.Client.open()
    with client.connect("nodeB", "kv") as channel:
        channel.send(b"hello")
        reply = channel.recv(timeout=5)

Blocking calls release the GIL and return to the interpreter every 100 ms,
so Ctrl-C interrupts them. Errors are :class:`rdmad.Error` subclasses, one
per status code (``rdmad.Unavailable``, a ``ConnectionError``;
``rdmad.DeadlineExceeded``, a ``TimeoutError``; ...). See docs/python.md.
"""

from rdmad import errors
from rdmad.errors import (
    Aborted,
    AlreadyExists,
    Cancelled,
    DataLoss,
    DeadlineExceeded,
    Error,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    Unknown,
    error_class,
)
from rdmad._rdmad import (
    Channel,
    Client,
    Events,
    Listener,
    MemoryRegion,
    Op,
    PreparedTransfer,
    RegionDescriptor,
    Transfer,
)
from rdmad import aio

__all__ = [
    "Aborted",
    "AlreadyExists",
    "Cancelled",
    "Channel",
    "Client",
    "DataLoss",
    "DeadlineExceeded",
    "Error",
    "Events",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "Listener",
    "MemoryRegion",
    "NotFound",
    "Op",
    "OutOfRange",
    "PermissionDenied",
    "PreparedTransfer",
    "RegionDescriptor",
    "ResourceExhausted",
    "Transfer",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Unknown",
    "aio",
    "error_class",
    "errors",
]
