#!/usr/bin/env python3
"""Waits for an event in a `rdmactl --json events` log and checks its latency.

usage: wait_event.py LOG KIND DEVICE TEXT BEFORE_MS AFTER_MS [LIMIT_MS]

Polls LOG (one JSON event per line) for up to 20 s for an event of KIND
("port-state-changed", ...) on DEVICE whose message contains TEXT, stamped at
or after BEFORE_MS (Unix time in ms just before the command that made the
change). The daemon stamps an event when it publishes it, so stamp -
BEFORE_MS is how long the change took to reach WatchEvents, the command's own
run time included; it must be at most LIMIT_MS (default 1000). AFTER_MS (the
time the command returned) is printed for comparison.
"""
import json
import sys
import time


def main():
    log, kind, device, text, before, after = sys.argv[1:7]
    before, after = int(before), int(after)
    limit = int(sys.argv[7]) if len(sys.argv) > 7 else 1000
    deadline = time.time() + 20
    while time.time() < deadline:
        with open(log) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if (e.get("kind") == kind and e.get("device") == device
                        and text in e.get("message", "") and e.get("unix_time_ms", 0) >= before):
                    latency = max(0, e["unix_time_ms"] - after)
                    took = e["unix_time_ms"] - before
                    verdict = "OK" if took <= limit else f"FAIL: over {limit} ms"
                    print(f"{kind} {device} '{text}': {latency} ms after the command "
                          f"returned, {took} ms after it started ({verdict})")
                    return 0 if took <= limit else 1
        time.sleep(0.1)
    print(f"FAIL: no {kind} event for {device} with '{text}' within 20 s")
    return 1


if __name__ == "__main__":
    sys.exit(main())
