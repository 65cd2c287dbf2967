"""A Chime fire-event subscriber with no gap and no duplicate across coordinator restarts.

The same algorithm as `chime subscribe` (Swift: `GapFiller` and `SubscriberClient`), written
down in Docs/Chime.docc/Reference/WireProtocol.md ("A live subscriber with no gap") for clients in other languages:

1. Subscribe (SUB to the events endpoint, topic `fire.<recipient>` or `fire.`) *first*.
2. Ask the control endpoint `{"op": "events", "after": W}`; the reply's `through` says every
   seq <= through is settled. Without `since`, the first request uses a huge `after` so the
   reply carries only `through`, and W starts there.
3. A live event whose seq <= W + 1 is delivered at once (W becomes its seq). A later one
   waits: some earlier seq is unknown (another recipient's, in flight, or lost by the slow
   joiner after a restart). While events wait, ask `events` after W every 20 ms; replayed
   events and waiting ones are merged in seq order and delivered while seq <= W + 1, with
   W = max(W, through). An event that still waits 2 s after a successful fetch saw it wait
   is delivered anyway (an earlier seq held by a dead worker's lease).
4. When nothing waits, ask `events` after W every second anyway: a restart whose every
   event the live stream lost shows up there.
5. Deliver each firing id once (a redelivery has a new seq and the same firing id).
6. Without a recipient, also subscribe `handover`: a hand-over event (`{"type": "handover",
   "seq", "shard", "move", "slots", "target", "mapEpoch", "at"}`, a slot move's end on this
   shard) shares the seq count, comes in the reply's `handOvers` too, and is delivered once
   in seq order: the slots' events before it came from this shard, later ones from `target`.

Only pyzmq is needed. Every wait has a deadline; the class never sleeps.

    subscriber = ChimeSubscriber("tcp://127.0.0.1:7703", "tcp://127.0.0.1:7700", recipient="alice")
    try:
        while True:
            for event in subscriber.receive(timeout_s=1.0):
                print(event["firingId"], event.get("body"))
    finally:
        subscriber.close()
"""

from __future__ import annotations

import collections
import json
import time
import uuid

import zmq

__all__ = ["GapFiller", "ChimeSubscriber"]

# A number larger than any seq (JSON-safe as a signed 64-bit integer).
NO_SEQ_YET = 2**63 - 1


