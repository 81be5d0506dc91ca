#!/usr/bin/env python3
# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The failover row of the benchmark table (docs/topology.md, "Rails in a
channel"): one-sided Writes of SIZE into rdmad's echo service over a
channel with two rails, one at a time; after WARMUP of them the second
rail's link is set down (ip link set NETDEV down). Measured: the time from
the link going down to the next Write that completes, and, once the link
is up again, the time until the rail is back. Every Write must succeed.

    rails_bench.py --socket S --peer B --netdev veth2 --size 1048576

Prints {"size", "rails", "down_to_next_completion_ms", "rail_out", "reason",
"writes_while_down", "back_ms", "rail_back"}.
"""

import argparse
import json
import struct
import subprocess
import time

import numpy as np

import rdmad

SERVICE = "rdmad.echo"
REGION = 3  # the echo service's region mode (common/echo_protocol.h)
TIMEOUT = 30.0


def open_region(client, peer, size):
    channel = client.connect(peer, SERVICE)
    channel.send(struct.pack("<4sHHQ", b"RDEC", 1, REGION, size))
    ack = channel.recv(timeout=TIMEOUT)
    magic, _, code = struct.unpack("<4sHH", ack[:8])
    if magic != b"RDEA" or code != 0:
        raise SystemExit(f"rails_bench.py: the echo service said {code}: {ack[8:]!r}")
    return channel, rdmad.RegionDescriptor.parse(ack[8:])


def link(netdev, state):
    subprocess.run(["ip", "link", "set", netdev, state], check=True)


def failover(client, args):
    channel, remote = open_region(client, args.peer, args.size)
    out = {"size": args.size}
    with channel:
        rails = channel.rails()
        out["rails"] = [r["device"] for r in rails]
        if len(rails) < 2:
            raise SystemExit(f"rails_bench.py: the channel has {len(rails)} rail(s), not 2")
        local = channel.register(np.full(args.size, 0x5A, dtype=np.uint8))
        put = channel.write
        for _ in range(args.warmup):
            put(local, 0, remote, 0, args.size)
        link(args.netdev, "down")
        try:
            down = time.perf_counter()
            put(local, 0, remote, 0, args.size)
            out["down_to_next_completion_ms"] = (time.perf_counter() - down) * 1e3
            writes = 1
            # Until the rail is out (its port is looked at once a second).
            while channel.rails()[1]["up"] and time.perf_counter() - down < 10:
                put(local, 0, remote, 0, args.size)
                writes += 1
            out["writes_while_down"] = writes
            out["rail_out"] = not channel.rails()[1]["up"]
            out["reason"] = channel.rails()[1]["reason"]
        finally:
            link(args.netdev, "up")
        up = time.perf_counter()
        while not channel.rails()[1]["up"] and time.perf_counter() - up < 30:
            put(local, 0, remote, 0, args.size)
            time.sleep(0.05)
        out["rail_back"] = channel.rails()[1]["up"]
        out["back_ms"] = (time.perf_counter() - up) * 1e3
        local.close()
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--socket", required=True)
    p.add_argument("--peer", required=True)
    p.add_argument("--netdev", required=True, help="the second rail's netdev")
    p.add_argument("--size", type=int, default=1 << 20)
    p.add_argument("--warmup", type=int, default=4)
    args = p.parse_args()
    with rdmad.Client.open(socket=args.socket) as client:
        print(json.dumps(failover(client, args)))


if __name__ == "__main__":
    main()
