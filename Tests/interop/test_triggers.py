"""Triggers beyond the clock (issue 41) from Python: the ClusterClient's trigger_now, backfill,
set_remaining and disable(note=) against a real cluster (conftest.py's), the spread delay the
client computes against the firing the coordinator makes, and `chime` CLI commands.

Waits are polled conditions with deadlines; the cluster is stopped by its pids.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import ClusterClient, spread_delay_ms  # noqa: E402
from conftest import chime_binary, delivered_ids, wait_for  # noqa: E402



def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def test_spread_delay_matches_the_pinned_swift_values():
    assert spread_delay_ms("alice/standup@2026-12-24T08:00:00.000Z", 900) == 338752
    assert spread_delay_ms("user-000001/daily@2026-12-24T08:00:00.000Z", 900) == 585962
    assert all(0 <= spread_delay_ms(f"u{n}/r@2026-12-24T08:00:00.000Z", 60) < 60_000 for n in range(1000))


def test_operators_triggers_from_python(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-trig-{uuid.uuid4().hex[:8]}"
    now = datetime.now(timezone.utc).replace(microsecond=0)
    start = now - timedelta(days=5) + timedelta(hours=1)
    client.schedule([{"id": "daily", "recipient": recipient, "content": {"body": "b"},
                      "trigger": {"at": iso(start), "repeat": "day"}}])
    # trigger now: one firing at once; the schedule does not move.
    before = client.list(recipient=recipient)[0]["reminders"][0]["nextFireAt"]
    fired = client.trigger_now("daily", recipient)["firingId"]
    assert fired.startswith(f"{recipient}/daily@")
    wait_for("the trigger-now firing to be delivered", lambda: fired in delivered_ids(client, recipient))
    assert client.list(recipient=recipient)[0]["reminders"][0]["nextFireAt"] == before
    # backfill the last four days: four firings, each with its own occurrence's id; again: none.
    result = client.backfill("daily", recipient, iso(now - timedelta(days=4)), iso(now))
    expected = [f"{recipient}/daily@{iso(start + timedelta(days=n))}" for n in range(1, 5)]
    assert result == {"fired": expected, "alreadyFired": 0}
    wait_for("the backfilled firings", lambda: set(expected) <= set(delivered_ids(client, recipient)))
    assert client.backfill("daily", recipient, iso(now - timedelta(days=4)), iso(now)) == {"fired": [], "alreadyFired": 4}
    # remaining: two left, then none.
    remaining = client.set_remaining("daily", recipient, 2)
    assert remaining["remaining"] == 2 and remaining["state"] == "pending"
    assert client.set_remaining("daily", recipient, 0)["state"] == "finished"
    # a note on disable, listed until the reminder is switched on.
    client.schedule([{"id": "other", "recipient": recipient, "trigger": {"at": iso(now + timedelta(days=1)), "repeat": "day"}}])
    client.disable(["other"], recipient=recipient, note="freeze")
    listing = client.list(recipient=recipient, all=True)[0]["reminders"]
    assert {item["reminder"]["id"]: item.get("note") for item in listing} == {"daily": None, "other": "freeze"}
    assert {item["reminder"]["id"]: item.get("remaining") for item in listing}["daily"] == 0


def test_a_spread_firing_is_due_at_the_delay_the_client_computes(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-spread-{uuid.uuid4().hex[:8]}"
    nominal = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=2)
    client.schedule([{"id": "s", "recipient": recipient, "trigger": {"at": iso(nominal), "spread": 3}}])
    delay = spread_delay_ms(f"{recipient}/s@{iso(nominal)}", 3)
    due = nominal + timedelta(milliseconds=delay)
    listed = client.list(recipient=recipient)[0]["reminders"][0]["nextFireAt"]
    assert listed == iso(due)
    wait_for("the spread firing", lambda: f"{recipient}/s@{iso(due)}" in delivered_ids(client, recipient))


def test_cli_trigger_backfill_and_remaining(cluster):
    binary = str(chime_binary())
    recipient = f"cli-trig-{uuid.uuid4().hex[:8]}"
    now = datetime.now(timezone.utc).replace(microsecond=0)
    args = cluster.cluster_arguments

    def chime(*words: str) -> dict:
        out = subprocess.run([binary, *words, *args, "--json"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    chime("schedule", "--id", "d", "--recipient", recipient, "--at", iso(now - timedelta(days=3) + timedelta(hours=1)),
          "--repeat", "day")
    assert chime("trigger", "now", "d", "--recipient", recipient)["result"]["firingId"].startswith(f"{recipient}/d@")
    assert len(chime("backfill", "d", "--recipient", recipient, "--from", iso(now - timedelta(days=2)),
                     "--to", iso(now))["result"]["fired"]) == 2
    assert chime("remaining", "d", "3", "--recipient", recipient)["result"]["remaining"] == 3
    for words in (["trigger", "--help"], ["backfill", "--help"], ["remaining", "--help"]):
        out = subprocess.run([binary, *words], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and "Usage" in out.stdout or "usage" in out.stdout.lower()
