"""A shard-aware control client for a Chime cluster (the Swift `ClusterClient`'s routing).

It asks any known control endpoint for the shard map (`{"op": "map"}`), caches it, and
sends each request to the shard owning its recipient's slot (`slots.shard_of`). A
`wrong_shard` reply refreshes the map (asking the shard it names first) and resends the
same request (same `requestId`: applied once) at most twice. `schedule` of several
recipients is split per shard and merged in the caller's order; `list` and `cancel` without
a recipient go to every shard at once: `list` pages merge in key order (id, then recipient)
with a cluster cursor (`cursor.py`), `cancel` carries one `requestId` to every shard (not
atomic across shards). A shard that does not answer makes the result partial: the second
element of the returned pair is `{"code": "partial", "message": …, "shard": first id,
"shards": [every id missing]}`.

Every request uses a fresh DEALER per attempt (Lazy Pirate, ZeroMQ Guide ch. 4); every wait
has a deadline. `schedule_each` is the exception: one reminder per request, many in flight
on one DEALER per shard for the call (the rules of `AsyncClusterClient`, without asyncio).
Only pyzmq is needed.
"""

from __future__ import annotations

import heapq
import itertools
import json
import time
import uuid

import zmq

from . import cursor as cursors
from .merge import all_done, merge
from .slots import shard_of

MAXIMUM_REDIRECTS = 2
# Reminders per request of `schedule_bulk`: the coordinator's default maxRemindersPerRequest.
BULK_CHUNK = 1000
# Requests in flight per shard in `schedule_each`.
DEFAULT_WINDOW = 256
# `try_again` / `rate_limited` waits per request before the reply is returned as it is.
MAXIMUM_WAITS = 20
# content.interruptionLevel, least to most urgent ("active" is the default and omitted in events).
INTERRUPTION_LEVELS = ("passive", "active", "timeSensitive", "critical")
# A registration's "grants".
INTERRUPTION_GRANTS = ("provisional", "timeSensitive", "critical")
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# Plain ints: pyzmq's flag enums cost an object per `|` and per call.
_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE_NOBLOCK = int(zmq.SNDMORE | zmq.NOBLOCK)


class ChimeError(Exception):
    """An error reply (`code`, `message`, and the rest of the error object)."""

    def __init__(self, error: dict):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error
        self.code = error.get("code")


def _partial(missing: list, answered: int) -> dict | None:
    if not missing:
        return None
    names = "; ".join(f"shard {shard} ({reason})" for shard, reason in missing)
    return {"code": "partial", "message": f"{len(missing)} of {len(missing) + answered} shard(s) did not answer: {names}",
            "shard": missing[0][0], "shards": [shard for shard, _ in missing]}


class MapHolder:
    """The shard map a client caches, and how a `map` reply updates it (shared by the
    blocking and the asyncio clients): `seeds`, `map` and `single_shard_endpoint`."""

    seeds: list[str]
    map: dict | None
    single_shard_endpoint: str | None

    def _map_candidates(self, ask_first: int | None) -> list[str]:
        """The endpoints to ask, in order: the shard `ask_first`, the seeds, every known shard."""
        known = self.map["shards"] if self.map and len(self.map["shards"]) > 1 else []
        candidates = [s["endpoints"]["control"] for s in known if s["id"] == ask_first]
        candidates += self.seeds + [s["endpoints"]["control"] for s in known]
        return list(dict.fromkeys(candidates))

    def _adopt_map(self, reply: dict | None, endpoint: str) -> tuple[dict | None, dict | None]:
        """(the map now cached, None) for an answer, else (None, the error to report). A
        coordinator that does not know `map` is one shard; an older epoch is not taken."""
        if reply is None:
            return None, {"code": "unavailable", "message": f"no reply from {endpoint}"}
        if reply.get("ok"):
            fetched = reply["result"]
        elif (reply.get("error") or {}).get("code") == "unknown_op":
            fetched = {"mapEpoch": 1, "slotCount": 4096, "shards": [
                {"id": 0, "slots": [[0, 4095]], "endpoints": {"control": endpoint}}]}
        else:
            return None, reply.get("error")
        if self.map is not None and self.map["mapEpoch"] > fetched["mapEpoch"]:
            return self.map, None
        self.map = fetched
        self.single_shard_endpoint = endpoint if len(fetched["shards"]) == 1 else None
        return fetched, None