class GapFiller:
    """The pure state of the algorithm: live events and `events` replies in, events out.

    Time (`now`, seconds on any monotonic clock) is passed in, so it is tested without
    sockets. Mirrors `GapFiller` in Sources/ChimeClient/Subscriber/GapFiller.swift.
    """

    def __init__(self, since: int | None = None, idle_fetch_interval_s: float = 1.0,
                 waiting_fetch_interval_s: float = 0.02, maximum_wait_s: float = 2.0,
                 remembered_firing_ids: int = 100_000, maximum_waiting: int = 250_000):
        self.watermark: int | None = since
        # At most this many events wait for a fill; past it the oldest go anyway, as after
        # `maximum_wait_s` (a catch-up that never answers cannot grow the subscriber forever).
        self.maximum_waiting = maximum_waiting
        self.idle_fetch_interval_s = idle_fetch_interval_s
        self.waiting_fetch_interval_s = waiting_fetch_interval_s
        self.maximum_wait_s = maximum_wait_s
        self.remembered_firing_ids = remembered_firing_ids
        # [seq, firing id, event, fetched_since or None], sorted by seq
        self.waiting: list[list] = []
        # The same entries by `_key` (firing id, or a hand-over's seq).
        self.waiting_by_key: dict[str, list] = {}
        self.delivered: set[str] = set()
        self.delivered_order: collections.deque[str] = collections.deque()
        self.last_fetch_at = float("-inf")

    @property
    def fetch_after(self) -> int:
        """The `after` of the next `events` request."""
        return NO_SEQ_YET if self.watermark is None else self.watermark

    def is_fetch_due(self, now: float) -> bool:
        """Due `waiting_fetch_interval_s` after the last attempt while events wait, else
        `idle_fetch_interval_s`; also before the watermark is known (the first attempt at once,
        retries after no answer or a `wrong_shard` paced like the idle reconciliation)."""
        waits = self.waiting and self.watermark is not None
        interval = self.waiting_fetch_interval_s if waits else self.idle_fetch_interval_s
        return now - self.last_fetch_at >= interval

    def on_live(self, event: dict, now: float) -> list[dict]:
        """A live event (fire or hand-over); returns the events to deliver now, in order."""
        seq = event["seq"]
        if _is_hand_over(event):
            # At or below the watermark: delivered by a fetch, or settled before the start.
            if self.watermark is not None and seq <= self.watermark:
                return []
        elif event["firingId"] in self.delivered:
            return []
        if self.watermark is not None and not self.waiting and seq <= self.watermark + 1:
            self.watermark = max(self.watermark, seq)
            if not _is_hand_over(event):
                self._remember(event["firingId"])
            return [event]
        self._enqueue(event, None)
        return self._drain() + self._release_overflow()

    def on_fetched(self, events: list[dict], through: int, now: float,
                   hand_overs: list[dict] | None = None) -> list[dict]:
        """One page of an `events` reply (its `handOvers` too); returns the events to deliver now, in order."""
        self.last_fetch_at = now
        if self.watermark is None:
            self.watermark = through
            self._mark_fetched(now)
            return self._drain()
        for event in events:
            if event["seq"] > self.watermark and event["firingId"] not in self.delivered:
                self._enqueue(event, now)
        for event in hand_overs or []:
            if event["seq"] > self.watermark:
                self._enqueue(event, now)
        self.watermark = max(self.watermark, through)
        self._mark_fetched(now)
        return self._drain() + self._release_overflow()

    def on_fetch_failed(self, now: float) -> None:
        """No reply (the coordinator is restarting): only paces the next attempt."""
        self.last_fetch_at = now

    def on_fetch_refused(self, now: float) -> None:
        """A catch-up refused with `wrong_shard` (the shard no longer holds the recipient's
        slot, so no fill will come): paces the next attempt, and starts `maximum_wait_s` for
        every waiting event, as a fetch that did not fill their gap would."""
        self.last_fetch_at = now
        self._mark_fetched(now)

    def on_tick(self, now: float) -> list[dict]:
        """Delivers the front event once it waited `maximum_wait_s` since a fetch saw it."""
        if self.watermark is None or not self.waiting:
            return []
        seq, _, _, fetched_since = self.waiting[0]
        if fetched_since is None or now - fetched_since < self.maximum_wait_s:
            return []
        self.watermark = max(self.watermark, seq - 1)
        return self._drain()

    def _enqueue(self, event: dict, fetched_since: float | None) -> None:
        key = _key(event)
        entry = self.waiting_by_key.get(key)
        if entry is not None:
            # A redelivery or a replayed copy: keep the lower seq, in its seq's place.
            if event["seq"] < entry[0]:
                index = self._position(entry[0], after_equal=False)
                while self.waiting[index] is not entry:
                    index += 1
                del self.waiting[index]
                entry[0], entry[2] = event["seq"], event
                self.waiting.insert(self._position(entry[0]), entry)
            return
        entry = [event["seq"], key, event, fetched_since]
        self.waiting_by_key[key] = entry
        self.waiting.insert(self._position(event["seq"]), entry)

    def _position(self, seq: int, after_equal: bool = True) -> int:
        """Where `seq` goes in `waiting` (sorted by seq): after the entries of an equal seq, or
        before them. A binary search (bisect's `key=` needs Python 3.10)."""
        low, high = 0, len(self.waiting)
        while low < high:
            middle = (low + high) // 2
            if self.waiting[middle][0] < seq or (after_equal and self.waiting[middle][0] == seq):
                low = middle + 1
            else:
                high = middle
        return low

    def _release_overflow(self) -> list[dict]:
        """Past `maximum_waiting`, the oldest waiting events go anyway (the watermark moves to
        just before the first), with what then follows them in order."""
        ready: list[dict] = []
        while len(self.waiting) > max(self.maximum_waiting, 0):
            before = max(self.waiting[0][0] - 1, 0)
            self.watermark = before if self.watermark is None else max(self.watermark, before)
            ready += self._drain()
        return ready

    def _mark_fetched(self, now: float) -> None:
        for entry in self.waiting:
            if entry[3] is None:
                entry[3] = now

    def _drain(self) -> list[dict]:
        if self.watermark is None:
            return []
        ready = []
        taken = 0
        while taken < len(self.waiting) and self.waiting[taken][0] <= self.watermark + 1:
            seq, firing_id, event, _ = self.waiting[taken]
            taken += 1
            self.watermark = max(self.watermark, seq)
            if not _is_hand_over(event):
                if firing_id in self.delivered:
                    continue
                self._remember(firing_id)
            ready.append(event)
        for entry in self.waiting[:taken]:
            self.waiting_by_key.pop(entry[1], None)
        del self.waiting[:taken]
        return ready

    def _remember(self, firing_id: str) -> None:
        self.delivered.add(firing_id)
        self.delivered_order.append(firing_id)
        if len(self.delivered_order) > self.remembered_firing_ids:
            self.delivered.discard(self.delivered_order.popleft())


