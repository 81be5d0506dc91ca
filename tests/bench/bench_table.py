#!/usr/bin/env python3
"""The benchmark table: perftest against rdmad's channels, from the raw
results tests/bench/lab_bench.sh leaves in a directory.

    bench_table.py [--json] DIR

One row per comparison: the anchor (perftest, or a reference figure), its
value, ours, the ratio ours / anchor and its target. Values are the medians
over the rounds. Numbers never make this fail: it exits 1 only when a result
file is missing or unreadable (a command of the run failed).

--json: a JSON array, one object per row:
    {"row", "anchor", "anchor_value", "ours", "ratio", "target", "met"}
(null where a row has no such value; "ours" is a string for rows that cannot
be measured yet).
"""

import json
import statistics
import sys
from pathlib import Path

LAT_SIZES = [(2, "2 B"), (4096, "4 KiB")]
BW_SIZES = [(65536, "64 KiB"), (1048576, "1 MiB")]
ONE_SIDED = [("bw", "message bandwidth", "ib_send_bw -e"),
             ("write", "one-sided Write", "ib_write_bw"),
             ("read", "one-sided Read", "ib_read_bw")]
LAT_TARGET, BW_TARGET = 1.10, 0.90
MSG_BW_TARGET = 0.95  # message bandwidth vs ib_send_bw -e (issue 38)
RATE_SIZE, RATE_TARGET = 8, 0.95  # message rate vs ib_send_bw -e -s 8 (issue 38)
DEPTH, DEPTH_TARGET = 128, 0.98  # prepared batches at perftest's tx depth (issue 38)
DEPTH_SIZES = [(4096, "4 KiB"), (65536, "64 KiB")]
KV_SIZE, KV_TARGET = 16384, 0.90  # a batch of scattered blocks + notification vs ib_write_bw
UCX_LAT_SIZE, UCX_BW_SIZE, UCX_TARGET = 8, 65536, 1.0  # vs ucx_perftest (UCT rc_verbs)
LLAMA_RPC_IDLE_PERCENT = 100.0  # llama.cpp's RPC transport spins a core
WARM_TARGET = 1 / 20
COLD_CONNECT_TARGET, CONNECT_RATE_TARGET = 2.0, 1.0  # vs rdma_cm (cmtime)
CMTIME_CONNECT_STEPS = ["create id", "bind addr", "resolve addr", "resolve route", "create qp",
                        "connect"]
IDLE_TARGET_PERCENT = 1.0
IDLE_CHANNEL_KIB = 256  # registered memory per idle channel
PY_LAT_SIZE, PY_LAT_TARGET = 2, 1.3  # Python's message latency vs rdmactl bench's (C++)
PY_BW_SIZE, PY_BW_TARGET = 65536, 0.95  # Python's one-sided Write vs rdmactl bench's
PY_AIO_TARGET = 1.0  # rdmad.aio, 8 channels: per round trip, vs a thread per channel
NIXL_TARGET = 0.90  # a NIXL program's KV transfer (rdmad.nixl) vs rdmad's Channel.submit
RAILS_SIZE = 1048576  # two-rail Write/Read vs the sum of perftest on each rail (no target)
FAILOVER_TARGET_MS = 1000.0  # a rail's link down to the channel's next completed Write


class MissingResult(Exception):
    pass


def rounds(directory):
    meta = read_meta(directory / "meta_vm.txt")
    return int(meta.get("rounds", "1"))


def read_meta(path):
    """KEY=VALUE lines."""
    meta = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "=" in line:
                key, value = line.split("=", 1)
                meta[key] = value
    return meta


def perftest_numbers(path):
    """The numbers of the result line under perftest's '#bytes' header."""
    if not path.exists():
        raise MissingResult(f"{path.name} is missing")
    lines = path.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#bytes") and i + 1 < len(lines):
            fields = lines[i + 1].split()
            try:
                return [float(f) for f in fields]
            except ValueError:
                break
    raise MissingResult(f"{path.name}: no result line")


def perftest_lat_typical(path):
    # #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
    return perftest_numbers(path)[4]


def perftest_bw_average(path):
    # #bytes #iterations BW_peak BW_average MsgRate (MB/sec: 2^20 bytes)
    return perftest_numbers(path)[3]