class ClusterClient(MapHolder):
    def __init__(self, seeds: list[str], context: zmq.Context | None = None, timeout_s: float = 3.0, retries: int = 2):
        if not seeds:
            raise ValueError("a cluster client needs at least one seed endpoint")
        self.seeds = list(seeds)
        self.context = context or zmq.Context.instance()
        self.timeout_s = timeout_s
        self.retries = retries
        self.map: dict | None = None
        self.single_shard_endpoint: str | None = None

    # ------------------------------------------------------------------ map and routing

    def current_map(self) -> dict:
        return self.map if self.map is not None else self.refresh_map()

    def refresh_map(self, ask_first: int | None = None) -> dict:
        """Asks the shard `ask_first`, then the seeds, then every known shard; an older epoch is not taken."""
        last_error = None
        for endpoint in self._map_candidates(ask_first):
            reply = self._exchange(endpoint, {"op": "map", "requestId": f"map-{uuid.uuid4()}"})
            adopted, last_error = self._adopt_map(reply, endpoint)
            if adopted is not None:
                return adopted
        raise ChimeError(last_error or {"code": "unavailable", "message": "no endpoint to ask for the map"})

    def shard_of(self, recipient: str | None) -> int:
        shard_map = self.current_map()
        owner = shard_of(shard_map, recipient) if recipient is not None else None
        return owner if owner is not None else shard_map["shards"][0]["id"]

    def endpoint_of(self, shard: int) -> str:
        shard_map = self.current_map()
        if len(shard_map["shards"]) == 1 and self.single_shard_endpoint:
            return self.single_shard_endpoint
        for candidate in shard_map["shards"]:
            if candidate["id"] == shard:
                return candidate["endpoints"]["control"]
        raise ChimeError({"code": "unavailable", "message": f"shard {shard} is not in the map"})

    @property
    def shard_ids(self) -> list[int]:
        return [shard["id"] for shard in self.current_map()["shards"]]

    # ------------------------------------------------------------------ one request

    def request(self, request: dict, recipient: str | None = None) -> dict:
        """Sends `request` to `recipient`'s shard (shard 0 without one); returns the reply.

        Follows `wrong_shard` at most twice; waits out `try_again` (a moving slot) and
        `rate_limited` replies (their `retryAfterMs`) and resends the same request. Raises ChimeError `unavailable` when the shard
        does not answer; other error replies are returned as they are.
        """
        request = dict(request)
        request.setdefault("requestId", str(uuid.uuid4()))
        target = self.shard_of(recipient)
        for redirect in range(MAXIMUM_REDIRECTS + 1):
            reply = self._call(self.endpoint_of(target), request)
            error = reply.get("error") or {}
            if reply.get("ok") or error.get("code") != "wrong_shard" or redirect == MAXIMUM_REDIRECTS:
                return reply
            self.refresh_map(ask_first=error.get("shard"))
            routed = self.shard_of(recipient)
            named = error.get("shard")
            target = named if routed == target and named in self.shard_ids else routed
        return reply

    def _call(self, endpoint: str, request: dict) -> dict:
        waits = 0
        attempts = 0
        while attempts <= self.retries:
            reply = self._exchange(endpoint, request)
            if reply is None:
                attempts += 1
                continue
            error = reply.get("error") or {}
            # A slot moving between shards (or a rate limit): wait `retryAfterMs`, resend the
            # same request (same requestId), at most 20 times.
            if error.get("code") in ("try_again", "rate_limited") and waits < 20:
                waits += 1
                time.sleep(max(1, int(error.get("retryAfterMs") or 1)) / 1000)
                continue
            return reply
        raise ChimeError({"code": "unavailable",
                          "message": f"no reply from {endpoint} after {self.retries + 1} attempts of {self.timeout_s} s"})

    def _exchange(self, endpoint: str, request: dict) -> dict | None:
        sock = self.context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        try:
            sock.connect(endpoint)
            sock.send_multipart([b"", json.dumps(request).encode()])
            if not sock.poll(int(self.timeout_s * 1000), zmq.POLLIN):
                return None
            return json.loads(sock.recv_multipart()[-1])
        finally:
            sock.close()

    # ------------------------------------------------------------------ many in flight

    def schedule_each(self, reminders: list[dict], window: int = DEFAULT_WINDOW) -> list[dict]:
        """Schedules each reminder in a request of its own, up to `window` requests in flight
        per shard, without asyncio; returns the replies in the reminders' order.

        Every reply is read: an error reply (`invalid_argument`, `not_found`, …) is returned at
        its reminder's index as it came, `ok` or not. The rules of `request` hold per request:
        one `requestId` for all its attempts (a counter under a per-call random prefix), sent
        again when its connection brought no reply for `timeout_s` (at most `retries` times,
        then ChimeError `unavailable` is raised), `try_again` / `rate_limited` waited out
        (`retryAfterMs`, at most 20 times, then returned as they are), `wrong_shard` followed
        at most twice after refreshing the map. One DEALER per shard for the call, read with
        `zmq.Poller`; replies are matched by `requestId`, and a reply without one (the
        coordinator's `rate_limited`, read before the request) settles the oldest request
        waiting on its connection.
        """
        if window < 1:
            raise ValueError("window must be at least 1")
        prefix = uuid.uuid4().hex
        request_ids = [f"{prefix}-{n}" for n in range(len(reminders))]
        return _Pipeline(self, window).run(
            len(reminders),
            lambda n: b'{"op":"schedule","requestId":"%s","reminders":[%s]}' % (
                request_ids[n].encode(), _encode(reminders[n]).encode()),
            request_ids.__getitem__, lambda n: reminders[n]["recipient"])

    # ------------------------------------------------------------------ every shard

    def scatter(self, bodies: dict[int, dict]) -> dict[int, dict | None]:
        """Sends each shard its request at once; returns each shard's reply (None: no answer)."""
        replies: dict[int, dict | None] = {shard: None for shard in bodies}
        waiting = dict(bodies)
        for _ in range(self.retries + 1):
            if not waiting:
                break
            sockets = {}
            poller = zmq.Poller()
            try:
                for shard, request in waiting.items():
                    sock = self.context.socket(zmq.DEALER)
                    sock.setsockopt(zmq.LINGER, 0)
                    sock.connect(self.endpoint_of(shard))
                    sock.send_multipart([b"", json.dumps(request).encode()])
                    sockets[sock] = shard
                    poller.register(sock, zmq.POLLIN)
                deadline = time.monotonic() + self.timeout_s
                unanswered = set(sockets)
                while unanswered:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    for sock, _ in poller.poll(int(remaining * 1000) + 1):
                        replies[sockets[sock]] = json.loads(sock.recv_multipart()[-1])
                        poller.unregister(sock)
                        unanswered.discard(sock)
            finally:
                for sock in sockets:
                    sock.close()
            waiting = {shard: request for shard, request in waiting.items() if replies[shard] is None}
        return replies

    def _gather(self, replies: dict[int, dict | None]) -> tuple[dict[int, dict], list]:
        """(results by shard, missing [(shard, reason)]); raises the first other error reply."""
        results, missing = {}, []
        for shard in sorted(replies):
            reply = replies[shard]
            if reply is None:
                missing.append((shard, f"no reply from {self.endpoint_of(shard)}"))
            elif reply.get("ok"):
                results[shard] = reply.get("result")
            elif reply.get("error", {}).get("code") == "unavailable":
                missing.append((shard, reply["error"].get("message", "unavailable")))
            else:
                raise ChimeError(dict(reply.get("error") or {}, shard=shard))
        return results, missing

    # ------------------------------------------------------------------ operations

    def schedule(self, reminders: list[dict], request_id: str | None = None) -> dict:
        """Schedules reminders split by shard (one requestId); the merged reply in the caller's order.

        Raises ChimeError for a refusal (its field re-indexed to `reminders[k]`) or no answer.
        """
        request_id = request_id or str(uuid.uuid4())
        groups: dict[int, list[int]] = {}
        for index, reminder in enumerate(reminders):
            groups.setdefault(self.shard_of(reminder["recipient"]), []).append(index)
        items: list = [None] * len(reminders)
        warnings: list = []
        for indices in groups.values():
            part = [reminders[i] for i in indices]
            reply = self.request({"op": "schedule", "requestId": request_id, "reminders": part}, part[0]["recipient"])
            if not reply.get("ok"):
                error = dict(reply.get("error") or {})
                field = error.get("field") or ""
                if field.startswith("reminders[") and "]" in field:
                    position = int(field[10:field.index("]")])
                    error["field"] = f"reminders[{indices[position]}]" + field[field.index("]") + 1:]
                elif field == "reminder" or field.startswith("reminder."):
                    error["field"] = f"reminders[{indices[0]}]" + field[len("reminder"):]
                raise ChimeError(error)
            for position, index in enumerate(indices):
                items[index] = reply["result"]["scheduled"][position]
            warnings += reply.get("warnings") or []
        reply = {"ok": True, "requestId": request_id, "result": {"scheduled": items}}
        if warnings:
            reply["warnings"] = warnings
        return reply

    def schedule_bulk(self, reminders: list[dict], chunk: int = BULK_CHUNK, request_id: str | None = None) -> dict:
        """Schedules any number of reminders in requests of at most `chunk` each (the
        coordinator refuses more than `coordinator.maxRemindersPerRequest`, 1,000 by default,
        so that one request stays a short slice of its loop). Each chunk is atomic, the whole
        is not: on a refusal, the chunks before it stay scheduled and ChimeError's field names
        the reminder in the caller's list (`reminders[k]`), with `scheduledBefore` the count
        already scheduled. Request ids are `<request_id>-<n>`, so a retried run is applied once."""
        request_id = request_id or str(uuid.uuid4())
        items: list = []
        warnings: list = []
        for number, start in enumerate(range(0, len(reminders), max(1, chunk))):
            part = reminders[start:start + max(1, chunk)]
            try:
                reply = self.schedule(part, request_id=f"{request_id}-{number}")
            except ChimeError as failure:
                error = dict(failure.error, scheduledBefore=start)
                field = error.get("field") or ""
                if field.startswith("reminders[") and "]" in field:
                    position = int(field[10:field.index("]")])
                    error["field"] = f"reminders[{start + position}]" + field[field.index("]") + 1:]
                raise ChimeError(error) from None
            items += reply["result"]["scheduled"]
            warnings += reply.get("warnings") or []
        reply = {"ok": True, "requestId": request_id, "result": {"scheduled": items}}
        if warnings:
            reply["warnings"] = warnings
        return reply

    def cancel(self, ids=None, recipient=None, match=None, all=False, request_id=None) -> tuple[list, dict | None]:
        """Cancels on the recipient's shard, or on every shard with one requestId (not atomic
        across shards). Returns (cancelled ids sorted, partial error or None)."""
        request = {"op": "cancel", "requestId": request_id or str(uuid.uuid4())}
        for key, value in (("ids", ids), ("recipient", recipient), ("match", match)):
            if value is not None:
                request[key] = value
        if all:
            request["all"] = True
        if recipient is not None:
            reply = self.request(request, recipient)
            if not reply.get("ok"):
                raise ChimeError(reply.get("error") or {})
            return sorted(reply["result"]["cancelled"]), None
        results, missing = self._gather(self.scatter({shard: request for shard in self.shard_ids}))
        cancelled = sorted(i for result in results.values() for i in result["cancelled"])
        return cancelled, _partial(missing, len(results))

    def list(self, ids=None, recipient=None, match=None, all=False, limit=None, cursor=None) -> tuple[dict, dict | None]:
        """One page of `list` (`{"reminders", "nextCursor"?, "total"?}`) and the partial error or None."""
        base = {"op": "list"}
        for key, value in (("ids", ids), ("recipient", recipient), ("match", match), ("limit", limit)):
            if value is not None:
                base[key] = value
        if all:
            base["all"] = True
        if recipient is not None or len(self.current_map()["shards"]) == 1:
            if cursor is not None:
                base["cursor"] = cursor
            reply = self.request(base, recipient)
            if not reply.get("ok"):
                raise ChimeError(reply.get("error") or {})
            return reply["result"], None
        page_size = limit or 250
        epoch = self.current_map()["mapEpoch"]
        positions = cursors.decode(cursor, cursors.LIST)[1] if cursor is not None else {}
        bodies = {}
        for shard in self.shard_ids:
            position = positions.setdefault(shard, None)
            if position is True:
                continue
            body = dict(base, limit=page_size, requestId=str(uuid.uuid4()))
            if position is not None:
                body["cursor"] = cursors.shard_cursor(cursors.LIST, position)
            bodies[shard] = body
        results, missing = self._gather(self.scatter(bodies))
        pages = []
        for shard, result in results.items():
            items = [((listing["reminder"]["id"] + "\0" + listing["reminder"]["recipient"]).encode(), listing)
                     for listing in result["reminders"]]
            frontier = (cursors.shard_cursor_key(result["nextCursor"], cursors.LIST)
                        if result.get("nextCursor") else None)
            pages.append((shard, items, frontier))
        taken, following = merge(pages, page_size)
        positions.update(following)
        page: dict = {"reminders": taken}
        if not all_done(positions):
            page["nextCursor"] = cursors.encode(cursors.LIST, epoch, positions)
        elif cursor is None and not missing:
            page["total"] = len(taken)
        return page, _partial(missing, len(results))


    # Attention (issue 40): registrations with grants, content with interruption levels.

    def register(self, recipient: str, settings: list[str] | None = None, zone: str | None = None,
                 grants: list[str] | None = None, categories: list[dict] | None = None,
                 quiet_hours: list[dict] | None = None, throttle: dict | None = None,
                 opted_out_categories: list[str] | None = None, summary_at: list[str] | None = None,
                 break_through: dict | None = None, opted_out_channels: dict | None = None,
                 locale: str | None = None, request_id: str | None = None) -> dict:
        """Registers (replaces) `recipient` on its shard: {"recipient", "badge", "deliveredCount"}.

        `settings` any of "alert", "sound", "badge" (absent: all); `grants` any of INTERRUPTION_GRANTS
        ("provisional": delivered quietly; "timeSensitive", "critical": those levels keep their
        level, else they are delivered as "active"); `quiet_hours` windows
        {"start": "22:00", "end": "07:00", "weekdays": ["MO", ...]} on `zone`'s clock, in which
        passive and active firings are held until the window ends (listed under "held");
        `throttle` {"count": N, "seconds": S, "per"?: "category" | "thread"}: at most N passive
        and active deliveries in any S seconds (per category or thread with "per"), the rest held; `opted_out_categories`: their firings are suppressed; `summary_at`
        times of day ("08:00") on `zone`'s clock at which held passive and active firings go out
        together; `break_through` {"categories": [...], "filterCriteria": [...]}: passive and
        active firings of those categories or filter criteria are delivered in quiet hours;
        `opted_out_channels` {"*": ["fcm"], "promo": ["apns"]}: delivery channels (webhook, apns,
        fcm) not used for every firing ("*") or for a category's; `locale` ("fr-CA"): content's
        "titleKey" and "bodyKey" resolve in it when a firing is dispatched (the coordinator's
        notifications.stringsDirectory tables), and fire events carry the resolved "title" and "body"."""
        registration: dict = {"id": recipient}
        for key, value in (("settings", settings), ("zone", zone), ("grants", grants), ("categories", categories),
                           ("quietHours", quiet_hours), ("throttle", throttle),
                           ("optedOutCategories", opted_out_categories), ("summaryAt", summary_at),
                           ("breakThrough", break_through), ("optedOutChannels", opted_out_channels),
                           ("locale", locale)):
            if value is not None:
                registration[key] = value
        request = {"op": "register", "recipient": registration}
        if request_id:
            request["requestId"] = request_id
        return self._result(request, recipient)

    # Triggers beyond the clock (issue 41), each on the recipient's shard.

    def _result(self, request: dict, recipient: str) -> dict:
        request.setdefault("requestId", str(uuid.uuid4()))
        reply = self.request(request, recipient)
        if not reply.get("ok"):
            raise ChimeError(reply.get("error") or {})
        return reply["result"]

    def trigger_now(self, reminder_id: str, recipient: str, request_id: str | None = None) -> dict:
        """Fires the reminder once now without moving its schedule (operator): {"firingId"}."""
        request = {"op": "triggerNow", "id": reminder_id, "recipient": recipient}
        if request_id:
            request["requestId"] = request_id
        return self._result(request, recipient)

    def backfill(self, reminder_id: str, recipient: str, from_: str, to: str, request_id: str | None = None) -> dict:
        """Fires the occurrences of from_...to (RFC 3339, inclusive) that have not fired (operator):
        {"fired": [firing ids], "alreadyFired": n}. A second backfill of the range fires nothing."""
        request = {"op": "backfill", "id": reminder_id, "recipient": recipient, "from": from_, "to": to}
        if request_id:
            request["requestId"] = request_id
        return self._result(request, recipient)

    def set_remaining(self, reminder_id: str, recipient: str, count: int | None, request_id: str | None = None) -> dict:
        """Sets the occurrences left (None: no limit; 0 finishes it) (operator):
        {"id", "remaining"?, "state", "nextFireAt"?}."""
        request = {"op": "remaining", "id": reminder_id, "recipient": recipient, "count": count}
        if request_id:
            request["requestId"] = request_id
        return self._result(request, recipient)

    # Delivery destinations (issue 39), on the recipient's shard.

    def add_destinations(self, recipient: str, destinations: list[dict], request_id: str | None = None) -> dict:
        """Adds destinations to the recipient, keeping the rest of its registration (a destination
        with the key of one held replaces it): each {"kind": "webhook", "url", "secrets":
        ["whsec_…"]}, {"kind": "apns", "token", "topic", "environment"} or {"kind": "fcm",
        "token"}. Returns the recipient result, secrets and tokens masked."""
        request = {"op": "destinations", "recipient": recipient, "add": destinations}
        if request_id:
            request["requestId"] = request_id
        return self._result(request, recipient)

    def remove_destinations(self, recipient: str, keys: list[str], request_id: str | None = None) -> dict:
        """Removes the recipient's destinations with these keys ("webhook:<url>", "apns:<token>",
        "fcm:<token>"); a key it does not hold raises ChimeError not_found."""
        request = {"op": "destinations", "recipient": recipient, "remove": keys}
        if request_id:
            request["requestId"] = request_id
        return self._result(request, recipient)

    def recipient(self, recipient: str) -> dict:
        """The registered recipient (token, secrets and tokens masked), its badge and delivered count."""
        return self._result({"op": "recipient", "recipient": recipient}, recipient)

    def locate(self, recipient: str, latitude: float, longitude: float, accuracy: float | None = None,
               at: str | None = None, request_id: str | None = None) -> dict:
        """Reports where the recipient is (at: RFC 3339, default the coordinator's now):
        {"recipient", "accepted", "crossings": [{"id", "crossing", "firingId"?}]}. A report not later
        than the recipient's last one is not taken (accepted false)."""
        request = {"op": "locate", "recipient": recipient, "latitude": latitude, "longitude": longitude}
        if accuracy is not None:
            request["accuracy"] = accuracy
        if at is not None:
            request["at"] = at
        if request_id:
            request["requestId"] = request_id
        return self._result(request, recipient)

    def _broadcast(self, request: dict) -> tuple[dict[int, dict], dict | None]:
        """One request (one requestId) to every shard: ({shard: result}, partial error or None)."""
        request.setdefault("requestId", str(uuid.uuid4()))
        results, missing = self._gather(self.scatter({shard: dict(request) for shard in self.shard_ids}))
        return results, _partial(missing, len(results))

    def set_calendar(self, name: str, calendar: dict, request_id: str | None = None) -> tuple[dict[int, dict], dict | None]:
        """Sets exclusion calendar `name` ({"dates", "yearly", "weekdays", "ranges", "description"})
        on every shard, one requestId: ({shard: {"name", "calendar", "reminders"}}, partial or None).
        Not atomic across shards: send it again when partial names one that did not answer."""
        request = {"op": "setCalendar", "name": name, "calendar": calendar}
        if request_id:
            request["requestId"] = request_id
        return self._broadcast(request)

    def delete_calendar(self, name: str, request_id: str | None = None) -> tuple[dict[int, dict], dict | None]:
        """Deletes calendar `name` on every shard (see set_calendar)."""
        request = {"op": "deleteCalendar", "name": name}
        if request_id:
            request["requestId"] = request_id
        return self._broadcast(request)

    def calendars(self, name: str | None = None) -> tuple[dict[int, dict], dict | None]:
        """Every shard's calendars: ({shard: {"calendars": [...]}}, partial or None)."""
        request = {"op": "calendars"}
        if name is not None:
            request["name"] = name
        return self._broadcast(request)

    def disable(self, ids: list, recipient: str | None = None, note: str | None = None) -> dict:
        """Switches reminders off, with an optional note listed until they are switched on."""
        request = {"op": "disable", "ids": ids}
        if recipient is not None:
            request["recipient"] = recipient
        if note is not None:
            request["note"] = note
        return self._result(request, recipient)



