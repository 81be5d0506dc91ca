#!/usr/bin/env python3
# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The Python package's rows of the benchmark table: what `rdmactl bench`
measures, measured the same way from Python, against rdmad's echo service.

    python_bench.py --socket S --peer B --test lat --size 2 --iters N
    python_bench.py --socket S --peer B --test write --size 65536 --iters N
    python_bench.py --socket S --peer B --test concurrent --channels 8 \
                    --mode threads|aio --size 2 --iters N

lat: messages of SIZE sent and echoed back, one at a time; the latency is
half the round trip (as ib_send_lat and rdmactl bench), its median the
"typical". write: one-sided Writes of SIZE into the echo service's region,
one at a time (rdmactl bench --test write at depth 1); MB/s of 2^20 bytes.
concurrent: CHANNELS channels at once doing round trips, on a thread each
or as coroutines of one asyncio loop (rdmad.aio): microseconds of wall
time per round trip, all channels together. All warm up as rdmactl does
(16 round trips, 4 writes). Prints rdmactl
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


def concurrent(client, args):
    """args.channels channels to the echo service at once, args.iters round
    trips of args.size bytes on each: one thread per channel (threads) or
    one coroutine per channel in one asyncio loop (aio). The wall time of
    all of them over the round trips: microseconds per round trip."""
    import asyncio
    import threading

    channels = [open_echo(client, args.peer, ECHO, 0)[0] for _ in range(args.channels)]
    request = bytes(args.size)
    try:
        if args.mode == "threads":
            def run(channel):
                for _ in range(args.iters):
                    channel.send(request)
                    channel.recv(timeout=TIMEOUT)

            for channel in channels:  # warm up, as rdmactl does
                for _ in range(16):
                    channel.send(request)
                    channel.recv(timeout=TIMEOUT)
            threads = [threading.Thread(target=run, args=(c,)) for c in channels]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            seconds = time.perf_counter() - started
        else:
            async def run(channel, n):
                for _ in range(n):
                    await rdmad.aio.send(channel, request)
                    await rdmad.aio.recv(channel)

            async def all_of_them():
                await asyncio.gather(*(run(c, 16) for c in channels))
                started = time.perf_counter()
                await asyncio.gather(*(run(c, args.iters) for c in channels))
                return time.perf_counter() - started

            seconds = asyncio.run(all_of_them())
    finally:
        for channel in channels:
            channel.close()
    return {"size": args.size, "iters": args.iters, "channels": args.channels,
            "mode": args.mode, "us_per_trip": seconds * 1e6 / (args.iters * args.channels)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", default=None)
    parser.add_argument("--peer", required=True)
    parser.add_argument("--test", choices=["lat", "write", "concurrent"], required=True)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--mode", choices=["threads", "aio"], default="threads")
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--iters", type=int, default=1000)
    args = parser.parse_args()
    with rdmad.Client.open(socket=args.socket) as client:
        result = {"lat": latency, "write": write, "concurrent": concurrent}[args.test](client, args)
    print(json.dumps({"test": args.test, "results": [result]}))


if __name__ == "__main__":
    main()
