"""A recipient's delivered list in pages (issue 37, item 1: every reply bounded in bytes),
against a real cluster (conftest.py's): 300 delivered firings with 400-byte titles (about
200 KB of list) come back in replies of at most `limits.maxReplyBytes` (64 KiB) that a pyzmq
client follows by `nextCursor` to exactly the 300 firings, newest first; a `limit` pages
sooner; another listing's cursor and a `limit` of 0 are refused `invalid_argument`; and
`chime delivered --json` prints the whole list in one reply.

Waits are polled conditions with deadlines; the cluster is stopped by its pids.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import ClusterClient  # noqa: E402
from conftest import chime_binary, delivered_ids, wait_for  # noqa: E402

MAX_REPLY_BYTES = 64 * 1024
COUNT = 300


def raw_request(endpoint: str, request: dict) -> tuple[int, dict]:
    """One request on a fresh DEALER: the reply's size in bytes and its JSON."""
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(endpoint)
        sock.send_multipart([b"", json.dumps(request).encode()])
        assert sock.poll(10_000, zmq.POLLIN), f"no reply to {request['op']}"
        frame = sock.recv_multipart()[-1]
        return len(frame), json.loads(frame)
    finally:
        sock.close()


def test_a_long_delivered_list_comes_in_bounded_pages(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"pages-{uuid.uuid4().hex[:8]}"
    due = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 1)) + ".000Z"
    reminders = [{"id": f"r{n:03d}", "recipient": recipient, "trigger": {"at": due},
                  "content": {"title": f"{n:03d}" + "t" * 397, "body": "b"}} for n in range(COUNT)]
    assert client.schedule(reminders)["ok"]
    wait_for(f"{COUNT} firings on the delivered list", lambda: len(delivered_ids(client, recipient)) == COUNT, 60)

    pages, sizes, request = [], [], {"op": "delivered", "recipient": recipient}
    while True:
        size, reply = raw_request(cluster.control_endpoint, request)
        assert reply["ok"], reply
        sizes.append(size)
        pages.append(reply["result"]["delivered"])
        cursor = reply["result"].get("nextCursor")
        if not cursor:
            break
        assert len(pages) < 50
        request = {"op": "delivered", "recipient": recipient, "cursor": cursor}
    ids = [item["reminderId"] for page in pages for item in page]
    assert sorted(ids) == [f"r{n:03d}" for n in range(COUNT)], "each firing exactly once"
    assert len(set(ids)) == COUNT
    assert max(sizes) <= MAX_REPLY_BYTES, sizes
    assert len(pages) >= 3, f"about 200 KB of list cannot fit in {len(pages)} replies of 64 KiB"
    fired = [item["firedAt"] for page in pages for item in page]
    assert fired == sorted(fired, reverse=True), "newest first across pages"

    size, limited = raw_request(cluster.control_endpoint, {"op": "delivered", "recipient": recipient, "limit": 7})
    assert [item["firingId"] for item in limited["result"]["delivered"]] == delivered_ids(client, recipient)[:7]
    assert limited["result"]["nextCursor"]

    _, zero = raw_request(cluster.control_endpoint, {"op": "delivered", "recipient": recipient, "limit": 0})
    assert (zero["ok"], zero["error"]["code"], zero["error"]["field"]) == (False, "invalid_argument", "limit")
    list_cursor = base64.urlsafe_b64encode(b"L" + b"r001").rstrip(b"=").decode()  # a `list` cursor after r001
    _, foreign = raw_request(cluster.control_endpoint, {"op": "delivered", "recipient": recipient, "cursor": list_cursor})
    assert (foreign["ok"], foreign["error"]["code"], foreign["error"]["field"]) == (False, "invalid_argument", "cursor")

    out = subprocess.run([str(chime_binary()), "delivered", recipient, *cluster.cluster_arguments, "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    whole = json.loads(out.stdout)["result"]
    assert [item["firingId"] for item in whole["delivered"]] == delivered_ids(client, recipient)
    assert len(whole["delivered"]) == COUNT and "nextCursor" not in whole
    text = subprocess.run([str(chime_binary()), "delivered", recipient, *cluster.cluster_arguments],
                          capture_output=True, text=True, timeout=60)
    assert text.returncode == 0 and text.stdout.startswith(f"{recipient}: badge 0, {COUNT} delivered\n"), text.stdout[:200]
