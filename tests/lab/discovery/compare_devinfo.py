#!/usr/bin/env python3
"""Compares `rdmactl --json devices` with `ibv_devinfo -v` and `rdma -j link`.

usage: compare_devinfo.py RDMACTL_JSON IBV_DEVINFO_TEXT RDMA_LINK_JSON DEV

Every field both tools report must agree. Prints one line per mismatch and
exits 1 if there is any; prints what it compared and exits 0 otherwise.
"""
import ipaddress
import json
import re
import sys


def parse_devinfo(text, dev):
    """ibv_devinfo -v for one device: device fields, ports, GIDs."""
    device, ports, port = {}, {}, None
    in_dev = False
    for line in text.splitlines():
        m = re.match(r"hca_id:\s*(\S+)", line)
        if m:
            in_dev = m.group(1) == dev
            continue
        if not in_dev:
            continue
        m = re.match(r"\s*port:\s*(\d+)", line)
        if m:
            port = {"gids": {}}
            ports[int(m.group(1))] = port
            continue
        m = re.match(r"\s*GID\[\s*(\d+)\]:\s*([0-9a-fA-F:.]+),\s*(.+)$", line)
        if m and port is not None:
            port["gids"][int(m.group(1))] = (m.group(2), m.group(3).strip())
            continue
        m = re.match(r"\s*([a-z_]+):\s*(.+)$", line)
        if m:
            (port if port is not None else device)[m.group(1)] = m.group(2).strip()
    return device, ports


def first_int(value):
    """'4096 (5)' -> 4096, '0x02c9' -> 713, 'PORT_ACTIVE (4)' -> 4 (the code)."""
    m = re.search(r"\((\d+)\)", value)
    if m and not value.split()[0].isdigit():
        return int(m.group(1))
    return int(value.split()[0], 0)


def gid_address(sysfs_text):
    """'0000:...:ffff:c000:0201' -> ipaddress.IPv6Address."""
    return ipaddress.IPv6Address(sysfs_text)


def main():
    ours_path, devinfo_path, link_path, dev = sys.argv[1:5]
    ours = json.load(open(ours_path))
    device, ports = parse_devinfo(open(devinfo_path).read(), dev)
    links = json.load(open(link_path))
    errors, checked = [], []

    def check(what, mine, theirs):
        checked.append(what)
        if mine != theirs:
            errors.append(f"{what}: rdmactl {mine!r} != {theirs!r}")

    mine = next((d for d in ours["devices"] if d["name"] == dev), None)
    if mine is None or not device:
        print(f"FAIL: {dev} missing (rdmactl: {mine is not None}, ibv_devinfo: {bool(device)})")
        return 1
    check("node_guid", mine["node_guid"], device["node_guid"])
    check("fw_ver", mine["fw_ver"], device.get("fw_ver", ""))
    check("vendor_id", mine["vendor_id"], int(device["vendor_id"], 0))
    check("vendor_part_id", mine["vendor_part_id"], int(device["vendor_part_id"]))
    for key in ("max_qp", "max_mr", "max_cq"):
        check(key, mine[key], int(device[key]))
    check("port count", len(mine["ports"]), int(device["phys_port_cnt"]))
    for p in mine["ports"]:
        theirs = ports.get(p["port"])
        if theirs is None:
            errors.append(f"port {p['port']}: not in ibv_devinfo")
            continue
        tag = f"port {p['port']}"
        check(f"{tag} state", "PORT_" + p["state"], theirs["state"].split()[0])
        check(f"{tag} state_code", p["state_code"], first_int(theirs["state"]))
        check(f"{tag} max_mtu", p["max_mtu"], first_int(theirs["max_mtu"]))
        check(f"{tag} active_mtu", p["active_mtu"], first_int(theirs["active_mtu"]))
        check(f"{tag} lid", p["lid"], int(theirs["port_lid"]))
        check(f"{tag} sm_lid", p["sm_lid"], int(theirs["sm_lid"]))
        check(f"{tag} link_layer", p["link_layer"], theirs["link_layer"])
        mine_gids = {g["index"]: g for g in p["gids"]}
        check(f"{tag} GID indices", sorted(mine_gids), sorted(theirs["gids"]))
        for index, (addr, gtype) in theirs["gids"].items():
            g = mine_gids.get(index)
            if g is None:
                continue
            check(f"{tag} GID[{index}]", gid_address(g["gid"]), ipaddress.IPv6Address(addr))
            check(f"{tag} GID[{index}] type", g["type"], gtype)
            mapped = ipaddress.IPv6Address(addr).ipv4_mapped
            if mapped is not None:
                check(f"{tag} GID[{index}] ip", g["ip"], str(mapped))
        link = next((l for l in links if l["ifname"] == dev and l["port"] == p["port"]), None)
        if link is None:
            errors.append(f"{tag}: not in rdma link")
            continue
        check(f"{tag} rdma link state", p["state"], link["state"])
        check(f"{tag} rdma link physical_state", p["phys_state"].upper(),
              link["physical_state"].replace("_", ""))
        check(f"{tag} rdma link netdev", p["netdev"], link.get("netdev", ""))
    for e in errors:
        print("MISMATCH " + e)
    print(f"compared {len(checked)} fields of {dev}: {len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
