# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""A prefill/decode hand-off written against NIXL's Python API, the way
NIXL's documentation shows it: nothing in it names rdmad. The target
(prefill) registers its KV blocks and sends their descriptors as a
notification; the initiator (decode) reads them and notifies the target.

    python3 -m rdmad.nixl kv_read.py --mode target --ip HOST --port PORT
    python3 -m rdmad.nixl kv_read.py --mode initiator --ip HOST --port PORT
"""

import argparse
import logging
import sys
import time

import torch

from nixl._api import nixl_agent, nixl_agent_config
from nixl.logging import get_logger

logging.basicConfig(level=logging.INFO)
logger = get_logger(__name__)

BLOCKS, BLOCK_ELEMS = 4, 4096


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ip", required=True)
    parser.add_argument("--port", type=int, default=5555)
    parser.add_argument("--mode", default="initiator")
    parser.add_argument("--timeout", type=float, default=60)
    return parser.parse_args()


def wait_until(condition, what, timeout):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            logger.error("timed out waiting for %s", what)
            sys.exit(2)
        time.sleep(0.001)


def main():
    args = parse_args()
    listen_port = args.port if args.mode == "target" else 0
    config = nixl_agent_config(True, True, listen_port)
    agent = nixl_agent(args.mode, config)
    if args.mode == "target":
        blocks = [torch.arange(BLOCK_ELEMS, dtype=torch.float32) + 1000 * i
                  for i in range(BLOCKS)]
    else:
        blocks = [torch.zeros(BLOCK_ELEMS, dtype=torch.float32) for _ in range(BLOCKS)]
    reg_descs = agent.register_memory(blocks)
    if not reg_descs:
        logger.error("Memory registration failed.")
        sys.exit(1)

    if args.mode == "target":
        wait_until(lambda: agent.check_remote_metadata("initiator"), "the initiator",
                   args.timeout)
        agent.send_notif("initiator", agent.get_serialized_descs(reg_descs.trim()))
        wait_until(lambda: agent.check_remote_xfer_done("initiator", b"UUID"),
                   "the initiator's read", args.timeout)
        logger.info("target: the initiator read the blocks")
    else:
        agent.fetch_remote_metadata("target", args.ip, args.port)
        agent.send_local_metadata(args.ip, args.port)
        notifs = {}

        def got_descs():
            notifs.update(agent.get_new_notifs())
            return "target" in notifs

        wait_until(got_descs, "the target's descriptors", args.timeout)
        target_descs = agent.deserialize_descs(notifs["target"][0])
        wait_until(lambda: agent.check_remote_metadata("target"), "the target's metadata",
                   args.timeout)
        handle = agent.initialize_xfer("READ", reg_descs.trim(), target_descs, "target", "UUID")
        state = agent.transfer(handle)
        while state == "PROC":
            state = agent.check_xfer_state(handle)
        if state != "DONE":
            logger.error("Transfer failed: %s", state)
            sys.exit(1)
        for i, block in enumerate(blocks):
            if not torch.equal(block, torch.arange(BLOCK_ELEMS, dtype=torch.float32) + 1000 * i):
                logger.error("block %d differs after the read", i)
                sys.exit(1)
        logger.info("initiator: Data verification passed")
        agent.remove_remote_agent("target")
        agent.release_xfer_handle(handle)
        agent.invalidate_local_metadata(args.ip, args.port)
    agent.deregister_memory(reg_descs)
    logger.info("Test Complete.")


if __name__ == "__main__":
    main()
