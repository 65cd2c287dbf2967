"""Regions, the sun and shared calendars from Python (issue 41), against a real cluster
(conftest.py's): `locate` from the ClusterClient fires a region reminder on its crossing; a
sun reminder's next firing matches `astral` computed live here (NOAA's algorithm, within a
minute), at a fixed place and at the recipient's reported place; a calendar set through the
client is skipped; the CLI's `locate` and `calendar` commands.

Waits are polled conditions with deadlines; the cluster is stopped by its pids.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import ClusterClient  # noqa: E402
from conftest import chime_binary, delivered_ids, wait_for  # noqa: E402

astral_sun = pytest.importorskip("astral.sun")
from astral import Observer  # noqa: E402

HOME = (52.52, 13.405)


def parse(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def north(meters: float) -> tuple[float, float]:
    return HOME[0] + meters / 111_250, HOME[1]


def test_locate_from_python_fires_a_region_reminder_on_its_crossing(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-region-{uuid.uuid4().hex[:8]}"
    client.schedule([{"id": "home", "recipient": recipient, "content": {"title": "home"},
                      "trigger": {"region": {"latitude": HOME[0], "longitude": HOME[1], "radius": 100,
                                             "notifyOnExit": False}}}])
    first = client.locate(recipient, *north(800), accuracy=10)
    assert first == {"recipient": recipient, "accepted": True, "crossings": []}
    entered = client.locate(recipient, *north(20), accuracy=10)
    assert [c["crossing"] for c in entered["crossings"]] == ["entry"]
    firing_id = entered["crossings"][0]["firingId"]
    assert firing_id.startswith(f"{recipient}/home@")
    wait_for("the region firing to be delivered", lambda: firing_id in delivered_ids(client, recipient))
    listing = client.list(recipient=recipient, all=True)[0]["reminders"][0]
    assert listing["state"] == "delivered"
    # A report older than the last is ignored.
    stale = client.locate(recipient, *north(900), at="2020-01-01T00:00:00Z")
    assert stale["accepted"] is False


def test_sun_reminders_match_astral_at_a_fixed_place_and_at_the_recipients(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-sun-{uuid.uuid4().hex[:8]}"
    client.schedule([
        {"id": "fixed", "recipient": recipient,
         "trigger": {"sun": {"event": "sunset", "latitude": HOME[0], "longitude": HOME[1]}}},
        {"id": "follows", "recipient": recipient, "trigger": {"sun": {"event": "dawn", "depression": "nautical"}}},
    ])
    listed = {item["reminder"]["id"]: item for item in client.list(recipient=recipient, all=True)[0]["reminders"]}
    assert "nextFireAt" not in listed["follows"], "no place yet"
    now = datetime.datetime.now(datetime.timezone.utc)

    def astral_next(event, observer, **kwargs) -> datetime.datetime:
        for days in range(0, 3):
            day = (now + datetime.timedelta(days=days)).date()
            moment = getattr(astral_sun, event)(observer, day, **kwargs)
            if moment > now:
                return moment
        raise AssertionError("no event in three days")

    fixed = parse(listed["fixed"]["nextFireAt"])
    expected = astral_next("sunset", Observer(*HOME))
    assert abs((fixed - expected).total_seconds()) <= 60, (fixed, expected)
    tokyo = (35.68, 139.69)
    client.locate(recipient, *tokyo)
    follows = parse(client.list(recipient=recipient, ids=["follows"])[0]["reminders"][0]["nextFireAt"])
    expected = astral_next("dawn", Observer(*tokyo), depression=12)
    assert abs((follows - expected).total_seconds()) <= 60, (follows, expected)


def test_a_calendar_set_from_python_is_skipped(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-cal-{uuid.uuid4().hex[:8]}"
    name = f"closed-{uuid.uuid4().hex[:6]}"
    tomorrow = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).date()
    results, partial = client.set_calendar(name, {"dates": [tomorrow.isoformat()]})
    assert partial is None and all(result["name"] == name for result in results.values())
    start = datetime.datetime.combine(tomorrow, datetime.time(9, 0))
    client.schedule([{"id": "daily", "recipient": recipient,
                      "trigger": {"at": start.strftime("%Y-%m-%dT%H:%M:%S"), "timeZone": "UTC", "repeat": "day",
                                  "calendars": [name]}}])
    nxt = client.list(recipient=recipient)[0]["reminders"][0]["nextFireAt"]
    assert nxt == (start + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z"), "tomorrow is excluded"
    shards, _ = client.calendars()
    assert any(c["name"] == name and c["reminders"] == 1 for result in shards.values() for c in result["calendars"])
    client.delete_calendar(name)
    nxt = client.list(recipient=recipient)[0]["reminders"][0]["nextFireAt"]
    assert nxt == start.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "deleted: nothing excluded"


def test_cli_locate_and_calendar(cluster, tmp_path):
    binary = str(chime_binary())
    args = cluster.cluster_arguments
    recipient = f"cli-geo-{uuid.uuid4().hex[:8]}"

    def chime(*words: str) -> dict:
        out = subprocess.run([binary, *words, *args, "--json"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    ics = tmp_path / "holidays.ics"
    ics.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART;VALUE=DATE:20301225\r\n"
                   "SUMMARY:Christmas\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    name = f"ics-{uuid.uuid4().hex[:6]}"
    set_reply = chime("calendar", "set", name, "--ics", str(ics))
    assert set_reply["result"]["calendars"][0]["calendar"] == {"dates": ["2030-12-25"]}
    listed = chime("calendar", "list")["result"]["calendars"]
    assert any(c["name"] == name for c in listed)
    chime("schedule", "--id", "home", "--recipient", recipient, "--region", "100", "--lat", "52.5", "--lon", "13.4",
          "--on", "entry", "--title", "home")
    chime("schedule", "--id", "dusk", "--recipient", recipient, "--sun", "dusk", "--depression", "nautical",
          "--calendar", name)
    located = chime("locate", recipient, "--lat", "52.51", "--lon", "13.4", "--accuracy", "20")
    assert located["result"]["accepted"] is True and located["result"]["crossings"] == []
    entered = chime("locate", recipient, "--lat", "52.5", "--lon", "13.4", "--accuracy", "20")
    assert [c["crossing"] for c in entered["result"]["crossings"]] == ["entry"]
    assert entered["result"]["crossings"][0]["firingId"].startswith(f"{recipient}/home@")
    listing = chime("list", "--recipient", recipient, "--all")["result"]["reminders"]
    dusk = next(item for item in listing if item["reminder"]["id"] == "dusk")
    assert dusk["reminder"]["trigger"]["sun"] == {"event": "dusk", "depression": 12} and "nextFireAt" in dusk
    chime("cancel", "--recipient", recipient)
    chime("calendar", "delete", name)
    for words in (["locate", "--help"], ["calendar", "--help"]):
        out = subprocess.run([binary, *words], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and "chime" in out.stdout
