"""A subscriber that piles up subscriptions (issue 24, bullet 1): the forwarder bounds them.

One pyzmq SUB sends 20,000 distinct subscriptions of 1,000 bytes (each under
`events.maxSubscriptionBytes`). The forwarder counts every connection's subscriptions
(`ZMQ_XPUB_VERBOSER`, the connection's `__fd`/`User-Id`/`Peer-Address` metadata); past
`events.maxSubscriptionBytesTotal` (128 KiB by default: 129 such topics; the count bound
`events.maxSubscriptionsPerPeer`, 1,000, is for short topics) it bans the peer holding the most
(its CURVE key, else its address) and closes and binds its XPUB again, which drops every
subscriber and frees libzmq's subscription tries. Checked here: the flooder is disconnected, the
coordinator's RSS stays within +192 MiB (measured 11–34 MiB on a quiet machine, 60–79 MiB in CI beside a
build and once 132 MiB, where libzmq's I/O thread moves more subscriptions into its trie before the forwarder counts them;
with the bound off: +229 MiB, once +790 MiB and still rising), a subscriber connected before gets events
again after the recycle, pings stay under 100 ms; with keys, the banned key is refused while
another subscriber key connects.

Without keys every local subscriber shares the address 127.0.0.1, so the ban would lock out
all of them: the legitimate subscriber here connects from 127.0.0.2 (a different peer).
"""

from __future__ import annotations

import json
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
# What it guards: without the bound one flooder took +229 to +790 MiB and was never banned (the wait
# for the ban times out first). Under CPU load the forwarder counts later (libzmq has moved more
# subscriptions into its trie by then): 60–79 MiB seen in CI, once 132 MiB (2026-12-06, with keys).
RSS_BOUND = 192 * MiB


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


def flood(context: zmq.Context, cluster, curve=None, topic_bytes: int = TOPIC_BYTES) -> tuple[zmq.Socket, zmq.Socket]:
    """A SUB that sends SUBSCRIPTIONS distinct topics, and a monitor of its connection."""
    attacker = context.socket(zmq.SUB)
    attacker.setsockopt(zmq.LINGER, 0)
    # Unlimited: a SUB drops subscriptions past its pipe's high-water mark (1,000 by default).
    attacker.setsockopt(zmq.SNDHWM, 0)
    curve_client(attacker, curve)
    monitor = attacker.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED)
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
        assert time.monotonic() < deadline, "timed out waiting for the recycle"
        peak = max(peak, rss_bytes(cluster.coordinator_pid) - idle)
        time.sleep(0.02)  # pacing of the RSS samples; the condition is the wait
    return max(peak, rss_bytes(cluster.coordinator_pid) - idle)


def test_a_flooding_subscriber_is_cut_off_and_memory_stays_bounded(cluster, zmq_context):
    schedule = lambda request: call(zmq_context, cluster, request)  # noqa: E731
    legit = zmq_context.socket(zmq.SUB)
    legit.setsockopt(zmq.LINGER, 0)
    legit.setsockopt(zmq.SUBSCRIBE, b"")
    # Another loopback address: the ban is per address without keys.
    legit.connect(cluster.events_endpoint.replace("tcp://", "tcp://127.0.0.2:0;"))
    assert receives_its_event(schedule, legit), "the subscriber was never live"
    idle = rss_bytes(cluster.coordinator_pid)
    bans_before = metric(cluster, "chime_subscriber_bans_total")

    attacker, monitor = flood(zmq_context, cluster)
    peak = peak_rss_until(cluster, idle, lambda: metric(cluster, "chime_subscriber_bans_total") > bans_before)
    wait_for_disconnect(monitor)
    attacker.close()
    assert metric(cluster, "chime_subscriber_bans_total") == bans_before + 1
    # The banned address is refused by the coordinator's ZAP handler (no keys: NULL mechanism).
    again, again_monitor = curve_sub(zmq_context, cluster, None)
    assert handshake(again_monitor) == zmq.EVENT_HANDSHAKE_FAILED_AUTH
    again.close()
    again_monitor.close()
    assert_pings_quickly(zmq_context, cluster)
    assert receives_its_event(schedule, legit), "the earlier subscriber did not come back after the recycle"
    peak = max(peak, rss_bytes(cluster.coordinator_pid) - idle)
    print(f"coordinator RSS: +{peak / MiB:.1f} MiB at most while {SUBSCRIPTIONS} subscriptions of {TOPIC_BYTES} "
          f"bytes were sent; subscriptions held now {metric(cluster, 'chime_subscriptions'):.0f}")
    assert peak < RSS_BOUND, f"+{peak / MiB:.1f} MiB"
    assert metric(cluster, "chime_subscriptions") == 1  # the legitimate subscriber's ""
    assert_pings_quickly(zmq_context, cluster)
    legit.close()
    monitor.close()


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
    monitor = sub.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(cluster.events_endpoint)
    return sub, monitor


