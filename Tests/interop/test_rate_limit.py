"""Per-peer request rate limiting on the control socket (`control.rateLimit`), over real processes.

The limit is turned on for loopback through the configuration (by default it applies to
non-loopback peers only). Children are conftest.py's, stopped by their own pid.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest
import zmq

RATE = 2.0  # requests per second
BURST = 10
# Workers ask a shard for the map every cluster.mapRefreshSeconds over control, from the same
# loopback address as the test: an hour keeps their requests out of the counted burst.
LIMITED = {
    "control": {"rateLimit": {"requestsPerSecond": RATE, "burst": BURST, "applyToLoopback": True}},
    "cluster": {"mapRefreshSeconds": 3600},
}
REPLY_TIMEOUT_S = 10.0


@pytest.fixture
def zmq_context():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


def wait_for_a_full_bucket() -> None:
    # The startup probes took tokens. An idle bucket is full after burst / rate seconds by the
    # limiter's arithmetic (not a guess about another process): wait that long plus slack.
    time.sleep(BURST / RATE + 0.5)


def burst_of_pings(context: zmq.Context, endpoint: str, count: int) -> list[dict]:
    """Sends `count` pings at once on one DEALER and returns the replies, in order."""
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(endpoint)
        # Connect first, so the burst leaves in one go rather than as the handshake allows.
        sock.send_multipart([b"", json.dumps({"op": "status"}).encode()])
        assert sock.poll(int(REPLY_TIMEOUT_S * 1000), zmq.POLLIN)
        sock.recv_multipart()
        for index in range(count):
            sock.send_multipart([b"", json.dumps({"op": "ping", "requestId": f"p{index}"}).encode()])
        replies = []
        for _ in range(count):
            assert sock.poll(int(REPLY_TIMEOUT_S * 1000), zmq.POLLIN), f"{len(replies)} replies of {count}"
            replies.append(json.loads(sock.recv_multipart()[-1]))
        return replies
    finally:
        sock.close()


def test_a_burst_beyond_the_limit_gets_rate_limited_and_ping_answers_after(make_cluster, zmq_context):
    cluster = make_cluster(LIMITED)
    wait_for_a_full_bucket()
    replies = burst_of_pings(zmq_context, cluster.control_endpoint, 30)
    accepted = [r for r in replies if r["ok"]]
    refused = [r for r in replies if not r["ok"]]
    # The status request that opened the connection took one token of the burst.
    assert len(accepted) == BURST - 1, replies
    # Replies keep the order of their requests on a connection: the first BURST - 1 pings went through.
    assert [r["ok"] for r in replies] == [True] * (BURST - 1) + [False] * (30 - (BURST - 1)), replies
    assert len(refused) == 30 - (BURST - 1), replies
    for reply in refused:
        assert reply["error"]["code"] == "rate_limited", reply
        assert "requestId" not in reply, reply  # refused before the request is read
        assert 1 <= reply["error"]["retryAfterMs"] <= 1000 / RATE, reply
    assert [r["requestId"] for r in accepted] == [f"p{i}" for i in range(BURST - 1)]

    # After the hinted wait, one request goes through again.
    time.sleep(refused[-1]["error"]["retryAfterMs"] / 1000)
    sock = zmq_context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(cluster.control_endpoint)
        sock.send_multipart([b"", json.dumps({"op": "ping", "requestId": "after"}).encode()])
        assert sock.poll(int(REPLY_TIMEOUT_S * 1000), zmq.POLLIN)
        reply = json.loads(sock.recv_multipart()[-1])
    finally:
        sock.close()
    assert reply["ok"] is True and reply["requestId"] == "after", reply


def test_the_cli_waits_out_rate_limited_and_retries(make_cluster, zmq_context):
    cluster = make_cluster(LIMITED)
    wait_for_a_full_bucket()
    replies = burst_of_pings(zmq_context, cluster.control_endpoint, BURST + 5)
    # Replies keep the order of their requests on a connection.
    assert not replies[-1]["ok"] and replies[-1]["error"]["code"] == "rate_limited", replies
    started = time.monotonic()
    result = subprocess.run(
        [str(cluster.binary), "ctl", "ping", "--json", *cluster.cluster_arguments],
        capture_output=True, text=True, timeout=30)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["ok"] is True
    # It had to wait for a token: about 1 / rate seconds.
    assert elapsed >= 0.2, elapsed


def test_loopback_is_not_limited_by_default(make_cluster, zmq_context):
    cluster = make_cluster({"control": {"rateLimit": {"requestsPerSecond": RATE, "burst": BURST}}})
    replies = burst_of_pings(zmq_context, cluster.control_endpoint, 50)
    assert all(r["ok"] for r in replies), [r for r in replies if not r["ok"]][:1]
