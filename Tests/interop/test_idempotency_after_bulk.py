"""A cancel retried with its requestId after a bulk import gets its first reply and cancels nothing new.

Each `schedule --file` chunk reply (~200 KB per 2,000 reminders) is remembered for retries;
in one shared 16 MiB budget ~80 of them had evicted every small remembered reply, so a
`cancel` retried after a 200,000-reminder import ran again and cancelled the import. Replies
over 64 KiB now have their own budget.

The CI form imports 4,000 reminders (two chunks, a few seconds); `CHIME_IDEMPOTENCY_COUNT=200000`
runs the issue's size, whose chunk replies overflow the large replies' 16 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

from conftest import control_request

COUNT = int(os.environ.get("CHIME_IDEMPOTENCY_COUNT", "4000"))


def call(cluster, request: dict, timeout_s: float = 30.0) -> bytes:
    """The reply to `request` (its requestId kept across resends), as parsed JSON."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reply = control_request(cluster.control_endpoint, request, timeout_s=2.0)
        if reply is not None:
            return reply
    raise AssertionError(f"no reply to {request['op']} within {timeout_s} s")


def pending(cluster) -> int:
    return call(cluster, {"op": "status"})["result"]["reminders"].get("pending", 0)


def test_a_cancel_retried_after_a_bulk_import_is_not_applied_again(make_cluster, tmp_path):
    cluster = make_cluster({"store": {"fsync": "never"}})
    first = call(cluster, {"op": "schedule", "requestId": "seed", "reminders": [
        {"id": f"old-{index}", "recipient": "alice", "trigger": {"at": "2031-01-01T00:00:00Z"}} for index in range(3)
    ]})
    assert first["ok"], first
    cancel = {"op": "cancel", "requestId": "cancel-alice", "recipient": "alice"}
    cancelled = call(cluster, cancel)
    assert cancelled["result"]["cancelled"] == ["old-0", "old-1", "old-2"]

    reminders = tmp_path / "bulk.ndjson"
    with reminders.open("w") as out:
        for index in range(COUNT):
            out.write(json.dumps({"id": f"bulk-{index:06d}", "recipient": "alice", "content": {"title": f"n{index}"},
                                  "trigger": {"at": "2031-01-01T00:00:00Z"}}) + "\n")
    started = time.monotonic()
    imported = subprocess.run(
        [str(cluster.binary), "schedule", "--file", str(reminders), "--json", *cluster.cluster_arguments],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert imported.stderr == ""
    assert json.loads(imported.stdout)["result"]["scheduled"] == COUNT
    print(f"schedule --file of {COUNT} reminders in {seconds:.1f} s")
    assert pending(cluster) == COUNT

    retried = call(cluster, cancel)
    assert retried == cancelled, "the remembered reply, not a second cancel"
    assert pending(cluster) == COUNT