def handshake(monitor: zmq.Socket, timeout_s: float = 10.0) -> int:
    """The first handshake outcome of a monitored socket: succeeded or failed (auth)."""
    assert monitor.poll(int(timeout_s * 1000), zmq.POLLIN), "no handshake outcome"
    return recv_monitor_message(monitor)["event"]


def test_with_keys_the_banned_key_is_refused_and_another_key_connects(secured_subscribers, zmq_context):
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

    legit, legit_monitor = curve_sub(zmq_context, cluster, keys.curve("subscriber"))
    assert handshake(legit_monitor) == zmq.EVENT_HANDSHAKE_SUCCEEDED
    assert receives_its_event(schedule, legit), "the subscriber was never live"
    idle = rss_bytes(cluster.coordinator_pid)

    # CURVE adds about 33 bytes to each frame on the wire, which events.maxSubscriptionBytes
    # (1 KiB) counts: 900-byte topics stay under it.
    attacker, monitor = flood(zmq_context, cluster, keys.curve("flooder"), topic_bytes=900)
    peak = peak_rss_until(cluster, idle, lambda: metric(cluster, "chime_subscriber_bans_total") >= 1)
    wait_for_disconnect(monitor)
    attacker.close()
    monitor.close()

    # The banned key's next connection fails the handshake (ZAP refuses it) ...
    again, again_monitor = curve_sub(zmq_context, cluster, keys.curve("flooder"))
    assert handshake(again_monitor) == zmq.EVENT_HANDSHAKE_FAILED_AUTH
    # ... while another subscriber key gets in, and the earlier subscriber is back.
    second, second_monitor = curve_sub(zmq_context, cluster, keys.curve("second"))
    assert handshake(second_monitor) == zmq.EVENT_HANDSHAKE_SUCCEEDED
    assert receives_its_event(schedule, legit), "the earlier subscriber did not come back after the recycle"
    assert receives_its_event(schedule, second), "the second key gets no events"
    peak = max(peak, rss_bytes(cluster.coordinator_pid) - idle)
    print(f"with keys: coordinator RSS +{peak / MiB:.1f} MiB at most; bans {metric(cluster, 'chime_subscriber_bans_total'):.0f}")
    assert peak < RSS_BOUND, f"+{peak / MiB:.1f} MiB"
    assert metric(cluster, "chime_subscriber_bans_total") == 1
    for sock in (again, again_monitor, second, second_monitor, legit, legit_monitor):
        sock.close()


def subscribes_with_a_long_topic(context, cluster, schedule, topic_bytes: int, curve=None, source: str = "") -> bool:
    """A SUB whose first subscription is a topic of `topic_bytes` bytes, then everything: it
    gets events only if the long one was taken (a frame past the bound drops the connection,
    and each reconnection sends the long one first again)."""
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    curve_client(sub, curve)
    sub.setsockopt(zmq.SUBSCRIBE, b"t" * topic_bytes)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(cluster.events_endpoint.replace("tcp://", f"tcp://{source}:0;") if source else cluster.events_endpoint)
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
    # Another loopback address: an earlier test here bans 127.0.0.1 for a while.
    assert subscribes_with_a_long_topic(zmq_context, cluster, plain, 1023, source="127.0.0.3")
    assert not subscribes_with_a_long_topic(zmq_context, cluster, plain, 1100, source="127.0.0.4")
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
