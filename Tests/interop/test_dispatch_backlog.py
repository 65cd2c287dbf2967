"""Dispatch batches bounded in bytes (issue 37, item 1), over real processes.

A worker key that announces a large capacity and never reads made the coordinator queue
batches for it until the dispatch high-water mark (64 batches of up to 256 firings each,
whatever their size), and every further such connection as much again; each lease that ran
out put the same firings in line for it again. Now a batch goes to a worker only while the
bytes handed to it since it last caught up are below `limits.dispatchQueueBytesPerConnection`,
and past `limits.dispatchQueueBytesTotal` over all worker connections the ones behind
longest are cut off. Every wait is a zmq poll or a polled condition with a deadline; children
are stopped by their own pid (conftest.py).
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone

import pytest
import zmq

from conftest import ChimeCluster, chime_binary
from test_adversarial import call, heartbeat, rss_bytes, unique, zmq_context  # noqa: F401
from test_unread_replies import metric

MiB = 2**20
FIRINGS = 400
BODY_BYTES = 30_000
SINKS = 3


def sink(context, cluster: ChimeCluster, name: str) -> zmq.Socket:
    """A worker's DEALER that announces a capacity of 1,000,000 and reads nothing (its own
    queue holds one message, its kernel buffer 64 KiB)."""
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVHWM, 1)
    sock.setsockopt(zmq.RCVBUF, 65_536)
    sock.setsockopt(zmq.ROUTING_ID, name.encode())
    sock.connect(f"tcp://127.0.0.1:{cluster.port_base + 1}")
    sock.send(heartbeat(name, capacity=1_000_000, pid=1))
    return sock


def schedule_due_soon(context, cluster: ChimeCluster, prefix: str, seconds: float) -> None:
    """Schedules the firings, all due `seconds` from now (so the RSS measured after this call
    holds the reminders themselves)."""
    due = datetime.now(timezone.utc) + timedelta(seconds=seconds)
    at = due.strftime("%Y-%m-%dT%H:%M:%S.") + f"{due.microsecond // 1000:03d}Z"
    for start in range(0, FIRINGS, 50):
        reminders = [{"id": f"{prefix}-{index:04d}", "recipient": "sinks", "content": {"body": "b" * BODY_BYTES},
                      "trigger": {"at": at}} for index in range(start, start + 50)]
        reply = call(context, cluster, {"op": "schedule", "requestId": unique("due"), "reminders": reminders}, timeout_s=60)
        assert reply["ok"] is True, reply


def run_sinks(limits: dict, tmp_path_factory, context) -> dict:
    """Three sinks are the only workers while 400 firings of 30 KB come due (within 3 s of
    the last request) and for 5 s after (leases of 1 s put them in line again each time);
    then they go and a real worker starts. Returns the figures: RSS growth from after the
    reminders were stored, batches held, connections cut."""
    configuration = {"store": {"fsync": "never"}, "limits": limits,
                     "coordinator": {"leaseSeconds": 1, "maxAttempts": 1_000, "maxBatchSize": 8}}
    cluster = ChimeCluster(chime_binary(), tmp_path_factory.mktemp("chime-cluster"), configuration, workers=0)
    sinks: list[zmq.Socket] = []
    try:
        cluster.start()
        names = [f"sink-{index}" for index in range(SINKS)]
        sinks = [sink(context, cluster, name) for name in names]

        def alive() -> set[str]:
            return {w["id"] for w in call(context, cluster, {"op": "workers"})["result"]["workers"] if w["alive"]}

        deadline = time.monotonic() + 30
        while not set(names) <= alive():
            assert time.monotonic() < deadline, "the sinks never became workers"
            time.sleep(0.05)  # pacing between polled checks
        schedule_due_soon(context, cluster, "due", seconds=3)
        before = rss_bytes(cluster.coordinator_pid)
        peak = before
        until = time.monotonic() + 8
        while time.monotonic() < until:
            for name, sock in zip(names, sinks):
                sock.send(heartbeat(name, capacity=1_000_000, pid=1))  # alive, never reading
            peak = max(peak, rss_bytes(cluster.coordinator_pid))
            cluster.check_children()
            time.sleep(0.1)  # pacing: heartbeats and RSS samples ten times a second
        figures = {
            "growth": peak - before,
            "held": metric(cluster, "chime_dispatch_batches_held_total"),
            "cut": metric(cluster, "chime_dispatch_connections_dropped_total"),
        }
        for sock in sinks:
            sock.close()
        sinks = []
        # Nothing is lost: a worker that reads delivers every firing.
        cluster.spawn("pw-1", ["worker", "--id", "pw-1"])
        deadline = time.monotonic() + 60
        while call(context, cluster, {"op": "stats"})["result"]["acknowledged"] < FIRINGS:
            assert time.monotonic() < deadline, "the firings the sinks held were not delivered by a worker that reads"
            cluster.check_children()
            time.sleep(0.1)  # pacing between polled checks
        stats = call(context, cluster, {"op": "stats"})["result"]
        dead = call(context, cluster, {"op": "deadLetters"})["result"]["firings"]
        assert stats["acknowledged"] == FIRINGS and dead == [], (stats, dead)
        print(f"{limits}: coordinator RSS +{figures['growth'] / MiB:.1f} MiB, {figures['held']:.0f} batches held, "
              f"{figures['cut']:.0f} connections cut; all {FIRINGS} delivered after")
        return figures
    finally:
        for sock in sinks:
            sock.close()
        cluster.stop()


def test_workers_that_never_read_hold_bounded_batch_bytes(tmp_path_factory, zmq_context):
    """Per connection 2 MiB, in total 4 MiB: three sinks that never read are held at their
    bound and the ones behind longest are cut; nothing is lost. Without the bounds the
    coordinator grew +45 MiB here (the opt-in measurement below), with them +9 MiB."""
    bounded = run_sinks({"dispatchQueueBytesPerConnection": 2 * MiB, "dispatchQueueBytesTotal": 4 * MiB},
                        tmp_path_factory, zmq_context)
    assert bounded["held"] >= 1, bounded
    assert bounded["cut"] >= 1, bounded
    assert bounded["growth"] < 20 * MiB, f"coordinator RSS grew {bounded['growth'] / MiB:.1f} MiB"


@pytest.mark.skipif(os.environ.get("CHIME_QUEUE_MEASURE") != "1", reason="opt-in measurement (CHIME_QUEUE_MEASURE=1)")
def test_measure_workers_that_never_read_without_the_bounds(tmp_path_factory, zmq_context):
    """The same three sinks with both bounds at 1 TiB: the figure the bounds are compared with."""
    unbounded = run_sinks({"dispatchQueueBytesPerConnection": 2**40, "dispatchQueueBytesTotal": 2**40},
                          tmp_path_factory, zmq_context)
    assert unbounded["held"] == 0 and unbounded["cut"] == 0, unbounded