def ours(path):
    if not path.exists():
        raise MissingResult(f"{path.name} is missing")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise MissingResult(f"{path.name}: {e}") from e


def ours_result(path, size):
    for r in ours(path)["results"]:
        if r["size"] == size:
            return r
    raise MissingResult(f"{path.name}: no result for {size} bytes")


def median(values):
    return statistics.median(values) if values else None


def spread(anchors, values):
    """min and max of the rounds' own ratios (text output only)."""
    ratios = [v / a for a, v in zip(anchors, values) if a]
    return (min(ratios), max(ratios)) if len(ratios) > 1 else None


def row(name, anchor, anchor_value, value, target=None, better="lower", rounds=None):
    ratio = value / anchor_value if anchor_value and isinstance(value, (int, float)) else None
    met = None
    if target is not None and ratio is not None:
        met = ratio <= target if better == "lower" else ratio >= target
    target_text = None
    if target is not None:
        target_text = f"<= {target:.2f}x" if better == "lower" else f">= {target:.2f}x"
    return {"row": name, "anchor": anchor, "anchor_value": anchor_value, "ours": value,
            "ratio": ratio, "target": target_text, "met": met, "_spread": rounds}


def transfer_rows(d, n, transport, anchors):
    """Latency and bandwidth rows of one transport; the per-round anchors
    are read for RDMA and reused for TCP."""
    rows = []
    rdma = transport == "rdma"
    label = "RDMA" if rdma else "TCP fallback"
    rs = range(1, n + 1)
    for size, text in LAT_SIZES:
        key = ("lat", size)
        if rdma:
            anchors[key] = [perftest_lat_typical(d / f"pt_lat_{size}_r{r}.txt") for r in rs]
        values = [ours_result(d / f"ours_lat_{transport}_r{r}.json", size)["latency_us"]
                  ["typical"] for r in rs]
        rows.append(row(f"message latency {text}, {label} (us, half round trip, typical)",
                        f"ib_send_lat -e -s {size}", median(anchors[key]), median(values),
                        LAT_TARGET if rdma else None, "lower", spread(anchors[key], values)))
    for test, what, tool in ONE_SIDED:
        for size, text in BW_SIZES:
            key = (test, size)
            if rdma:
                anchors[key] = [perftest_bw_average(d / f"pt_{test}_{size}_r{r}.txt") for r in rs]
            values = [ours_result(d / f"ours_{test}_{size}_{transport}_r{r}.json", size)
                      ["bw_avg_mbps"] for r in rs]
            target = MSG_BW_TARGET if test == "bw" else BW_TARGET
            rows.append(row(f"{what} {text}, {label} (MB/s, average)", f"{tool} -s {size}",
                            median(anchors[key]), median(values), target if rdma else None,
                            "higher", spread(anchors[key], values)))
    return rows


def perftest_msg_rate(path):
    # #bytes #iterations BW_peak BW_average MsgRate (Mpps)
    return perftest_numbers(path)[4]


def rate_rows(d, n):
    """8-byte messages per second against ib_send_bw -e -s 8; absent in
    results from before this row."""
    rs = range(1, n + 1)
    ours_files = [d / f"ours_bw_{RATE_SIZE}_rdma_r{r}.json" for r in rs]
    if not all(f.exists() for f in ours_files):
        return []
    # Both in millions of messages per second; shown in thousands.
    anchors = [1000 * perftest_msg_rate(d / f"pt_bw_{RATE_SIZE}_r{r}.txt") for r in rs]
    values = [1000 * ours_result(f, RATE_SIZE)["msg_rate_mps"] for f in ours_files]
    return [row(f"message rate {RATE_SIZE} B, RDMA (thousand messages/s)",
                f"ib_send_bw -e -s {RATE_SIZE}", median(anchors), median(values), RATE_TARGET,
                "higher", spread(anchors, values))]


