"""Acknowledged schedules per second from one Python process (issue 28, item 3).

Starts one coordinator and one worker of CHIME_BINARY on loopback (conftest.ChimeCluster,
stopped by pid), then schedules N reminders one per request, each reply checked:
  - blocking: `ClusterClient.schedule` one call at a time (waits for each reply);
  - pipelined: `AsyncClusterClient.schedule_each` with a window of W requests in flight.
Alternates the two R times and prints each run and the medians.

    CHIME_BINARY=.build/release/chime python3 Benchmarks/pipelined_clients.py --count 20000 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
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


def pipelined(endpoint: str, items: list[dict], window: int) -> float:
    async def run() -> float:
        async with AsyncClusterClient([endpoint], timeout_s=10, window=window) as client:
            await client.current_map()
            started, cpu = time.monotonic(), time.process_time()
            replies = await client.schedule_each(items)
            elapsed = time.monotonic() - started
            print(f"  client CPU {time.process_time() - cpu:.2f} s of {elapsed:.2f} s", flush=True)
            for reminder, reply in zip(items, replies):
                assert reply["ok"] and reply["result"]["scheduled"][0]["id"] == reminder["id"], reply
            return len(items) / elapsed
    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--blocking-count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--fsync", default="interval", choices=["always", "interval", "never"])
    arguments = parser.parse_args()
    binary = Path(os.environ.get("CHIME_BINARY", ROOT / ".build" / "release" / "chime"))
    with tempfile.TemporaryDirectory() as directory:
        cluster = ChimeCluster(binary, Path(directory), {"store": {"fsync": arguments.fsync}}, workers=1)
        cluster.start()
        try:
            rates: dict[str, list[float]] = {"blocking": [], "pipelined": []}
            for run in range(arguments.runs):
                rate = blocking(cluster.control_endpoint, reminders(f"b{run}", arguments.blocking_count))
                rates["blocking"].append(rate)
                print(f"run {run + 1}: blocking {arguments.blocking_count} schedules: {rate:,.0f}/s", flush=True)
                rate = pipelined(cluster.control_endpoint, reminders(f"p{run}", arguments.count), arguments.window)
                rates["pipelined"].append(rate)
                print(f"run {run + 1}: pipelined (window {arguments.window}) {arguments.count} schedules: {rate:,.0f}/s",
                      flush=True)
            print(f"median (fsync {arguments.fsync}): blocking {statistics.median(rates['blocking']):,.0f}/s, "
                  f"pipelined {statistics.median(rates['pipelined']):,.0f}/s, each reply checked")
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
