#!/usr/bin/env python3
"""CPU use of a `chime bench` run, per process, sampled from /proc (no pidstat needed).

    python3 Benchmarks/cpu_share.py --pid BENCH_PID [--interval 1] [--out FILE]

Follows BENCH_PID (the chime-bench process, or a `timeout` wrapping it) and its
descendants (coordinators, workers, a pyzmq subscriber) until BENCH_PID exits, reading utime + stime of /proc/PID/stat every
`interval` seconds. Prints one line per interval with each role's CPU in percent of one
core (`coord-0 97 coord-1 95 workers 40 bench 60 total 199`), then the totals in CPU
seconds per role. Roles: `coord-K` (a coordinator with `--shard K`, `coord` without),
`workers` (summed), `bench` (the chime-bench process, all its threads), `other` descendants.
A restarted coordinator is a new pid with the same role. Reads only; stops nothing.
"""
import argparse
import os
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


def descendants(pid):
    found, queue = [], [pid]
    while queue:
        for child in children(queue.pop()):
            found.append(child)
            queue.append(child)
    return found


def role(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            arguments = handle.read().split(b"\0")
    except OSError:
        return None
    words = [argument.decode(errors="replace") for argument in arguments]
    if words and words[0].endswith("chime-bench"):
        return "bench"
    if "coordinator" in words:
        return f"coord-{words[words.index('--shard') + 1]}" if "--shard" in words else "coord"
    if "worker" in words:
        return "workers"
    return "other"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--out")
    arguments = parser.parse_args()
    out = open(arguments.out, "w") if arguments.out else sys.stdout
    roles = {arguments.pid: role(arguments.pid) or "bench"}
    last = {}
    totals = {}
    started = time.time()
    while cpu_ticks(arguments.pid) is not None:
        for child in descendants(arguments.pid):
            if child not in roles:
                name = role(child)
                if name:
                    roles[child] = name
        shares = {}
        for pid, name in list(roles.items()):
            ticks = cpu_ticks(pid)
            if ticks is None:
                continue
            delta = ticks - last.get(pid, 0)
            last[pid] = ticks
            shares[name] = shares.get(name, 0) + delta
            totals[name] = totals.get(name, 0) + delta
        seconds = time.time() - started
        line = " ".join(f"{name} {100 * ticks / TICKS / arguments.interval:.0f}" for name, ticks in sorted(shares.items()))
        total = sum(shares.values())
        print(f"t={seconds:7.1f} {line} total {100 * total / TICKS / arguments.interval:.0f}", file=out, flush=True)
        time.sleep(arguments.interval)
    summary = " ".join(f"{name} {ticks / TICKS:.1f}" for name, ticks in sorted(totals.items()))
    print(f"cpu seconds: {summary}", file=out, flush=True)


if __name__ == "__main__":
    main()