def _is_hand_over(event: dict) -> bool:
    return event.get("type") == "handover"


def _key(event: dict) -> str:
    """What identifies an event across its copies: the firing id, or a hand-over's seq."""
    return f"handover {event['seq']}" if _is_hand_over(event) else event["firingId"]


class ChimeSubscriber:
    """Fire events of one recipient (or all) from a Chime cluster, with no gap.

    `receive(timeout_s)` returns the events that became ready within the timeout (possibly
    none), each a dict as on the wire; without a recipient also the shard's hand-over events
    (`"type": "handover"`, no `firingId`). Control requests use a fresh DEALER per attempt
    (Lazy Pirate, ZeroMQ Guide ch. 4), so a coordinator restart never wedges the client.

    A catch-up refused (`wrong_shard`: the recipient's slot moved to another shard) raises
    `RuntimeError`, unless `retries_wrong_shard`: then it is retried at the catch-up's pace and
    the live events that wait are delivered after `maximum_wait_s` (a follower of the map,
    such as `ClusterSubscriber` with `map_source`, subscribes the slot's new owner).
    """

    def __init__(self, events_endpoint: str, control_endpoint: str, recipient: str | None = None,
                 since: int | None = None, context: zmq.Context | None = None,
                 request_timeout_s: float = 1.0, filler: GapFiller | None = None,
                 retries_wrong_shard: bool = False):
        self.retries_wrong_shard = retries_wrong_shard
        self.context = context or zmq.Context.instance()
        self.control_endpoint = control_endpoint
        self.recipient = recipient
        self.request_timeout_s = request_timeout_s
        self.filler = filler or GapFiller(since=since)
        self.topic = f"fire.{recipient}".encode() if recipient is not None else b"fire."
        self.socket = self.context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVHWM, 250_000)
        self.socket.setsockopt(zmq.SUBSCRIBE, self.topic)
        if recipient is None:
            self.socket.setsockopt(zmq.SUBSCRIBE, b"handover")
        self.socket.connect(events_endpoint)
        # Learn the watermark now (or start replaying `since`), not at the first receive():
        # what is settled after this point is the subscriber's to deliver.
        self.pending: list[dict] = self._fetch()

    def receive(self, timeout_s: float) -> list[dict]:
        """Events ready within `timeout_s` seconds, in order; returns early once some are."""
        deadline = time.monotonic() + timeout_s
        ready, self.pending = self.pending, []
        while True:
            now = time.monotonic()
            if self.filler.is_fetch_due(now):
                ready += self._fetch()
            now = time.monotonic()
            ready += self.filler.on_tick(now)
            remaining = deadline - now
            if ready or remaining <= 0:
                return ready
            wait_s = min(remaining, 0.02 if self.filler.waiting else 0.1)
            if self.socket.poll(max(1, int(wait_s * 1000)), zmq.POLLIN):
                while True:
                    try:
                        topic, body = self.socket.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    except ValueError:
                        continue  # not [topic, JSON]
                    if self.recipient is not None and topic != self.topic:
                        continue  # a longer recipient matched by prefix
                    ready += self.filler.on_live(json.loads(body), time.monotonic())

    def _fetch(self) -> list[dict]:
        ready: list[dict] = []
        while True:
            request = {"op": "events", "after": self.filler.fetch_after, "limit": 1000,
                       "requestId": f"sub-{uuid.uuid4()}"}
            if self.recipient is not None:
                request["recipient"] = self.recipient
            reply = self._request(request)
            now = time.monotonic()
            if reply is None:
                self.filler.on_fetch_failed(now)
                return ready
            if not reply.get("ok"):
                error = reply.get("error")
                if self.retries_wrong_shard and isinstance(error, dict) and error.get("code") == "wrong_shard":
                    self.filler.on_fetch_refused(now)
                    return ready
                raise RuntimeError(f"events refused: {reply.get('error')}")
            result = reply["result"]
            ready += self.filler.on_fetched(result["events"], result["through"], now, result.get("handOvers"))
            if not result.get("truncated"):
                return ready

    def _request(self, request: dict) -> dict | None:
        sock = self.context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        try:
            sock.connect(self.control_endpoint)
            sock.send_multipart([b"", json.dumps(request).encode()])
            if not sock.poll(int(self.request_timeout_s * 1000), zmq.POLLIN):
                return None
            return json.loads(sock.recv_multipart()[-1])
        finally:
            sock.close()

    def close(self) -> None:
        self.socket.close()
