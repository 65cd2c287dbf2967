"""A worker key that claims a live worker's routing id (issue 37): bounded, and the worker keeps firing.

With keys, a second worker key connects to the dispatch ROUTER again and again with
`ZMQ_ROUTING_ID` set to `pw-1` and sends full-size messages it never expects an answer to.
libzmq's ROUTER without `ZMQ_ROUTER_HANDOVER` parks such a connection as "anonymous" and
never reads it again: its queued messages (64 × 64 KiB) and its pipes outlive the connection
(the socket side waits for a delimiter it never reads), about 4 MiB per connection for good.
Each case asserts that every firing reaches a real worker during the attack and that the
coordinator's RSS, read from /proc once the rogue has left and a last batch of firings came
through (the barrier), grew less than the stated bound.
"""

from __future__ import annotations

import json
import time

import pytest
import zmq

from test_adversarial import rss_bytes, zmq_context  # noqa: F401 (zmq_context is a fixture)
from test_security import (  # noqa: F401 (secured is a fixture)
    WORKER_IDS, admit_worker_key, due_now, endpoint, make_socket, ok, receive_event, secured, subscribe_until_live,
    unique,
)

MiB = 2**20
ROUNDS = 2
CONNECTIONS_PER_ROUND = 16
# The dispatch ROUTER's receive mark (64 messages) of frames just under
# `limits.maxWorkerMessageBytes` (64 KiB): what one parked connection can hold.
MESSAGES_PER_CONNECTION = 64
MESSAGE_BYTES = 60 * 1024
FIRINGS_PER_ROUND = 20
# Before the fix: 2 × 16 connections × 64 × 60 KiB = 120 MiB stayed after the rogue left.
RSS_BOUND = 32 * MiB
FIRING_DEADLINE_S = 10.0
# How long the rogue's context may take to hand its queued messages to the kernel.
ROGUE_LINGER_MS = 3000


def claiming_heartbeat(worker: str) -> bytes:
    """A heartbeat that names `worker`, padded with an unknown field to `MESSAGE_BYTES`."""
    body = {"worker": worker, "host": "rogue", "pid": 4242, "capacity": 1000, "delivered": 0, "acks": [], "pad": ""}
    body["pad"] = "x" * (MESSAGE_BYTES - len(json.dumps(body)))
    return json.dumps(body).encode()


def fire_and_collect(cluster, keys, sub: zmq.Socket, recipient: str, count: int) -> dict[str, str]:
    """Schedules `count` reminders due now; reminder id → publisher of each fire event."""
    ids = {unique("r") for _ in range(count)}
    for reminder_id in ids:
        ok(cluster, keys.curve("operator"), due_now(recipient, reminder_id))
    publishers: dict[str, str] = {}
    deadline = time.monotonic() + FIRING_DEADLINE_S
    while not ids <= publishers.keys():
        message = receive_event(sub, max(0.0, deadline - time.monotonic()))
        assert message is not None, f"{len(ids - publishers.keys())} of {count} firings missing after {FIRING_DEADLINE_S} s"
        publishers[message[1]["reminderId"]] = message[1]["publisher"]
    return {reminder_id: publishers[reminder_id] for reminder_id in ids}


def test_a_worker_key_claiming_a_live_workers_routing_id_leaves_no_memory_behind(secured, zmq_context):
    cluster, keys = secured
    rogue_curve = admit_worker_key(cluster, keys, zmq_context)
    recipient = unique("claimed")
    sub = make_socket(zmq_context, zmq.SUB, keys.curve("subscriber"))
    sub.setsockopt(zmq.SUBSCRIBE, f"fire.{recipient}".encode())
    sub.connect(endpoint(cluster, "events"))
    try:
        subscribe_until_live(cluster, keys, sub, recipient)
        before = rss_bytes(cluster.coordinator_pid)
        peak = before
        claim = claiming_heartbeat("pw-1")
        for _ in range(ROUNDS):
            rogue_context = zmq.Context()
            # Held until the context is destroyed: a socket collected earlier closes with
            # linger 0 and drops what it had not sent yet.
            rogues: list[zmq.Socket] = []
            try:
                for _ in range(CONNECTIONS_PER_ROUND):
                    rogue = make_socket(rogue_context, zmq.DEALER, rogue_curve)
                    rogue.setsockopt(zmq.LINGER, ROGUE_LINGER_MS)
                    rogue.setsockopt(zmq.ROUTING_ID, b"pw-1")
                    rogue.connect(endpoint(cluster, "dispatch"))
                    for _ in range(MESSAGES_PER_CONNECTION):
                        rogue.send(claim, zmq.NOBLOCK)
                    rogues.append(rogue)
                publishers = fire_and_collect(cluster, keys, sub, recipient, FIRINGS_PER_ROUND)
                assert set(publishers.values()) <= WORKER_IDS, publishers
                peak = max(peak, rss_bytes(cluster.coordinator_pid))
            finally:
                # Closes every rogue socket once its queue reached the kernel (or after the linger).
                rogue_context.destroy(linger=ROGUE_LINGER_MS)
        # The barrier: firings after the rogue left come through as well.
        publishers = fire_and_collect(cluster, keys, sub, recipient, FIRINGS_PER_ROUND)
        assert set(publishers.values()) <= WORKER_IDS, publishers
        after = rss_bytes(cluster.coordinator_pid)
        print(f"coordinator RSS: before {before / MiB:.1f} MiB, peak {peak / MiB:.1f} MiB, after {after / MiB:.1f} MiB")
        assert after - before < RSS_BOUND, (
            f"RSS grew {(after - before) / MiB:.1f} MiB after the rogue left (peak +{(peak - before) / MiB:.1f} MiB)")
        assert peak - before < RSS_BOUND, f"RSS peaked at +{(peak - before) / MiB:.1f} MiB during the claims"
    finally:
        sub.close()
