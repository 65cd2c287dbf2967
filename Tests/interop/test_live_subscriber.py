"""Live subscribers across coordinator restarts: nothing lost, each firing id once.

Two live subscribers watch one recipient for the whole test: the pyzmq client module of
this repository (`clients/python/chime_subscriber.py`) and a `chime subscribe --json`
process. Each round schedules N one-shots due around a coordinator `kill -9` and restart
(some due just before the kill, most while it is down, a few just after it is back), then
waits, with a deadline, until both subscribers have printed every firing id of the round.
A firing id printed twice, or one missing at the deadline, fails the test.

`CHIME_RESTART_ROUNDS` sets the rounds (default 3; the long form is 20) and
`CHIME_RESTART_FIRINGS` the one-shots per round (default 40). The figures are printed.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_subscriber import ChimeSubscriber, GapFiller  # noqa: E402
from conftest import control_request  # noqa: E402

ROUNDS = int(os.environ.get("CHIME_RESTART_ROUNDS", "3"))
FIRINGS_PER_ROUND = int(os.environ.get("CHIME_RESTART_FIRINGS", "40"))
DELIVERY_DEADLINE_S = 30.0
DOWN_S = 0.8


def rfc3339(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"


def ok(endpoint: str, request: dict) -> dict:
    """A control request, retried (same requestId) until it is answered, at most 20 s."""
    request = dict(request, requestId=request.get("requestId") or f"t-{uuid.uuid4()}")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        reply = control_request(endpoint, request, timeout_s=1.0)
        if reply is not None:
            assert reply.get("ok"), reply
            return reply["result"]
    raise AssertionError(f"no reply to {request['op']} within 20 s")


class CLISubscriber:
    """The `chime subscribe --json` child: reads the JSON lines of its log so far."""

    def __init__(self, cluster, recipient: str):
        self.log = cluster.directory / "subscribe.log"
        self.process = cluster.spawn("subscribe", ["subscribe", "--recipient", recipient, "--json"])

    def firing_ids(self) -> list[str]:
        ids = []
        for line in self.log.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                ids.append(json.loads(line)["firingId"])
        return ids


def test_gap_filler_replays_a_restart_gap_before_newer_events():
    filler = GapFiller(since=5)
    assert filler.on_fetched([], 5, now=0.0) == []
    assert [e["seq"] for e in filler.on_live({"seq": 6, "firingId": "a"}, 0.1)] == [6]
    jump = 1_048_577
    assert filler.on_live({"seq": jump + 1, "firingId": "d"}, 1.0) == []
    replayed = [{"seq": 7, "firingId": "b"}, {"seq": 8, "firingId": "c"}, {"seq": jump, "firingId": "x"}]
    assert [e["firingId"] for e in filler.on_fetched(replayed, jump + 1, now=1.02)] == ["b", "c", "x", "d"]
    assert filler.on_live({"seq": jump + 2, "firingId": "b"}, 1.1) == [], "a redelivery of b"
    assert filler.watermark == jump + 1


def test_gap_filler_releases_what_waits_after_a_refused_catch_up():
    # The same case as GapFillerTests.aRefusedCatchUpReleasesTheWaitingEventsAfterTheWait (Swift).
    filler = GapFiller(since=18)
    assert filler.on_fetched([], 18, now=0.0) == []
    assert filler.on_live({"seq": 57, "firingId": "late"}, 1.0) == [], "19…56 are not settled"
    filler.on_fetch_failed(1.02)
    assert filler.on_tick(10.0) == [], "an unanswered fetch starts no wait"
    filler.on_fetch_refused(10.0)
    assert filler.on_tick(11.99) == []
    assert [e["seq"] for e in filler.on_tick(12.0)] == [57]
    assert filler.watermark == 57
    assert not filler.is_fetch_due(10.01)


def test_gap_filler_paces_first_catch_up_retries_like_the_idle_reconciliation():
    # The same case as GapFillerTests.firstCatchUpRetriesArePacedLikeTheIdleReconciliation (Swift).
    filler = GapFiller()
    assert filler.is_fetch_due(0.0)
    filler.on_fetch_refused(0.0)
    assert filler.on_live({"seq": 40, "firingId": "w"}, 0.1) == []
    assert not filler.is_fetch_due(0.99)
    assert filler.is_fetch_due(1.0)
    filler.on_fetch_failed(1.0)
    assert not filler.is_fetch_due(1.5)
    assert filler.is_fetch_due(2.0)
    assert filler.watermark is None
    assert [e["seq"] for e in filler.on_fetched([], 39, now=2.0)] == [40]


def hand_over(seq: int, source: int = 0, target: int = 2, slots=((3, 4),)) -> dict:
    return {"type": "handover", "seq": seq, "shard": source, "move": "m1", "slots": [list(r) for r in slots],
            "target": target, "mapEpoch": 2, "at": "2026-12-24T08:00:00.000Z"}


def test_gap_filler_delivers_a_hand_over_once_in_seq_order():
    # The same case as HandOverOrderTests.theFillerDeliversAHandOverOnceInSeqOrder (Swift).
    filler = GapFiller(since=10)
    assert filler.on_fetched([], 10, now=0.0) == []
    assert [e["seq"] for e in filler.on_live({"seq": 11, "firingId": "a"}, 0.1)] == [11]
    assert filler.on_live(hand_over(13), 0.2) == []
    assert filler.on_live({"seq": 14, "firingId": "c"}, 0.2) == []
    ready = filler.on_fetched([{"seq": 12, "firingId": "b"}], 13, now=0.22, hand_overs=[hand_over(13)])
    assert [e["seq"] for e in ready] == [12, 13, 14]
    assert ready[1] == hand_over(13)
    assert filler.on_live(hand_over(13), 0.3) == []
    assert filler.on_fetched([], 14, now=1.3, hand_overs=[hand_over(13)]) == []


def event(seq: int, firing: str | None = None) -> dict:
    return {"seq": seq, "firingId": firing or f"r{seq}"}


def test_gap_filler_bounds_what_waits_for_a_fill_that_never_comes():
    # The same case as GapFillerTests.theEventsWaitingForAFillThatNeverComesAreBounded (Swift).
    filler = GapFiller(maximum_waiting=3)
    filler.on_fetch_failed(0.0)
    assert filler.on_live(event(11), 0.1) == []
    assert filler.on_live(event(12), 0.2) == []
    assert filler.on_live(event(14), 0.3) == []
    assert [e["seq"] for e in filler.on_live(event(15), 0.4)] == [11, 12]
    assert filler.watermark == 12
    assert [entry[0] for entry in filler.waiting] == [14, 15]
    assert [e["seq"] for e in filler.on_live(event(13), 0.5)] == [13, 14, 15]
    assert filler.on_live(event(12), 0.6) == []
    assert filler.waiting == [] and filler.waiting_by_key == {}


def test_gap_filler_puts_a_lower_seq_copy_of_a_waiting_firing_in_its_place():
    # The same case as GapFillerTests.aWaitingFiringsCopyWithALowerSeqTakesItsPlaceInOrder (Swift).
    filler = GapFiller(since=10)
    assert filler.on_fetched([], 10, 0.0) == []
    assert filler.on_live(event(13, "x"), 0.1) == []
    assert filler.on_live(event(12, "y"), 0.2) == []
    assert [(e["seq"], e["firingId"]) for e in filler.on_live(event(11, "x"), 0.3)] == [(11, "x"), (12, "y")]
    assert filler.waiting == [] and filler.watermark == 12


def test_slot_order_holds_a_targets_event_until_the_hand_over():
    from chime_client.subscriber import SlotOrder
    from chime_client import slot_of

    shard_map = {"slotCount": 16, "shards": [{"id": 0, "slots": [[0, 7]]}, {"id": 2, "slots": [[8, 15]]}]}
    alice = next(f"user{n}" for n in range(10_000) if slot_of(f"user{n}", 16) == 3)
    order = SlotOrder(shard_map)
    first = {"seq": 5, "firingId": "f5", "recipient": alice}
    early = {"seq": 8, "firingId": "f8", "recipient": alice}
    assert order.on_fire(first, 0, now=0.0) == [first]
    assert order.on_fire(early, 2, now=0.1) == [], "the target's event waits for the hand-over"
    assert order.on_tick(now=1.0) == []
    assert order.on_hand_over(hand_over(6)) == [hand_over(6), early]
    later = {"seq": 9, "firingId": "f9", "recipient": alice}
    assert order.on_fire(later, 2, now=1.2) == [later]
    # A hand-over that never comes: the event passes after the hold.
    stray = {"seq": 10, "firingId": "f10", "recipient": alice}
    assert order.on_fire(stray, 0, now=2.0) == []
    assert order.on_tick(now=7.0) == [stray]


def test_live_subscribers_lose_nothing_across_coordinator_restarts(make_cluster, capsys):
    cluster = make_cluster({})
    recipient = f"live-{uuid.uuid4().hex[:8]}"
    python_subscriber = ChimeSubscriber(cluster.events_endpoint, cluster.control_endpoint, recipient=recipient)
    cli_subscriber = CLISubscriber(cluster, recipient)
    python_seen: list[str] = []

    def pump(until, deadline_s: float, what: str) -> None:
        deadline = time.monotonic() + deadline_s
        while not until():
            cluster.check_children()
            assert time.monotonic() < deadline, f"timed out after {deadline_s} s waiting for {what}"
            python_seen.extend(e["firingId"] for e in python_subscriber.receive(timeout_s=0.05))

    try:
        # Until both subscribers have printed a probe (the CLI learns its start watermark
        # when it is up, so probes scheduled before that are not its to print).
        probes: list[str] = []
        next_probe_at = 0.0

        def both_saw_a_probe() -> bool:
            nonlocal next_probe_at
            cli_seen = cli_subscriber.firing_ids()
            # A firing id is <recipient>/<reminder id>@<due>.
            probe_ids = {f"{recipient}/{probe}" for probe in probes}
            if any(f.split("@")[0] in probe_ids for f in python_seen) and any(f.split("@")[0] in probe_ids for f in cli_seen):
                return True
            if time.monotonic() >= next_probe_at:
                probes.append(f"probe-{uuid.uuid4().hex[:8]}")
                ok(cluster.control_endpoint, {"op": "schedule", "reminder": {
                    "id": probes[-1], "recipient": recipient, "trigger": {"at": rfc3339(datetime.now(timezone.utc))}}})
                next_probe_at = time.monotonic() + 1.0
            return False

        pump(both_saw_a_probe, 20, "a probe at both subscribers")
        python_seen.clear()
        cli_lines_before = len(cli_subscriber.firing_ids())

        expected: set[str] = set()
        figures = []
        for round_number in range(1, ROUNDS + 1):
            kill_at = datetime.now(timezone.utc) + timedelta(seconds=1.5)
            span_s = DOWN_S + 1.0
            reminders = []
            for index in range(FIRINGS_PER_ROUND):
                due = kill_at + timedelta(seconds=-0.2 + span_s * index / FIRINGS_PER_ROUND)
                due = due.replace(microsecond=due.microsecond // 1000 * 1000)
                reminder_id = f"r{round_number}-{index}-{uuid.uuid4().hex[:6]}"
                reminders.append({"id": reminder_id, "recipient": recipient, "trigger": {"at": rfc3339(due)},
                                  "content": {"body": f"round {round_number}"}})
                expected.add(f"{recipient}/{reminder_id}@{rfc3339(due)}")
            ok(cluster.control_endpoint, {"op": "schedule", "reminders": reminders})
            pump(lambda: datetime.now(timezone.utc) >= kill_at, 10, "the kill time")
            cluster.kill_coordinator()
            restart_at = time.monotonic() + DOWN_S
            pump(lambda: time.monotonic() >= restart_at, 10, "the restart time")
            cluster.start_coordinator(f"coordinator-r{round_number}")
            started = time.monotonic()
            pump(lambda: expected <= set(python_seen) and expected <= set(cli_subscriber.firing_ids()),
                 DELIVERY_DEADLINE_S, f"round {round_number}'s {FIRINGS_PER_ROUND} firings at both subscribers")
            figures.append(round(time.monotonic() - started, 2))

        cli_seen = cli_subscriber.firing_ids()[cli_lines_before:]
        lost_python = expected - set(python_seen)
        lost_cli = expected - set(cli_seen)
        twice_python = [f for f, n in Counter(python_seen).items() if n > 1]
        twice_cli = [f for f, n in Counter(cli_seen).items() if n > 1]
        with capsys.disabled():
            print(f"\nlive subscribers across {ROUNDS} coordinator restarts (kill -9, {DOWN_S} s down), "
                  f"{FIRINGS_PER_ROUND} one-shots each: {len(expected)} expected, lost pyzmq {len(lost_python)} "
                  f"cli {len(lost_cli)}, printed twice pyzmq {len(twice_python)} cli {len(twice_cli)}; "
                  f"seconds from restart to the round's last firing at both: {figures}")
        assert not lost_python and not lost_cli
        assert not twice_python and not twice_cli
    finally:
        python_subscriber.close()