def depth_rows(d, n):
    """One-sided ops DEPTH in flight (single-op Submit batches) against
    ib_write_bw / ib_read_bw with their default tx depth, the same size;
    absent in results from before these rows."""
    rows = []
    rs = range(1, n + 1)
    for test, what, tool in ONE_SIDED[1:]:
        for size, text in DEPTH_SIZES:
            ours_files = [d / f"ours_{test}_{size}_d{DEPTH}_rdma_r{r}.json" for r in rs]
            if not all(f.exists() for f in ours_files):
                continue
            anchors = [perftest_bw_average(d / f"pt_{test}_{size}_r{r}.txt") for r in rs]
            values = [ours_result(f, size)["bw_avg_mbps"] for f in ours_files]
            rows.append(row(f"{what} {text}, RDMA, {DEPTH} in flight (MB/s, average)",
                            f"{tool} -s {size} (tx depth {DEPTH})", median(anchors),
                            median(values), DEPTH_TARGET, "higher", spread(anchors, values)))
    return rows


def kv_rows(d, n):
    """The KV-cache pattern: batches of scattered KV_SIZE writes, each
    timed to the peer's notification, against ib_write_bw moving the same
    bytes (KV_SIZE messages, tx depth 128); absent in results from before
    this row."""
    rs = range(1, n + 1)
    ours_files = [d / f"ours_kv_rdma_r{r}.json" for r in rs]
    if not all(f.exists() for f in ours_files):
        return []
    anchors = [perftest_bw_average(d / f"pt_kv_{KV_SIZE}_r{r}.txt") for r in rs]
    blocks = ours(ours_files[0])["blocks"]
    results = [ours_result(f, KV_SIZE) for f in ours_files]
    values = [x["bw_avg_mbps"] for x in results]
    rows = [row(f"KV-cache pattern: {blocks} scattered {KV_SIZE // 1024} KiB writes + "
                "notification per batch, RDMA (MB/s to the notification)",
                f"ib_write_bw -s {KV_SIZE}, the same bytes", median(anchors), median(values),
                KV_TARGET, "higher", spread(anchors, values))]
    batch_ms = median([x["batch_us"]["typical"] / 1000 for x in results])
    rows.append(row("KV-cache pattern: one batch to its notification, p50 (ms)", None, None,
                    batch_ms))
    return rows


def python_rows(d, n):
    """The Python package (tests/bench/python_bench.py) against the C++
    library (rdmactl bench) in the same rounds: 2 B message latency and
    64 KiB one-sided Write, one at a time; absent without the package."""
    rs = range(1, n + 1)
    rows = []
    lat_files = [d / f"ours_py_lat_{PY_LAT_SIZE}_r{r}.json" for r in rs]
    if all(f.exists() for f in lat_files):
        anchors = [ours_result(d / f"ours_lat_rdma_r{r}.json", PY_LAT_SIZE)["latency_us"]
                   ["typical"] for r in rs]
        values = [ours_result(f, PY_LAT_SIZE)["latency_us"]["typical"] for f in lat_files]
        rows.append(row(f"Python: message latency {PY_LAT_SIZE} B, RDMA (us, half round trip, "
                        "typical)", "rdmactl bench (C++), the same rounds", median(anchors),
                        median(values), PY_LAT_TARGET, "lower", spread(anchors, values)))
    bw_files = [d / f"ours_py_write_{PY_BW_SIZE}_r{r}.json" for r in rs]
    if all(f.exists() for f in bw_files):
        anchors = [ours_result(d / f"ours_write_{PY_BW_SIZE}_rdma_r{r}.json", PY_BW_SIZE)
                   ["bw_avg_mbps"] for r in rs]
        values = [ours_result(f, PY_BW_SIZE)["bw_avg_mbps"] for f in bw_files]
        rows.append(row(f"Python: one-sided Write {PY_BW_SIZE // 1024} KiB, RDMA (MB/s, "
                        "average)", "rdmactl bench (C++), the same rounds", median(anchors),
                        median(values), PY_BW_TARGET, "higher", spread(anchors, values)))
    conc = {mode: [d / f"ours_py_conc8_{mode}_r{r}.json" for r in rs]
            for mode in ("threads", "aio")}
    if all(f.exists() for files in conc.values() for f in files):
        anchors = [ours_result(f, PY_LAT_SIZE)["us_per_trip"] for f in conc["threads"]]
        values = [ours_result(f, PY_LAT_SIZE)["us_per_trip"] for f in conc["aio"]]
        rows.append(row(f"Python: 8 channels at once, {PY_LAT_SIZE} B round trips, RDMA, "
                        "rdmad.aio (us of wall time per round trip, all channels)",
                        "a thread per channel, the same rounds", median(anchors),
                        median(values), PY_AIO_TARGET, "lower", spread(anchors, values)))
    return rows


