"""A pipelined, asyncio control client for a Chime cluster (issue 28, item 3).

`ClusterClient` waits for each reply before it sends the next request (Lazy Pirate, one
DEALER per attempt), so one Python process reaches about 1.5k schedules/s whatever the
coordinator can take. `AsyncClusterClient` keeps many requests in flight on one DEALER per
shard, read from the asyncio event loop: a request carries its `requestId`, and a reply is matched to its
request by that id. The only replies without one are `rate_limited` and undecodable-request
refusals, which the coordinator sends on the ordinary reply path, so they never overtake an
earlier reply on their connection; such a reply settles the oldest request still waiting.
`ClusterClient.schedule_each` keeps the same rules without asyncio, at less CPU a request.

Back-pressure: at most `window` requests are in flight per shard; `request` waits for a free
place before it sends. Every wait has a deadline (`timeout_s`); a request unanswered by then
is sent again with the same `requestId`, which the coordinator applies once (its request
log), at most `retries` times before `ChimeError("unavailable")`. `rate_limited` and `try_again` (a slot moving between shards) are honoured:
the request is sent again after the reply's `retryAfterMs`. `wrong_shard` refreshes the map
(asking the shard it names first) and resends, at most twice, as `ClusterClient` does.

    async with AsyncClusterClient(["tcp://127.0.0.1:7700"]) as client:
        replies = await client.schedule_each(reminders)          # one request per reminder
        reply = await client.request({"op": "ping"})

Only pyzmq is needed.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import zmq

from .cluster import MAXIMUM_REDIRECTS, ChimeError, MapHolder
from .slots import shard_of

# 256, not more: the coordinator's control socket queues at most 1,000 unread replies per
# connection (libzmq's default send high-water mark) and drops the rest, which a client then
# waits out for a whole timeout (windows of 1,024-2,048 stalled in 5 of 8 runs, 256 never).
DEFAULT_WINDOW = 256
POLLIN = int(zmq.POLLIN)
# Plain ints: pyzmq's flag enums cost an object per `|` and per call.
NOBLOCK = int(zmq.NOBLOCK)
SNDMORE_NOBLOCK = int(zmq.SNDMORE | zmq.NOBLOCK)
EVENTS = int(zmq.EVENTS)
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class _Connection:
    """One DEALER to one control endpoint, with its requests in flight keyed by requestId.

    The socket is an ordinary pyzmq socket read from the event loop: ZeroMQ's `ZMQ_FD`
    signals edge-triggered, so every wake-up and every send drains what `ZMQ_EVENTS` says is
    waiting (the Guide, ch. 2, "Handling Multiple Sockets"; libzmq's zmq_getsockopt on
    ZMQ_FD). That costs a fraction of `zmq.asyncio`'s per-message futures.
    """

    def __init__(self, context: zmq.Context, endpoint: str, window: int):
        self.endpoint = endpoint
        self.loop = asyncio.get_running_loop()
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)
        # In the order sent (a dict keeps insertion order): the first is the oldest waiting.
        # requestId → (future, sent at on the loop's clock, timeout in seconds).
        self.waiting: dict[str, tuple[asyncio.Future, float, float]] = {}
        self.places = asyncio.Semaphore(window)
        # One timer for the connection, at the first deadline, not one per request.
        self.sweeper: asyncio.TimerHandle | None = None
        self.malformed = 0
        # When the connection last brought a reply: a request queued behind others on a busy
        # coordinator is not timed out while replies keep coming.
        self.last_reply = 0.0
        self.loop.add_reader(self.socket.getsockopt(zmq.FD), self._drain)

    def _drain(self) -> None:
        # Reading until EAGAIN also processes libzmq's pending commands, which re-arms ZMQ_FD.
        while True:
            try:
                frames = self.socket.recv_multipart(NOBLOCK)
            except zmq.Again:
                return
            self._settle(frames)

    def _settle(self, frames: list[bytes]) -> None:
        self.last_reply = self.loop.time()
        try:
            reply = json.loads(frames[-1])
        except (ValueError, IndexError):
            self.malformed += 1
            return
        if not isinstance(reply, dict):
            self.malformed += 1
            return
        request_id = reply.get("requestId")
        if request_id is not None:
            if not isinstance(request_id, str) or request_id not in self.waiting:
                return  # a late reply to an attempt already settled
        else:
            request_id = next(iter(self.waiting), None)
            if request_id is None:
                self.malformed += 1
                return
        future = self.waiting.pop(request_id)[0]
        if not future.done():
            future.set_result(reply)

    async def exchange(self, request_id: str, body: bytes, timeout_s: float) -> dict | None:
        """Sends one attempt and waits for its reply; None when none came within `timeout_s`."""
        future = self.loop.create_future()
        sent = self.loop.time()
        self.waiting[request_id] = (future, sent, timeout_s)
        if self.sweeper is None or self.sweeper.when() > sent + timeout_s:
            if self.sweeper is not None:
                self.sweeper.cancel()
            self.sweeper = self.loop.call_at(sent + timeout_s, self._sweep)
        try:
            while True:
                try:
                    self.socket.send(b"", SNDMORE_NOBLOCK)
                    self.socket.send(body)
                    break
                except zmq.Again:
                    # No peer yet, or its queue is full: wait a little, within the deadline.
                    if future.done():
                        break
                    await asyncio.sleep(0.001)
            # A send can take the edge that said a reply is waiting: look once more.
            if self.socket.getsockopt(EVENTS) & POLLIN:
                self._drain()
            return await future
        finally:
            entry = self.waiting.get(request_id)
            if entry is not None and entry[0] is future:
                del self.waiting[request_id]

    def _sweep(self) -> None:
        """Settles with None each request unanswered `timeout_s` after it was sent and after
        the connection's last reply (one queued behind others on a busy coordinator waits
        while replies keep coming); arms itself again for the next such instant."""
        self.sweeper = None
        now = self.loop.time()
        wake = None
        for future, sent, timeout_s in list(self.waiting.values()):
            if future.done():
                continue
            due = max(sent, self.last_reply) + timeout_s
            if due <= now:
                future.set_result(None)
            elif wake is None or due < wake:
                wake = due
        if wake is not None:
            self.sweeper = self.loop.call_at(wake, self._sweep)

    def close(self) -> None:
        self.loop.remove_reader(self.socket.getsockopt(zmq.FD))
        if self.sweeper is not None:
            self.sweeper.cancel()
        for future, _, _ in self.waiting.values():
            if not future.done():
                future.cancel()
        self.socket.close()


class AsyncClusterClient(MapHolder):
    """Routes each request to its recipient's shard, many requests in flight per shard.

    `seeds`: control endpoints to ask for the shard map. `window`: requests in flight per
    shard at most. `timeout_s`: seconds to wait for one attempt's reply. `retries`: attempts
    after the first for a request left unanswered.
    """

    def __init__(self, seeds: list[str], context: zmq.Context | None = None, timeout_s: float = 3.0,
                 retries: int = 2, window: int = DEFAULT_WINDOW):
        if not seeds:
            raise ValueError("a cluster client needs at least one seed endpoint")
        if window < 1:
            raise ValueError("window must be at least 1")
        self.seeds = list(seeds)
        self.context = context or zmq.Context.instance()
        self.timeout_s, self.retries, self.window = timeout_s, retries, window
        self.map: dict | None = None
        self.single_shard_endpoint: str | None = None
        self.connections: dict[str, _Connection] = {}
        self.prefix, self.sent = uuid.uuid4().hex, 0
        # Each recipient's shard under `_owners_map` (the map they were computed from).
        self._owners: dict[str, int] = {}
        self._owners_map: dict | None = None

    async def __aenter__(self) -> "AsyncClusterClient":
        return self

    async def __aexit__(self, *_exc) -> None:
        await self.close()

    async def close(self) -> None:
        connections, self.connections = list(self.connections.values()), {}
        for connection in connections:
            connection.close()

    def _connection(self, endpoint: str) -> _Connection:
        connection = self.connections.get(endpoint)
        if connection is None:
            connection = self.connections[endpoint] = _Connection(self.context, endpoint, self.window)
        return connection

    # ------------------------------------------------------------------ map and routing

    async def current_map(self) -> dict:
        return self.map if self.map is not None else await self.refresh_map()

    async def refresh_map(self, ask_first: int | None = None) -> dict:
        """Asks the shard `ask_first`, then the seeds, then every known shard; an older epoch is not taken."""
        last_error = None
        for endpoint in self._map_candidates(ask_first):
            request = {"op": "map", "requestId": f"map-{uuid.uuid4()}"}
            reply = await self._connection(endpoint).exchange(
                request["requestId"], json.dumps(request).encode(), self.timeout_s)
            adopted, last_error = self._adopt_map(reply, endpoint)
            if adopted is not None:
                return adopted
        raise ChimeError(last_error or {"code": "unavailable", "message": "no endpoint to ask for the map"})

    async def endpoint_for(self, recipient: str | None) -> tuple[int, str]:
        """(shard, control endpoint) of `recipient`'s slot; shard 0's without a recipient."""
        shard_map = self.map if self.map is not None else await self.refresh_map()
        if recipient is None or len(shard_map["shards"]) == 1:
            shard = shard_map["shards"][0]["id"]
            return shard, self._endpoint_of(shard_map, shard)
        if self._owners_map is not shard_map:
            self._owners, self._owners_map = {}, shard_map
        shard = self._owners.get(recipient)
        if shard is None:
            owner = shard_of(shard_map, recipient)
            shard = self._owners[recipient] = owner if owner is not None else shard_map["shards"][0]["id"]
        return shard, self._endpoint_of(shard_map, shard)

    def _endpoint_of(self, shard_map: dict, shard: int) -> str:
        if len(shard_map["shards"]) == 1 and self.single_shard_endpoint:
            return self.single_shard_endpoint
        for candidate in shard_map["shards"]:
            if candidate["id"] == shard:
                return candidate["endpoints"]["control"]
        raise ChimeError({"code": "unavailable", "message": f"shard {shard} is not in the map"})

    # ------------------------------------------------------------------ requests

    async def request(self, request: dict, recipient: str | None = None) -> dict:
        """Sends `request` to `recipient`'s shard and returns its reply (an error reply as it is).

        Waits for a place in the shard's window first. Raises ChimeError `unavailable` when
        no attempt was answered.
        """
        request = dict(request)
        if "requestId" not in request:
            request["requestId"] = self._next_request_id()
        return await self._request(request["requestId"], json.dumps(request).encode(), recipient)

    def _next_request_id(self) -> str:
        # One random prefix per client and a counter: unique, and cheaper than a uuid each.
        self.sent += 1
        return f"{self.prefix}-{self.sent}"

    async def _request(self, request_id: str, body: bytes, recipient: str | None) -> dict:
        shard, endpoint = await self.endpoint_for(recipient)
        redirects = 0
        attempts = 0
        while True:
            connection = self._connection(endpoint)
            async with connection.places:
                reply = await connection.exchange(request_id, body, self.timeout_s)
            if reply is None:
                attempts += 1
                if attempts > self.retries:
                    raise ChimeError({"code": "unavailable", "message":
                                      f"no reply from {endpoint} after {attempts} attempts of {self.timeout_s} s"})
                continue
            error = reply.get("error") or {}
            code = error.get("code")
            if code in ("rate_limited", "try_again"):
                await asyncio.sleep(max(1, int(error.get("retryAfterMs") or 1)) / 1000)
                continue
            if code != "wrong_shard" or redirects == MAXIMUM_REDIRECTS:
                return reply
            redirects += 1
            await self.refresh_map(ask_first=error.get("shard"))
            routed, endpoint = await self.endpoint_for(recipient)
            named = error.get("shard")
            if routed == shard and isinstance(named, int):
                try:
                    endpoint = self._endpoint_of(self.map, named)
                except ChimeError:
                    pass
            shard = routed

    async def schedule_each(self, reminders: list[dict]) -> list[dict]:
        """Schedules each reminder in a request of its own, all in flight at once within the
        window; returns the replies in the reminders' order (refusals as error replies)."""
        replies: list = [None] * len(reminders)
        pending = iter(enumerate(reminders))
        shards = len((await self.current_map())["shards"])

        async def lane() -> None:
            # Lanes share one iterator (one thread), so each reminder is sent once; as many
            # lanes as the windows hold keep them full without a task per reminder.
            for index, reminder in pending:
                # The bytes `request` would send, less its spaces, without the dict.
                request_id = self._next_request_id()
                body = b'{"op":"schedule","requestId":"%s","reminders":[%s]}' % (
                    request_id.encode(), _encode(reminder).encode())
                replies[index] = await self._request(request_id, body, reminder["recipient"])

        await asyncio.gather(*(lane() for _ in range(min(len(reminders), self.window * shards))))
        return replies

    async def ping(self) -> dict:
        return await self.request({"op": "ping"})
