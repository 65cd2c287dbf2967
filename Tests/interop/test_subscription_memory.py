"""A subscriber that piles up subscriptions (issue 24, bullet 1; issue 37 item 6): the forwarder
cuts off that subscriber alone.

One pyzmq SUB sends 20,000 distinct subscriptions of 1,000 bytes (each under
`events.maxSubscriptionBytes`). The forwarder counts every connection's subscriptions
(`ZMQ_XPUB_VERBOSER`, the connection's `__fd`/`User-Id`/`Peer-Address` metadata); past
`events.maxSubscriptionBytesTotal` (128 KiB by default: 129 such topics; the count bound
`events.maxSubscriptionsPerPeer`, 1,000, is for short topics) it cuts off the peer holding the
most: a CURVE key is banned (the ZAP handler refuses it), and each of the peer's connections is
shut down on its own (`shutdown(2)` on its descriptor), which frees its part of libzmq's
subscription trie. Other subscribers, from the same address too, keep their connection and
every event.

What is asserted does not depend on the machine's load:
- the flooder is disconnected and counted (`chime_subscriber_connections_dropped_total`);
- a subscriber on the same address (keys off) or another key (keys on) is never disconnected and
  gets every event scheduled before, during and after the flood;
- the coordinator's memory comes back: RSS within +64 MiB of where it started once the trims ran;
- pings stay quick.
The peak RSS during the flood is printed and held under a guard (+512 MiB) that only an unbounded
flood passes: it depends on how far libzmq's I/O thread moves subscriptions into the trie before
the forwarder counts them (11–34 MiB on a quiet machine, up to +271 MiB in CI beside a build;
with the bound off +229 MiB, once +790 MiB and still rising, and the flooder never cut off).
"""

from __future__ import annotations

import itertools
import json
import os
import time
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone

import pytest
import zmq
from zmq.utils.monitor import recv_monitor_message

from conftest import _start_cluster, _stop_cluster, curve_client
from test_adversarial import assert_pings_quickly, call, rss_bytes, wait_until, zmq_context  # noqa: F401 (fixture)
from test_security import Keys, run_chime

MiB = 2**20
SUBSCRIPTIONS = 20_000
TOPIC_BYTES = 1000
# The peak's guard: an unbounded flood of 20,000 × 1,000 bytes takes about 1.5 GiB of trie. Under CPU
# load the forwarder counts later (libzmq has moved more subscriptions into its trie by then): 60–79
# MiB seen in CI, 132 MiB once, 271 MiB once (2026-12-07, with keys, beside a build).
PEAK_GUARD = 512 * MiB
# Where RSS must come back to once the flooder is gone (the trimmer gives freed pages back).
SETTLED_BOUND = 64 * MiB


def due_now(recipient: str) -> dict:
    at = datetime.now(timezone.utc) - timedelta(seconds=1)
    return {"op": "schedule", "reminder": {"id": f"probe-{uuid.uuid4().hex[:8]}", "recipient": recipient,
            "content": {"body": "probe"}, "trigger": {"at": at.strftime("%Y-%m-%dT%H:%M:%S.000Z")}}}


