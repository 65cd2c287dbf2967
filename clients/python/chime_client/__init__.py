"""Chime's Python client: shard-aware control requests and the gap-free subscriber.

    from chime_client import ClusterClient, ClusterSubscriber, slot_of
    client = ClusterClient(["tcp://127.0.0.1:7700"])
    client.schedule([{"recipient": "alice", "trigger": {"at": "2026-12-24T08:00:00Z"}, "content": {"title": "hi"}}])
    page, partial = client.list(limit=100)

    # interruption levels and grants (issue 40):
    client.register("alice", zone="Europe/Berlin", grants=["timeSensitive"])
    client.schedule([{"recipient": "alice", "trigger": {"at": "2026-12-24T08:00:00Z"},
                      "content": {"title": "hi", "subtitle": "now", "interruptionLevel": "timeSensitive"}}])

    # many requests in flight, one reminder per request, every reply returned in order:
    replies = client.schedule_each(reminders, window=256)

    # the same from asyncio:
    async with AsyncClusterClient(["tcp://127.0.0.1:7700"]) as client:
        replies = await client.schedule_each(reminders)
"""

from .cluster import INTERRUPTION_GRANTS, INTERRUPTION_LEVELS, ChimeError, ClusterClient
from .merge import merge
from .pipeline import AsyncClusterClient
from .cursor import CursorError
from .slots import crc32c, shard_of, slot_of
from .spread import spread_delay_ms
from .subscriber import ClusterSubscriber

__all__ = ["INTERRUPTION_GRANTS", "INTERRUPTION_LEVELS", "AsyncClusterClient", "ChimeError", "ClusterClient", "ClusterSubscriber", "CursorError", "crc32c", "merge", "shard_of", "slot_of", "spread_delay_ms"]
