"""A cluster of N shards on loopback for process tests: N coordinators (`chime coordinator
--shard k`, each with its own store) from one configuration with a `cluster` section, and
workers serving every shard.

Every child is started here and stopped by its own pid (SIGTERM, up to 5 s, then SIGKILL).
Shard k uses ports base+10k … base+10k+4 and HTTP on base+10k+5.
"""

from __future__ import annotations

import contextlib

import json
import os
import random
import signal
import subprocess
import time
import uuid
from pathlib import Path

from conftest import _ephemeral_start, STOP_GRACE_S, _range_is_free, control_request

STARTUP_DEADLINE_S = 30.0


class ShardedCluster:
    def __init__(self, binary: Path, directory: Path, shards: int = 3, workers: int = 1, extra: dict | None = None):
        self.binary, self.directory = binary, directory
        self.shard_count, self.worker_count = shards, workers
        self.extra = extra or {}
        self.children: dict[str, subprocess.Popen] = {}
        self.config_path = directory / "chime.json"
        self.base = 0
        # CURVE keys (own public, own secret, server public) for the readiness probes, when
        # `extra` turns security on.
        self.probe_curve: tuple[bytes, bytes, bytes] | None = None

    def endpoint(self, shard: int, offset: int) -> str:
        return f"tcp://127.0.0.1:{self.base + 10 * shard + offset}"

    def control(self, shard: int) -> str:
        return self.endpoint(shard, 0)

    @property
    def shard_map(self) -> dict:
        shards = []
        for k in range(self.shard_count):
            names = ["control", "dispatch", "results", "events", "eventsIngest"]
            shards.append({"id": k, "slots": [[k * 4096 // self.shard_count, (k + 1) * 4096 // self.shard_count - 1]],
                           "endpoints": {name: self.endpoint(k, i) for i, name in enumerate(names)},
                           "http": f"127.0.0.1:{self.base + 10 * k + 5}"})
        return {"mapEpoch": 1, "slotCount": 4096, "shards": shards}

    def write_configuration(self) -> None:
        configuration = dict(self.extra)
        configuration["cluster"] = self.shard_map
        self.config_path.write_text(json.dumps(configuration))

    def start(self) -> None:
        for _ in range(200):
            # Below the kernel's ephemeral range, as conftest.free_port_base explains.
            self.base = random.randint(10000, max(12000, min(59000, _ephemeral_start() - 10 * self.shard_count - 10)))
            if _range_is_free(self.base, 10 * self.shard_count):
                break
        self.write_configuration()
        for k in range(self.shard_count):
            self.start_shard(k)
        for index in range(1, self.worker_count + 1):
            self.spawn(f"worker-{index}", ["worker", "--id", f"sw-{index}"])
        for k in range(self.shard_count if self.worker_count > 0 else 0):
            self.wait(f"shard {k} to see {self.worker_count} workers", lambda k=k: self.workers_alive(k) >= self.worker_count)

    def start_shard(self, shard: int, name: str | None = None) -> None:
        store = self.directory / f"shard-{shard}"
        self.spawn(name or f"coordinator-{shard}", ["coordinator", "--shard", str(shard), "--store", str(store)])
        self.wait(f"shard {shard} to answer ping", lambda: self.pings(shard))

    def spawn(self, name: str, arguments: list[str]) -> subprocess.Popen:
        with open(self.directory / f"{name}.log", "ab") as log:
            process = subprocess.Popen([str(self.binary), *arguments, "--config", str(self.config_path)],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.directory)
        self.children[name] = process
        return process

    def pid(self, name: str) -> int:
        return self.children[name].pid

    def pings(self, shard: int) -> bool:
        reply = control_request(self.control(shard), {"op": "ping", "requestId": f"ready-{uuid.uuid4()}"}, curve=self.probe_curve)
        return bool(reply and reply.get("ok"))

    def workers_alive(self, shard: int) -> int:
        reply = control_request(self.control(shard), {"op": "workers"}, curve=self.probe_curve)
        if not (reply and reply.get("ok")):
            return 0
        return len([w for w in reply["result"]["workers"] if w.get("alive")])

    def wait(self, what: str, condition) -> None:
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        while not condition():
            for name, process in self.children.items():
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited with {process.returncode}\n{self.logs()}")
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out waiting for {what}\n{self.logs()}")
            time.sleep(0.05)  # pacing between polls; each condition waits on zmq poll

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        process = self.children.pop(name)
        os.kill(process.pid, sig)
        process.wait(timeout=STOP_GRACE_S)

    def run(self, *arguments: str, timeout_s: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), *arguments, "--config", str(self.config_path)],
                              capture_output=True, text=True, timeout=timeout_s, cwd=self.directory)

    def stop(self) -> None:
        for process in self.children.values():
            if process.poll() is None:
                try:
                    os.kill(process.pid, signal.SIGCONT)
                    os.kill(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.children.values():
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
        self.children.clear()

    def logs(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in sorted(self.directory.glob("*.log")))


@contextlib.contextmanager
def running_shards(binary: Path, directory: Path, shards: int = 3, workers: int = 1, extra: dict | None = None):
    """A started ShardedCluster, stopped by pid on the way out; its logs printed on a failure."""
    cluster = ShardedCluster(binary, directory, shards=shards, workers=workers, extra=extra)
    try:
        cluster.start()
        yield cluster
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()
