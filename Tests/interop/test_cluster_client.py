"""The Python cluster client (clients/python/chime_client) against fake pyzmq shards.

The slot function is pinned against the Swift values; routing, the schedule split, the
list merge with a cluster cursor, cancel across shards with one requestId, `wrong_shard`
from an old map epoch, and `partial` for a silent shard run against in-process ROUTER
stubs on inproc:// (each on a thread of its own, stopped and joined by the test).
"""

from __future__ import annotations

import base64
import json
import random
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import ChimeError, ClusterClient, ClusterSubscriber, CursorError, crc32c, merge, shard_of, slot_of  # noqa: E402
from chime_client import cursor as cursors  # noqa: E402


@pytest.mark.parametrize("recipient, slot", [("alice", 654), ("bob", 1748), ("123456789", 643), ("", 0)])
def test_slot_matches_the_swift_values(recipient, slot):
    assert slot_of(recipient) == slot


def test_crc32c_check_value():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    assert slot_of("alice", slot_count=1) == 0


def even_map(tag: str, count: int, epoch: int = 1) -> dict:
    shards = []
    for shard in range(count):
        shards.append({"id": shard, "slots": [[shard * 4096 // count, (shard + 1) * 4096 // count - 1]],
                       "endpoints": {"control": f"inproc://py-shard-{tag}-{shard}", "events": "inproc://none"}})
    return {"mapEpoch": epoch, "slotCount": 4096, "shards": shards}


def recipient_on(shard: int, shard_map: dict) -> str:
    return next(f"r{n}" for n in range(100_000) if shard_of(shard_map, f"r{n}") == shard)


class FakeShard:
    """A ROUTER on inproc answering each request with `answer(shard, request)`; None is silence."""

    def __init__(self, context: zmq.Context, endpoint: str, shard: int, answer):
        self.shard, self.answer, self.requests = shard, answer, []
        self.stopping = threading.Event()
        self.socket = context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.bind(endpoint)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            while not self.stopping.is_set():
                if not self.socket.poll(20, zmq.POLLIN):
                    continue
                identity, _, body = self.socket.recv_multipart()
                request = json.loads(body)
                self.requests.append(request)
                reply = self.answer(self.shard, request)
                if reply is not None:
                    reply.setdefault("requestId", request.get("requestId"))
                    self.socket.send_multipart([identity, b"", json.dumps(reply).encode()])
        finally:
            self.socket.close()

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=2)
        assert not self.thread.is_alive()


@pytest.fixture
def rig(request):
    """rig(tag, answer, count=3, silent=()) → (client, shards, map); everything stopped after."""
    context = zmq.Context()
    made = []

    def build(tag, answer, count=3, silent=(), timeout_s=0.3):
        shard_map = even_map(tag, count)

        def serve(shard, req):
            if shard in silent:
                return None
            if req["op"] == "map":
                return {"ok": True, "result": shard_map}
            return answer(shard, req)

        shards = [FakeShard(context, s["endpoints"]["control"], s["id"], serve) for s in shard_map["shards"]]
        made.extend(shards)
        client = ClusterClient([shard_map["shards"][0]["endpoints"]["control"]], context=context,
                               timeout_s=timeout_s, retries=0)
        return client, shards, shard_map

    yield build
    for shard in made:
        shard.stop()
    context.term()


def listing(reminder_id: str, recipient: str) -> dict:
    return {"reminder": {"id": reminder_id, "recipient": recipient}, "state": "pending", "deliveredCount": 0}


def list_page(held: list, req: dict) -> dict:
    keys = sorted(((r + "\0" + p).encode(), (r, p)) for r, p in held)
    after = cursors.shard_cursor_key(req["cursor"], cursors.LIST) if "cursor" in req else None
    remaining = [entry for entry in keys if after is None or entry[0] > after]
    page = remaining[:req.get("limit", 250)]
    result = {"reminders": [listing(*entry[1]) for entry in page]}
    if len(remaining) > len(page):
        result["nextCursor"] = cursors.shard_cursor(cursors.LIST, page[-1][0])
    return {"ok": True, "result": result}


def test_schedule_is_split_by_shard_and_merged_in_order(rig):
    def answer(shard, req):
        return {"ok": True, "result": {"scheduled": [
            {"id": f"{r['id']}@{shard}", "replaced": False, "state": "pending"} for r in req["reminders"]]}}

    client, shards, shard_map = rig("split", answer)
    on = [recipient_on(s, shard_map) for s in range(3)]
    reminders = [{"id": "a", "recipient": on[1]}, {"id": "b", "recipient": on[0]},
                 {"id": "c", "recipient": on[2]}, {"id": "d", "recipient": on[1]}]
    reply = client.schedule(reminders, request_id="py-split-1")
    assert [item["id"] for item in reply["result"]["scheduled"]] == ["a@1", "b@0", "c@2", "d@1"]
    for shard in shards:
        sent = [req for req in shard.requests if req["op"] == "schedule"]
        assert [req["requestId"] for req in sent] == ["py-split-1"]
    assert [r["id"] for r in next(req for req in shards[1].requests if req["op"] == "schedule")["reminders"]] == ["a", "d"]


def test_list_returns_every_reminder_once_in_key_order(rig):
    shard_map = even_map("list", 3)
    on = [recipient_on(s, shard_map) for s in range(3)]
    held = {0: [("a0", on[0]), ("g0", on[0])], 1: [("c1", on[1]), ("k1", on[1])],
            2: [(f"{x}2", on[2]) for x in "acegk"]}
    client, _, _ = rig("list", lambda shard, req: list_page(held[shard], req))
    listed, cursor, pages = [], None, 0
    while True:
        page, partial = client.list(limit=2, cursor=cursor)
        assert partial is None
        assert len(page["reminders"]) <= 2
        listed += [entry["reminder"]["id"] for entry in page["reminders"]]
        pages += 1
        cursor = page.get("nextCursor")
        if cursor is None or pages > 20:
            break
    assert listed == ["a0", "a2", "c1", "c2", "e2", "g0", "g2", "k1", "k2"]
    assert pages == 5


def test_a_silent_shard_makes_the_list_partial_naming_it(rig):
    shard_map = even_map("silent", 3)
    on = [recipient_on(s, shard_map) for s in range(3)]
    client, _, _ = rig("silent", lambda shard, req: list_page([(f"x{shard}", on[shard])], req), silent=(2,))
    page, partial = client.list(limit=10)
    assert [entry["reminder"]["id"] for entry in page["reminders"]] == ["x0", "x1"]
    assert partial["code"] == "partial"
    assert partial["shard"] == 2
    assert partial["shards"] == [2]
    assert "shard 2" in partial["message"]
    _, positions = cursors.decode(page["nextCursor"], cursors.LIST)
    assert positions == {0: True, 1: True, 2: None}


def test_a_partial_result_names_every_shard_that_did_not_answer(rig):
    shard_map = even_map("silent2", 3)
    on = [recipient_on(s, shard_map) for s in range(3)]
    client, _, _ = rig("silent2", lambda shard, req: list_page([(f"x{shard}", on[shard])], req), silent=(1, 2))
    page, partial = client.list(limit=10)
    assert [entry["reminder"]["id"] for entry in page["reminders"]] == ["x0"]
    assert partial["code"] == "partial"
    assert partial["shards"] == [1, 2]
    assert partial["shard"] == 1
    assert partial["message"].startswith("2 of 3 shard(s) did not answer: shard 1 (")


def test_cancel_all_goes_to_every_shard_with_one_request_id(rig):
    client, shards, _ = rig("cancel", lambda shard, req: {"ok": True, "result": {"cancelled": [f"z{shard}", f"a{shard}"]}})
    cancelled, partial = client.cancel(all=True, request_id="py-cancel-1")
    assert partial is None
    assert cancelled == ["a0", "a1", "a2", "z0", "z1", "z2"]
    for shard in shards:
        assert [req["requestId"] for req in shard.requests if req["op"] == "cancel"] == ["py-cancel-1"]


def test_an_old_map_epoch_is_redirected_with_the_same_request_id(rig):
    """The client's map (epoch 1) puts bob on shard 0; under epoch 2 shard 1 owns him."""
    old = even_map("epoch", 2, epoch=1)
    old["shards"][0]["slots"], old["shards"][1]["slots"] = [[0, 2047]], [[2048, 4095]]
    new = json.loads(json.dumps(old))
    new["mapEpoch"] = 2
    new["shards"][0]["slots"], new["shards"][1]["slots"] = [[0, 1023]], [[1024, 4095]]
    served = []

    def answer(shard, req):
        if req["op"] == "map":
            served.append(shard)
            return {"ok": True, "result": old if shard == 0 and len(served) == 1 else new}
        if shard == 0:
            return {"ok": False, "error": {"code": "wrong_shard", "message": "moved", "shard": 1, "mapEpoch": 2}}
        return {"ok": True, "result": {"recipient": req["recipient"], "badge": req["value"], "changed": True}}

    context = zmq.Context()
    shards = [FakeShard(context, s["endpoints"]["control"], s["id"], answer) for s in old["shards"]]
    try:
        client = ClusterClient([old["shards"][0]["endpoints"]["control"]], context=context, timeout_s=0.3, retries=0)
        assert client.current_map()["mapEpoch"] == 1
        reply = client.request({"op": "badge", "recipient": "bob", "value": 7, "requestId": "py-moved-1"}, "bob")
        assert reply["ok"] and reply["result"]["badge"] == 7
        assert client.map["mapEpoch"] == 2
        assert [r["requestId"] for r in shards[0].requests if r["op"] == "badge"] == ["py-moved-1"]
        assert [r["requestId"] for r in shards[1].requests if r["op"] == "badge"] == ["py-moved-1"]
    finally:
        for shard in shards:
            shard.stop()
        context.term()


def test_schedule_each_sends_each_reminder_to_its_shard_and_replies_in_order(rig):
    def answer(shard, req):
        return {"ok": True, "result": {"scheduled": [{"id": f"{r['id']}@{shard}"} for r in req["reminders"]]}}

    client, shards, shard_map = rig("each", answer)
    on = [recipient_on(s, shard_map) for s in range(3)]
    reminders = [{"id": "a", "recipient": on[1]}, {"id": "b", "recipient": on[0]},
                 {"id": "c", "recipient": on[2]}, {"id": "d", "recipient": on[1]}]
    replies = client.schedule_each(reminders, window=2)
    assert [reply["result"]["scheduled"][0]["id"] for reply in replies] == ["a@1", "b@0", "c@2", "d@1"]
    assert [[r["reminders"][0]["id"] for r in shard.requests if r["op"] == "schedule"] for shard in shards] == \
        [["b"], ["a", "d"], ["c"]]


def test_schedule_each_follows_wrong_shard_with_the_same_request_id():
    """As test_an_old_map_epoch_is_redirected_…, through the pipelined `schedule_each`."""
    old = even_map("each-epoch", 2, epoch=1)
    old["shards"][0]["slots"], old["shards"][1]["slots"] = [[0, 2047]], [[2048, 4095]]
    new = json.loads(json.dumps(old))
    new["mapEpoch"] = 2
    new["shards"][0]["slots"], new["shards"][1]["slots"] = [[0, 1023]], [[1024, 4095]]
    served = []

    def answer(shard, req):
        if req["op"] == "map":
            served.append(shard)
            return {"ok": True, "result": old if shard == 0 and len(served) == 1 else new}
        if shard == 0 and req["reminders"][0]["recipient"] == "bob":
            return {"ok": False, "error": {"code": "wrong_shard", "message": "moved", "shard": 1, "mapEpoch": 2}}
        return {"ok": True, "result": {"scheduled": [{"id": f"{r['id']}@{shard}"} for r in req["reminders"]]}}

    context = zmq.Context()
    shards = [FakeShard(context, s["endpoints"]["control"], s["id"], answer) for s in old["shards"]]
    try:
        client = ClusterClient([old["shards"][0]["endpoints"]["control"]], context=context, timeout_s=0.3, retries=0)
        assert client.current_map()["mapEpoch"] == 1 and slot_of("bob") in range(1024, 2048)
        replies = client.schedule_each([{"id": "x", "recipient": "alice"}, {"id": "y", "recipient": "bob"}])
        assert [reply["result"]["scheduled"][0]["id"] for reply in replies] == ["x@0", "y@1"]
        assert client.map["mapEpoch"] == 2
        moved = [r["requestId"] for shard in shards for r in shard.requests
                 if r["op"] == "schedule" and r["reminders"][0]["id"] == "y"]
        assert moved == [replies[1]["requestId"]] * 2
    finally:
        for shard in shards:
            shard.stop()
        context.term()


def test_refusal_field_is_reindexed_to_the_callers_list(rig):
    def answer(shard, req):
        if shard == 2:
            return {"ok": False, "error": {"code": "invalid_argument", "message": "bad", "field": "reminders[0].trigger"}}
        return {"ok": True, "result": {"scheduled": [{"id": r["id"]} for r in req["reminders"]]}}

    client, _, shard_map = rig("refuse", answer)
    on = [recipient_on(s, shard_map) for s in range(3)]
    with pytest.raises(ChimeError) as raised:
        client.schedule([{"id": "a", "recipient": on[0]}, {"id": "c", "recipient": on[2]}])
    assert raised.value.error["field"] == "reminders[1].trigger"


def test_cursor_matches_the_swift_bytes_and_decodes_garbage_totally():
    text = cursors.encode(cursors.DEAD_LETTERS, 2, {1: b"A", 0: True})
    assert base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)) == bytes([0x53, 0x44, 2, 2, 0, 2, 1, 1, 1, 0x41])
    assert cursors.decode(text, cursors.DEAD_LETTERS) == (2, {0: True, 1: b"A"})
    generator = random.Random(26)
    refused = 0
    for round_number in range(3000):
        raw = bytes(generator.randrange(256) for _ in range(generator.randrange(40)))
        if round_number % 2 == 0:
            raw = bytes([0x53, 0x4C]) + raw
        try:
            cursors.decode(base64.urlsafe_b64encode(raw).decode().rstrip("="), cursors.LIST)
        except CursorError:
            refused += 1
    assert refused > 2000
    for bad in ["", "!", "U", "UA", "U___"]:
        with pytest.raises(CursorError):
            cursors.decode(bad, cursors.LIST)