def nixl_rows(d, n):
    """A KV-cache transfer written against NIXL's agent API (rdmad.nixl,
    tests/bench/nixl_bench.py) against the same blocks with rdmad's own
    Channel.submit, from Python both, in the same rounds; absent without
    the package."""
    rs = range(1, n + 1)
    files = [d / f"ours_nixl_r{r}.json" for r in rs]
    anchor_files = [d / f"ours_nixl_submit_r{r}.json" for r in rs]
    if not all(f.exists() for f in files + anchor_files):
        return []
    first = ours(files[0])["results"][0]
    values = [ours(f)["results"][0]["bw_avg_mbps"] for f in files]
    anchors = [ours(f)["results"][0]["bw_avg_mbps"] for f in anchor_files]
    return [row(f"NIXL agent (rdmad.nixl): {first['blocks']} scattered "
                f"{first['size'] // 1024} KiB writes per transfer, RDMA (MB/s)",
                "Channel.submit of the same blocks, the same rounds", median(anchors),
                median(values), NIXL_TARGET, "higher", spread(anchors, values))]


def cmtime_steps(path):
    """cmtime's (rdmacm-utils) table: step -> (total ms, max ms, min us, us/conn)."""
    steps = {}
    for line in path.read_text().splitlines():
        name, sep, rest = line.partition(":")
        fields = rest.split()
        if not sep or len(fields) != 4:
            continue
        try:
            steps[name.strip()] = tuple(float(f) for f in fields)
        except ValueError:
            continue
    if "connect" not in steps:
        raise MissingResult(f"{path}: no connect step in cmtime's table")
    return steps


def cmtime_anchors(d, name="pt_cmtime.txt"):
    """(one connection's time in ms, connections per second) of rdma_cm, or
    (None, None) for results without a cmtime run. One connection: the
    fastest connection's time in each connect step, summed (cmtime connects
    all at once, so a connection's own steps queue behind the others');
    the rate: connections over the steps' wall time."""
    path = d / name
    if not path.exists():
        return None, None
    steps = cmtime_steps(path)
    used = [steps[name] for name in CMTIME_CONNECT_STEPS if name in steps]
    one_ms = sum(min_us for _, _, min_us, _ in used) / 1000
    per_conn_us = sum(us for _, _, _, us in used)
    return one_ms, (1e6 / per_conn_us if per_conn_us else None)


def connect_rows(d):
    c = ours(d / "ours_connect.json")["connect"]
    rss = ours(d / "rss.json")
    n = rss["channels"]
    p50, p99 = c["handshake_ms"]["p50"], c["handshake_ms"]["p99"]
    cm_one_ms, cm_rate = cmtime_anchors(d)
    cm = "rdma_cm connection (cmtime: fastest per step, summed)" if cm_one_ms else None
    rows = [row("cold connect p50 (ms)", cm, cm_one_ms, p50,
                COLD_CONNECT_TARGET if cm else None, "lower"),
            row("cold connect p99 (ms)", None, None, p99)]
    pooled = ours(d / "ours_connect_pooled.json")["connect"]["handshake_ms"]
    rows.append(row("warm pooled acquire p50 (ms)", "cold connect p50", p50, pooled["p50"],
                    WARM_TARGET, "lower"))
    rows.append(row("warm pooled acquire p99 (ms)", "cold connect p99", p99, pooled["p99"],
                    WARM_TARGET, "lower"))
    # Reported, not a target: one Connect at a time against rdma_cm's all at
    # once; the many-channels row (ConnectMany) carries the target.
    rows.append(row(f"connect rate, {n} sequential channels (connects/s)",
                    f"cmtime, {n} rdma_cm connections at once" if cm_rate else None, cm_rate,
                    c["per_second"]))
    for side, who in (("A", "initiator"), ("B", "acceptor, echo service")):
        before, after = rss["before"][side] / 1024, rss["after"][side] / 1024
        rows.append(row(f"daemon {side} ({who}) RSS after {n} channels (MiB)",
                        "its RSS before them", before, after))
    return rows


