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


def event_body(seq: int) -> bytes:
    # About the size of a real fire event with a short title and body (~330 bytes).
    return json.dumps({
        "type": "fire", "seq": seq, "publisher": "queue-test", "firingId": f"q-{seq}@2026-12-24T08:00:00.000Z",
        "reminderId": f"q-{seq}", "recipient": "stuck", "dueAt": "2026-12-24T08:00:00.000Z",
        "firedAt": "2026-12-24T08:00:00.001Z", "attempt": 1, "late": False, "title": "Stand-up",
        "body": "Room 4, bring the quarterly figures", "sound": "default", "badge": 1,
        "userInfo": {"order": seq}}, separators=(",", ":")).encode()


def subscribed(context: zmq.Context, endpoint: str, receive_high_water_mark: int) -> zmq.Socket:
    sock = context.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVHWM, receive_high_water_mark)
    sock.setsockopt(zmq.SUBSCRIBE, b"fire.")
    sock.connect(endpoint)
    return sock


def run_stuck_subscribers(cluster) -> dict:
    """Publishes EVENTS events past STUCK subscribers that never read and one that reads."""
    context = zmq.Context()
    try:
        ingest = f"tcp://127.0.0.1:{cluster.port_base + 4}"
        stuck = [subscribed(context, cluster.events_endpoint, 1) for _ in range(STUCK)]
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
        for first in range(0, EVENTS, PACE):
            for seq in range(first, first + PACE):
                publisher.send_multipart([b"fire.stuck", event_body(seq)])
            while received < first + PACE:
                assert reader.poll(int(DEADLINE_S * 1000), zmq.POLLIN), f"the reader got {received} of {first + PACE}"
                topic, body = reader.recv_multipart()
                assert json.loads(body)["seq"] == received, "the reader lost or reordered an event"
                received += 1
        elapsed = time.monotonic() - started
        after = rss_bytes(pid)
        for sock in [*stuck, reader, publisher]:
            sock.close()
        return {"before": before, "after": after, "growth": after - before, "received": received, "seconds": elapsed}
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
    cluster = make_cluster({"events": {"subscriberQueueBytes": budget}})
    figures = run_stuck_subscribers(cluster)
    print(f"\nsubscriberQueueBytes={budget}: RSS before {figures['before'] / 1e6:.1f} MB, after {figures['after'] / 1e6:.1f} MB, "
          f"growth {figures['growth'] / 1e6:.1f} MB; reader got {figures['received']} in {figures['seconds']:.2f} s")
    assert figures["received"] == EVENTS