def test_merge_takes_only_what_is_below_the_lowest_frontier():
    pages = [(0, [(b"a", "a"), (b"m", "m")], b"m"), (1, [(b"b", "b")], None), (2, [(b"c", "c"), (b"z", "z")], None)]
    assert merge(pages, 10) == (["a", "b", "c", "m"], {0: b"m", 1: True, 2: b"m"})
    assert merge([(0, [(b"a", "a"), (b"d", "d")], None), (1, [(b"b", "b"), (b"c", "c")], b"c")], 2) == \
        (["a", "b"], {0: b"b", 1: b"b"})


def test_a_cluster_subscriber_subscribes_shards_that_join_from_seq_0():
    """`follow` (and `map_source`, read inside `receive`) adds each shard a later map names,
    from seq 0 (its whole retained history), once; with a recipient, only its slot's owner."""
    context = zmq.Context()
    try:
        two, three = even_map("follow", 2), even_map("follow", 3, epoch=2)
        subscriber = ClusterSubscriber(two, context=context, request_timeout_s=0.05)
        assert sorted(subscriber.subscribers) == [0, 1]
        assert subscriber.follow(three) == [2]
        assert subscriber.subscribers[2].filler.watermark == 0
        assert subscriber.subscribers[0].filler.watermark is None
        assert subscriber.follow(three) == []
        assert subscriber.follow(two) == [] and sorted(subscriber.subscribers) == [0, 1, 2]

        moved = next(f"r{n}" for n in range(100_000) if shard_of(two, f"r{n}") == 0 and shard_of(three, f"r{n}") == 1)
        one = ClusterSubscriber(two, recipient=moved, context=context, request_timeout_s=0.05,
                                map_source=lambda: three, map_interval_s=0)
        assert list(one.subscribers) == [0]
        one.receive(0.01)
        assert sorted(one.subscribers) == [0, 1]
        assert one.subscribers[1].filler.watermark == 0
        def unanswered():
            raise ChimeError({"code": "unavailable", "message": "no shard answered map"})
        quiet = ClusterSubscriber(two, context=context, request_timeout_s=0.05, map_source=unanswered, map_interval_s=0)
        quiet.receive(0.01)
        assert sorted(quiet.subscribers) == [0, 1]
        for each in (subscriber, one, quiet):
            each.close()
    finally:
        context.destroy(linger=0)


