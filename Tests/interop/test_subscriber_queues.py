"""Subscriber queues bounded in bytes (`events.subscriberQueueBytes`), over real processes.

Five pyzmq subscribers that never read sit on the coordinator's event XPUB while 100,000
events flow through its forwarder (published into the events-ingest XSUB by this test);
the coordinator's RSS (VmRSS of /proc/<pid>/status) may grow only by a bounded amount, and a
subscriber that reads gets every event meanwhile. CHIME_QUEUE_MEASURE=1 also runs the
measurement at the default budget and at the budget that matches the old per-message
high-water mark (250,000 messages) and prints the figures.
"""

from __future__ import annotations

import json
import os
import time

import pytest
import zmq

from test_unread_replies import metric

EVENTS = 100_000
STUCK = 5
# Events published before waiting for the reading subscriber to catch up: fewer than its
# queue holds in the forwarder (910 events at 1 MiB, below), so a reader whose process is
# slow to be scheduled on a loaded machine still loses nothing (with 1,000 it lost events
# at load 10).
PACE = 400
DEADLINE_S = 60.0


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def event_body(seq: int, padding: int = 0) -> bytes:
    # About the size of a real fire event with a short title and body (~330 bytes), plus
    # `padding` bytes of body.
    return json.dumps({
        "type": "fire", "seq": seq, "publisher": "queue-test", "firingId": f"q-{seq}@2026-12-24T08:00:00.000Z",
        "reminderId": f"q-{seq}", "recipient": "stuck", "dueAt": "2026-12-24T08:00:00.000Z",
        "firedAt": "2026-12-24T08:00:00.001Z", "attempt": 1, "late": False, "title": "Stand-up",
        "body": "Room 4, bring the quarterly figures" + "." * padding, "sound": "default", "badge": 1,
        "userInfo": {"order": seq}}, separators=(",", ":")).encode()


def subscribed(context: zmq.Context, endpoint: str, receive_high_water_mark: int, receive_buffer: int = -1,
               topic: bytes = b"fire.") -> zmq.Socket:
    sock = context.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVHWM, receive_high_water_mark)
    sock.setsockopt(zmq.RCVBUF, receive_buffer)
    sock.setsockopt(zmq.SUBSCRIBE, topic)
    sock.connect(endpoint)
    return sock


def run_stuck_subscribers(cluster, stuck_count: int = STUCK, events: int = EVENTS, padding: int = 0, stuck_buffer: int = -1,
                          distinct: bool = False) -> dict:
    """Publishes `events` events past `stuck_count` subscribers that never read and one that
    reads; `stuck_buffer` is the stuck ones' kernel receive buffer (-1: the system's, which
    grows to megabytes and takes events off the forwarder's queue). With `distinct`, stuck
    subscriber i subscribes to `fire.s<i>.` and the events go to each in turn: libzmq shares
    one event among the queues it is in, so only distinct events add up."""
    context = zmq.Context()
    try:
        ingest = f"tcp://127.0.0.1:{cluster.port_base + 4}"
        stuck = [subscribed(context, cluster.events_endpoint, 1, stuck_buffer, f"fire.s{i}.".encode() if distinct else b"fire.")
                 for i in range(stuck_count)]
        topics = [f"fire.s{i}.x".encode() for i in range(stuck_count)] if distinct else [b"fire.stuck"]
        reader = subscribed(context, cluster.events_endpoint, 0)
        publisher = context.socket(zmq.PUB)
        publisher.setsockopt(zmq.LINGER, 0)
        publisher.setsockopt(zmq.SNDHWM, 0)
        publisher.connect(ingest)
        # Wait until the subscriptions have reached the publisher through the forwarder:
        # probe events until the reader gets one.
        deadline = time.monotonic() + DEADLINE_S
        while not reader.poll(50, zmq.POLLIN):
            assert time.monotonic() < deadline, "the subscriptions never reached the publisher"
            publisher.send_multipart([b"fire.probe", b"{}"])
        while reader.poll(200, zmq.POLLIN):
            reader.recv_multipart()
        pid = cluster.coordinator_pid
        before = rss_bytes(pid)
        received = 0
        started = time.monotonic()
        peak = before
        for first in range(0, events, PACE):
            for seq in range(first, first + PACE):
                publisher.send_multipart([topics[seq % len(topics)], event_body(seq, padding)])
            while received < first + PACE:
                assert reader.poll(int(DEADLINE_S * 1000), zmq.POLLIN), f"the reader got {received} of {first + PACE}"
                topic, body = reader.recv_multipart()
                assert json.loads(body)["seq"] == received, "the reader lost or reordered an event"
                received += 1
            peak = max(peak, rss_bytes(pid))
        elapsed = time.monotonic() - started
        after = rss_bytes(pid)
        for sock in [*stuck, reader, publisher]:
            sock.close()
        return {"before": before, "after": after, "growth": after - before, "peakGrowth": max(peak, after) - before,
                "received": received, "seconds": elapsed}
    finally:
        context.destroy(linger=0)


