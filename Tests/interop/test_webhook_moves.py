"""Webhooks through a slot move and through a coordinator failover (issue 39, "Interop through a
slot move and a coordinator failover"), checked by the `standardwebhooks`-verifying receiver of
test_webhooks.py.

Nobody kills a worker here, so every scheduled firing must reach its recipient's webhook, every
request must verify, the set of `webhook-id`s must be exactly the set of firing ids scheduled,
and each request's body must name the firing its `webhook-id` names (a firing seen twice keeps
one id). The recipients' destinations must survive: a reminder scheduled afterwards arrives
signed too.

1. A slot move: shards 0 and 1 split the slots, shard 2 has none, a map register file; the
   recipients' slot range moves from shard 0 to shard 2 (`chime shards move`) while their
   reminders come due.
2. A failover: an active coordinator and a warm standby on one store; the active one is killed
   with SIGKILL while the reminders come due; the standby takes over.

Every process is started here and stopped by its pid; every wait has a deadline.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import slot_of  # noqa: E402
from conftest import ChimeCluster, chime_binary, control_request, wait_for  # noqa: E402
from sharded import ShardedCluster  # noqa: E402
from test_webhooks import DELIVERY, SECRET, Receiver, receiver, register_webhook  # noqa: E402,F401

DEADLINE_S = 30.0
RECIPIENTS = 6
PER_RECIPIENT = 6
# The reminders come due from FIRST_DUE_S to FIRST_DUE_S + SPREAD_S seconds after scheduling.
FIRST_DUE_S = 1.0
SPREAD_S = 4.0
MOVED_SLOTS = (0, 63)


def iso_ms(at: float) -> str:
    """`at` (Unix seconds) as the wire writes a due instant: UTC, whole milliseconds."""
    seconds, milliseconds = divmod(int(round(at * 1000)), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{milliseconds:03d}Z"


def due_reminders(recipients: list[str], prefix: str) -> tuple[list[dict], set[str]]:
    """RECIPIENTS x PER_RECIPIENT one-shot reminders due evenly over SPREAD_S seconds from
    FIRST_DUE_S on (whole milliseconds), with the firing ids they make."""
    start = round(time.time() + FIRST_DUE_S, 3)
    count = len(recipients) * PER_RECIPIENT
    reminders, firing_ids = [], set()
    for index in range(count):
        recipient = recipients[index % len(recipients)]
        due = iso_ms(start + SPREAD_S * index / count)
        reminder_id = f"{prefix}{index}"
        reminders.append({"id": reminder_id, "recipient": recipient, "content": {"title": f"t{index}"}, "trigger": {"at": due}})
        firing_ids.add(f"{recipient}/{reminder_id}@{due}")
    return reminders, firing_ids


def schedule(endpoint: str, reminders: list[dict]) -> None:
    reply = control_request(endpoint, {"op": "schedule", "requestId": str(uuid.uuid4()), "reminders": reminders}, timeout_s=5)
    assert reply and reply["ok"], reply
    assert len(reply["result"]["scheduled"]) == len(reminders), reply


def webhook_ids(requests: list[dict]) -> Counter:
    return Counter(request["headers"]["webhook-id"] for request in requests)


def assert_each_firing_delivered_once_per_webhook_id(requests: list[dict], expected: set[str]) -> Counter:
    """Every request verified; its body names the firing its webhook-id names; the distinct
    webhook-ids are exactly `expected`. Returns how many requests each id had."""
    assert [r["verified"] for r in requests if r["verified"] is not True] == []
    for request in requests:
        event = json.loads(request["body"])
        assert (event["type"], event["firingId"]) == ("fire", request["headers"]["webhook-id"])
    counts = webhook_ids(requests)
    assert sorted(set(counts) - expected) == [], "webhook-ids of no scheduled firing"
    assert sorted(expected - set(counts)) == [], "scheduled firings that never reached the receiver"
    assert len(counts) == len(expected)
    return counts


# --------------------------------------------------------------------------- slot move


class MovingShards(ShardedCluster):
    """Shards 0 and 1 splitting the slots, shard 2 configured with none, a map register file,
    two workers serving every shard, and webhooks to loopback allowed."""

    def __init__(self, binary: Path, directory: Path):
        extra = {"delivery": DELIVERY, "heartbeat": {"intervalMilliseconds": 200}}
        super().__init__(binary, directory, shards=3, workers=2, extra=extra)
        self.register = directory / "map-register.json"

    @property
    def shard_map(self) -> dict:
        shard_map = super().shard_map
        shard_map["shards"][0]["slots"] = [[0, 2047]]
        shard_map["shards"][1]["slots"] = [[2048, 4095]]
        shard_map["shards"][2]["slots"] = []
        shard_map["register"] = str(self.register)
        return shard_map


def register_sharded_webhook(cluster: ShardedCluster, recipient: str, url: str) -> None:
    secret = cluster.directory / f"secret-{recipient}"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    done = cluster.run("register", recipient, "--webhook", url, "--webhook-secret-file", str(secret))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"registered {recipient}: allows alert, sound, badge, 0 categories, 1 destinations, badge 0\n"


def test_each_firing_reaches_its_webhook_once_per_id_through_a_slot_move(tmp_path, receiver):
    cluster = MovingShards(chime_binary(), tmp_path)
    try:
        cluster.start()
        low, high = MOVED_SLOTS
        recipients = [r for r in (f"m{n}" for n in range(100_000)) if low <= slot_of(r) <= high][:RECIPIENTS]
        assert len(recipients) == RECIPIENTS
        for recipient in recipients:
            register_sharded_webhook(cluster, recipient, receiver.url(f"/hook/{recipient}"))
        reminders, expected = due_reminders(recipients, "mv")
        schedule(cluster.control(0), reminders)

        # The move starts once the first firing has reached the receiver, so firings come due
        # before, during and after it.
        wait_for("the first webhook", lambda: receiver.requests, DEADLINE_S)
        move_started = time.monotonic()
        mover = subprocess.Popen(
            [str(cluster.binary), "shards", "move", f"{low}-{high}", "--to", "2", "--json", "--timeout", "20",
             "--config", str(cluster.config_path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cluster.directory)
        try:
            out, err = mover.communicate(timeout=DEADLINE_S)
        finally:
            if mover.poll() is None:
                mover.kill()
                mover.wait()
        move_seconds = time.monotonic() - move_started
        assert mover.returncode == 0, out + err
        result = json.loads(out)["result"]
        assert (result["moves"], result["moved"], result["outcome"], result["settled"]) == (1, high - low + 1, "committed", True)
        owners = {shard["id"]: shard["slots"] for shard in json.loads(cluster.register.read_text())["map"]["shards"]}
        assert owners[2] == [[low, high]], owners
        during = len(receiver.requests)

        requests = wait_for("every firing at the receiver",
                            lambda: receiver.requests if set(webhook_ids(receiver.requests)) >= expected else None, DEADLINE_S)
        counts = assert_each_firing_delivered_once_per_webhook_id(list(requests), expected)
        # Nobody killed a worker: nothing is sent twice.
        assert [firing for firing, seen in counts.items() if seen > 1] == []
        assert sum(counts.values()) == RECIPIENTS * PER_RECIPIENT
        by_shard = Counter(json.loads(r["body"]).get("shard") for r in requests)
        print(f"slot move of {high - low + 1} slots took {move_seconds:.2f} s; {during} of "
              f"{len(expected)} webhooks had arrived when it committed; fired by shard: {dict(by_shard)}")

        # The destinations moved with the slots: shard 2 now holds them and signs the next one.
        for recipient in recipients:
            shown = cluster.run("recipient", recipient)
            assert shown.returncode == 0, shown.stdout + shown.stderr
            assert f"destination webhook:{receiver.url(f'/hook/{recipient}')} (1 secrets)" in shown.stdout
        moved = recipients[0]
        due = iso_ms(round(time.time() + 0.5, 3))
        reply = control_request(cluster.control(2), {
            "op": "schedule", "requestId": str(uuid.uuid4()),
            "reminder": {"id": "after-move", "recipient": moved, "content": {"title": "after"}, "trigger": {"at": due}},
        }, timeout_s=5)
        assert reply and reply["ok"], reply
        after_id = f"{moved}/after-move@{due}"
        [request] = wait_for("the webhook scheduled after the move",
                             lambda: [r for r in receiver.on(f"/hook/{moved}") if r["headers"]["webhook-id"] == after_id], DEADLINE_S)
        assert request["verified"] is True
        assert len(receiver.requests) == RECIPIENTS * PER_RECIPIENT + 1
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        cluster.stop()


# --------------------------------------------------------------------------- failover


@pytest.mark.parametrize("workers", [1, 2])
def test_each_firing_reaches_its_webhook_once_per_id_through_a_coordinator_failover(tmp_path, receiver, request, workers):
    configuration = {"delivery": DELIVERY, "heartbeat": {"intervalMilliseconds": 200, "liveness": 3},
                     "coordinator": {"leaseSeconds": 2}}
    cluster = ChimeCluster(chime_binary(), tmp_path, configuration, workers=workers)
    request.node._chime_clusters = [cluster]
    try:
        cluster.start()
        cluster.spawn("standby", ["coordinator", "--standby"])
        wait_for("the standby to wait warm", lambda: "standby: warm state loaded" in (tmp_path / "standby.log").read_text(), DEADLINE_S)
        recipients = [f"f{n}" for n in range(RECIPIENTS)]
        for recipient in recipients:
            register_webhook(cluster, recipient, receiver.url(f"/hook/{recipient}"))
        reminders, expected = due_reminders(recipients, "fo")
        schedule(cluster.control_endpoint, reminders)

        # Killed once a third of the firings have reached the receiver.
        wait_for("a third of the webhooks", lambda: len(receiver.requests) >= len(expected) // 3, DEADLINE_S)
        killed_at = time.monotonic()
        cluster.kill_coordinator(signal.SIGKILL)
        before = len(receiver.requests)
        wait_for("the standby to answer", lambda: control_request(cluster.control_endpoint, {"op": "ping"}, timeout_s=0.2), DEADLINE_S)
        takeover_seconds = time.monotonic() - killed_at
        status = control_request(cluster.control_endpoint, {"op": "status"}, timeout_s=5)
        assert status and status["ok"] and status["result"]["pid"] == next(p.pid for n, p in cluster.children if n == "standby"), status

        wait_for("every firing at the receiver", lambda: set(webhook_ids(receiver.requests)) >= expected, DEADLINE_S)

        # Every firing is acknowledged on the new active coordinator, each once; then nothing
        # more is sent, and the requests are counted.
        def delivered() -> list[str] | None:
            ids = []
            for recipient in recipients:
                reply = control_request(cluster.control_endpoint, {"op": "delivered", "recipient": recipient}, timeout_s=3)
                if not (reply and reply.get("ok")):
                    return None
                ids += [item["firingId"] for item in reply["result"]["delivered"]]
            return ids if set(ids) >= expected else None

        acknowledged = wait_for("every firing acknowledged", delivered, DEADLINE_S)
        assert sorted(acknowledged) == sorted(expected)
        requests = list(receiver.requests)
        counts = assert_each_firing_delivered_once_per_webhook_id(requests, expected)
        duplicates = sum(counts.values()) - len(expected)
        # The standby hands out again every firing whose acknowledgement the killed coordinator
        # had not journaled. A worker that already sent one answers it without sending it
        # again; only another worker, which never had it, sends it a second time.
        publishers = {firing: [json.loads(r["body"])["publisher"] for r in requests if r["headers"]["webhook-id"] == firing]
                      for firing, seen in counts.items() if seen > 1}
        assert [firing for firing, by in publishers.items() if len(set(by)) != len(by)] == [], publishers
        if workers == 1:
            assert sum(counts.values()) == len(expected), publishers
        print(f"failover with {workers} worker(s): SIGKILL after {before} of {len(expected)} webhooks; the standby "
              f"answered after {takeover_seconds:.2f} s; {duplicates} duplicate requests (same webhook-id, another worker)")

        # The destinations survived the takeover: listed, and a new reminder arrives signed.
        for recipient in recipients:
            shown = subprocess.run([str(cluster.binary), "recipient", recipient, *cluster.cluster_arguments],
                                   capture_output=True, text=True, timeout=60, cwd=cluster.directory)
            assert shown.returncode == 0, shown.stderr
            assert f"destination webhook:{receiver.url(f'/hook/{recipient}')} (1 secrets)" in shown.stdout
        due = iso_ms(round(time.time() + 0.5, 3))
        reply = control_request(cluster.control_endpoint, {
            "op": "schedule", "requestId": str(uuid.uuid4()),
            "reminder": {"id": "after-failover", "recipient": recipients[0], "content": {"title": "after"}, "trigger": {"at": due}},
        }, timeout_s=5)
        assert reply and reply["ok"], reply
        after_id = f"{recipients[0]}/after-failover@{due}"
        [late] = wait_for("the webhook scheduled after the takeover",
                          lambda: [r for r in receiver.on(f"/hook/{recipients[0]}") if r["headers"]["webhook-id"] == after_id], DEADLINE_S)
        assert late["verified"] is True
    finally:
        cluster.stop()
