# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""One rdmad channel between two agents, and what each side showed on it.

Both ends say who they are (``HELLO``) and which ranges they registered,
with the descriptors that open them on this channel (``REGIONS``). A
transfer finds its local region and the remote descriptor here.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Optional

import rdmad

from rdmad.nixl import _wire

# (addr, len, dev)
Range = tuple[int, int, int]


def _within(ranges: Any, addr: int, length: int, dev: int) -> Optional[Range]:
    """The range of ranges holding [addr, addr + length) on dev, if any."""
    for r in ranges:
        if r[2] == dev and r[0] <= addr and addr + length <= r[0] + r[1]:
            return (r[0], r[1], r[2])
    return None


class Conn:
    """A channel to a remote agent. remote, remote_regions, regions_known and
    error are guarded by the agent's lock; sending, and local (what this side
    registered on the channel), by the connection's own lock (one sender at
    a time, never held while taking the agent's). Answers (answer()) go out
    on a thread of the connection's own."""

    def __init__(self, channel: rdmad.Channel, address: Optional[tuple[str, str]] = None) -> None:
        self.channel = channel
        self.address = address  # (peer, service) this side connected to; None: accepted
        self.remote: Optional[str] = None  # the agent at the other end, once it said
        self.local: dict[Range, rdmad.MemoryRegion] = {}  # ours, registered on this channel
        self.remote_regions: dict[Range, rdmad.RegionDescriptor] = {}
        self.regions_known = False  # the other end sent its REGIONS
        self.error: Optional[str] = None  # why the channel ended
        # Moves when either side's ranges change: ops built before are stale.
        self.generation = 0
        self.send_lock = threading.RLock()
        self._answers: Optional[queue.Queue[Optional[tuple[bytes, Callable[[], Any]]]]] = None
        self._answers_lock = threading.Lock()

    def send(self, kind: bytes, body: Any) -> None:
        with self.send_lock:
            self.channel.send(_wire.encode(kind, body))

    def answer(self, kind: bytes, body: Callable[[], Any],
               failed: Callable[[rdmad.Error], None]) -> None:
        """Sends kind with body() later, in order, from this connection's own
        thread (started on the first answer): the agent's progress thread
        never waits for the other end to take a message. Two agents whose
        progress threads both waited to answer each other would wait
        forever (a new RDMA channel holds only a few messages the other end
        has not taken), and an agent that never reads its answers would
        stop the answers to every other. failed(error): the send failed;
        the answers still queued are dropped."""
        with self._answers_lock:
            if self._answers is None:
                self._answers = queue.Queue()
                threading.Thread(target=self._send_answers, args=(self._answers, failed),
                                 name="nixl-answers", daemon=True).start()
            self._answers.put((kind, body))

    def _send_answers(self, answers: "queue.Queue[Optional[tuple[bytes, Callable[[], Any]]]]",
                      failed: Callable[[rdmad.Error], None]) -> None:
        while (item := answers.get()) is not None:
            try:
                self.send(item[0], item[1]())
            except rdmad.Error as e:
                failed(e)
                return

    def show(self, ranges: list[Range]) -> None:
        """Registers ranges not yet registered here (and drops the others),
        then tells the other end every range with its descriptor."""
        with self.send_lock:
            wanted = set(ranges)
            for r in list(self.local):
                if r not in wanted:
                    self.local.pop(r).close()
            for r in ranges:
                if r not in self.local:
                    self.local[r] = self.channel.register_ptr(r[0], r[1])
            regions = [[r[0], r[1], r[2], region.descriptor.serialize().hex()]
                       for r, region in self.local.items()]
            self.generation += 1
            self.send(_wire.REGIONS, {"regions": regions})

    def learn_regions(self, body: dict[str, Any]) -> None:
        table: dict[Range, rdmad.RegionDescriptor] = {}
        regions = body.get("regions")
        if not isinstance(regions, list):
            raise _wire.WireError("regions: a list")
        for i, r in enumerate(regions):
            if not isinstance(r, list) or len(r) != 4:
                raise _wire.WireError(f"regions[{i}]: [addr, len, dev, descriptor]")
            key = (_wire.count(r[0], "addr"), _wire.count(r[1], "len"), _wire.count(r[2], "dev"))
            try:
                table[key] = rdmad.RegionDescriptor.parse(bytes.fromhex(_wire.text(r[3], "desc")))
            except (ValueError, rdmad.Error) as e:
                raise _wire.WireError(f"regions[{i}]: {e}") from None
        self.remote_regions = table
        self.regions_known = True
        self.generation += 1

    def local_region(self, addr: int, length: int, dev: int) -> tuple[rdmad.MemoryRegion, int]:
        r = _within(self.local, addr, length, dev)
        if r is None:
            raise LookupError(f"({addr:#x}, {length}, {dev}) is not in registered memory")
        return self.local[r], addr - r[0]

    def remote_region(self, addr: int, length: int,
                      dev: int) -> Optional[tuple[rdmad.RegionDescriptor, int]]:
        r = _within(self.remote_regions, addr, length, dev)
        if r is None:
            return None
        return self.remote_regions[r], addr - r[0]

    def close(self) -> None:
        self.channel.close()  # an answer waiting to go fails now
        with self._answers_lock:
            if self._answers is not None:
                self._answers.put(None)
        with self.send_lock:
            for region in self.local.values():
                region.close()
            self.local.clear()
