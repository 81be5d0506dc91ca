#!/usr/bin/env python3
# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The NIXL row of the benchmark table: a KV-cache transfer written against
NIXL's agent API (rdmad.nixl) against the same transfer with rdmad's own
Channel.submit, in the same run.

    nixl_bench.py --socket SB --mode target --port P           (on B, first)
    nixl_bench.py --socket SA --mode nixl --peer B --port P --blocks N --size S --iters K
    nixl_bench.py --socket SA --mode submit --peer B --blocks N --size S --iters K

Both write N scattered blocks of S bytes per batch into B's memory, K
batches, one at a time, each to its completion. nixl: one transfer handle
made once (initialize_xfer) and posted K times (transfer, then
check_xfer_state until DONE), as an engine moves a layer's KV blocks.
submit: the same ops as one rdmad batch (Channel.submit, then wait) to B's
echo service region. Prints rdmactl bench's JSON shape: {"test", "results":
[{"size", "iters", "blocks", "bw_avg_mbps"}]}.
"""

import argparse
import json
import os
import struct
import sys
import time

import numpy as np

import rdmad

TIMEOUT = 60.0
REGION = 3  # the echo service's region mode (common/echo_protocol.h)


def scatter(blocks):
    """Block i of a batch goes to slot (i * 7) % blocks: scattered, each once."""
    return [(i * 7) % blocks for i in range(blocks)]


def target(args):
    from rdmad.nixl import nixl_agent, nixl_agent_config

    agent = nixl_agent("bench-target", nixl_agent_config(True, True, args.port))
    memory = np.zeros(args.blocks * args.size, dtype=np.uint8)
    reg = agent.register_memory([(memory.ctypes.data, memory.nbytes, 0, "")], "DRAM")
    deadline = time.monotonic() + TIMEOUT
    while not agent.check_remote_metadata("bench-initiator"):
        if time.monotonic() > deadline:
            sys.exit("nixl_bench.py: no initiator came")
        time.sleep(0.001)
    agent.send_notif("bench-initiator", agent.get_serialized_descs(reg.trim()))
    while not agent.check_remote_xfer_done("bench-initiator", b"bench done"):
        time.sleep(0.01)
    agent.deregister_memory(reg)
    agent.close()
    return None


def nixl(args):
    from rdmad.nixl import nixl_agent, nixl_agent_config

    agent = nixl_agent("bench-initiator", nixl_agent_config(True, False, 0))
    local = np.full(args.blocks * args.size, 0x5A, dtype=np.uint8)
    reg = agent.register_memory([(local.ctypes.data, local.nbytes, 0, "")], "DRAM")
    agent.fetch_remote_metadata("bench-target", args.peer, args.port)
    agent.send_local_metadata(args.peer, args.port)
    notifs = {}
    deadline = time.monotonic() + TIMEOUT
    while "bench-target" not in notifs or not agent.check_remote_metadata("bench-target"):
        notifs.update(agent.get_new_notifs())
        if time.monotonic() > deadline:
            sys.exit("nixl_bench.py: no descriptors from the target")
        time.sleep(0.001)
    (base, _, dev), = agent.deserialize_descs(notifs["bench-target"][0])
    src = agent.get_xfer_descs([(local.ctypes.data + i * args.size, args.size, 0)
                                for i in range(args.blocks)], "DRAM")
    dst = agent.get_xfer_descs([(base + slot * args.size, args.size, dev)
                                for slot in scatter(args.blocks)], "DRAM")
    handle = agent.initialize_xfer("WRITE", src, dst, "bench-target")

    def batch():
        state = agent.transfer(handle)
        while state == "PROC":
            state = agent.check_xfer_state(handle)
        if state != "DONE":
            sys.exit(f"nixl_bench.py: a transfer ended {state}")

    result = timed(batch, args)
    agent.release_xfer_handle(handle)
    agent.send_notif("bench-target", b"bench done")
    agent.deregister_memory(reg)
    agent.close()
    return result


def submit(args):
    client = rdmad.Client.open(socket=args.socket)
    channel = client.connect(args.peer, "rdmad.echo")
    with channel:
        channel.send(struct.pack("<4sHHQ", b"RDEC", 1, REGION, args.blocks * args.size))
        ack = channel.recv(timeout=TIMEOUT)
        if ack[:4] != b"RDEA" or struct.unpack("<H", ack[6:8])[0] != 0:
            sys.exit(f"nixl_bench.py: the echo service said {ack!r}")
        remote = rdmad.RegionDescriptor.parse(ack[8:])
        local = channel.register(np.full(args.blocks * args.size, 0x5A, dtype=np.uint8))
        ops = [rdmad.Op.write(local, i * args.size, remote, slot * args.size, args.size)
               for i, slot in enumerate(scatter(args.blocks))]

        def batch():
            channel.submit(ops).wait(timeout=TIMEOUT)

        return timed(batch, args)


def timed(batch, args):
    for _ in range(2):  # warm up, as rdmactl bench does
        batch()
    started = time.perf_counter()
    for _ in range(args.iters):
        batch()
    seconds = time.perf_counter() - started
    moved = args.iters * args.blocks * args.size
    return {"size": args.size, "iters": args.iters, "blocks": args.blocks,
            "bw_avg_mbps": moved / seconds / (1 << 20)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--mode", choices=["target", "nixl", "submit"], required=True)
    parser.add_argument("--peer", default="B")
    parser.add_argument("--port", type=int, default=5555)
    parser.add_argument("--blocks", type=int, default=256)
    parser.add_argument("--size", type=int, default=16384)
    parser.add_argument("--iters", type=int, default=8)
    args = parser.parse_args()
    os.environ["RDMAD_SOCKET"] = args.socket
    result = {"target": target, "nixl": nixl, "submit": submit}[args.mode](args)
    if result is not None:
        print(json.dumps({"test": f"kv_{args.mode}", "results": [result]}))


if __name__ == "__main__":
    main()