class _Pipeline:
    """The engine of `ClusterClient.schedule_each`: N requests, one DEALER per endpoint,
    `window` in flight per endpoint, one deadline sweep per wake-up (no timer per request)."""

    def __init__(self, client: ClusterClient, window: int):
        self.client, self.window = client, window
        self.sockets: dict[str, zmq.Socket] = {}
        self.endpoints: dict[zmq.Socket, str] = {}
        # Per endpoint, requests in flight in the order sent: requestId → index.
        self.in_flight: dict[str, dict[str, int]] = {}
        self.last_heard: dict[str, float] = {}
        self.sent_at: dict[str, float] = {}
        self.poller = zmq.Poller()

    def _socket(self, endpoint: str) -> zmq.Socket:
        sock = self.sockets.get(endpoint)
        if sock is None:
            sock = self.client.context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(endpoint)
            self.sockets[endpoint], self.endpoints[sock] = sock, endpoint
            self.in_flight[endpoint], self.last_heard[endpoint] = {}, 0.0
            self.poller.register(sock, zmq.POLLIN)
        return sock

    def run(self, count: int, body_of, request_id_of, recipient_of) -> list[dict]:
        client, timeout_s = self.client, self.client.timeout_s
        replies: list = [None] * count
        bodies: dict[int, bytes] = {}
        attempts, waits, redirects, targets = [0] * count, [0] * count, [0] * count, [0] * count
        delayed: list[tuple[float, int, int]] = []  # (resend at, order, index)
        order = itertools.count()
        owners: dict[str, int] = {}
        shard_map = client.current_map()
        single = client.endpoint_of(shard_map["shards"][0]["id"]) if len(shard_map["shards"]) == 1 else None
        # Requests ready to go, per endpoint: index of the reminder.
        ready: dict[str, list[int]] = {}
        if single is not None:
            targets = [shard_map["shards"][0]["id"]] * count
            ready[single] = list(range(count - 1, -1, -1))
        else:
            for n in range(count - 1, -1, -1):
                recipient = recipient_of(n)
                shard = owners.get(recipient)
                if shard is None:
                    shard = owners[recipient] = client.shard_of(recipient)
                targets[n] = shard
                ready.setdefault(client.endpoint_of(shard), []).append(n)
        settled = 0
        try:
            for endpoint in ready:
                self._socket(endpoint)
            while settled < count:
                now = time.monotonic()
                while delayed and delayed[0][0] <= now:
                    n = heapq.heappop(delayed)[2]
                    ready.setdefault(self._route(n, targets, single), []).append(n)
                refused = False  # a send found no peer yet, or its queue full
                for endpoint, queue in ready.items():
                    if not queue:
                        continue
                    sock, flight = self._socket(endpoint), self.in_flight[endpoint]
                    if not flight:
                        self.last_heard[endpoint] = now
                    while queue and len(flight) < self.window:
                        n = queue[-1]
                        body = bodies.get(n)
                        if body is None:
                            body = bodies[n] = body_of(n)
                        try:
                            sock.send(b"", _SNDMORE_NOBLOCK)
                        except zmq.Again:
                            refused = True
                            break
                        sock.send(body)
                        queue.pop()
                        request_id = request_id_of(n)
                        flight[request_id] = n
                        self.sent_at[request_id] = now
                # Wait for a reply, the first resend due, or the first connection's deadline.
                wake = now + timeout_s
                for endpoint, flight in self.in_flight.items():
                    if flight:
                        oldest = self.sent_at[next(iter(flight))]
                        wake = min(wake, max(oldest, self.last_heard[endpoint]) + timeout_s)
                if delayed:
                    wake = min(wake, delayed[0][0])
                if refused:
                    wake = min(wake, now + 0.001)
                events = self.poller.poll(max(0, int((wake - now) * 1000) + 1))
                now = time.monotonic()
                for sock, _ in events:
                    endpoint = self.endpoints[sock]
                    flight = self.in_flight[endpoint]
                    while True:
                        try:
                            frames = sock.recv_multipart(_NOBLOCK)
                        except zmq.Again:
                            break
                        self.last_heard[endpoint] = now
                        try:
                            reply = json.loads(frames[-1])
                        except (ValueError, IndexError):
                            continue
                        if not isinstance(reply, dict):
                            continue
                        request_id = reply.get("requestId")
                        if request_id is None:
                            request_id = next(iter(flight), None)  # sent before the request was read
                        n = flight.pop(request_id, None) if isinstance(request_id, str) else None
                        if n is None:
                            continue  # a late reply to an attempt already settled
                        del self.sent_at[request_id]
                        error = reply.get("error")
                        code = error.get("code") if isinstance(error, dict) else None
                        if code in ("try_again", "rate_limited") and waits[n] < MAXIMUM_WAITS:
                            waits[n] += 1
                            resend_at = now + max(1, int(error.get("retryAfterMs") or 1)) / 1000
                            heapq.heappush(delayed, (resend_at, next(order), n))
                        elif code == "wrong_shard" and redirects[n] < MAXIMUM_REDIRECTS:
                            redirects[n] += 1
                            client.refresh_map(ask_first=error.get("shard"))
                            owners.clear()
                            routed = client.shard_of(recipient_of(n))
                            named = error.get("shard")
                            targets[n] = named if routed == targets[n] and named in client.shard_ids else routed
                            single = None
                            ready.setdefault(client.endpoint_of(targets[n]), []).append(n)
                        else:
                            replies[n] = reply
                            settled += 1
                            bodies.pop(n, None)
                # One sweep: the oldest request of each connection that has heard nothing for
                # `timeout_s` is sent again (same requestId), as is every request behind it.
                for endpoint, flight in self.in_flight.items():
                    if not flight or now - self.last_heard[endpoint] < timeout_s:
                        continue
                    oldest = next(iter(flight))
                    if now - self.sent_at[oldest] < timeout_s:
                        continue
                    for request_id, n in list(flight.items()):
                        if now - self.sent_at[request_id] < timeout_s:
                            break
                        del flight[request_id], self.sent_at[request_id]
                        attempts[n] += 1
                        if attempts[n] > client.retries:
                            raise ChimeError({"code": "unavailable", "message":
                                              f"no reply from {endpoint} after {attempts[n]} attempts of {timeout_s} s"})
                        ready.setdefault(endpoint, []).append(n)
            return replies
        finally:
            for sock in self.sockets.values():
                sock.close()

    def _route(self, n: int, targets: list[int], single: str | None) -> str:
        return single if single is not None else self.client.endpoint_of(targets[n])
