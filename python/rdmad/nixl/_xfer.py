# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""NIXL's transfer handles, and a transfer as one rdmad batch.

A handle keeps its descriptors. Its first post (``transfer``) turns them
into rdmad ops on the channel to the remote agent, found in the ranges both
sides showed on it, and prepares them as one rdmad batch
(``Channel.prepare``); each post then starts that batch with the
notification, building nothing again until the channel or its ranges
change.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Optional

import rdmad

from rdmad.nixl._conn import Conn
from rdmad.nixl._descs import nixlXferDList

if TYPE_CHECKING:
    from rdmad.nixl._api import nixl_agent

logger = logging.getLogger("rdmad.nixl")

NOTIFICATION_MAX = 256  # rdmad's; a longer one follows its transfer as a message


class nixlNotPostedError(RuntimeError):  # noqa: N801, N818 - NIXL's name
    """The transfer was never posted (NIXL_ERR_NOT_POSTED)."""


class nixl_prepped_dlist_handle:  # noqa: N801
    """A descriptor list prepared for one side of later transfers."""

    def __init__(self, agent: nixl_agent, remote: Optional[str], descs: nixlXferDList) -> None:
        self._agent = agent
        self.remote = remote  # None: local
        self.descs = descs
        self._released = False

    def release(self) -> None:
        self._released = True

    def __repr__(self) -> str:
        side = "local" if self.remote is None else f"remote {self.remote}"
        return f"nixl_prepped_dlist_handle({side}, {len(self.descs)} descs)"


class nixl_xfer_handle:  # noqa: N801
    """A transfer request: posted with ``transfer``, any number of times."""

    def __init__(self, agent: nixl_agent, op: str, local: nixlXferDList, remote: nixlXferDList,
                 remote_agent: str, notif: bytes) -> None:
        self._agent = agent
        self.op = op
        self.local = local
        self.remote = remote
        self.remote_agent = remote_agent
        self.notif = notif
        self._transfer: Optional[rdmad.PreparedTransfer] = None
        self._conn: Optional[Conn] = None
        self._late_notif: Optional[bytes] = None
        # The batch prepared for the last post, and on which channel in which
        # generation of its ranges: a repost posts it again (NIXL's prep/post).
        self._prepared: Optional[rdmad.PreparedTransfer] = None
        self._prepared_for: Optional[tuple[Conn, int]] = None
        self._state = "INIT"
        self._released = False

    def release(self) -> None:
        self._agent.release_xfer_handle(self)

    def __repr__(self) -> str:
        return (f"nixl_xfer_handle({self.op} {len(self.local)} descs with {self.remote_agent}, "
                f"{self._state})")


def submit(handle: nixl_xfer_handle, conn: Conn, notif: bytes) -> None:
    """Posts handle on conn as one batch (conn's ranges known on both sides).
    LookupError for a range conn does not show."""
    with conn.send_lock:
        if handle._prepared is None or handle._prepared_for != (conn, conn.generation):
            handle._prepared = conn.channel.prepare(build_ops(handle, conn))
            handle._prepared_for = (conn, conn.generation)
        small = notif if len(notif) <= NOTIFICATION_MAX else b""
        handle._prepared.post(notification=small)
        handle._transfer = handle._prepared
    handle._conn = conn
    handle._late_notif = notif if len(notif) > NOTIFICATION_MAX else None
    handle._state = "PROC"


def build_ops(handle: nixl_xfer_handle, conn: Conn) -> list[rdmad.Op]:
    """handle's descriptors as rdmad ops on conn (its send lock held)."""
    ops = []
    for (la, ln, ld), (ra, rn, rd) in zip(handle.local, handle.remote):
        region, loff = conn.local_region(la, ln, ld)
        remote = conn.remote_region(ra, rn, rd)
        if remote is None:
            raise LookupError(f"({ra:#x}, {rn}, {rd}) is not shown by "
                              f"{handle.remote_agent} on this channel")
        desc, roff = remote
        make = rdmad.Op.read if handle.op == "READ" else rdmad.Op.write
        ops.append(make(region, loff, desc, roff, ln))
    return ops
