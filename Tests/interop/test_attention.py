"""The attention fields from Python (issue 40), against a real cluster (conftest.py's): content
with a subtitle, an interruption level, a relevance score, a target, filter criteria and
`hasAction` scheduled through the ClusterClient comes back in `list` and in the fire events the
gap-free ClusterSubscriber receives, with each level as the recipient's grants let it through;
a relevance score outside 0...1 is refused; the CLI's `--subtitle`, `--interruption-level`,
`--relevance-score` and `register --grant`; a firing held in quiet hours, and one held for a
summary, survive kill -9 of the coordinator and are delivered once, at the window's end, with
their firing ids; localizable keys resolve in each recipient's locale from the coordinator's
string tables, and attachments and a critical volume reach the fire events.

Waits are polled conditions with deadlines; the cluster is stopped by its pids.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import INTERRUPTION_LEVELS, ClusterClient, ClusterSubscriber  # noqa: E402
from conftest import chime_binary, delivered_ids, wait_for  # noqa: E402

PAST = "2020-01-01T00:00:00Z"


def receive_fire_events(subscriber: ClusterSubscriber, ids: set[str], deadline_s: float = 20.0) -> dict[str, dict]:
    """The fire events of the reminders `ids`, by reminder id, received within `deadline_s`."""
    events: dict[str, dict] = {}
    deadline = time.monotonic() + deadline_s
    while set(events) != ids:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"fire events missing for {ids - set(events)}"
        for event in subscriber.receive(min(remaining, 0.5)):
            if event.get("type") == "fire" and event["reminderId"] in ids:
                events[event["reminderId"]] = event
    return events


def test_attention_fields_reach_list_and_fire_events_as_the_grants_allow(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-attention-{uuid.uuid4().hex[:8]}"
    registered = client.register(recipient, zone="Europe/Berlin", grants=["timeSensitive"])
    assert registered["recipient"]["grants"] == ["timeSensitive"]
    subscriber = ClusterSubscriber(client.current_map(), recipient=recipient, since={0: 0})
    try:
        full = {"title": "Standup", "subtitle": "Room 4", "interruptionLevel": "timeSensitive",
                "relevanceScore": 0.8, "targetContentIdentifier": "room-4", "filterCriteria": "work"}
        reminders = [
            {"id": "granted", "recipient": recipient, "trigger": {"at": PAST}, "content": full},
            {"id": "ungranted", "recipient": recipient, "trigger": {"at": PAST},
             "content": {"title": "Fire drill", "interruptionLevel": "critical"}},
            {"id": "passive", "recipient": recipient, "trigger": {"at": PAST},
             "content": {"body": "FYI", "interruptionLevel": "passive", "hasAction": False, "relevanceScore": 0}},
            {"id": "plain", "recipient": recipient, "trigger": {"at": PAST}, "content": {"body": "old shape"}},
        ]
        client.schedule(reminders)
        listed = {item["reminder"]["id"]: item["reminder"]["content"]
                  for item in client.list(recipient=recipient, all=True)[0]["reminders"]}
        assert listed["granted"] == full
        assert listed["ungranted"] == {"title": "Fire drill", "interruptionLevel": "critical"}, "stored as scheduled"
        assert listed["plain"] == {"body": "old shape"}

        events = receive_fire_events(subscriber, {"granted", "ungranted", "passive", "plain"})
        granted = events["granted"]
        for key, value in full.items():
            assert granted[key] == value, (key, granted)
        assert list(granted) == sorted(granted), "keys are documented as sorted"
        # critical was not granted: delivered as active, which events omit as the default.
        assert "interruptionLevel" not in events["ungranted"]
        assert events["passive"]["interruptionLevel"] == "passive"
        assert events["passive"]["hasAction"] is False
        assert events["passive"]["relevanceScore"] == 0
        attention_keys = {"subtitle", "interruptionLevel", "relevanceScore", "targetContentIdentifier",
                          "filterCriteria", "hasAction"}
        assert not (set(events["plain"]) & attention_keys), events["plain"]
        assert all(e.get("interruptionLevel", "active") in INTERRUPTION_LEVELS for e in events.values())
    finally:
        subscriber.close()


def test_a_relevance_score_outside_zero_to_one_is_refused(cluster):
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-relevance-{uuid.uuid4().hex[:8]}"
    reply = client.request({"op": "schedule", "reminders": [
        {"recipient": recipient, "trigger": {"at": "2030-01-01T00:00:00Z"}, "content": {"relevanceScore": 1.5}}]},
        recipient)
    assert reply["ok"] is False, reply
    assert (reply["error"]["code"], reply["error"].get("field")) == ("invalid_argument", "reminder.content.relevanceScore")
    assert client.list(recipient=recipient, all=True)[0]["reminders"] == []


def test_the_command_line_schedules_and_registers_the_attention_fields(cluster):
    binary = str(chime_binary())
    args = cluster.cluster_arguments
    recipient = f"cli-attention-{uuid.uuid4().hex[:8]}"

    def chime(*words: str) -> dict:
        out = subprocess.run([binary, *words, *args, "--json"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    grouped = chime("register", recipient, "--throttle", "2/1h/category", "--break-through-categories", "alarm",
                    "--break-through-filters", "work", "--opt-out-channels", "fcm,promo:apns", "--summary-at", "08:00")
    assert grouped["result"]["recipient"]["throttle"] == {"count": 2, "seconds": 3600, "per": "category"}
    assert grouped["result"]["recipient"]["breakThrough"] == {"categories": ["alarm"], "filterCriteria": ["work"]}
    assert grouped["result"]["recipient"]["optedOutChannels"] == {"*": ["fcm"], "promo": ["apns"]}
    assert grouped["result"]["recipient"]["summaryAt"] == ["08:00"]
    registered = chime("register", recipient, "--grant", "time-sensitive,provisional", "--throttle", "5/1h",
                       "--opt-out", "promo,digest", "--quiet-hours", "SA,SU 23:00-09:00")
    assert registered["result"]["recipient"]["grants"] == ["provisional", "timeSensitive"]
    assert registered["result"]["recipient"]["throttle"] == {"count": 5, "seconds": 3600}
    assert "breakThrough" not in registered["result"]["recipient"], "re-registering replaces the whole record"
    assert registered["result"]["recipient"]["optedOutCategories"] == ["promo", "digest"]
    assert registered["result"]["recipient"]["quietHours"] == [{"start": "23:00", "end": "09:00", "weekdays": ["SA", "SU"]}]
    chime("schedule", "--recipient", recipient, "--id", "cli", "--at", "2030-01-01T00:00:00Z", "--title", "T",
          "--subtitle", "S", "--interruption-level", "critical", "--relevance-score", "0.25",
          "--target-content-id", "doc-1", "--filter-criteria", "home", "--no-action", "--unhandled", "replace",
          "--collapse-key", "doc")
    listed = chime("list", "--recipient", recipient, "--all")
    content = listed["result"]["reminders"][0]["reminder"]["content"]
    assert content == {"title": "T", "subtitle": "S", "interruptionLevel": "critical", "relevanceScore": 0.25,
                       "targetContentIdentifier": "doc-1", "filterCriteria": "home", "hasAction": False,
                       "unhandled": "replace", "collapseKey": "doc"}
    refused = subprocess.run([binary, "schedule", "--recipient", recipient, "--in", "1h",
                              "--interruption-level", "urgent", *args], capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "--interruption-level must be one of" in refused.stderr


def metric(cluster, name: str) -> float | None:
    """The value of an unlabelled metric on the coordinator's /metrics, or None."""
    with urllib.request.urlopen(cluster.http_url + "/metrics", timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def test_a_firing_held_in_quiet_hours_survives_kill_9_and_is_delivered_once_at_the_window_end(make_cluster):
    cluster = make_cluster()
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-quiet-{uuid.uuid4().hex[:8]}"
    # A one-minute window from the current UTC minute: the hold lasts 25 to 60 s, room for
    # the kill, the restart and the summary subscriber's connection before it ends.
    wait_for("a minute with 25 s left", lambda: datetime.datetime.now(datetime.timezone.utc).second < 35, 40)
    now = datetime.datetime.now(datetime.timezone.utc)
    start = now.replace(second=0, microsecond=0)
    end = start + datetime.timedelta(minutes=1)
    window = {"start": f"{start:%H:%M}", "end": f"{end:%H:%M}"}
    registered = client.register(recipient, zone="UTC", quiet_hours=[window])
    assert registered["recipient"]["quietHours"] == [window]
    client.schedule([{"id": "nightly", "recipient": recipient, "trigger": {"at": PAST}, "content": {"title": "shh"}}])
    # A second recipient waits for a summary at the window's end: that hold survives too.
    digest = f"py-digest-{uuid.uuid4().hex[:8]}"
    client.register(digest, zone="UTC", summary_at=[f"{end:%H:%M}"])
    client.schedule([{"id": "digested", "recipient": digest, "trigger": {"at": PAST}, "content": {"title": "later"}}])

    def held(who: str = recipient) -> list[dict]:
        listing = client.list(recipient=who, all=True)[0]["reminders"]
        return listing[0].get("held", []) if listing else []

    holds = wait_for("the firing to be held", held)
    until = f"{end:%Y-%m-%dT%H:%M:%S}.000Z"
    assert holds == [{"firingId": f"{recipient}/nightly@2020-01-01T00:00:00.000Z", "until": until, "reason": "quiet hours"}]
    digest_holds = wait_for("the digest firing to be held", lambda: held(digest))
    assert digest_holds == [{"firingId": f"{digest}/digested@2020-01-01T00:00:00.000Z", "until": until, "reason": "summary"}]
    assert metric(cluster, "chime_firings_held") == 2
    assert delivered_ids(client, recipient) == []

    cluster.kill_coordinator()
    cluster.start_coordinator("coordinator-after-kill")
    client = ClusterClient([cluster.control_endpoint])
    assert held() == holds, "the hold survived kill -9 with its firing id, release instant and reason"
    assert held(digest) == digest_holds, "so did the summary's"
    assert delivered_ids(client, recipient) == [], "not delivered early by the recovery"
    import zmq
    summary = zmq.Context.instance().socket(zmq.SUB)
    summary.setsockopt(zmq.LINGER, 0)
    summary.setsockopt(zmq.SUBSCRIBE, f"summary.{digest}".encode())
    summary.connect(cluster.events_endpoint)

    subscriber = ClusterSubscriber(client.current_map(), recipient=recipient, since={0: 0})
    try:
        events = receive_fire_events(subscriber, {"nightly"}, deadline_s=90)
        event = events["nightly"]
        assert event["firingId"] == holds[0]["firingId"]
        assert event["dueAt"] == "2020-01-01T00:00:00.000Z"
        assert event["firedAt"] >= until, event
        # Nothing else arrives for it: one firing, one delivery.
        extra = [e for e in subscriber.receive(1.0) if e.get("reminderId") == "nightly"]
        assert extra == []
    finally:
        subscriber.close()
    wait_for("the delivery to be acknowledged", lambda: delivered_ids(client, recipient) == [holds[0]["firingId"]])
    assert held() == []
    try:
        assert summary.poll(30_000, zmq.POLLIN), "no summary event after the restart"
        event = json.loads(summary.recv_multipart()[1])
        assert [item["firingId"] for item in event["firings"]] == [digest_holds[0]["firingId"]]
    finally:
        summary.close()
    wait_for("the digest delivery to be acknowledged", lambda: delivered_ids(client, digest) == [digest_holds[0]["firingId"]])
    assert metric(cluster, "chime_firings_held") == 0


def test_a_listed_category_or_filter_breaks_through_quiet_hours_from_python(cluster):
    """Issue 40 item 3: with quiet hours over the whole day and a break-through for category
    "alarm" and filter criteria "work", those two firings are delivered at once (fire events)
    while the plain one is held, its reason "quiet hours"; the registration reads back with the
    break-through."""
    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-break-{uuid.uuid4().hex[:8]}"
    now = datetime.datetime.now(datetime.timezone.utc)
    # A window from one minute ago to two minutes before this time tomorrow: now is inside it.
    start = (now - datetime.timedelta(minutes=1)).strftime("%H:%M")
    end = (now - datetime.timedelta(minutes=2)).strftime("%H:%M")
    registered = client.register(
        recipient, zone="UTC", categories=[{"identifier": "alarm", "actions": []}],
        quiet_hours=[{"start": start, "end": end}],
        break_through={"categories": ["alarm"], "filterCriteria": ["work"]})
    assert registered["recipient"]["breakThrough"] == {"categories": ["alarm"], "filterCriteria": ["work"]}
    subscriber = ClusterSubscriber(client.current_map(), recipient=recipient, since={0: 0})
    try:
        client.schedule([
            {"id": "wake", "recipient": recipient, "trigger": {"at": PAST}, "content": {"title": "up", "category": "alarm"}},
            {"id": "standup", "recipient": recipient, "trigger": {"at": PAST}, "content": {"title": "go", "filterCriteria": "work"}},
            {"id": "plain", "recipient": recipient, "trigger": {"at": PAST}, "content": {"title": "later"}},
        ])
        events = receive_fire_events(subscriber, {"wake", "standup"})
        assert events["wake"]["firingId"] == f"{recipient}/wake@2020-01-01T00:00:00.000Z"
        assert events["standup"]["firingId"] == f"{recipient}/standup@2020-01-01T00:00:00.000Z"
    finally:
        subscriber.close()

    def held_plain() -> list[dict]:
        listing = client.list(recipient=recipient, ids=["plain"], all=True)[0]["reminders"]
        return listing[0].get("held", []) if listing else []

    held = wait_for("the plain firing to be held", held_plain)
    assert [item["reason"] for item in held] == ["quiet hours"]
    both = sorted(f"{recipient}/{name}@2020-01-01T00:00:00.000Z" for name in ("wake", "standup"))
    wait_for("the two to be acknowledged", lambda: sorted(delivered_ids(client, recipient)) == both)


def test_a_summary_event_carries_the_category_line_and_only_a_text_input_action_takes_text(cluster):
    """Issue 40 items 1 and 4 from pyzmq: a recipient's category with `summaryFormat` and a
    text-input action; two firings held for the next minute's summary come out in one
    `summary.<recipient>` event with the line "2 more messages"; `act` with text is refused on
    the plain button (invalid_argument, field text) and taken by the text-input action."""
    import zmq

    client = ClusterClient([cluster.control_endpoint])
    recipient = f"py-summary-{uuid.uuid4().hex[:8]}"
    wait_for("a minute with 15 s left", lambda: datetime.datetime.now(datetime.timezone.utc).second < 45, 30)
    now = datetime.datetime.now(datetime.timezone.utc)
    summary_at = (now + datetime.timedelta(minutes=1)).strftime("%H:%M")
    chat = {"identifier": "chat", "summaryFormat": "%u more messages", "hiddenPreviewsBodyPlaceholder": "Message",
            "actions": [{"identifier": "reply", "title": "Reply", "textInput": {"buttonTitle": "Send", "placeholder": "…"},
                         "icon": {"systemImageName": "arrowshape.turn.up.left"}},
                        {"identifier": "like", "title": "Like"}]}
    registered = client.register(recipient, zone="UTC", categories=[chat], summary_at=[summary_at])
    stored = registered["recipient"]["categories"][0]
    assert (stored["summaryFormat"], stored["hiddenPreviewsBodyPlaceholder"]) == ("%u more messages", "Message")
    assert stored["actions"][0]["textInput"] == {"buttonTitle": "Send", "placeholder": "…"}
    assert stored["actions"][0]["icon"] == {"systemImageName": "arrowshape.turn.up.left"}
    assert "textInput" not in stored["actions"][1]
    context = zmq.Context.instance()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, f"summary.{recipient}".encode())
    sub.connect(cluster.events_endpoint)
    try:
        time.sleep(0.2)  # the subscription reaches the XPUB before anything can be published (slow joiner)
        client.schedule([{"id": name, "recipient": recipient, "trigger": {"at": PAST},
                          "content": {"title": name, "category": "chat"}} for name in ("m1", "m2")])
        assert sub.poll(90_000, zmq.POLLIN), "no summary event within 90 s"
        topic, body = sub.recv_multipart()
        event = json.loads(body)
        assert topic == f"summary.{recipient}".encode()
        assert sorted(item["reminderId"] for item in event["firings"]) == ["m1", "m2"]
        assert event["categories"] == [{"category": "chat", "count": 2, "text": "2 more messages"}]
    finally:
        sub.close()
    firing = f"{recipient}/m1@2020-01-01T00:00:00.000Z"
    wait_for("m1 to be acknowledged", lambda: firing in delivered_ids(client, recipient))
    refused = client.request({"op": "act", "firingId": firing, "action": "like", "text": "nice"}, recipient)
    assert refused["ok"] is False and refused["error"]["code"] == "invalid_argument", refused
    assert refused["error"]["field"] == "text"
    taken = client.request({"op": "act", "firingId": firing, "action": "reply", "text": "on my way"}, recipient)
    assert taken["ok"] is True, taken
    assert taken["result"]["job"]["text"] == "on my way"


