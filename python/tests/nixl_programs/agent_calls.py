# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The rest of NIXL's agent API between two processes, written against
NIXL's names only: metadata out of band (files) and partial, prepared
lists, WRITE and READ with tensors, tuples and numpy arrays, reposts,
notifications short and long, and the errors NIXL gives. Each step that
fails exits non-zero saying which.

    python3 -m rdmad.nixl agent_calls.py --role server --dir DIR
    python3 -m rdmad.nixl agent_calls.py --role client --dir DIR
"""

import argparse
import os
import sys
import time

import numpy as np
import torch

from nixl._api import nixl_agent, nixl_agent_config
from nixl._bindings import nixlInvalidParamError, nixlNotFoundError

SIZE = 1 << 20
TIMEOUT = 60


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def raises(error, call, what):
    try:
        call()
    except error:
        print(f"ok: {what}", flush=True)
        return
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: {type(e).__name__}: {e}")
    check(False, f"{what}: no error")


def wait_for(condition, what):
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            check(False, f"waiting for {what}")
        time.sleep(0.002)


def read_file(path):
    wait_for(lambda: os.path.exists(path + ".done"), path)
    with open(path, "rb") as f:
        return f.read()


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
    open(path + ".done", "w").close()


def server(d):
    agent = nixl_agent("server", nixl_agent_config(backends=["UCX", "GDS"]))
    check(list(agent.backends) == ["UCX"], "a backend NIXL names is served; a missing one skipped")
    kv = torch.zeros(SIZE, dtype=torch.uint8)
    cache = np.arange(SIZE, dtype=np.uint32).view(np.uint8)[:SIZE].copy()
    reg = agent.register_memory(kv)
    reg2 = agent.register_memory([(cache.ctypes.data, SIZE, 0, "cache")], "DRAM")
    raises(nixlNotFoundError,
           lambda: agent.register_memory([(cache.ctypes.data, 64, 0, "")], "VRAM"),
           "VRAM is refused as a missing backend would")
    write_file(os.path.join(d, "server.md"), agent.get_agent_metadata())
    write_file(os.path.join(d, "server.partial"),
               agent.get_partial_agent_metadata(reg2, inc_conn_info=False))
    check(agent.add_remote_agent(read_file(os.path.join(d, "client.md"))) == "client",
          "add_remote_agent names the agent")
    descs = np.array([[kv.data_ptr(), SIZE, 0], [cache.ctypes.data, SIZE, 0]], dtype=np.uint64)
    agent.send_notif("client", agent.get_serialized_descs(agent.get_xfer_descs(descs, "DRAM")))
    wait_for(lambda: agent.check_remote_xfer_done("client", b"write-done"), "the client's write")
    expected = torch.arange(SIZE // 2, dtype=torch.int64).to(torch.uint8)
    check(torch.equal(kv[SIZE // 2:], expected), "the client's WRITE landed")
    wait_for(lambda: agent.check_remote_xfer_done("client", b"L" * 300, tag_is_prefix=True),
             "the long notification of a transfer")
    wait_for(lambda: agent.check_remote_xfer_done("client", b"bye"), "the client's bye")
    wait_for(lambda: not agent.check_remote_metadata("client"), "the client's invalidation")
    print("ok: invalidate_local_metadata reached the server", flush=True)
    agent.deregister_memory(reg)
    agent.deregister_memory(reg2)
    raises(nixlNotFoundError, lambda: agent.deregister_memory(reg), "a second deregister")
    print("server: done", flush=True)


def client(d):
    agent = nixl_agent("client")
    local = torch.arange(SIZE // 2, dtype=torch.int64).to(torch.uint8)
    back = torch.zeros(SIZE, dtype=torch.uint8)
    reg = agent.register_memory([local, back])
    check(reg.descCount() == 2 and reg.trim().descCount() == 2, "a list of tensors registers")
    name = agent.add_remote_agent(read_file(os.path.join(d, "server.md")))
    check(name == "server" and agent.check_remote_metadata("server"), "the server's metadata")
    agent.add_remote_agent(read_file(os.path.join(d, "server.partial")))
    check(agent.check_remote_metadata("server"), "partial metadata keeps the connection info")
    write_file(os.path.join(d, "client.md"), agent.get_agent_metadata())
    agent.make_connection("server")
    notifs = {}

    def got_descs():
        notifs.update(agent.get_new_notifs())
        return "server" in notifs

    wait_for(got_descs, "the server's descriptors")
    remote = agent.deserialize_descs(notifs["server"][0])
    kv_addr, cache_addr = remote[0][0], remote[1][0]
    check(agent.check_remote_metadata("server", remote), "the server's descriptors are in its md")
    # Prepared lists: the second half of the server's kv, in 4 pieces.
    piece = SIZE // 8
    local_side = agent.prep_xfer_dlist(
        "NIXL_INIT_AGENT", [(local.data_ptr() + i * piece, piece, 0) for i in range(4)], "DRAM")
    remote_side = agent.prep_xfer_dlist(
        "server", [(kv_addr + SIZE // 2 + i * piece, piece, 0) for i in range(4)], "DRAM")
    handle = agent.make_prepped_xfer("WRITE", local_side, [0, 1, 2, 3], remote_side,
                                     [0, 1, 2, 3], b"write-first")
    for state_name in ("posted", "reposted"):
        state = agent.transfer(handle)
        while state == "PROC":
            state = agent.check_xfer_state(handle)
        check(state == "DONE", f"a prepared WRITE {state_name}: {state}")
    agent.transfer(handle, b"write-done")  # the notification given per post
    wait_for(lambda: agent.check_xfer_state(handle) == "DONE", "the third post")
    agent.release_xfer_handle(handle)
    agent.release_dlist_handle(local_side)
    agent.release_dlist_handle(remote_side)
    # READ with rows of a tensor, from numpy-described remote memory.
    rows = back.view(4, SIZE // 4)
    src = agent.get_xfer_descs(np.array([[cache_addr + i * (SIZE // 4), SIZE // 4, 0]
                                         for i in range(4)], dtype=np.uint64), "DRAM")
    read = agent.initialize_xfer("READ", agent.get_xfer_descs([rows[i] for i in range(4)]), src,
                                 "server")
    state = agent.transfer(read)
    while state == "PROC":
        state = agent.check_xfer_state(read)
    expected = np.arange(SIZE, dtype=np.uint32).view(np.uint8)[:SIZE]
    check(state == "DONE" and np.array_equal(back.numpy(), expected), "a READ of rows")
    long_note = agent.initialize_xfer("WRITE", agent.get_xfer_descs(local[:64]),
                                      agent.get_xfer_descs([(kv_addr, 64, 0)], "DRAM"), "server",
                                      b"L" * 300)
    check(agent.transfer(long_note) in ("DONE", "PROC"), "a WRITE with a long notification")
    wait_for(lambda: agent.check_xfer_state(long_note) == "DONE", "the long-notified WRITE")
    raises(nixlInvalidParamError,
           lambda: agent.initialize_xfer("COPY", reg.trim(), reg.trim(), "server"),
           "an unknown operation")
    raises(nixlNotFoundError,
           lambda: agent.initialize_xfer("READ", agent.get_xfer_descs([(back.data_ptr(), 8, 0)],
                                                                      "DRAM"),
                                         agent.get_xfer_descs([(1 << 40, 8, 0)], "DRAM"),
                                         "server"),
           "remote memory the server never registered")
    agent.send_notif("server", b"bye")
    agent.invalidate_local_metadata()  # every agent this one is connected to forgets it
    agent.remove_remote_agent("server")
    check(not agent.check_remote_metadata("server"), "remove_remote_agent forgets it")
    agent.deregister_memory(reg)
    print("client: done", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--role", choices=["server", "client"], required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    (server if args.role == "server" else client)(args.dir)


if __name__ == "__main__":
    main()
