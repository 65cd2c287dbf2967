"""Unread replies bounded in bytes (issue 37, item 1), over real processes.

A hostile-peer probe found that a client sending 200 `list` requests (`limit 10000`, 5 MB
each) and never reading took the coordinator from 53 MB to 1,024 MB: the control ROUTER
queued 1,000 replies per connection whatever their size. Pages are now bounded by
`limits.maxReplyBytes` (64 KiB) and the ROUTER queues `limits.controlQueueBytesPerConnection`
(32 MiB) of them for one connection; past it the connection's requests are dropped until it
reads, then refused `rate_limited` once. Every wait is a zmq poll or a polled condition with
a deadline; children are stopped by their own pid (conftest.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import zmq

from test_adversarial import call, encode, rss_bytes, unique, zmq_context  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))
from chime_client import ClusterClient  # noqa: E402

MiB = 2**20
REMINDERS = 2_000
BODY_BYTES = 2_000
FLOOD = 800


def assert_answers_pings(context, cluster, budget_s: float = 1.0) -> float:
    """Another connection's pings are answered during a flood: the fastest of three (after a
    first that also connects) within `budget_s`. Each `list` of the flood costs the loop
    milliseconds in a debug build, and the machine's other builds take cores, so the bound is
    about being served at all while the flooder is not, not about release latency (the
    figures are in the Limits page). Returns the fastest round trip, in seconds."""
    cluster.check_children()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(cluster.control_endpoint)
        round_trips = []
        for _ in range(4):
            started = time.monotonic()
            sock.send_multipart([b"", encode({"op": "ping", "requestId": unique("ping")})])
            assert sock.poll(10_000, zmq.POLLIN), "no pong within 10 s"
            reply = json.loads(sock.recv_multipart()[-1])
            assert reply["ok"] is True, reply
            round_trips.append(time.monotonic() - started)
        fastest = min(round_trips[1:])
        assert fastest < budget_s, f"pings took {[round(t * 1000, 1) for t in round_trips[1:]]} ms"
        return fastest
    finally:
        sock.close()


def metric(cluster, name: str) -> float:
    with urllib.request.urlopen(f"{cluster.http_url}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{}"):
                return float(line.split()[-1])
    raise AssertionError(f"no {name} in /metrics")


def schedule_bulk(context, cluster, count: int, body_bytes: int, prefix: str) -> None:
    for start in range(0, count, 500):
        reminders = [{"id": f"{prefix}-{index:05d}", "recipient": "alice", "content": {"body": "b" * body_bytes},
                      "trigger": {"at": "2031-01-01T00:00:00Z"}} for index in range(start, min(start + 500, count))]
        reply = call(context, cluster, {"op": "schedule", "requestId": unique("bulk"), "reminders": reminders}, timeout_s=60)
        assert reply["ok"] is True, reply


def peak_rss_while(cluster, waiting, failure: str, peak: int, timeout_s: float = 120) -> int:
    """Samples the coordinator's RSS while `waiting()` holds (at most `timeout_s`, else fails
    with `failure`); returns the highest of `peak` and every sample."""
    deadline = time.monotonic() + timeout_s
    while waiting():
        peak = max(peak, rss_bytes(cluster.coordinator_pid))
        assert time.monotonic() < deadline, failure
        time.sleep(0.05)  # pacing between polled checks; each has its own deadline
    return max(peak, rss_bytes(cluster.coordinator_pid))


def flooding_dealer(context, cluster, count: int, prefix: str):
    """A DEALER that sends `count` page requests and reads nothing (its own queue holds one
    message, its kernel buffer little)."""
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVHWM, 1)
    sock.setsockopt(zmq.RCVBUF, 65_536)
    sock.setsockopt(zmq.SNDHWM, count + 10)
    sock.connect(cluster.control_endpoint)
    for index in range(count):
        sock.send_multipart([b"", encode({"op": "list", "all": True, "limit": 10_000, "requestId": f"{prefix}-{index}"})])
    return sock


def test_a_client_that_never_reads_its_list_replies_holds_bounded_memory(make_cluster, zmq_context):
    cluster = make_cluster({"store": {"fsync": "never"}})
    schedule_bulk(zmq_context, cluster, REMINDERS, BODY_BYTES, "big")
    before = rss_bytes(cluster.coordinator_pid)

    flooder = flooding_dealer(zmq_context, cluster, FLOOD, "flood")

    # Another client is answered meanwhile, and the coordinator's memory stays bounded.
    assert_answers_pings(zmq_context, cluster)
    peak = peak_rss_while(cluster, lambda: metric(cluster, "chime_control_requests_dropped_total") < 1,
                          "the flooding connection was never cut off", before)
    assert_answers_pings(zmq_context, cluster)
    growth = peak - before
    print(f"coordinator RSS {before / MiB:.0f} MiB before, peak {peak / MiB:.0f} MiB (+{growth / MiB:.0f} MiB)")
    assert growth < 100 * MiB, f"coordinator RSS grew {growth / MiB:.0f} MiB under the unread flood"
    assert metric(cluster, "chime_control_replies_dropped_total") >= 1
    assert metric(cluster, "chime_control_connections_not_reading") == 1

    # The flooder reads what was queued: every page within 64 KiB, each one cut with a cursor.
    flooder.setsockopt(zmq.RCVHWM, 1000)
    received = []
    while flooder.poll(3000, zmq.POLLIN):
        frames = flooder.recv_multipart()
        assert len(frames[-1]) <= 65_536, len(frames[-1])
        received.append(json.loads(frames[-1]))
    assert 0 < len(received) < FLOOD, len(received)
    for reply in received:
        assert reply["requestId"].startswith("flood-"), reply
        if reply["ok"]:
            assert 0 < len(reply["result"]["reminders"]) < REMINDERS and "nextCursor" in reply["result"]
            assert "total" not in reply["result"]
        else:
            # A queued request met once the flooder read again: refused, which resumes it.
            assert reply["error"]["code"] == "rate_limited" and reply["error"]["retryAfterMs"] == 100, reply

    # Its next request is served, or, when nothing was sent it since it read, refused
    # rate_limited with its requestId once; the one after is served.
    flooder.send_multipart([b"", encode({"op": "ping", "requestId": "after-1"})])
    assert flooder.poll(10_000, zmq.POLLIN)
    first = json.loads(flooder.recv_multipart()[-1])
    assert first["requestId"] == "after-1", first
    if not first["ok"]:
        assert first["error"]["code"] == "rate_limited" and first["error"]["retryAfterMs"] == 100, first
        assert "did not read its replies" in first["error"]["message"], first
    flooder.send_multipart([b"", encode({"op": "ping", "requestId": "after-2"})])
    assert flooder.poll(10_000, zmq.POLLIN)
    served = json.loads(flooder.recv_multipart()[-1])
    assert served["ok"] is True and served["requestId"] == "after-2", served
    assert metric(cluster, "chime_control_connections_not_reading") == 0
    flooder.close()


def test_clients_follow_pages_cut_short_by_the_byte_bound(make_cluster, zmq_context):
    cluster = make_cluster({"store": {"fsync": "never"}, "limits": {"maxReplyBytes": 8192}})
    schedule_bulk(zmq_context, cluster, 40, 1_000, "page")
    expected = [f"page-{index:05d}" for index in range(40)]

    # One request: a page cut at the bound, with its cursor and without a total.
    reply = call(zmq_context, cluster, {"op": "list", "limit": 100})
    assert [r["reminder"]["id"] for r in reply["result"]["reminders"]] == expected[:6]
    assert "total" not in reply["result"] and "nextCursor" in reply["result"]

    # The CLI, one page (filled from short replies) and every page.
    listed = subprocess.run([str(cluster.binary), "list", "--limit", "100", "--json", *cluster.cluster_arguments],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert listed.returncode == 0, listed.stderr
    document = json.loads(listed.stdout)
    assert [r["reminder"]["id"] for r in document["result"]["reminders"]] == expected
    every = subprocess.run([str(cluster.binary), "list", "--all-pages", "--json", *cluster.cluster_arguments],
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert every.returncode == 0, every.stderr
    assert [json.loads(line)["reminder"]["id"] for line in every.stdout.splitlines()] == expected

    # The Python cluster client, following nextCursor.
    client = ClusterClient([cluster.control_endpoint], context=zmq_context, timeout_s=10)
    ids: list[str] = []
    cursor = None
    for _ in range(40):
        page, partial = client.list(limit=100, cursor=cursor)
        assert partial is None, partial
        ids += [r["reminder"]["id"] for r in page["reminders"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert ids == expected


def test_a_connection_past_its_pending_bytes_is_refused_rate_limited_and_others_are_served(make_cluster, zmq_context):
    cluster = make_cluster({"store": {"fsync": "never"}, "limits": {"controlPendingBytesPerConnection": 65_536}})
    flooder = zmq_context.socket(zmq.DEALER)
    flooder.setsockopt(zmq.LINGER, 0)
    flooder.setsockopt(zmq.SNDHWM, 10_000)
    flooder.connect(cluster.control_endpoint)
    sent = [f"p-{index}-" + "x" * 1000 for index in range(3000)]
    for request_id in sent:
        flooder.send_multipart([b"", encode({"op": "ping", "requestId": request_id})])
    # Another connection's pings are served meanwhile.
    assert_answers_pings(zmq_context, cluster)
    answered: dict[str, dict] = {}
    while len(answered) < len(sent) and flooder.poll(10_000, zmq.POLLIN):
        reply = json.loads(flooder.recv_multipart()[-1])
        answered[reply["requestId"]] = reply
    assert set(answered) == set(sent), f"{len(sent) - len(answered)} requests unanswered"
    refused = [reply for reply in answered.values() if not reply["ok"]]
    assert refused, "no request was refused past limits.controlPendingBytesPerConnection"
    for reply in refused:
        assert reply["error"]["code"] == "rate_limited" and reply["error"]["retryAfterMs"] == 100, reply
        assert "limits.controlPendingBytesPerConnection" in reply["error"]["message"], reply
    assert all(reply["result"] for reply in answered.values() if reply["ok"])
    assert metric(cluster, "chime_control_requests_dropped_total") >= len(refused)
    assert metric(cluster, "chime_control_pending_bytes") == 0
    flooder.close()


FLOODERS = 10
FLOOD_EACH = 300
TOTAL_BYTES = 16 * MiB
# 40 reminders of 2,000 bytes fill a 64 KiB page, and a page of them is quick to make.
PAGE_REMINDERS = 40


def test_many_connections_that_never_read_are_bounded_in_total(make_cluster, zmq_context):
    """One connection's unread replies are bounded by its queue (32 MiB), but every further
    connection could hold as much again: `limits.controlQueueBytesTotal` bounds them together.
    Ten connections that never read ask for 300 pages of 64 KiB each (188 MiB in all, 19 MiB each,
    under the per-connection bound); past 16 MiB the coordinator cuts the ones behind longest
    (shutdown of their TCP connection), and a client that reads is served throughout.
    Without the total bound the coordinator grew +165 MiB (debug build); with it +19 to +25."""
    cluster = make_cluster({"store": {"fsync": "never"}, "limits": {"controlQueueBytesTotal": TOTAL_BYTES}})
    schedule_bulk(zmq_context, cluster, PAGE_REMINDERS, BODY_BYTES, "big")
    before = rss_bytes(cluster.coordinator_pid)
    flooders = [flooding_dealer(zmq_context, cluster, FLOOD_EACH, f"flood{n}") for n in range(FLOODERS)]
    try:
        # A reader's own pages are all served meanwhile, none cut off.
        reader = zmq_context.socket(zmq.DEALER)
        reader.setsockopt(zmq.LINGER, 0)
        reader.connect(cluster.control_endpoint)
        for index in range(20):
            reader.send_multipart([b"", encode({"op": "list", "all": True, "limit": 10_000, "requestId": f"reader-{index}"})])
            assert reader.poll(30_000, zmq.POLLIN), f"the reading client's page {index} got no reply within 30 s"
            page = json.loads(reader.recv_multipart()[-1])
            assert page["ok"] is True and page["requestId"] == f"reader-{index}", page
        reader.close()
        assert_answers_pings(zmq_context, cluster)

        peak = peak_rss_while(cluster, lambda: metric(cluster, "chime_control_connections_dropped_total") < 1,
                              "no flooding connection was cut off", before)
        # Every flooder's requests have been read once the pending bytes drain; the backlog
        # left is within the bound at every sample.
        peak = peak_rss_while(cluster, lambda: metric(cluster, "chime_control_pending_bytes") > 0,
                              "the flooders' requests were never all read", peak)
        backlog = metric(cluster, "chime_control_reply_backlog_bytes")
        dropped = metric(cluster, "chime_control_connections_dropped_total")
        growth = peak - before
        print(f"coordinator RSS {before / MiB:.0f} MiB before, peak {peak / MiB:.0f} MiB (+{growth / MiB:.0f} MiB); "
              f"{dropped:.0f} connections cut, backlog {backlog / MiB:.1f} MiB")
        assert backlog <= TOTAL_BYTES, backlog
        # Unbounded, the ten held +165 MiB; the bound keeps 16 MiB of replies.
        assert growth < 64 * MiB, f"coordinator RSS grew {growth / MiB:.0f} MiB under ten unread floods"
        assert_answers_pings(zmq_context, cluster)
    finally:
        for sock in flooders:
            sock.close()