def test_keys_resolve_in_the_recipients_locale_and_attachments_and_volume_reach_fire_events(make_cluster, tmp_path):
    strings = tmp_path / "strings"
    strings.mkdir()
    (strings / "fr.json").write_text(json.dumps({"GREETING": "Bonjour %@, %2$@ rappels"}), encoding="utf-8")
    (strings / "en.json").write_text(json.dumps({"GREETING": "Hello %@, %2$@ reminders", "BODY": "Open the app"}))
    cluster = make_cluster({"notifications": {"stringsDirectory": str(strings)}})
    client = ClusterClient([cluster.control_endpoint])
    french, english = (f"py-locale-{kind}-{uuid.uuid4().hex[:6]}" for kind in ("fr", "en"))
    assert client.register(french, locale="fr-CA", grants=["critical"])["recipient"]["locale"] == "fr-CA"
    client.register(english)
    attachment = {"identifier": "map", "url": "https://example.com/map.png", "type": "image/png", "size": 120000}
    keyed = {"title": "Fallback", "titleKey": "GREETING", "titleArgs": ["Zoé", "3"], "bodyKey": "BODY",
             "sound": "default", "soundVolume": 0.5, "interruptionLevel": "critical", "attachments": [attachment]}
    subscribers = {r: ClusterSubscriber(client.current_map(), recipient=r, since={0: 0}) for r in (french, english)}
    try:
        for recipient in (french, english):
            client.schedule([{"id": "keyed", "recipient": recipient, "trigger": {"at": PAST}, "content": keyed}])
        listed = client.list(recipient=french, all=True)[0]["reminders"][0]["reminder"]["content"]
        assert listed == keyed, "stored as scheduled: keys, not text"
        fr_event = receive_fire_events(subscribers[french], {"keyed"})["keyed"]
        en_event = receive_fire_events(subscribers[english], {"keyed"})["keyed"]
        assert fr_event["title"] == "Bonjour Zoé, 3 rappels", "fr-CA falls back to fr"
        assert fr_event["body"] == "Open the app", "fr has no BODY: the development locale's"
        assert en_event["title"] == "Hello Zoé, 3 reminders"
        for event in (fr_event, en_event):
            assert (event["titleKey"], event["titleArgs"], event["bodyKey"]) == ("GREETING", ["Zoé", "3"], "BODY")
            assert event["attachments"] == [attachment]
            assert event["soundVolume"] == 0.5
            assert list(event) == sorted(event), "keys are documented as sorted"
        assert fr_event["interruptionLevel"] == "critical"
        assert "interruptionLevel" not in en_event, "critical not granted: delivered as active"
    finally:
        for subscriber in subscribers.values():
            subscriber.close()
    bad = [({"type": "image/webp"}, "reminder.content.attachments[0].type"),
           ({"size": 11 * 1024 * 1024}, "reminder.content.attachments[0].size"),
           ({"url": "file:///etc/passwd"}, "reminder.content.attachments[0].url")]
    for change, field in bad:
        reply = client.request({"op": "schedule", "reminders": [
            {"recipient": english, "trigger": {"at": PAST}, "content": {"attachments": [{**attachment, **change}]}}]}, english)
        assert reply["ok"] is False and (reply["error"]["code"], reply["error"].get("field")) == ("invalid_argument", field), reply
    reply = client.request({"op": "schedule", "reminders": [
        {"recipient": english, "trigger": {"at": PAST}, "content": {"title": "t", "soundVolume": 0.5}}]}, english)
    assert (reply["error"]["code"], reply["error"].get("field")) == ("invalid_argument", "reminder.content.soundVolume")
    reply = client.request({"op": "register", "recipient": {"id": english, "locale": "not a locale"}}, english)
    assert (reply["error"]["code"], reply["error"].get("field")) == ("invalid_argument", "recipient.locale"), reply

    binary = str(chime_binary())
    args = cluster.cluster_arguments
    out = subprocess.run([binary, "schedule", "--recipient", english, "--id", "cli-keyed", "--at", "2030-01-01T00:00:00Z",
                          "--title-key", "GREETING", "--title-arg", "Sam", "--title-arg", "2", "--body-key", "BODY",
                          "--sound", "default", "--sound-volume", "0.25", "--throttled", "coalesce",
                          "--attachment", "clip,https://example.com/a,b.mp4,video/mp4,2000", *args, "--json"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    listed = [item["reminder"] for item in client.list(recipient=english, all=True)[0]["reminders"]]
    cli = next(reminder["content"] for reminder in listed if reminder["id"] == "cli-keyed")
    assert cli == {"titleKey": "GREETING", "titleArgs": ["Sam", "2"], "bodyKey": "BODY", "sound": "default", "throttled": "coalesce",
                   "soundVolume": 0.25, "attachments": [{"identifier": "clip", "url": "https://example.com/a,b.mp4",
                                                         "type": "video/mp4", "size": 2000}]}
    refused = subprocess.run([binary, "schedule", "--recipient", english, "--in", "1h", "--attachment", "a,b", *args],
                             capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "--attachment must be ID,URL,TYPE,SIZE" in refused.stderr


def test_an_unreadable_strings_table_stops_the_coordinator_naming_the_file(tmp_path):
    strings = tmp_path / "strings"
    strings.mkdir()
    (strings / "de.json").write_text('{"GREETING": 1}')
    config = tmp_path / "chime.json"
    config.write_text(json.dumps({"notifications": {"stringsDirectory": str(strings)},
                                  "store": {"directory": str(tmp_path / "store")}}))
    from conftest import free_port_base  # noqa: E402
    out = subprocess.run([str(chime_binary()), "coordinator", "--config", str(config), "--port-base", str(free_port_base())],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "de.json is not a JSON object of strings" in out.stderr, out.stderr