def test_stuck_subscribers_hold_bounded_memory_and_do_not_slow_a_reader(make_cluster):
    # 1 MiB per subscriber and events of at most 1 KiB: a high-water mark of 910 events.
    cluster = make_cluster({"events": {"subscriberQueueBytes": 1 << 20, "maxEventBytes": 1024}})
    figures = run_stuck_subscribers(cluster)
    print(f"subscriberQueueBytes=1MiB: {figures}")
    assert figures["received"] == EVENTS
    # Unbounded, five stuck subscribers held about 76 MB here; bounded, each holds at most
    # 910 events of at most 1 KiB (1 MiB with their frames), and the rest is the allocator's slack.
    assert figures["growth"] < 16 * 1024 * 1024, figures


@pytest.mark.skipif(os.environ.get("CHIME_QUEUE_MEASURE") != "1", reason="opt-in measurement (CHIME_QUEUE_MEASURE=1)")
@pytest.mark.parametrize("budget", [250_000 * 512, 16 << 20, 1 << 20], ids=["old-250k-messages", "default-16MiB", "1MiB"])
def test_measure_stuck_subscriber_memory(make_cluster, budget):
    # Events of at most 1 KiB, as above: at the default 8 KiB the 1 MiB budget queues 126
    # events, fewer than the reader's pace, and the reader lost events.
    cluster = make_cluster({"events": {"subscriberQueueBytes": budget, "maxEventBytes": 1024}})
    figures = run_stuck_subscribers(cluster)
    print(f"\nsubscriberQueueBytes={budget}: RSS before {figures['before'] / 1e6:.1f} MB, after {figures['after'] / 1e6:.1f} MB, "
          f"growth {figures['growth'] / 1e6:.1f} MB; reader got {figures['received']} in {figures['seconds']:.2f} s")
    assert figures["received"] == EVENTS


MiB = 1 << 20


def test_subscribers_that_fall_behind_are_bounded_in_total(make_cluster):
    """Each stuck subscriber is bounded by its own queue (16 MiB here: 14,563 events), but
    every further one could hold as much again: `events.subscriberQueueBytesTotal` bounds
    them together. Ten subscribers that never read, each on its own topic, sit beside one that
    reads every topic while 60,000 events of about 900 bytes pass; past 16 MiB estimated, the
    forwarder cuts the ones behind longest (they reconnect and fall behind again), and the
    reader gets every event in order. Debug build: +33 MiB without the total (and as much
    again in the kernel's send buffers), +3.3 to +3.8 MiB with it."""
    cluster = make_cluster({"events": {"subscriberQueueBytes": 16 * MiB, "maxEventBytes": 1024,
                                       "subscriberQueueBytesTotal": 16 * MiB}})
    figures = run_stuck_subscribers(cluster, stuck_count=10, events=60_000, padding=560, stuck_buffer=65_536, distinct=True)
    dropped = metric(cluster, "chime_slow_subscribers_dropped_total")
    estimate = metric(cluster, "chime_subscriber_backlog_bytes")
    print(f"subscriberQueueBytesTotal=16MiB: {figures}; {dropped:.0f} cut, estimate {estimate / MiB:.1f} MiB")
    assert figures["received"] == 60_000
    assert dropped >= 1
    assert estimate <= 16 * MiB
    # Unbounded, the ten held +33 MiB (CHIME_QUEUE_MEASURE=1 below); the estimate counts
    # every event for each subscriber behind, so the bound cuts early.
    assert figures["peakGrowth"] < 20 * MiB, figures


@pytest.mark.skipif(os.environ.get("CHIME_QUEUE_MEASURE") != "1", reason="opt-in measurement (CHIME_QUEUE_MEASURE=1)")
@pytest.mark.parametrize("total", [1 << 42, 16 * MiB], ids=["no-total", "16MiB"])
def test_measure_subscribers_behind_in_total(make_cluster, total):
    cluster = make_cluster({"events": {"subscriberQueueBytes": 16 * MiB, "maxEventBytes": 1024,
                                       "subscriberQueueBytesTotal": total}})
    figures = run_stuck_subscribers(cluster, stuck_count=10, events=60_000, padding=560, stuck_buffer=65_536, distinct=True)
    print(f"\nsubscriberQueueBytesTotal={total}: peak growth {figures['peakGrowth'] / MiB:.1f} MiB, after "
          f"{figures['growth'] / MiB:.1f} MiB; {metric(cluster, 'chime_slow_subscribers_dropped_total'):.0f} cut; "
          f"reader got {figures['received']} in {figures['seconds']:.2f} s")
    assert figures["received"] == 60_000
