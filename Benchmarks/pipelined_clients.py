"""Acknowledged schedules per second from one Python process (issue 28, item 3).

Starts one coordinator and one worker of CHIME_BINARY on loopback (conftest.ChimeCluster,
stopped by pid), then schedules N reminders one per request, each reply checked:
  - blocking: `ClusterClient.schedule` one call at a time (waits for each reply);
  - pipelined: `AsyncClusterClient.schedule_each` (asyncio) with a window of W requests in flight;
  - each: `ClusterClient.schedule_each` (no asyncio, zmq.Poller) with the same window.
Alternates them R times and prints each run (with the client's own CPU per request) and the
medians. `--modes` picks which run.

    CHIME_BINARY=.build/release/chime python3 Benchmarks/pipelined_clients.py --count 20000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "clients" / "python"))
sys.path.insert(0, str(ROOT / "Tests" / "interop"))

from chime_client import AsyncClusterClient, ClusterClient  # noqa: E402
from conftest import ChimeCluster  # noqa: E402


def reminders(tag: str, count: int) -> list[dict]:
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    return [{"id": f"{tag}-{n}", "recipient": f"u{n % 1000}", "trigger": {"at": at}, "content": {"title": "t"}}
            for n in range(count)]


def blocking(endpoint: str, items: list[dict]) -> float:
    client = ClusterClient([endpoint], timeout_s=10)
    client.current_map()
    started = time.monotonic()
    for reminder in items:
        reply = client.schedule([reminder])
        assert reply["ok"] and reply["result"]["scheduled"][0]["id"] == reminder["id"], reply
    return len(items) / (time.monotonic() - started)


def checked(items: list[dict], replies: list[dict], started: float, cpu: float) -> float:
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    print(f"  client CPU {cpu:.2f} s of {elapsed:.2f} s ({cpu / len(items) * 1e6:.0f} µs a request)", flush=True)
    assert len(replies) == len(items)
    for reminder, reply in zip(items, replies):
        assert reply["ok"] and reply["result"]["scheduled"][0]["id"] == reminder["id"], reply
    return len(items) / elapsed


def pipelined(endpoint: str, items: list[dict], window: int) -> float:
    async def run() -> float:
        async with AsyncClusterClient([endpoint], timeout_s=10, window=window) as client:
            await client.current_map()
            started, cpu = time.monotonic(), time.process_time()
            return checked(items, await client.schedule_each(items), started, cpu)
    return asyncio.run(run())


def each(endpoint: str, items: list[dict], window: int) -> float:
    client = ClusterClient([endpoint], timeout_s=10)
    client.current_map()
    started, cpu = time.monotonic(), time.process_time()
    return checked(items, client.schedule_each(items, window=window), started, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--blocking-count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--fsync", default="interval", choices=["always", "interval", "never"])
    parser.add_argument("--modes", default="blocking,pipelined,each",
                        help="comma-separated, run in this order each run: blocking, pipelined, each")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the pipelined modes into FILE.<mode>")
    arguments = parser.parse_args()
    modes = arguments.modes.split(",")
    binary = Path(os.environ.get("CHIME_BINARY", ROOT / ".build" / "release" / "chime"))
    with tempfile.TemporaryDirectory() as directory:
        cluster = ChimeCluster(binary, Path(directory), {"store": {"fsync": arguments.fsync}}, workers=1)
        cluster.start()
        try:
            rates: dict[str, list[float]] = {mode: [] for mode in modes}
            for run in range(arguments.runs):
                for mode in modes:
                    if mode == "blocking":
                        count = arguments.blocking_count
                        rate = blocking(cluster.control_endpoint, reminders(f"b{run}", count))
                        label = "blocking"
                    else:
                        count, measure = arguments.count, {"pipelined": pipelined, "each": each}[mode]
                        items = reminders(f"{mode[0]}{run}", count)
                        label = {"pipelined": "pipelined asyncio", "each": "ClusterClient.schedule_each"}[mode]
                        label += f" (window {arguments.window})"
                        if arguments.profile:
                            profiler = cProfile.Profile()
                            rate = profiler.runcall(measure, cluster.control_endpoint, items, arguments.window)
                            profiler.dump_stats(f"{arguments.profile}.{mode}")
                        else:
                            rate = measure(cluster.control_endpoint, items, arguments.window)
                    rates[mode].append(rate)
                    print(f"run {run + 1}: {label} {count} schedules: {rate:,.0f}/s", flush=True)
            medians = ", ".join(f"{mode} {statistics.median(rates[mode]):,.0f}/s" for mode in modes)
            print(f"median (fsync {arguments.fsync}): {medians}, each reply checked")
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
