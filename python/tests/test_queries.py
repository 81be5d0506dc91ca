# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""Client's queries: devices, gids, counters, route, pools and prewarm, events."""

import copy
import json
import os
import pickle
import signal
import threading
import time

import pytest

import rdmad

LAB_DEV = os.environ.get("LAB_DEV")


def test_devices_and_route(pair):
    devices = pair.client_a.devices()
    assert isinstance(devices, list)
    if not LAB_DEV:  # the host: no RDMA device, no RDMA path
        assert devices == []
        with pytest.raises(rdmad.FailedPrecondition):
            pair.client_a.route("127.0.0.1")
        return
    device = next(d for d in devices if d["name"] == LAB_DEV)
    port = device["ports"][0]
    assert port["state"] == "ACTIVE"
    assert any(g["type"] == "RoCE v2" and g["ip"] == os.environ["LAB_IP"] for g in port["gids"])
    # Every field of the API's Port, also as attributes (rdmad/fields.h).
    assert {"state_code", "rate", "lid", "sm_lid", "netdev_mtu"} <= port.keys()
    assert port.active_mtu == port["active_mtu"] and port.netdev_mtu > 0
    assert repr(port).startswith("Port(port=1, state='ACTIVE'")
    assert repr(device).startswith(f"Device(name='{LAB_DEV}'")
    path = pair.client_a.route(os.environ["LAB_IP"])
    assert path["device"] == LAB_DEV
    assert path["gid_type"] == "RoCE v2"
    assert path["reasons"]
    assert path.qp.send_depth > 0 and path.mtu_cap >= path.mtu
    assert json.loads(json.dumps(path)) == path


def test_records_are_dicts_read_as_attributes():
    from rdmad._records import Record

    gid = Record("Gid", {"index": 1, "type": "RoCE v2"})
    port = Record("Port", {"port": 1, "gids": [gid]})
    assert port.gids[0].type == "RoCE v2" and port["port"] == 1
    assert repr(port) == "Port(port=1, gids=[Gid(index=1, type='RoCE v2')])"
    assert copy.deepcopy(port) == port and pickle.loads(pickle.dumps(port)) == port
    assert repr(copy.deepcopy(port)) == repr(port)
    with pytest.raises(AttributeError, match="Port has no field 'lid'"):
        port.lid
    with pytest.raises(AttributeError):
        port.port = 2


def test_gids_and_counters(pair):
    gids = pair.client_a.gids()
    if not LAB_DEV:  # the host: no RDMA device
        assert gids == []
        with pytest.raises(rdmad.NotFound):
            pair.client_a.counters("no_such_dev", 1)
        return
    rows = [g for g in gids if g["device"] == LAB_DEV]
    assert rows and all(g["port"] == 1 for g in rows)
    assert any(g["type"] == "RoCE v2" and g["ip"] == os.environ["LAB_IP"] for g in rows)
    assert pair.client_a.gids(device=LAB_DEV) == rows
    assert pair.client_a.gids(device="no_such_dev") == []
    counters = pair.client_a.counters(LAB_DEV, 1)
    assert counters and all(isinstance(v, int) for v in counters.values())
    with pytest.raises(rdmad.NotFound):
        pair.client_a.counters("no_such_dev", 1)


def test_prewarm_fills_the_pool(pair):
    listener = pair.client_b.listen("py.pool")
    accepted = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                accepted.append(listener.accept(timeout=0.5))
            except rdmad.DeadlineExceeded:
                pass

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        pair.client_a.prewarm("B", "py.pool", 2)
        deadline = time.monotonic() + 30
        while True:
            rows = [p for p in pair.client_a.pools() if p["service"] == "py.pool"]
            if rows and rows[0]["warm"] == 2:
                break
            assert time.monotonic() < deadline, rows
            time.sleep(0.1)
        assert rows[0]["target"] == 2 and rows[0]["peer"] == "B"
        with pair.client_a.connect("B", "py.pool") as channel:  # a warm one
            assert channel.info["service"] == "py.pool"
        with pytest.raises(rdmad.InvalidArgument):
            pair.client_a.prewarm("B", "py.pool", 5000)
    finally:
        pair.client_a.prewarm("B", "py.pool", 0)  # no target: no refills after the listener
        stop.set()
        thread.join()
        for c in accepted:
            c.close()


def test_events_iterate_until_closed(pair):
    events = pair.client_a.events()
    got = {}

    def first():
        got["event"] = next(events)

    thread = threading.Thread(target=first)
    thread.start()
    time.sleep(0.3)
    os.kill(pair.a.process.pid, signal.SIGHUP)  # the daemon reloads its config
    thread.join(30)
    assert got["event"]["kind"] == "config-reloaded", got
    events.close()
    with pytest.raises(rdmad.Cancelled):
        next(events)


def test_members_without_a_cluster_is_failed_precondition(pair):
    with pytest.raises(rdmad.FailedPrecondition) as off:
        pair.client_a.members()
    assert "cluster.endpoints" in off.value.message
    with pytest.raises(rdmad.InvalidArgument):
        pair.client_a.members(service="bad name")
