# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Two agents that find each other by name through etcd, as NIXL's etcd
example does (NIXL_ETCD_ENDPOINTS set, no ip anywhere), each a process of
its own: "one" writes into "two"'s memory and notifies it.

    python3 -m rdmad.nixl etcd_pair.py --role one|two
"""

import argparse
import os
import sys
import time

import torch

from nixl._api import nixl_agent, nixl_agent_config

NAMES = {"one": "EtcdOne", "two": "EtcdTwo"}


def wait_for(condition, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            print(f"FAILED: waiting for {what}", flush=True)
            sys.exit(1)
        time.sleep(0.01)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--role", choices=sorted(NAMES), required=True)
    role = parser.parse_args().role
    if not os.getenv("NIXL_ETCD_ENDPOINTS"):
        sys.exit("NIXL_ETCD_ENDPOINTS is not set")
    me, other = NAMES[role], NAMES["two" if role == "one" else "one"]
    agent = nixl_agent(me, nixl_agent_config(backends=["UCX"]))
    memory = torch.full((1024,), 1 if role == "one" else 0, dtype=torch.uint8)
    reg = agent.register_memory(memory)
    agent.send_local_metadata()
    agent.fetch_remote_metadata(other)
    wait_for(lambda: agent.check_remote_metadata(other), f"{other}'s metadata")
    if role == "two":
        agent.send_notif(other, agent.get_serialized_descs(reg.trim()))
        wait_for(lambda: agent.check_remote_xfer_done(other, b"written"), "the write")
        if not bool((memory[512:] == 1).all()) or bool(memory[:512].any()):
            print("FAILED: the write did not land where it should", flush=True)
            sys.exit(1)
    else:
        notifs = {}

        def got():
            notifs.update(agent.get_new_notifs())
            return other in notifs

        wait_for(got, f"{other}'s descriptors")
        (addr, _, dev), = agent.deserialize_descs(notifs[other][0])
        dst = agent.get_xfer_descs([(addr + 512, 512, dev)], "DRAM")
        handle = agent.initialize_xfer("WRITE", agent.get_xfer_descs(memory[:512]), dst, other,
                                       b"written")
        state = agent.transfer(handle)
        while state == "PROC":
            state = agent.check_xfer_state(handle)
        if state != "DONE":
            print(f"FAILED: the write ended {state}", flush=True)
            sys.exit(1)
        agent.release_xfer_handle(handle)
    agent.deregister_memory(reg)
    print(f"{role}: done", flush=True)


if __name__ == "__main__":
    main()
