"""`ClusterClient.schedule_bulk` (Python): chunks under the coordinator's per-request limit
(issue 24: one request is a bounded slice of the loop), against in-process fake shards."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import ChimeError  # noqa: E402
from test_cluster_client import recipient_on, rig  # noqa: E402,F401 (rig is a fixture)


def test_schedule_bulk_sends_chunks_of_at_most_chunk_reminders(rig):
    def answer(shard, req):
        return {"ok": True, "result": {"scheduled": [{"id": r["id"], "replaced": False, "state": "pending"}
                                                     for r in req["reminders"]]}}

    client, shards, shard_map = rig("bulk", answer, count=1)
    recipient = recipient_on(0, shard_map)
    reminders = [{"id": f"r{n}", "recipient": recipient} for n in range(5)]
    reply = client.schedule_bulk(reminders, chunk=2, request_id="bulk-1")
    assert [item["id"] for item in reply["result"]["scheduled"]] == [f"r{n}" for n in range(5)]
    sent = [req for req in shards[0].requests if req["op"] == "schedule"]
    assert [(req["requestId"], len(req["reminders"])) for req in sent] == [("bulk-1-0", 2), ("bulk-1-1", 2), ("bulk-1-2", 1)]


def test_a_refused_chunk_names_the_reminder_in_the_callers_list(rig):
    def refusing(code, field, at):
        def answer(shard, req):
            if req["reminders"][0]["id"] == at:
                return {"ok": False, "error": {"code": code, "message": "no", "field": field}}
            return {"ok": True, "result": {"scheduled": [{"id": r["id"]} for r in req["reminders"]]}}
        return answer

    for tag, code, field, expected in [("quota", "quota_exceeded", "reminders", "reminders"),
                                       ("invalid", "invalid_argument", "reminders[1].trigger", "reminders[5].trigger")]:
        client, shards, shard_map = rig(f"bulk-{tag}", refusing(code, field, at="r4"), count=1)
        recipient = recipient_on(0, shard_map)
        with pytest.raises(ChimeError) as refused:
            client.schedule_bulk([{"id": f"r{n}", "recipient": recipient} for n in range(8)], chunk=2, request_id=tag)
        assert refused.value.error == {"code": code, "message": "no", "field": expected, "scheduledBefore": 4}
        # The chunks before it were sent (and stay scheduled); none after it.
        assert [req["requestId"] for req in shards[0].requests if req["op"] == "schedule"] == [f"{tag}-0", f"{tag}-1", f"{tag}-2"]