def many_rows(d):
    """N channels open at once (tests/bench/many_channels.cc) against cmtime
    connecting as many; absent in results from before these rows."""
    if not (d / "ours_many_connect.json").exists():
        return []
    c, a = ours(d / "ours_many_connect.json"), ours(d / "ours_many_accept.json")
    rss = ours(d / "rss_many.json")
    n = c["channels"]
    _, cm_rate = cmtime_anchors(d, "pt_cmtime_many.txt")
    batch = c.get("batch", 1)
    how = f"ConnectMany, batches of {batch}" if batch > 1 else "Connect"
    rows = [row(f"{n} channels open at once: connect rate, {c['threads']} threads, {how} "
                "(channels/s)",
                f"cmtime, {n} rdma_cm connections at once" if cm_rate else None, cm_rate,
                c["per_second"], CONNECT_RATE_TARGET if cm_rate else None, "higher"),
            row(f"{n} channels: a message each way on each (s)", None, None, c["exchange_s"])]
    for who, r in (("initiator", c), ("acceptor", a)):
        kib = r["pinned_per_channel_kib"]
        m = row(f"{n} channels: registered memory per channel, {who} application (KiB)", None,
                None, kib)
        m["target"] = f"<= {IDLE_CHANNEL_KIB} KiB"
        m["met"] = kib <= IDLE_CHANNEL_KIB
        rows.append(m)
        rows.append(row(f"{n} channels: {who} application RSS (MiB)", None, None,
                        r["rss_kib"] / 1024))
        if "heap_kib" in r:  # absent in results from before it was reported
            rows.append(row(f"{n} channels: {who} application heap in use per channel (KiB)",
                            None, None, r["heap_kib"] / n))
    for side, who in (("C", "initiator's"), ("D", "acceptor's")):
        before, during = rss["before"][side] / 1024, rss["open"][side] / 1024
        rows.append(row(f"daemon {side} ({who}) RSS with {n} channels open (MiB)",
                        "its RSS before them", before, during))
    transports = ", ".join(f"{k} {v}" for k, v in sorted(c["transports"].items()))
    rows[0]["row"] += f" [{transports}; send depth {rss.get('send_depth', '-')}]"
    return rows


def ucx_final(path):
    """The numbers of ucx_perftest's 'Final:' line: iterations, overhead
    (us) p50, average, overall, bandwidth (MB/s, 2^20) average, overall,
    message rate average, overall."""
    if not path.exists():
        raise MissingResult(f"{path.name} is missing")
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("Final:"):
            try:
                return [float(f) for f in line.split()[1:]]
            except ValueError:
                break
    raise MissingResult(f"{path.name}: no 'Final:' line")