def receives_its_event(schedule, sub: zmq.Socket, timeout_s: float = 15.0) -> bool:
    """Schedules a reminder due now (with `schedule`) and waits for its fire event on `sub`;
    probes repeat, so a subscription still on its way upstream does not fail the check."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        request = due_now("legit")
        reply = schedule(request)
        assert reply["ok"] is True, reply
        watch_until = time.monotonic() + 1.0
        while (remaining := watch_until - time.monotonic()) > 0:
            if not sub.poll(int(remaining * 1000) + 1, zmq.POLLIN):
                break
            frames = sub.recv_multipart()
            if json.loads(frames[-1]).get("reminderId") == request["reminder"]["id"]:
                return True
    return False


def metric(cluster, name: str) -> float:
    with urllib.request.urlopen(f"{cluster.http_url}/metrics", timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} in /metrics")


_monitors = itertools.count()


def monitor_of(socket: zmq.Socket, events: int) -> zmq.Socket:
    """A PAIR receiving `socket`'s monitor events, on an inproc address of its own: pyzmq's
    default names it after the socket's file descriptor, which a socket closed just before
    (its monitor endpoint not yet released by libzmq's reaper) may still hold, and the bind
    then fails with "Address already in use"."""
    return socket.get_monitor_socket(events, addr=f"inproc://monitor-{os.getpid()}-{next(_monitors)}")


def flood(context: zmq.Context, cluster, curve=None, topic_bytes: int = TOPIC_BYTES) -> tuple[zmq.Socket, zmq.Socket]:
    """A SUB that sends SUBSCRIPTIONS distinct topics, and a monitor of its connection."""
    attacker = context.socket(zmq.SUB)
    attacker.setsockopt(zmq.LINGER, 0)
    # Unlimited: a SUB drops subscriptions past its pipe's high-water mark (1,000 by default).
    attacker.setsockopt(zmq.SNDHWM, 0)
    curve_client(attacker, curve)
    monitor = monitor_of(attacker, zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED)
    attacker.connect(cluster.events_endpoint)
    for index in range(SUBSCRIPTIONS):
        attacker.setsockopt(zmq.SUBSCRIBE, f"{index:08d}-".encode() + b"s" * (topic_bytes - 9))
    return attacker, monitor


def wait_for_disconnect(monitor: zmq.Socket, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while (remaining := deadline - time.monotonic()) > 0:
        if monitor.poll(int(remaining * 1000) + 1, zmq.POLLIN):
            if recv_monitor_message(monitor)["event"] == zmq.EVENT_DISCONNECTED:
                return
    raise AssertionError(f"the flooder was not disconnected within {timeout_s} s")


def peak_rss_until(cluster, idle: int, condition, timeout_s: float = 20.0) -> int:
    """The coordinator's largest RSS above `idle` sampled until `condition` holds."""
    peak = 0
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the flooder to be cut off"
        peak = max(peak, rss_bytes(cluster.coordinator_pid) - idle)
        time.sleep(0.02)  # pacing of the RSS samples; the condition is the wait
    return max(peak, rss_bytes(cluster.coordinator_pid) - idle)


def settled_rss(cluster, idle: int, timeout_s: float = 20.0) -> int:
    """The coordinator's RSS above `idle` once it is within SETTLED_BOUND (the trimmer runs 1 s
    after the last disconnect and again 5 s later), or the last sample at the deadline."""
    deadline = time.monotonic() + timeout_s
    while (above := rss_bytes(cluster.coordinator_pid) - idle) >= SETTLED_BOUND and time.monotonic() < deadline:
        time.sleep(0.1)  # pacing of the RSS samples; the bound is the wait
    return above


class Watched:
    """A SUB that subscribes to everything, with a monitor of its disconnects, which schedules
    reminders due now (with `schedule`) and checks that every one of them fires at it."""

    def __init__(self, context: zmq.Context, cluster, schedule, curve=None) -> None:
        self.schedule = schedule
        self.sub = context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        curve_client(self.sub, curve)
        self.monitor = monitor_of(self.sub, zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_SUCCEEDED)
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        self.sub.connect(cluster.events_endpoint)
        self.expected: set[str] = set()
        self.seen: set[str] = set()
        self.disconnects = 0
        assert receives_its_event(schedule, self.sub), "the subscriber was never live"

    def schedule_some(self, count: int) -> None:
        for _ in range(count):
            request = due_now("legit")
            reply = self.schedule(request)
            assert reply["ok"] is True, reply
            self.expected.add(request["reminder"]["id"])

    def read_monitor(self) -> None:
        while self.monitor.poll(0, zmq.POLLIN):
            if recv_monitor_message(self.monitor)["event"] == zmq.EVENT_DISCONNECTED:
                self.disconnects += 1

    def wait_for_all(self, timeout_s: float = 20.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.expected <= self.seen and (remaining := deadline - time.monotonic()) > 0:
            if self.sub.poll(int(remaining * 1000) + 1, zmq.POLLIN):
                self.seen.add(json.loads(self.sub.recv_multipart()[-1]).get("reminderId"))
        missing = self.expected - self.seen
        assert not missing, f"{len(missing)} of {len(self.expected)} fire events never reached the other subscriber"
        self.read_monitor()

    def close(self) -> None:
        self.sub.close()
        self.monitor.close()


def test_a_flooding_subscriber_is_cut_off_alone_and_memory_comes_back(cluster, zmq_context):
    schedule = lambda request: call(zmq_context, cluster, request)  # noqa: E731
    # From 127.0.0.1 like the flooder: without keys a connection, never an address, is cut off.
    legit = Watched(zmq_context, cluster, schedule)
    idle = rss_bytes(cluster.coordinator_pid)
    bans_before = metric(cluster, "chime_subscriber_bans_total")
    dropped_before = metric(cluster, "chime_subscriber_connections_dropped_total")

    legit.schedule_some(10)
    attacker, monitor = flood(zmq_context, cluster)
    legit.schedule_some(10)
    peak = peak_rss_until(cluster, idle, lambda: metric(cluster, "chime_subscriber_connections_dropped_total") > dropped_before)
    wait_for_disconnect(monitor)
    attacker.close()
    monitor.close()
    legit.schedule_some(10)
    legit.wait_for_all()
    assert legit.disconnects == 0, "the other subscriber was disconnected"
    # The flooder's SUB may have reconnected and flooded again before it closed: each time counts.
    bans = metric(cluster, "chime_subscriber_bans_total") - bans_before
    # A cut-off can find its connection already gone (the flooder's SUB reconnecting): then it
    # drops nothing.
    assert 1 <= metric(cluster, "chime_subscriber_connections_dropped_total") - dropped_before <= bans
    # Nothing is refused by address: another connection from 127.0.0.1 gets in at once.
    again, again_monitor = curve_sub(zmq_context, cluster, None)
    assert handshake(again_monitor) == zmq.EVENT_HANDSHAKE_SUCCEEDED
    again.close()
    again_monitor.close()
    assert_pings_quickly(zmq_context, cluster)
    settled = settled_rss(cluster, idle)
    print(f"coordinator RSS: +{peak / MiB:.1f} MiB at most while {SUBSCRIPTIONS} subscriptions of {TOPIC_BYTES} "
          f"bytes were sent, +{settled / MiB:.1f} MiB after; cut off {bans:.0f} time(s); other subscriber: "
          f"{len(legit.seen & legit.expected)} of {len(legit.expected)} events, {legit.disconnects} disconnects")
    assert settled < SETTLED_BOUND, f"+{settled / MiB:.1f} MiB after the flooder left"
    assert peak < PEAK_GUARD, f"+{peak / MiB:.1f} MiB"
    wait_until("the subscription count", lambda: metric(cluster, "chime_subscriptions") == 1)  # the other subscriber's ""
    legit.close()


@pytest.fixture(scope="module")
def secured_subscribers(tmp_path_factory, request):
    keys_directory = tmp_path_factory.mktemp("chime-keys") / "keys"
    made = run_chime("keys", "init", str(keys_directory))
    assert made.returncode == 0, made.stderr
    for name in ("flooder", "second", "long-topic"):
        added = run_chime("keys", "add", str(keys_directory), "subscriber", name)
        assert added.returncode == 0, added.stderr
    keys = Keys(keys_directory)

    def prepare(cluster) -> None:
        cluster.probe_curve = keys.curve("operator")

    cluster = _start_cluster(tmp_path_factory, {"security": {"keys": str(keys_directory)}}, prepare)
    request.node._chime_clusters = getattr(request.node, "_chime_clusters", []) + [cluster]
    yield cluster, keys
    _stop_cluster(cluster)


def curve_sub(context: zmq.Context, cluster, curve) -> tuple[zmq.Socket, zmq.Socket]:
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    curve_client(sub, curve)
    monitor = monitor_of(sub, zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(cluster.events_endpoint)
    return sub, monitor


def handshake(monitor: zmq.Socket, timeout_s: float = 10.0) -> int:
    """The first handshake outcome of a monitored socket: succeeded or failed (auth)."""
    assert monitor.poll(int(timeout_s * 1000), zmq.POLLIN), "no handshake outcome"
    return recv_monitor_message(monitor)["event"]


def test_with_keys_the_banned_key_is_refused_and_another_key_keeps_its_connection(secured_subscribers, zmq_context):
    cluster, keys = secured_subscribers
    operator = keys.curve("operator")

    def schedule(request):
        sock = zmq_context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        curve_client(sock, operator)
        try:
            sock.connect(cluster.control_endpoint)
            sock.send_multipart([b"", json.dumps(request).encode()])
            assert sock.poll(3000, zmq.POLLIN), "no reply"
            return json.loads(sock.recv_multipart()[-1])
        finally:
            sock.close()

    legit = Watched(zmq_context, cluster, schedule, keys.curve("subscriber"))
    idle = rss_bytes(cluster.coordinator_pid)

    legit.schedule_some(10)
    # CURVE adds about 33 bytes to each frame on the wire, which events.maxSubscriptionBytes
    # (1 KiB) counts: 900-byte topics stay under it.
    attacker, monitor = flood(zmq_context, cluster, keys.curve("flooder"), topic_bytes=900)
    legit.schedule_some(10)
    peak = peak_rss_until(cluster, idle, lambda: metric(cluster, "chime_subscriber_bans_total") >= 1)
    wait_for_disconnect(monitor)
    attacker.close()
    monitor.close()

    # The banned key's next connection fails the handshake (ZAP refuses it) ...
    again, again_monitor = curve_sub(zmq_context, cluster, keys.curve("flooder"))
    assert handshake(again_monitor) == zmq.EVENT_HANDSHAKE_FAILED_AUTH
    # ... while another subscriber key gets in, and the earlier subscriber never lost its connection.
    second, second_monitor = curve_sub(zmq_context, cluster, keys.curve("second"))
    assert handshake(second_monitor) == zmq.EVENT_HANDSHAKE_SUCCEEDED
    assert receives_its_event(schedule, second), "the second key gets no events"
    legit.schedule_some(10)
    legit.wait_for_all()
    assert legit.disconnects == 0, "the other subscriber was disconnected"
    settled = settled_rss(cluster, idle)
    print(f"with keys: coordinator RSS +{peak / MiB:.1f} MiB at most, +{settled / MiB:.1f} MiB after; "
          f"bans {metric(cluster, 'chime_subscriber_bans_total'):.0f}")
    assert settled < SETTLED_BOUND, f"+{settled / MiB:.1f} MiB after the flooder left"
    assert peak < PEAK_GUARD, f"+{peak / MiB:.1f} MiB"
    assert metric(cluster, "chime_subscriber_bans_total") == 1
    assert metric(cluster, "chime_subscriber_connections_dropped_total") == 1
    for sock in (again, again_monitor, second, second_monitor):
        sock.close()
    legit.close()


def subscribes_with_a_long_topic(context, cluster, schedule, topic_bytes: int, curve=None) -> bool:
    """A SUB whose first subscription is a topic of `topic_bytes` bytes, then everything: it
    gets events only if the long one was taken (a frame past the bound drops the connection,
    and each reconnection sends the long one first again)."""
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    curve_client(sub, curve)
    sub.setsockopt(zmq.SUBSCRIBE, b"t" * topic_bytes)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(cluster.events_endpoint)
    try:
        return receives_its_event(schedule, sub, timeout_s=4.0)
    finally:
        sub.close()


def test_the_topic_bound_is_what_the_subscriber_sends_with_keys_or_without(cluster, secured_subscribers, zmq_context):
    """events.maxSubscriptionBytes (1 KiB) is a flag byte and the topic as the subscriber sends
    it: a 1,023-byte topic is taken with keys and without (issue 37 item 6: with keys a 985-byte
    topic was dropped, ZMTP 3.1's SUBSCRIBE command and CURVE's box counted against it); one
    of 1,100 bytes drops the connection either way."""
    plain = lambda request: call(zmq_context, cluster, request)  # noqa: E731
    assert subscribes_with_a_long_topic(zmq_context, cluster, plain, 1023)
    assert not subscribes_with_a_long_topic(zmq_context, cluster, plain, 1100)
    secured, keys = secured_subscribers
    operator = keys.curve("operator")

    def schedule(request):
        sock = zmq_context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        curve_client(sock, operator)
        try:
            sock.connect(secured.control_endpoint)
            sock.send_multipart([b"", json.dumps(request).encode()])
            assert sock.poll(3000, zmq.POLLIN), "no reply"
            return json.loads(sock.recv_multipart()[-1])
        finally:
            sock.close()

    assert subscribes_with_a_long_topic(zmq_context, secured, schedule, 1023, curve=keys.curve("long-topic"))
    assert not subscribes_with_a_long_topic(zmq_context, secured, schedule, 1100, curve=keys.curve("long-topic"))
