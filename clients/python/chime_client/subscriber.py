"""The gap-free fire-event subscriber across every shard of a cluster.

One `ChimeSubscriber` (chime_subscriber.py: SUB socket, GapFiller watermark, `events`
catch-up) per shard, each on that shard's events and control endpoints: `seq` counts per
shard, so each shard keeps its own watermark and fills its own gaps, across any shard's
restart. A recipient lives on one shard: with `recipient` only its shard is subscribed.
Events of different shards come in arrival order, except across a slot move: without a
recipient, each shard's hand-over events (`"type": "handover"`) are passed on too, and per
slot the events before a hand-over (from its `shard`) come before it and those after it
(from its `target`) after it (`SlotOrder`: a target's event of the slot waits for the
hand-over, 5 s at most).

With `map_source` (a callable returning the cluster's current map, such as a `ClusterClient`'s
`refresh_map`; None or a `ChimeError` when it cannot be read) the map is read again every
`map_interval_s` inside `receive`, and each shard that appears later (a scaled-up cluster; with
a recipient, its slot's new owner) is subscribed from seq 0, its whole retained history: none
of a new shard's events is missed. `follow(map)` does the same for a map the caller read.
A follower with a recipient takes a catch-up refused `wrong_shard` (the slot moved away) as
"no fill from here" and retries it, instead of raising: the source's live events until its
hand-over still arrive, and the new owner's come through the subscription the map adds.
"""

from __future__ import annotations

import time

import zmq

from chime_subscriber import ChimeSubscriber

from .cluster import ChimeError
from .slots import DEFAULT_SLOT_COUNT, shard_of, slot_of


class SlotOrder:
    """Per slot, events in order across slot moves; mirrors `SlotOrder` in
    Sources/ChimeClient/Subscriber/SlotOrder.swift. Each slot's stream is its owner in the map,
    then each hand-over's `target`; an event of a slot from another shard is held until the
    hand-over that ends the source's events (released before it) or starts the target's
    (released after it), or `maximum_hold_s` (then its shard becomes the slot's stream)."""

    def __init__(self, shard_map: dict, maximum_hold_s: float = 5.0):
        self.slot_count = shard_map.get("slotCount", DEFAULT_SLOT_COUNT)
        self.maximum_hold_s = maximum_hold_s
        self.streams = [-1] * self.slot_count
        for shard in shard_map["shards"]:
            for first, last in shard["slots"]:
                for slot in range(max(0, first), min(last, self.slot_count - 1) + 1):
                    self.streams[slot] = shard["id"]
        self.held: list[tuple[dict, int, int, float]] = []  # event, shard, slot, since

    def on_fire(self, event: dict, shard: int, now: float) -> list[dict]:
        slot = slot_of(event["recipient"], self.slot_count)
        if self.streams[slot] < 0 or self.streams[slot] == shard:
            return [event]
        self.held.append((event, shard, slot, now))
        return []

    def on_hand_over(self, event: dict) -> list[dict]:
        def covered(slot: int) -> bool:
            return any(first <= slot <= last for first, last in event["slots"])
        ready = self._release(lambda item: covered(item[2]) and item[1] == event["shard"])
        ready.append(event)
        for first, last in event["slots"]:
            for slot in range(max(0, first), min(last, self.slot_count - 1) + 1):
                self.streams[slot] = event["target"]
        return ready + self._release(lambda item: covered(item[2]) and item[1] == event["target"])

    def on_tick(self, now: float) -> list[dict]:
        ready: list[dict] = []
        while self.held and now - self.held[0][3] >= self.maximum_hold_s:
            _, shard, slot, _ = self.held[0]
            self.streams[slot] = shard
            ready += self._release(lambda item: item[2] == slot and item[1] == shard)
        return ready

    def _release(self, is_released) -> list[dict]:
        ready = [item[0] for item in self.held if is_released(item)]
        self.held = [item for item in self.held if not is_released(item)]
        return ready


