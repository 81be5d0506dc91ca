#!/usr/bin/env python3
# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""KV-cache transfer between a "prefill" and a "decode" process, in Python.

The twin of examples/kv_transfer.cc, with numpy, and the same bytes on the
wire (either side may be the C++ one): the prefill side exposes its KV
cache, a numpy array, as one registered region and says when a round of
blocks is ready; the decode side pulls scattered blocks in batches of
one-sided reads into its own numpy array, checks them, and tells the
prefill side it is done with the round (a notification fenced behind its
reads), so that prefill may reuse the memory. Over RDMA when both hosts
have a path, else over TCP: the same code.

    kv_transfer.py prefill [--socket S] [--service NAME] [--blocks N]
                           [--block-size BYTES] [--rounds R]
    kv_transfer.py decode PEER [--socket S] [--service NAME] [--batch K]

decode prints one line per round and ends with "KV OK over RDMA|TCP";
either side exits 1 with the reason on the first failure.
"""

import argparse
import struct
import sys
import time

import numpy as np
import numpy.typing as npt

import rdmad

PATIENCE = 30.0  # seconds


def expected(round_: int, blocks: int, block_size: int) -> npt.NDArray[np.uint8]:
    """The bytes of every block in a round: what prefill writes, decode checks."""
    i = np.arange(block_size, dtype=np.int64)
    b = np.arange(blocks, dtype=np.int64)[:, None]
    values: npt.NDArray[np.int64] = ((round_ * 131 + b * 31 + i * 7) ^ (i >> 8)) & 0xFF
    return values.astype(np.uint8)


def prefill(client: rdmad.Client, args: argparse.Namespace) -> None:
    with client.listen(args.service) as listener:
        print(f"prefill: listening on {args.service}", flush=True)
        channel = listener.accept(timeout=None)
    with channel:
        cache = np.zeros((args.blocks, args.block_size), dtype=np.uint8)
        with channel.register(cache, read_only=True) as region:
            # The descriptor, then blocks, block size and rounds (u64, little endian).
            layout = region.descriptor.serialize() + struct.pack(
                "<QQQ", args.blocks, args.block_size, args.rounds)
            channel.send(layout)
            for r in range(args.rounds):
                cache[:] = expected(r, args.blocks, args.block_size)
                channel.submit([], notification=f"ready {r}".encode())
                done = channel.recv_notification(timeout=PATIENCE)
                if done != f"done {r}".encode():
                    raise SystemExit(f"kv_transfer.py: decode said {done!r}")
            channel.recv(timeout=PATIENCE)  # decode has let go of the cache
    print(f"prefill: {args.rounds} rounds served")


def decode(client: rdmad.Client, args: argparse.Namespace) -> None:
    with client.connect(args.peer, args.service) as channel:
        layout = channel.recv(timeout=PATIENCE)
        if len(layout) != 48:
            raise SystemExit("kv_transfer.py: malformed layout")
        desc = rdmad.RegionDescriptor.parse(layout[:24])
        blocks, block_size, rounds = struct.unpack("<QQQ", layout[24:])
        if blocks == 0 or block_size == 0 or blocks * block_size > desc.length:
            raise SystemExit("kv_transfer.py: the blocks do not fit the region")
        local = np.zeros((blocks, block_size), dtype=np.uint8)
        # Scattered: block b lands in slot (b * 7919) mod blocks.
        slots = (np.arange(blocks, dtype=np.int64) * 7919) % blocks
        with channel.register(local) as region:
            for r in range(rounds):
                channel.recv_notification(timeout=PATIENCE)
                started = time.monotonic()
                for first in range(0, blocks, args.batch):
                    ops = [rdmad.Op.read(region, int(slots[b]) * block_size, desc,
                                         b * block_size, block_size)
                           for b in range(first, min(blocks, first + args.batch))]
                    channel.submit(ops).wait(timeout=PATIENCE)
                ms = (time.monotonic() - started) * 1000
                bad = np.nonzero((local[slots] != expected(r, blocks, block_size)).any(axis=1))[0]
                if bad.size:
                    raise SystemExit(f"kv_transfer.py: round {r}: block {bad[0]} differs")
                print(f"decode: round {r}: {blocks} blocks of {block_size} bytes "
                      f"({blocks * block_size / (1 << 20):.1f} MiB) in {ms:.1f} ms, all checked",
                      flush=True)
                channel.submit([], notification=f"done {r}".encode())
        channel.send(b"bye")
        print(f"KV OK over {channel.transport}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    roles = parser.add_subparsers(dest="role", required=True)
    for name in ("prefill", "decode"):
        role = roles.add_parser(name)
        if name == "decode":
            role.add_argument("peer")
            role.add_argument("--batch", type=int, default=256)
        else:
            role.add_argument("--blocks", type=int, default=1024)
            role.add_argument("--block-size", type=int, default=16384)
            role.add_argument("--rounds", type=int, default=3)
        role.add_argument("--socket", default=None)
        role.add_argument("--service", default="kv")
    args = parser.parse_args()
    try:
        with rdmad.Client.open(socket=args.socket) as client:
            (prefill if args.role == "prefill" else decode)(client, args)
    except rdmad.Error as e:
        sys.exit(f"kv_transfer.py: {e}")


if __name__ == "__main__":
    main()
