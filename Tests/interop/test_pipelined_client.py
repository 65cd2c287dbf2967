"""The pipelined asyncio client (clients/python/chime_client/pipeline.py; issue 28, item 3).

Against a fake shard (a ROUTER on a kernel-chosen loopback port, on a thread of its own,
stopped and joined by the test): replies matched by requestId when they come back in another
order; a `rate_limited` reply without a requestId settles the oldest request, which is sent
again after `retryAfterMs` (as is a `try_again` reply, a slot moving between shards); an unanswered attempt is sent again with the same requestId; the
window bounds requests in flight. Against a real 3-shard cluster: one reminder per request,
all acknowledged, each on its slot's shard, with the rate printed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import AsyncClusterClient, ChimeError, ClusterClient, shard_of  # noqa: E402
from conftest import chime_binary, control_request  # noqa: E402
from sharded import running_shards  # noqa: E402

SINGLE_MAP = {"mapEpoch": 1, "slotCount": 4096, "shards": [{"id": 0, "slots": [[0, 4095]], "endpoints": {}}]}


class HoldingShard:
    """A ROUTER that collects requests and answers through `decide(held) -> [(identity, reply)]`,
    called after each request with every request not yet answered (oldest first)."""

    def __init__(self, decide):
        self.decide = decide
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        port = self.socket.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.received: list[dict] = []
        self.most_held = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        held: list[tuple[bytes, dict]] = []
        try:
            while not self.stopping.is_set():
                if not self.socket.poll(10, zmq.POLLIN):
                    held = self._answer(held, idle=True)
                    continue
                identity, _, body = self.socket.recv_multipart()
                request = json.loads(body)
                self.received.append(request)
                if request["op"] == "map":
                    map_reply = {"ok": True, "requestId": request["requestId"], "result": SINGLE_MAP}
                    self.socket.send_multipart([identity, b"", json.dumps(map_reply).encode()])
                    continue
                held.append((identity, request))
                self.most_held = max(self.most_held, len(held))
                held = self._answer(held, idle=False)
        finally:
            self.socket.close()
            self.context.term()

    def _answer(self, held, idle):
        answered = self.decide(held, idle)
        for identity, request, reply in answered:
            self.socket.send_multipart([identity, b"", json.dumps(reply).encode()])
        done = {id(request) for _, request, _ in answered}
        return [(identity, request) for identity, request in held if id(request) not in done]

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=2)
        assert not self.thread.is_alive()


def ok(request: dict, **result) -> dict:
    return {"ok": True, "requestId": request["requestId"], "result": result}


@pytest.fixture
def shard_with():
    made = []

    def build(decide):
        shard = HoldingShard(decide)
        made.append(shard)
        return shard

    yield build
    for shard in made:
        shard.stop()


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 20))


def test_replies_in_another_order_are_matched_by_request_id(shard_with):
    def decide(held, idle):
        # Holds eight requests, then answers them newest first.
        if len(held) < 8:
            return []
        return [(identity, request, ok(request, echo=request["n"])) for identity, request in reversed(held)]

    shard = shard_with(decide)

    async def scenario():
        async with AsyncClusterClient([shard.endpoint], timeout_s=5) as client:
            return await asyncio.gather(*(client.request({"op": "ping", "n": n}) for n in range(8)))

    replies = run(scenario())
    assert [reply["result"]["echo"] for reply in replies] == list(range(8))


def test_rate_limited_settles_the_oldest_and_is_sent_again_after_retry_after(shard_with):
    refused: list[float] = []

    def decide(held, idle):
        answers = []
        for identity, request in held:
            if not refused:
                refused.append(time.monotonic())
                # As the coordinator sends it: without a requestId, read before the request.
                answers.append((identity, request, {"ok": False, "error": {
                    "code": "rate_limited", "message": "too many requests", "retryAfterMs": 150}}))
            else:
                answers.append((identity, request, ok(request, at=time.monotonic())))
        return answers

    shard = shard_with(decide)

    async def scenario():
        async with AsyncClusterClient([shard.endpoint], timeout_s=5) as client:
            return await client.request({"op": "ping", "requestId": "limited-1"})

    reply = run(scenario())
    assert reply["ok"] is True
    pings = [request for request in shard.received if request["op"] == "ping"]
    assert [request["requestId"] for request in pings] == ["limited-1", "limited-1"]
    assert reply["result"]["at"] - refused[0] >= 0.150


def test_try_again_is_sent_again_after_retry_after_with_the_same_request_id(shard_with):
    """A slot moving between shards: `try_again` (with its requestId) is waited out and resent."""
    refused: list[float] = []

    def decide(held, idle):
        answers = []
        for identity, request in held:
            if not refused:
                refused.append(time.monotonic())
                answers.append((identity, request, {"ok": False, "requestId": request["requestId"], "error": {
                    "code": "try_again", "message": "slot 7 is moving", "retryAfterMs": 120}}))
            else:
                answers.append((identity, request, ok(request, at=time.monotonic())))
        return answers

    shard = shard_with(decide)

    async def scenario():
        async with AsyncClusterClient([shard.endpoint], timeout_s=5) as client:
            return await client.request({"op": "ping", "requestId": "moving-1"})

    reply = run(scenario())
    assert reply["ok"] is True
    pings = [request for request in shard.received if request["op"] == "ping"]
    assert [request["requestId"] for request in pings] == ["moving-1", "moving-1"]
    assert reply["result"]["at"] - refused[0] >= 0.120


def test_an_unanswered_attempt_is_sent_again_with_the_same_request_id(shard_with):
    def decide(held, idle):
        attempts = [request for request in shard.received if request["op"] == "schedule"]
        if len(attempts) < 2:
            return []  # the first attempt gets no reply
        return [(identity, request, ok(request, scheduled=[])) for identity, request in held[-1:]]

    shard = shard_with(decide)

    async def scenario():
        async with AsyncClusterClient([shard.endpoint], timeout_s=0.3, retries=1) as client:
            return await client.request({"op": "schedule", "reminders": []})

    reply = run(scenario())
    assert reply["ok"] is True
    attempts = [request["requestId"] for request in shard.received if request["op"] == "schedule"]
    assert len(attempts) == 2 and attempts[0] == attempts[1] == reply["requestId"]


def test_no_reply_after_every_attempt_is_unavailable(shard_with):
    shard = shard_with(lambda held, idle: [])

    async def scenario():
        async with AsyncClusterClient([shard.endpoint], timeout_s=0.2, retries=2) as client:
            await client.request({"op": "ping", "requestId": "silent-1"})

    with pytest.raises(ChimeError) as raised:
        run(scenario())
    assert raised.value.code == "unavailable"
    assert [request["requestId"] for request in shard.received if request["op"] == "ping"] == ["silent-1"] * 3


def test_the_window_bounds_requests_in_flight(shard_with):
    def decide(held, idle):
        # Answers only when nothing more arrives for a poll interval: a client that ignored
        # its window would pile up every request here first.
        return [(identity, request, ok(request)) for identity, request in held] if idle else []

    shard = shard_with(decide)

    async def scenario():
        async with AsyncClusterClient([shard.endpoint], timeout_s=5, window=4) as client:
            return await asyncio.gather(*(client.request({"op": "ping"}) for _ in range(40)))

    replies = run(scenario())
    assert len(replies) == 40 and all(reply["ok"] for reply in replies)
    assert shard.most_held == 4


def test_a_window_below_one_is_refused():
    with pytest.raises(ValueError):
        AsyncClusterClient(["tcp://127.0.0.1:1"], window=0)
    with pytest.raises(ValueError):
        AsyncClusterClient([])


@pytest.fixture
def sharded(tmp_path):
    with running_shards(chime_binary(), tmp_path) as cluster:
        yield cluster


def test_one_request_per_reminder_on_three_shards_all_acknowledged_on_their_shards(sharded):
    count = 6000
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    reminders = [{"id": f"p{n}", "recipient": f"u{n % 500}", "trigger": {"at": at}, "content": {"title": "t"}}
                 for n in range(count)]

    async def scenario():
        async with AsyncClusterClient([sharded.control(0)], timeout_s=10, window=256) as client:
            await client.current_map()
            started = time.monotonic()
            replies = await client.schedule_each(reminders)
            return replies, time.monotonic() - started

    replies, seconds = asyncio.run(asyncio.wait_for(scenario(), 120))
    print(f"pipelined client: {count} schedules, one per request, over 3 shards in {seconds:.2f} s "
          f"({count / seconds:,.0f}/s, each reply checked)")
    assert [reply["result"]["scheduled"][0]["id"] for reply in replies] == [f"p{n}" for n in range(count)]
    assert all(reply["ok"] for reply in replies)
    shard_map = sharded.shard_map
    for shard in range(3):
        held = control_request(sharded.control(shard), {"op": "status"}, timeout_s=5)["result"]["reminders"]["pending"]
        assert held == sum(1 for reminder in reminders if shard_of(shard_map, reminder["recipient"]) == shard)


# ---------------------------------------------------------------------- ClusterClient.schedule_each


def scheduled(request: dict) -> dict:
    return ok(request, scheduled=[{"id": reminder["id"]} for reminder in request["reminders"]])


def test_blocking_schedule_each_checks_every_reply_and_returns_a_refusal_at_its_index(shard_with):
    refusal = {"code": "invalid_argument", "message": "bad trigger", "field": "reminder.trigger"}

    def decide(held, idle):
        # Answers in batches of five, newest first, refusing the reminder "r7".
        if len(held) < 5 and not idle:
            return []
        return [(identity, request, {"ok": False, "requestId": request["requestId"], "error": refusal}
                 if request["reminders"][0]["id"] == "r7" else scheduled(request))
                for identity, request in reversed(held)]

    shard = shard_with(decide)
    client = ClusterClient([shard.endpoint], timeout_s=5)
    reminders = [{"id": f"r{n}", "recipient": f"u{n}", "trigger": {"at": "2030-01-01T00:00:00Z"},
                  "content": {"title": "é"}} for n in range(12)]
    replies = client.schedule_each(reminders, window=5)
    assert [reply["ok"] for reply in replies] == [n != 7 for n in range(12)]
    assert replies[7]["error"] == refusal
    assert [reply["result"]["scheduled"][0]["id"] for n, reply in enumerate(replies) if n != 7] == \
        [f"r{n}" for n in range(12) if n != 7]
    sent = [request for request in shard.received if request["op"] == "schedule"]
    assert [request["reminders"] for request in sent] == [[reminder] for reminder in reminders]
    assert len({request["requestId"] for request in sent}) == 12
    assert shard.most_held == 5


def test_blocking_schedule_each_waits_out_rate_limited_and_resends_the_same_request_id(shard_with):
    refused: list[float] = []

    def decide(held, idle):
        answers = []
        for identity, request in held:
            if not refused:
                refused.append(time.monotonic())
                answers.append((identity, request, {"ok": False, "error": {
                    "code": "rate_limited", "message": "too many requests", "retryAfterMs": 150}}))
            else:
                answers.append((identity, request, dict(scheduled(request), at=time.monotonic())))
        return answers

    shard = shard_with(decide)
    client = ClusterClient([shard.endpoint], timeout_s=5)
    replies = client.schedule_each([{"id": "a", "recipient": "u1"}], window=4)
    assert [reply["result"]["scheduled"] for reply in replies] == [[{"id": "a"}]]
    sent = [request["requestId"] for request in shard.received if request["op"] == "schedule"]
    assert len(sent) == 2 and sent[0] == sent[1] == replies[0]["requestId"]
    assert replies[0]["at"] - refused[0] >= 0.150


def test_blocking_schedule_each_resends_an_unanswered_attempt_then_is_unavailable(shard_with):
    def decide(held, idle):
        return []  # silence

    shard = shard_with(decide)
    client = ClusterClient([shard.endpoint], timeout_s=0.2, retries=2)
    started = time.monotonic()
    with pytest.raises(ChimeError) as raised:
        client.schedule_each([{"id": "a", "recipient": "u1"}, {"id": "b", "recipient": "u2"}])
    assert raised.value.code == "unavailable"
    assert time.monotonic() - started >= 0.6
    sent = [(request["requestId"], request["reminders"][0]["id"]) for request in shard.received
            if request["op"] == "schedule"]
    ids = {reminder: request_id for request_id, reminder in sent}
    assert sorted(sent) == sorted([(ids["a"], "a")] * 3 + [(ids["b"], "b")] * 3)


def test_blocking_schedule_each_takes_a_reply_to_a_resent_attempt(shard_with):
    def decide(held, idle):
        attempts = [request for request in shard.received if request["op"] == "schedule"]
        if len(attempts) < 2:
            return []  # the first attempt gets no reply
        return [(identity, request, scheduled(request)) for identity, request in held[-1:]]

    shard = shard_with(decide)
    client = ClusterClient([shard.endpoint], timeout_s=0.3, retries=1)
    replies = client.schedule_each([{"id": "a", "recipient": "u1"}])
    attempts = [request["requestId"] for request in shard.received if request["op"] == "schedule"]
    assert len(attempts) == 2 and attempts[0] == attempts[1] == replies[0]["requestId"]
    assert replies[0]["result"]["scheduled"] == [{"id": "a"}]


def test_blocking_schedule_each_refuses_a_window_below_one():
    with pytest.raises(ValueError):
        ClusterClient(["tcp://127.0.0.1:1"]).schedule_each([], window=0)


def test_blocking_schedule_each_on_three_shards_all_acknowledged_on_their_shards(sharded):
    count = 6000
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    reminders = [{"id": f"s{n}", "recipient": f"u{n % 500}", "trigger": {"at": at}, "content": {"title": "t"}}
                 for n in range(count)]
    client = ClusterClient([sharded.control(0)], timeout_s=10)
    client.current_map()
    started = time.monotonic()
    replies = client.schedule_each(reminders, window=256)
    seconds = time.monotonic() - started
    print(f"ClusterClient.schedule_each: {count} schedules, one per request, over 3 shards in {seconds:.2f} s "
          f"({count / seconds:,.0f}/s, each reply checked)")
    assert [reply["result"]["scheduled"][0]["id"] for reply in replies] == [f"s{n}" for n in range(count)]
    assert all(reply["ok"] for reply in replies)
    shard_map = sharded.shard_map
    for shard in range(3):
        held = control_request(sharded.control(shard), {"op": "status"}, timeout_s=5)["result"]["reminders"]["pending"]
        assert held == sum(1 for reminder in reminders if shard_of(shard_map, reminder["recipient"]) == shard)


def one_every(seconds: float, answer):
    """A `decide` answering the oldest request held, at most one each `seconds`."""
    last = [time.monotonic()]

    def decide(held, idle):
        if not held or time.monotonic() - last[0] < seconds:
            return []
        last[0] = time.monotonic()
        identity, request = held[0]
        return [(identity, request, answer(request))]
    return decide


def test_a_request_queued_behind_answered_ones_is_not_sent_again(shard_with):
    """Six requests answered one each 0.1 s with a timeout of 0.3 s: the last waits 0.6 s, but
    its connection keeps bringing replies, so nothing is sent twice."""
    shard = shard_with(one_every(0.1, lambda request: ok(request)))

    async def scenario():
        async with AsyncClusterClient([shard.endpoint], timeout_s=0.3, retries=0) as client:
            return await asyncio.gather(*(client.request({"op": "ping", "requestId": f"q{n}"}) for n in range(6)))

    replies = run(scenario())
    assert [reply["requestId"] for reply in replies] == [f"q{n}" for n in range(6)]
    # Each sent exactly once; gather does not fix the order in which the six tasks send.
    assert sorted(request["requestId"] for request in shard.received if request["op"] == "ping") == [f"q{n}" for n in range(6)]


def test_blocking_schedule_each_does_not_resend_a_request_queued_behind_answered_ones(shard_with):
    shard = shard_with(one_every(0.1, scheduled))
    client = ClusterClient([shard.endpoint], timeout_s=0.3, retries=0)
    replies = client.schedule_each([{"id": f"q{n}", "recipient": "u"} for n in range(6)])
    assert [reply["result"]["scheduled"][0]["id"] for reply in replies] == [f"q{n}" for n in range(6)]
    sent = [request["reminders"][0]["id"] for request in shard.received if request["op"] == "schedule"]
    assert sent == [f"q{n}" for n in range(6)]