def test_a_recipient_cluster_subscriber_follows_its_slot_past_wrong_shard():
    """A follower of the map (`map_source`, or `follow` called) retries a catch-up the source
    refuses `wrong_shard` (the slot moved) instead of raising, and gets the new owner's events
    from seq 0; without following, the refusal raises."""
    context = zmq.Context()
    two, three = even_map("moving", 2), even_map("moving", 3, epoch=2)
    moved = next(f"r{n}" for n in range(100_000) if shard_of(two, f"r{n}") == 0 and shard_of(three, f"r{n}") == 1)
    after_move = {"seq": 1, "firingId": "after-move", "recipient": moved}

    def source(shard, req):
        if req["after"] > 2**62:  # a subscriber learning its watermark
            return {"ok": True, "result": {"events": [], "through": 18}}
        return {"ok": False, "error": {"code": "wrong_shard", "message": "slot moved", "shard": 1}}

    def target(shard, req):
        return {"ok": True, "result": {"events": [after_move] if req["after"] < 1 else [], "through": 1}}

    def refusals() -> int:
        return sum(1 for each in list(served[0].requests) if each["after"] == 18)

    def receive_until(subscriber, refused: int) -> list[dict]:
        received = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (received and refusals() >= refused):
            received += subscriber.receive(0.2)
        return received

    served = [FakeShard(context, two["shards"][0]["endpoints"]["control"], 0, source),
              FakeShard(context, three["shards"][1]["endpoints"]["control"], 1, target)]
    try:
        # The idle catch-up (after 1 s) is refused before the first map read (after 1.5 s).
        following = ClusterSubscriber(two, recipient=moved, context=context, request_timeout_s=0.5,
                                      map_source=lambda: three, map_interval_s=1.5)
        assert following.watermarks() == {0: 18}
        assert receive_until(following, refused=2) == [after_move]
        assert following.watermarks() == {0: 18, 1: 1}
        following.close()

        # A caller that reads maps itself: from its first `follow` on, refusals are retried.
        served[0].requests.clear()
        manual = ClusterSubscriber(two, recipient=moved, context=context, request_timeout_s=0.5)
        assert manual.follow(three) == [1]
        assert receive_until(manual, refused=1) == [after_move]
        manual.close()

        # The same refusal without a map to follow ends the subscription, as before.
        served[0].requests.clear()
        alone = ClusterSubscriber(two, recipient=moved, context=context, request_timeout_s=0.5)
        with pytest.raises(RuntimeError, match="wrong_shard"):
            alone.receive(5.0)
        assert refusals() == 1
        alone.close()
    finally:
        for shard in served:
            shard.stop()
        context.destroy(linger=0)
