"""The control protocol's JSON Schema (Docs/protocol/control.schema.json) against a real coordinator.

Every op has a valid request that the schema accepts and the coordinator answers; a set of
invalid requests is refused by the schema and by the coordinator alike; every reply the
coordinator sends here validates against the schema of the reply to its op. Waits are zmq
polls or polled conditions with deadlines; the cluster is conftest.py's.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
import zmq
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "Docs" / "protocol" / "control.schema.json"
REPLY_TIMEOUT_S = 10.0
PAST = "2020-01-01T00:00:00Z"
FUTURE = "2030-01-01T00:00:00Z"

SCHEMA = json.loads(SCHEMA_PATH.read_text())
REGISTRY = Registry().with_resource(SCHEMA["$id"], Resource.from_contents(SCHEMA))


def validator(pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"{SCHEMA['$id']}#{pointer}"}, registry=REGISTRY)


REQUEST = validator("/$defs/request")
ANY_REPLY = validator("/$defs/reply")
OPS = SCHEMA["$defs"]["request"]["properties"]["op"]["enum"]
REPLY_TO = {op: validator(f"/$defs/replyTo/$defs/{op}") for op in OPS}


def schema_errors(instance, checker: Draft202012Validator) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in checker.iter_errors(instance)]


def call(context: zmq.Context, endpoint: str, request: dict) -> dict:
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        sock.connect(endpoint)
        sock.send_multipart([b"", json.dumps(request).encode()])
        assert sock.poll(int(REPLY_TIMEOUT_S * 1000), zmq.POLLIN), f"no reply to {request}"
        return json.loads(sock.recv_multipart()[-1])
    finally:
        sock.close()


def checked_call(context: zmq.Context, cluster, request: dict) -> dict:
    """Sends `request` and checks its reply against the schema of the reply to its op."""
    reply = call(context, cluster.control_endpoint, request)
    checker = REPLY_TO.get(request.get("op"), ANY_REPLY)
    assert schema_errors(reply, checker) == [], (request, reply)
    assert schema_errors(reply, ANY_REPLY) == [], (request, reply)
    if isinstance(request.get("requestId"), str):
        assert reply.get("requestId") == request["requestId"], reply
    return reply


def wait_for(what: str, condition, deadline_s: float = 15.0):
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # pacing between polls; each poll is a request with its own deadline


@pytest.fixture
def zmq_context():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


def test_schema_is_valid_draft_2020_12():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # Every op of the coordinator has a request and a reply schema.
    assert sorted(OPS) == sorted([
        "schedule", "list", "cancel", "status", "workers", "stats", "ping", "deadLetters", "retry", "deleteDeadLetter", "snapshot",
        "compact", "store", "events", "register", "recipient", "badge", "ack", "enable", "disable", "delivered",
        "act", "job", "triggerNow", "backfill", "remaining", "locate", "setCalendar", "deleteCalendar", "calendars", "move",
        "destinations"])
    assert "rate_limited" in SCHEMA["$defs"]["error"]["properties"]["code"]["enum"]


def test_every_op_has_a_valid_request_the_coordinator_answers(cluster, zmq_context):
    tag = uuid.uuid4().hex[:8]
    alice = f"schema-{tag}"
    sent_ops: set[str] = set()

    def ok(request: dict) -> dict:
        request = {"requestId": f"{request['op']}-{uuid.uuid4().hex[:8]}", **request}
        assert schema_errors(request, REQUEST) == [], request
        reply = checked_call(zmq_context, cluster, request)
        assert reply["ok"] is True, (request, reply)
        sent_ops.add(request["op"])
        return reply["result"]

    ok({"op": "register", "recipient": {"id": alice, "settings": ["alert", "sound", "badge"], "zone": "Europe/Berlin",
                                        "categories": [{"identifier": "meeting", "actions": [
                                            {"identifier": "join", "title": "Join", "activationMode": "foreground"}]}]}})
    ok({"op": "recipient", "recipient": alice})
    hook = f"https://example.com/{tag}"
    added = ok({"op": "destinations", "recipient": alice, "add": [
        {"kind": "webhook", "url": hook, "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]},
        {"kind": "fcm", "token": f"fcm-{tag}"}]})
    assert [d["kind"] for d in added["recipient"]["destinations"]] == ["webhook", "fcm"]
    ok({"op": "destinations", "recipient": alice, "remove": [f"webhook:{hook}", f"fcm:fcm-{tag}"]})
    scheduled = ok({"op": "schedule", "reminders": [
        {"id": f"{tag}-now", "recipient": alice, "content": {"title": "t", "body": "b", "badge": "+1", "sound": "default",
                                                            "userInfo": {"n": 1, "s": "x", "list": [True, 1.5]}},
         "trigger": {"at": PAST}},
        {"id": f"{tag}-later", "recipient": alice, "content": {"body": "later", "category": "meeting"},
         "trigger": {"at": "2030-01-01T09:00:00", "timeZone": "Europe/Berlin", "repeat": {"unit": "day", "interval": 2},
                     "before": "10m", "misfire": "skip"},
         "nag": {"count": 2, "interval": 600}},
    ]})
    assert [item["id"] for item in scheduled["scheduled"]] == [f"{tag}-now", f"{tag}-later"]
    ok({"op": "schedule", "reminder": {"id": f"{tag}-rule", "recipient": alice,
                                       "trigger": {"at": "2030-01-31T09:00:00", "timeZone": "UTC",
                                                   "rrule": "FREQ=MONTHLY;BYMONTHDAY=31", "monthEnd": "clamp"}}})

    delivered = wait_for("the past one-shot to be delivered",
                         lambda: ok({"op": "delivered", "recipient": alice})["delivered"])
    firing_id = delivered[0]["firingId"]
    assert firing_id.startswith(f"{alice}/{tag}-now@"), "a firing id leads with its recipient"
    events = wait_for("its fire event to be settled",
                      lambda: ok({"op": "events", "after": 0, "recipient": alice, "limit": 10})["events"])
    assert events[0]["firingId"] == firing_id
    job = ok({"op": "act", "firingId": firing_id, "action": "dismiss"})
    ok({"op": "job", "jobId": job["job"]["jobId"]})
    ok({"op": "ack", "firingId": firing_id})
    ok({"op": "badge", "recipient": alice, "value": 3})
    ok({"op": "delivered", "recipient": alice, "remove": firing_id})
    ok({"op": "disable", "ids": [f"{tag}-later"], "note": "paused for the schema test"})
    ok({"op": "enable", "ids": [f"{tag}-later"]})
    fired = ok({"op": "triggerNow", "id": f"{tag}-later", "recipient": alice})
    assert fired["firingId"].startswith(f"{alice}/{tag}-later@")
    ok({"op": "backfill", "id": f"{tag}-rule", "recipient": alice, "from": PAST, "to": "2020-02-01T00:00:00Z"})
    ok({"op": "remaining", "id": f"{tag}-later", "recipient": alice, "count": 5})
    ok({"op": "setCalendar", "name": f"cal-{tag}", "calendar": {"dates": ["2030-01-01"], "weekdays": ["SU"],
                                                             "ranges": [{"from": "2030-02-01T00:00:00Z", "to": "2030-02-02T00:00:00Z"}]}})
    ok({"op": "schedule", "reminder": {"id": f"{tag}-sun", "recipient": alice,
                                       "trigger": {"sun": {"event": "sunset", "offset": -600, "latitude": 52.5, "longitude": 13.4},
                                                   "calendars": [f"cal-{tag}"], "spread": 30}}})
    ok({"op": "schedule", "reminder": {"id": f"{tag}-home", "recipient": alice,
                                       "trigger": {"region": {"latitude": 52.5, "longitude": 13.4, "radius": 100}}}})
    ok({"op": "locate", "recipient": alice, "latitude": 52.5, "longitude": 13.4, "accuracy": 15})
    ok({"op": "calendars"})
    ok({"op": "deleteCalendar", "name": f"cal-{tag}"})
    listing = ok({"op": "list", "recipient": alice, "all": True, "limit": 10})
    assert listing["total"] == 5, listing
    ok({"op": "list", "match": {"n": "1"}})
    for op in ["status", "workers", "stats", "ping", "deadLetters", "store", "snapshot", "compact"]:
        ok({"op": op})
    ok({"op": "cancel", "ids": [f"{tag}-later", f"{tag}-rule", f"{tag}-sun", f"{tag}-home"]})
    ok({"op": "cancel", "recipient": alice})

    # retry needs a dead letter: a well-formed request for an unknown one is refused with not_found.
    retry = {"op": "retry", "requestId": f"retry-{tag}", "firingId": f"{tag}-none@2020-01-01T00:00:00.000Z"}
    assert schema_errors(retry, REQUEST) == []
    reply = checked_call(zmq_context, cluster, retry)
    assert reply["ok"] is False and reply["error"]["code"] == "not_found", reply
    sent_ops.add("retry")
    delete = {"op": "deleteDeadLetter", "requestId": f"delete-{tag}", "firingId": f"{alice}/{tag}-none@2020-01-01T00:00:00.000Z"}
    assert schema_errors(delete, REQUEST) == []
    reply = checked_call(zmq_context, cluster, delete)
    assert reply["ok"] is False and reply["error"]["code"] == "not_found", reply
    sent_ops.add("deleteDeadLetter")
    # move (typed, issue 36): a status step; the ledger is empty on this one-shard cluster.
    status = ok({"op": "move", "step": "status", "countReminders": True})
    assert status["ledger"] == {"outgoing": [], "incoming": [], "ended": {}}, status
    assert sorted(sent_ops) == sorted(OPS)


INVALID_REQUESTS = [
    # move: the step's arguments are typed fields; earlier versions' base64 `body` is refused.
    ({"op": "move", "step": "status", "body": "e30="}, "unknown_field"),
    ({"op": "move", "step": "dance"}, "invalid_argument"),
    ({"op": "move", "step": "status", "moveId": "m1"}, "unknown_field"),
    ({"op": "move", "step": "pause", "moveId": "m1", "pauseMs": 0}, "invalid_argument"),
    ({"op": "move", "step": "begin", "move": {"id": "m1", "slots": [], "source": 0, "target": 1, "slotCount": 16}}, "invalid_argument"),
    ({"op": "nope"}, "unknown_op"),
    ({}, "invalid_argument"),
    ({"op": 5}, "invalid_argument"),
    ({"op": "ping", "extra": 1}, "unknown_field"),
    ({"op": "ping", "requestId": 7}, "invalid_argument"),
    ({"op": "schedule"}, "invalid_argument"),
    ({"op": "schedule", "reminders": []}, "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "contents": {}, "trigger": {"at": FUTURE}}}, "unknown_field"),
    ({"op": "schedule", "reminder": {"recipient": "a"}}, "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"at": FUTURE, "repeat": {"unit": "day", "interval": 0}}}},
     "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"at": FUTURE, "repeat": "second"}}}, "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"at": FUTURE, "monthEnd": "sometimes"}}},
     "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"at": FUTURE, "before": -5}}}, "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"at": FUTURE}, "nag": {"count": 0, "interval": 600}}},
     "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"at": FUTURE}, "content": {"userInfo": {"k": None}}}},
     "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"at": FUTURE}, "before": 60}}, "unknown_field"),
    ({"op": "cancel"}, "invalid_argument"),
    ({"op": "cancel", "all": False}, "invalid_argument"),
    ({"op": "list", "recipent": "a"}, "unknown_field"),
    ({"op": "list", "limit": 1.5}, "invalid_argument"),
    ({"op": "badge", "recipient": "a", "value": "3"}, "invalid_argument"),
    ({"op": "badge", "recipient": "a"}, "invalid_argument"),
    ({"op": "enable", "ids": []}, "invalid_argument"),
    ({"op": "disable"}, "invalid_argument"),
    ({"op": "retry", "firingId": "garbage"}, "invalid_argument"),
    ({"op": "deleteDeadLetter", "firingId": "garbage"}, "invalid_argument"),
    ({"op": "deleteDeadLetter"}, "invalid_argument"),
    ({"op": "ack", "firingId": "r@2026-12-24T08:00:00Z"}, "invalid_argument"),
    ({"op": "events", "after": -1}, "invalid_argument"),
    ({"op": "act", "firingId": "r@2026-12-24T08:00:00.000Z"}, "invalid_argument"),
    ({"op": "job"}, "invalid_argument"),
    ({"op": "recipient"}, "invalid_argument"),
    ({"op": "register", "recipient": {"id": "a", "settings": ["loud"]}}, "invalid_argument"),
    ({"op": "register", "recipient": {"id": "a", "colour": "red"}}, "unknown_field"),
    ({"op": "delivered", "recipient": "a", "remove": "nope"}, "invalid_argument"),
    ({"op": "status", "all": True}, "unknown_field"),
    ({"op": "triggerNow", "id": "r"}, "invalid_argument"),
    ({"op": "backfill", "id": "r", "recipient": "a", "from": "2026-12-02T00:00:00Z"}, "invalid_argument"),
    ({"op": "remaining", "id": "r", "recipient": "a", "count": -1}, "invalid_argument"),
    ({"op": "enable", "ids": ["r"], "note": "x"}, "unknown_field"),
    ({"op": "locate", "recipient": "a", "latitude": 91, "longitude": 0}, "invalid_argument"),
    ({"op": "locate", "recipient": "a", "latitude": 1}, "invalid_argument"),
    ({"op": "setCalendar", "name": "has space", "calendar": {}}, "invalid_argument"),
    ({"op": "setCalendar", "name": "c", "calendar": {"dates": ["2026-2-3"]}}, "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"region": {"latitude": 1, "longitude": 1, "radius": 0}}}},
     "invalid_argument"),
    ({"op": "schedule", "reminder": {"recipient": "a", "trigger": {"sun": {"event": "moonrise"}}}}, "invalid_argument"),
]


@pytest.mark.parametrize("request_body, code", INVALID_REQUESTS, ids=[json.dumps(r)[:60] for r, _ in INVALID_REQUESTS])
def test_invalid_requests_are_refused_by_the_schema_and_the_coordinator(cluster, zmq_context, request_body, code):
    assert schema_errors(request_body, REQUEST) != [], f"the schema accepts {request_body}"
    reply = checked_call(zmq_context, cluster, request_body)
    assert reply["ok"] is False, reply
    assert reply["error"]["code"] == code, reply
