#!/usr/bin/env python3
# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The Python package's rows of the benchmark table: what `rdmactl bench`
measures, measured the same way from Python, against rdmad's echo service.

    python_bench.py --socket S --peer B --test lat --size 2 --iters N
    python_bench.py --socket S --peer B --test write --size 65536 --iters N

lat: messages of SIZE sent and echoed back, one at a time; the latency is
half the round trip (as ib_send_lat and rdmactl bench), its median the
"typical". write: one-sided Writes of SIZE into the echo service's region,
one at a time (rdmactl bench --test write at depth 1); MB/s of 2^20 bytes.
Both warm up as rdmactl does (16 round trips, 4 writes). Prints rdmactl
bench's JSON for those fields: {"test", "results": [{"size", "iters",
"latency_us": {"min", "typical", "avg"}} or {"size", "iters", "bw_avg_mbps"}]}.
"""

import argparse
import json
import statistics
import struct
import time

import numpy as np

import rdmad

SERVICE = "rdmad.echo"
ECHO, REGION = 1, 3  # the echo service's modes (common/echo_protocol.h)
TIMEOUT = 30.0


def open_echo(client, peer, mode, param):
    """A channel to peer's echo service in mode; the ack's payload."""
    channel = client.connect(peer, SERVICE)
    channel.send(struct.pack("<4sHHQ", b"RDEC", 1, mode, param))
    ack = channel.recv(timeout=TIMEOUT)
    magic, _, code = struct.unpack("<4sHH", ack[:8])
    if magic != b"RDEA" or code != 0:
        raise SystemExit(f"python_bench.py: the echo service said {code}: {ack[8:]!r}")
    return channel, ack[8:]


def latency(client, args):
    channel, _ = open_echo(client, args.peer, ECHO, 0)
    with channel:
        request = bytes((i * 7 + (i >> 8)) & 0xFF for i in range(args.size))
        send, recv = channel.send, channel.recv
        for _ in range(16):
            send(request)
            recv(timeout=TIMEOUT)
        half = []
        clock = time.perf_counter
        for _ in range(args.iters):
            sent = clock()
            send(request)
            reply = recv(timeout=TIMEOUT)
            half.append((clock() - sent) * 1e6 / 2)
            if len(reply) != args.size:
                raise SystemExit(f"python_bench.py: a reply of {len(reply)} bytes")
    return {"size": args.size, "iters": args.iters,
            "latency_us": {"min": min(half), "typical": statistics.median(half),
                           "avg": statistics.fmean(half)}}


def write(client, args):
    channel, descriptor = open_echo(client, args.peer, REGION, args.size)
    with channel:
        remote = rdmad.RegionDescriptor.parse(descriptor)
        local = channel.register(np.full(args.size, 0x5A, dtype=np.uint8))
        put = channel.write
        for _ in range(4):
            put(local, 0, remote, 0, args.size)
        started = time.perf_counter()
        for _ in range(args.iters):
            put(local, 0, remote, 0, args.size)
        seconds = time.perf_counter() - started
        local.close()
    return {"size": args.size, "iters": args.iters,
            "bw_avg_mbps": args.size * args.iters / seconds / (1 << 20)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", default=None)
    parser.add_argument("--peer", required=True)
    parser.add_argument("--test", choices=["lat", "write"], required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--iters", type=int, default=1000)
    args = parser.parse_args()
    with rdmad.Client.open(socket=args.socket) as client:
        result = (latency if args.test == "lat" else write)(client, args)
    print(json.dumps({"test": args.test, "results": [result]}))


if __name__ == "__main__":
    main()
