"""The gap-free fire-event subscriber across every shard of a cluster.

One `ChimeSubscriber` (chime_subscriber.py: SUB socket, GapFiller watermark, `events`
catch-up) per shard, each on that shard's events and control endpoints: `seq` counts per
shard, so each shard keeps its own watermark and fills its own gaps, across any shard's
restart. A recipient lives on one shard: with `recipient` only its shard is subscribed.
Events of different shards come in arrival order.
"""

from __future__ import annotations

import time

import zmq

from chime_subscriber import ChimeSubscriber

from .slots import shard_of


class ClusterSubscriber:
    def __init__(self, shard_map: dict, recipient: str | None = None, since: dict[int, int] | None = None,
                 context: zmq.Context | None = None, request_timeout_s: float = 1.0):
        shards = shard_map["shards"]
        if recipient is not None:
            owner = shard_of(shard_map, recipient)
            shards = [shard for shard in shards if shard["id"] == owner]
        since = since or {}
        self.subscribers = {
            shard["id"]: ChimeSubscriber(
                shard["endpoints"]["events"], shard["endpoints"]["control"], recipient=recipient,
                since=since.get(shard["id"]), context=context, request_timeout_s=request_timeout_s)
            for shard in shards
        }

    def watermarks(self) -> dict[int, int | None]:
        """Each shard's watermark (every seq at or below it was delivered or settled)."""
        return {shard: subscriber.filler.watermark for shard, subscriber in self.subscribers.items()}

    def receive(self, timeout_s: float) -> list[dict]:
        """Events ready within `timeout_s` seconds from any shard; returns early once some are."""
        deadline = time.monotonic() + timeout_s
        poller = zmq.Poller()
        for subscriber in self.subscribers.values():
            poller.register(subscriber.socket, zmq.POLLIN)
        while True:
            ready = []
            for subscriber in self.subscribers.values():
                # A 1 ms turn each: fetch if due, tick, and read what the socket holds.
                ready += subscriber.receive(0.001)
            remaining = deadline - time.monotonic()
            if ready or remaining <= 0:
                return ready
            poller.poll(max(1, int(min(remaining, 0.02) * 1000)))

    def close(self) -> None:
        for subscriber in self.subscribers.values():
            subscriber.close()