class ClusterSubscriber:
    def __init__(self, shard_map: dict, recipient: str | None = None, since: dict[int, int] | None = None,
                 context: zmq.Context | None = None, request_timeout_s: float = 1.0,
                 map_source=None, map_interval_s: float = 2.0):
        self.recipient = recipient
        self.context = context
        self.request_timeout_s = request_timeout_s
        self.map_source = map_source
        self.map_interval_s = map_interval_s
        # Set again by `follow`: a caller that follows maps gets the slot's new owner.
        self.retries_wrong_shard = recipient is not None and map_source is not None
        self.next_map_read = time.monotonic() + map_interval_s
        since = since or {}
        self.order = SlotOrder(shard_map) if recipient is None else None
        self.subscribers = {
            shard["id"]: self._subscriber(shard, since.get(shard["id"])) for shard in self._shards(shard_map)
        }

    def _shards(self, shard_map: dict) -> list[dict]:
        """The map's shards that hold this subscription's events: the recipient's owner, or all."""
        shards = shard_map["shards"]
        if self.recipient is None:
            return shards
        owner = shard_of(shard_map, self.recipient)
        return [shard for shard in shards if shard["id"] == owner]

    def _subscriber(self, shard: dict, since: int | None) -> ChimeSubscriber:
        return ChimeSubscriber(
            shard["endpoints"]["events"], shard["endpoints"]["control"], recipient=self.recipient,
            since=since, context=self.context, request_timeout_s=self.request_timeout_s,
            retries_wrong_shard=self.retries_wrong_shard)

    def follow(self, shard_map: dict) -> list[int]:
        """Subscribes the shards of `shard_map` not yet subscribed (known by id), each from seq 0;
        returns their ids. A shard that left the map stays subscribed (it sends nothing more).
        With a recipient, from now on a catch-up refused `wrong_shard` is retried, not raised."""
        if self.recipient is not None and not self.retries_wrong_shard:
            self.retries_wrong_shard = True
            for subscriber in self.subscribers.values():
                subscriber.retries_wrong_shard = True
        added = []
        for shard in self._shards(shard_map):
            if shard["id"] not in self.subscribers:
                self.subscribers[shard["id"]] = self._subscriber(shard, 0)
                added.append(shard["id"])
        return added

    def watermarks(self) -> dict[int, int | None]:
        """Each shard's watermark (every seq at or below it was delivered or settled)."""
        return {shard: subscriber.filler.watermark for shard, subscriber in self.subscribers.items()}

    def receive(self, timeout_s: float) -> list[dict]:
        """Events ready within `timeout_s` seconds from any shard; returns early once some are."""
        deadline = time.monotonic() + timeout_s
        if self.map_source is not None and time.monotonic() >= self.next_map_read:
            self.next_map_read = time.monotonic() + self.map_interval_s
            try:
                newer = self.map_source()
            except (ChimeError, zmq.ZMQError, OSError):
                newer = None  # no coordinator answered: tried again after map_interval_s
            if newer is not None:
                self.follow(newer)
        poller = zmq.Poller()
        for subscriber in self.subscribers.values():
            poller.register(subscriber.socket, zmq.POLLIN)
        while True:
            ready = []
            for shard, subscriber in self.subscribers.items():
                # A 1 ms turn each: fetch if due, tick, and read what the socket holds.
                ready += self._ordered(shard, subscriber.receive(0.001))
            if self.order is not None:
                ready += self.order.on_tick(time.monotonic())
            remaining = deadline - time.monotonic()
            if ready or remaining <= 0:
                return ready
            poller.poll(max(1, int(min(remaining, 0.02) * 1000)))

    def _ordered(self, shard: int, events: list[dict]) -> list[dict]:
        if self.order is None:
            return events
        now = time.monotonic()
        ready: list[dict] = []
        for event in events:
            if event.get("type") == "handover":
                ready += self.order.on_hand_over(event)
            else:
                ready += self.order.on_fire(event, shard, now)
        return ready

    def close(self) -> None:
        for subscriber in self.subscribers.values():
            subscriber.close()
