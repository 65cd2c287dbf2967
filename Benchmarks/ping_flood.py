"""Another connection's ping under a flood of pings (issue 37, item 2: fair service).

Starts a cluster of each binary on loopback (conftest.ChimeCluster: one coordinator, two
workers, fsync never, stopped by pid). A flooder process (one pyzmq DEALER) sends pings as
fast as it can for 8.5 s; a probe on its own connection sends a ping every 10 ms and times
its round trip. Modes:
  - unread: the flooder never reads (receive high-water mark 1, 64 KiB receive buffer);
    the coordinator serves it until its replies fill the socket buffers, then drops its
    requests unread;
  - read: the flooder reads its replies between bursts of 1,000, so it is served all along
    (the heaviest load one connection can put on the loop);
  - none: no flood (the probe alone).
Each run prints the probe's p50 / p99 / max (ms), the flooder's pings sent, the slowest
loop turn, and the coordinator's threads' CPU and run-queue wait (/proc schedstat): on a
machine with few cores the flooder competes with the loop for CPU, which this shows.
With several binaries (comma-separated), runs alternate between them.

    python3 Benchmarks/ping_flood.py --binaries /tmp/before/chime,.build/release/chime --mode read --runs 3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "interop"))

import zmq  # noqa: E402
from conftest import ChimeCluster  # noqa: E402

FLOOD_SECONDS = 8.0
PING = json.dumps({"op": "ping"}).encode()


def flood(endpoint: str, mode: str, stop, sent) -> None:
    context = zmq.Context()
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.SNDHWM, 0)
    if mode == "unread":
        socket.setsockopt(zmq.RCVHWM, 1)
        socket.setsockopt(zmq.RCVBUF, 65536)
    socket.connect(endpoint)
    message = [b"", PING]
    while not stop.is_set():
        if mode == "none":
            time.sleep(0.01)
            continue
        for _ in range(1000):
            socket.send_multipart(message, copy=False)
        sent.value += 1000
        if mode == "read":
            while socket.poll(0):
                socket.recv_multipart()
    socket.close()
    context.term()


def threads(pid: int) -> dict[str, tuple[str, int, int]]:
    """Each thread's name, CPU and run-queue wait (ns) from /proc/PID/task/*/schedstat."""
    found = {}
    base = Path(f"/proc/{pid}/task")
    for task in base.iterdir():
        try:
            name = (task / "comm").read_text().strip()
            run, wait, _ = map(int, (task / "schedstat").read_text().split())
        except (OSError, ValueError):
            continue
        found[task.name] = (name, run, wait)
    return found


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(binary: str, mode: str) -> dict:
    directory = Path(tempfile.mkdtemp(prefix="ping-flood-"))
    cluster = ChimeCluster(binary, directory, {"store": {"fsync": "never"}})
    cluster.start()
    context = zmq.Context()
    stop = multiprocessing.Event()
    sent = multiprocessing.Value("q", 0)
    flooder = None
    try:
        probe = context.socket(zmq.DEALER)
        probe.setsockopt(zmq.LINGER, 0)
        probe.connect(cluster.control_endpoint)
        probe.send_multipart([b"", PING])
        if not probe.poll(5000):
            raise RuntimeError("no pong before the flood")
        probe.recv_multipart()
        flooder = multiprocessing.Process(target=flood, args=(cluster.control_endpoint, mode, stop, sent))
        flooder.start()
        time.sleep(0.5)
        before = threads(cluster.coordinator_pid)
        rtts = []
        end = time.monotonic() + FLOOD_SECONDS
        while time.monotonic() < end:
            started = time.perf_counter()
            probe.send_multipart([b"", PING])
            if not probe.poll(10_000):
                raise RuntimeError("no pong within 10 s")
            probe.recv_multipart()
            rtts.append((time.perf_counter() - started) * 1000)
            time.sleep(0.01)
        after = threads(cluster.coordinator_pid)
        stop.set()
        flooder.join(30)
        metrics = urllib.request.urlopen(cluster.http_url + "/metrics", timeout=10).read().decode()
        slowest = next(
            (float(line.split()[1]) for line in metrics.splitlines() if line.startswith("chime_loop_turn_max_seconds ")), None)
        busy = {}
        for tid, (name, ran, waited) in after.items():
            _, ran0, waited0 = before.get(tid, (name, 0, 0))
            if ran - ran0 > 50_000_000:
                busy[f"{name}/{tid}"] = {"cpuSeconds": round((ran - ran0) / 1e9, 2), "runQueueSeconds": round((waited - waited0) / 1e9, 2)}
        return {
            "binary": binary, "mode": mode, "flooderPings": sent.value, "probePings": len(rtts),
            "p50Ms": round(quantile(rtts, 0.5), 2), "p99Ms": round(quantile(rtts, 0.99), 2), "maxMs": round(max(rtts), 2),
            "slowestTurnMs": round(slowest * 1000, 2) if slowest is not None else None, "coordinatorThreads": busy,
        }
    finally:
        stop.set()
        if flooder is not None and flooder.is_alive():
            flooder.kill()
        context.destroy(linger=0)
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binaries", default=os.environ.get("CHIME_BINARY", str(ROOT / ".build/release/chime")),
                        help="chime binaries, comma-separated; runs alternate between them")
    parser.add_argument("--mode", choices=["unread", "read", "none"], default="read")
    parser.add_argument("--runs", type=int, default=3, help="runs of each binary")
    arguments = parser.parse_args()
    binaries = arguments.binaries.split(",")
    results: dict[str, list[dict]] = {binary: [] for binary in binaries}
    for _ in range(arguments.runs):
        for binary in binaries:
            result = run(binary, arguments.mode)
            results[binary].append(result)
            print(json.dumps(result), flush=True)
    for binary, runs in results.items():
        print(json.dumps({
            "binary": binary, "mode": arguments.mode, "runs": len(runs),
            "medianP50Ms": statistics.median(r["p50Ms"] for r in runs),
            "medianP99Ms": statistics.median(r["p99Ms"] for r in runs),
            "medianMaxMs": statistics.median(r["maxMs"] for r in runs),
        }))


if __name__ == "__main__":
    main()