def ucx_rows(d, n):
    """The peer anchor: UCX's ucx_perftest at its transport layer on the
    same device, and the same rdmactl bench runs, in a VM of two vCPUs in
    real time (lab_bench.sh --ucx): UCT busy-polls on both sides, which one
    vCPU turns into a scheduler tick per round trip. Latency: its am_lat
    (active messages, one-way, p50) against our message latency at the same
    size, and its put_lat beside it;
    bandwidth: its zero-copy put_bw (overall: the bytes over the whole run,
    as perftest's BW average) against our one-sided Write with DEPTH in
    flight. Absent without that run's results. Its rounds and iterations
    are its own (meta_vm_ucx.txt: at least three rounds of longer runs, as
    it runs in real time); older results have the table's."""
    meta = read_meta(d / "meta_vm_ucx.txt")
    rs = range(1, int(meta.get("ucx_rounds", n)) + 1)
    lat_iters = f" -n {meta['ucx_lat_iters']}" if "ucx_lat_iters" in meta else ""
    bw_iters = f" -n {meta['ucx_bw_iters']}" if "ucx_bw_iters" in meta else ""
    rows = []
    ours_lat = [d / f"ours_ucx_lat_r{r}.json" for r in rs]
    # The target's anchor is UCX's own message round trip (am_lat: active
    # messages, SENDs as ours); its one-sided put ping-pong (put_lat, a
    # WRITE polled for in memory: no receive, no completion) is shown beside
    # it. Results from before am_lat have put_lat alone, then the anchor.
    have_am = all((d / f"ucx_am_lat_{UCX_LAT_SIZE}_r{r}.txt").exists() for r in rs)
    warmup = meta.get("ucx_warmup")  # both sides'; older runs: none
    warm = f" -w {warmup}" if warmup else ""
    for test, what in (("am_lat", "active messages"), ("put_lat", "one-sided put ping-pong")):
        lat_files = [d / f"ucx_{test}_{UCX_LAT_SIZE}_r{r}.txt" for r in rs]
        if not all(f.exists() for f in lat_files + ours_lat):
            continue
        anchors = [ucx_final(f)[1] for f in lat_files]
        values = [ours_result(f, UCX_LAT_SIZE)["latency_us"]["typical"] for f in ours_lat]
        target = UCX_TARGET if test == "am_lat" or not have_am else None
        rows.append(row(f"peer anchor UCX, 2 vCPUs, real time: message latency {UCX_LAT_SIZE} B, RDMA "
                        f"(us, half round trip, typical) vs UCX {what}",
                        f"ucx_perftest -t {test} -s {UCX_LAT_SIZE}{lat_iters}{warm} (UCT rc_verbs)",
                        median(anchors), median(values), target, "lower",
                        spread(anchors, values)))
    bw_files = [d / f"ucx_put_bw_{UCX_BW_SIZE}_r{r}.txt" for r in rs]
    ours_files = [d / f"ours_ucx_write_{UCX_BW_SIZE}_d{DEPTH}_r{r}.json" for r in rs]
    if all(f.exists() for f in bw_files + ours_files):
        anchors = [ucx_final(f)[5] for f in bw_files]  # overall: bytes over the whole run
        values = [ours_result(f, UCX_BW_SIZE)["bw_avg_mbps"] for f in ours_files]
        rows.append(row(f"peer anchor UCX, 2 vCPUs, real time: one-sided Write 64 KiB, RDMA, {DEPTH} in "
                        "flight (MB/s, average)",
                        f"ucx_perftest -t put_bw -D zcopy -s {UCX_BW_SIZE}{bw_iters} (UCT rc_verbs)",
                        median(anchors), median(values), UCX_TARGET, "higher",
                        spread(anchors, values)))
    return rows


def rails_rows(d, n):
    """Two rails (lab --rails 2): one channel striped over rxe0 and rxe1
    against ib_write_bw / ib_read_bw on each rail alone, summed (both share
    the VM's CPU: no target); and the time from rail 1's link going down to
    the next completed Write. Absent in results from before these rows."""
    rs = range(1, n + 1)
    rows = []
    for op, what, tool in (("write", "one-sided Write", "ib_write_bw"),
                           ("read", "one-sided Read", "ib_read_bw")):
        files = [d / f"ours_rails_{op}_{RAILS_SIZE}_r{r}.json" for r in rs]
        if not all(f.exists() for f in files):
            continue
        anchors = [perftest_bw_average(d / f"pt_rail0_{op}_{RAILS_SIZE}_r{r}.txt") +
                   perftest_bw_average(d / f"pt_rail1_{op}_{RAILS_SIZE}_r{r}.txt") for r in rs]
        values = [ours_result(f, RAILS_SIZE)["bw_avg_mbps"] for f in files]
        rows.append(row(f"two rails: {what} 1 MiB, one channel over rxe0 + rxe1 (MB/s, average)",
                        f"{tool} -s {RAILS_SIZE} on each rail alone, summed", median(anchors),
                        median(values), None, "higher", spread(anchors, values)))
        one = [d / f"ours_{op}_{RAILS_SIZE}_rdma_r{r}.json" for r in rs]
        if all(f.exists() for f in one):
            singles = [ours_result(f, RAILS_SIZE)["bw_avg_mbps"] for f in one]
            rows.append(row(f"two rails: {what} 1 MiB over two rails vs one (MB/s, average)",
                            f"rdmactl bench --test {op} on rxe0 alone", median(singles),
                            median(values), None, "higher", spread(singles, values)))
    path = d / "ours_rails_failover.json"
    if path.exists():
        f = ours(path)
        ms = f["down_to_next_completion_ms"]
        r = row("two rails: rail 1's link down to the next completed 1 MiB Write (ms)", None, None,
                ms)
        r["target"] = f"<= {FAILOVER_TARGET_MS:.0f} ms"
        r["met"] = ms <= FAILOVER_TARGET_MS
        rows.append(r)
        back = row("two rails: link up to the rail back in the channel (ms)", None, None,
                   f["back_ms"] if f.get("rail_back") else "not back")
        rows.append(back)
    return rows


