"""The helpers of tests/bench/by_process.sh (Python 3, standard library).

  by_process.py timed OUT CMD...    runs CMD, its output in OUT; prints its
                                    CPU seconds (user + system, getrusage)
  by_process.py snap                CPU seconds of every live process by name
                                    (a kernel thread's "name/N" under name) and
                                    of the machine's busy time, as name=seconds,
                                    and the machine's context switches
  by_process.py kernel PREFIX A B   ksoftirqd's and the machine's seconds
                                    between two snaps, as "PREFIXname seconds"
  by_process.py table SHORT LONG N UNIT
                                    the table: per process, microseconds per
                                    UNIT from two runs N messages apart
"""

import os
import resource
import subprocess
import sys

MACHINE = "(machine_busy)"
SWITCHES = "(context_switches)"


def timed(out, cmd):
    with open(out, "w") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False)
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{r.ru_utime + r.ru_stime:.6f}")


def snap():
    ticks = os.sysconf("SC_CLK_TCK")
    by = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")].split("/")[0].replace(" ", "_")
        fields = stat[stat.rindex(")") + 2:].split()
        by[name] = by.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    with open("/proc/stat") as f:
        lines = f.read().splitlines()
    cpu = [int(x) for x in lines[0].split()[1:]]
    by[MACHINE] = (sum(cpu) - cpu[3] - cpu[4]) / ticks  # less idle and iowait
    by[SWITCHES] = float(next(line.split()[1] for line in lines if line.startswith("ctxt ")))
    print(" ".join(f"{k}={v:.2f}" for k, v in by.items() if "=" not in k))


def parse_snap(text):
    return {k: float(v) for k, v in (kv.split("=", 1) for kv in text.split())}


def kernel(prefix, before, after):
    a, b = parse_snap(before), parse_snap(after)
    for name in ("ksoftirqd", MACHINE, SWITCHES):
        print(f"{prefix}{name} {b.get(name, 0.0) - a.get(name, 0.0):.2f}")


def table(short, long_, n, unit):
    def load(path):
        with open(path) as f:
            return {k: float(v) for k, v in (line.split() for line in f if line.strip())}

    a, b = load(short), load(long_)
    per = 1e6 / n

    def d(key):
        return (b[key] - a[key]) * per if key else 0.0

    rows = [
        ("client (ib_*_bw; rdmactl)", "perftest_client", "ours_client"),
        ("server (ib_*_bw; daemon B)", "perftest_server", "ours_daemon_B"),
        ("daemon A", "perftest_daemon_A", "ours_daemon_A"),
        ("daemon B, idle in perftest's runs", "perftest_daemon_B", None),
        ("ksoftirqd", "perftest_ksoftirqd", "ours_ksoftirqd"),
        ("the machine, busy", "perftest_" + MACHINE, "ours_" + MACHINE),
    ]
    print(f"{'us per ' + unit:36} {'perftest':>10} {'ours':>10} {'more':>8}")
    for name, p, o in rows:
        print(f"{name:36} {d(p):10.1f} {d(o):10.1f} {d(o) - d(p):+8.1f}")
    p, o = (d(prefix + SWITCHES) / 1e6 for prefix in ("perftest_", "ours_"))
    print(f"{'context switches per ' + unit:36} {p:10.2f} {o:10.2f} {o - p:+8.2f}")


def main(argv):
    if len(argv) >= 3 and argv[0] == "timed":
        timed(argv[1], argv[2:])
    elif argv == ["snap"]:
        snap()
    elif len(argv) == 4 and argv[0] == "kernel":
        kernel(argv[1], argv[2], argv[3])
    elif len(argv) == 5 and argv[0] == "table":
        table(argv[1], argv[2], int(argv[3]), argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