def idle_row(d):
    idle = ours(d / "ours_idle.json")["idle"]
    r = row(f"idle connected channel, CPU over {idle['seconds']:.0f} s (% of a core)",
            "llama.cpp RPC transport (spins)", LLAMA_RPC_IDLE_PERCENT, idle["cpu_percent"],
            IDLE_TARGET_PERCENT / LLAMA_RPC_IDLE_PERCENT, "lower")
    r["target"] = f"< {IDLE_TARGET_PERCENT:g} % of a core"
    r["met"] = idle["cpu_percent"] < IDLE_TARGET_PERCENT
    return r


def build_rows(d):
    n = rounds(d)
    anchors = {}
    rows = transfer_rows(d, n, "rdma", anchors)
    rows += rate_rows(d, n)
    rows += depth_rows(d, n)
    rows += kv_rows(d, n)
    rows += python_rows(d, n)
    rows += nixl_rows(d, n)
    rows += ucx_rows(d, n)
    rows += transfer_rows(d, n, "tcp", anchors)
    rows += connect_rows(d)
    rows += many_rows(d)
    rows += rails_rows(d, n)
    rows.append(idle_row(d))
    return rows


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if abs(v) >= 100:
        return f"{v:.1f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def render(rows, d):
    header = ["row", "anchor", "anchor value", "ours", "ratio", "rounds", "target", "met"]
    cells = [[r["row"], r["anchor"] or "-", fmt(r["anchor_value"]), fmt(r["ours"]),
              "-" if r["ratio"] is None else f"{r['ratio']:.3f}x",
              "-" if not r["_spread"] else f"{r['_spread'][0]:.2f}-{r['_spread'][1]:.2f}x",
              r["target"] or "-",
              "-" if r["met"] is None else ("yes" if r["met"] else "NO")] for r in rows]
    widths = [max(len(c[i]) for c in cells + [header]) for i in range(len(header))]
    line = lambda c: "  ".join(x.ljust(w) for x, w in zip(c, widths)).rstrip()
    out = [line(header)] + [line(c) for c in cells]
    meta = read_meta(d / "meta_vm.txt")
    host = read_meta(d / "meta_host.txt")
    out.append("")
    out.append(f"medians of {meta.get('rounds', '?')} round(s); {meta.get('date_utc', '?')}; "
               f"{meta.get('device', '?')} (Soft-RoCE) in a qemu TCG VM, "
               f"{meta.get('vm_cpus', '?')} vCPU ({meta.get('vm_cpu', '?')}), kernel "
               f"{meta.get('vm_kernel', '?')}; perftest {meta.get('perftest', '?')}")
    if host:
        out.append(f"host: {host.get('host_cpu', '?')}, {host.get('host_cpus', '?')} cores, "
                   f"load average {host.get('host_load', '?')} at the start; timing: "
                   f"{host.get('timing', '?')}")
    out.append("ratio: ours / anchor (latency: lower is better; bandwidth: higher); rounds: "
               "the range of the rounds' own ratios")
    out.append("an emulated device on one shared vCPU: see docs/benchmarks.md before reading "
               "anything into these ratios")
    return "\n".join(out)


def main(argv):
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    d = Path(args[0])
    try:
        rows = build_rows(d)
    except (MissingResult, KeyError, ValueError) as e:
        print(f"bench_table.py: {e}", file=sys.stderr)
        return 1
    for r in rows:
        r.setdefault("_spread", None)
    if as_json:
        print(json.dumps([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
                         indent=1))
    else:
        print(render(rows, d))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
