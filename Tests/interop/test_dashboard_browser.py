"""`chime dashboard` in a real headless Chromium (Debian's `chromium`, driven by Playwright
from PyPI with the system browser's executable), against a real two-shard cluster:

- the overview shows both shards with their real pending counts;
- a reminder searched, opened and disabled through the confirmation page shows disabled in
  `chime list`; its `<script>` title is shown as text and no script of it runs;
- a long id is cut with an ellipsis in its column, its tooltip and its copied text whole;
- a recipient opened from a reminder row shows its zone, masked destination and quiet hours;
- the overview counts the one worker process once (two connections over two shards);
- the live tail shows a firing about a second after the dashboard received it;
- the pages work with JavaScript off (server-rendered).

Screenshots of each page go to $CHIME_SCREENSHOTS (default: the test's temporary directory).
Processes are started by the helpers and stopped by their pid; every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from conftest import chime_binary, control_request
from sharded import ShardedCluster
from test_dashboard import HOSTILE, Dashboard, request

DEADLINE_MS = 15_000
LONG_ID = "reminder-" + "0123456789abcdef" * 6
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def browser():
    executable = shutil.which("chromium")
    assert executable, "chromium is not installed: run scripts/install-deps.sh --test"
    with sync_playwright() as playwright:
        # --no-sandbox: CI and containers run as root, where Chromium's sandbox refuses to start.
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def schedule(cluster: ShardedCluster, reminder: dict) -> None:
    replies = [control_request(cluster.control(k), {"op": "schedule", "reminder": reminder}, timeout_s=2) for k in range(2)]
    assert [bool(reply and reply["ok"]) for reply in replies].count(True) == 1, replies


def register(cluster: ShardedCluster, recipient: dict) -> None:
    replies = [control_request(cluster.control(k), {"op": "register", "recipient": recipient}, timeout_s=2) for k in range(2)]
    assert [bool(reply and reply["ok"]) for reply in replies].count(True) == 1, replies


def test_dashboard_in_chromium(browser, tmp_path):
    shots = Path(os.environ.get("CHIME_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    cluster = ShardedCluster(chime_binary(), tmp_path, shards=2, workers=1)
    dashboard = None
    try:
        cluster.start()
        for index in range(12):
            content = {"title": HOSTILE, "body": "<img src=x onerror=alert(2)>"}
            if index == 3:
                content["interruptionLevel"] = "timeSensitive"
            schedule(cluster, {"id": f"r{index}", "recipient": f"user-{index}", "trigger": {"at": "2099-01-01T00:00:00Z"},
                               "content": content})
        schedule(cluster, {"id": LONG_ID, "recipient": "user-long", "trigger": {"at": "2099-01-01T00:00:00Z"}})
        pending = [control_request(cluster.control(k), {"op": "status"}, timeout_s=2)["result"]["reminders"]["pending"] for k in range(2)]
        assert sum(pending) == 13 and all(pending)
        register(cluster, {"id": "user-3", "zone": "Europe/Berlin", "quietHours": [{"start": "22:00", "end": "07:00"}],
                           "destinations": [{"kind": "webhook", "url": "http://127.0.0.1:9/hook", "secrets": [SECRET]}]})
        dashboard = Dashboard(cluster.binary, tmp_path, ["--config", str(cluster.config_path)])
        context = browser.new_context()
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

        page.goto(dashboard.base + "/")
        for shard in range(2):
            page.wait_for_selector(f'tr[data-shard="{shard}"] td.pending', timeout=DEADLINE_MS)
            assert page.inner_text(f'tr[data-shard="{shard}"] td.pending') == str(pending[shard])
        assert page.inner_text("#total-pending") == "13"
        page.wait_for_function('document.getElementById("total-workers").textContent === "1"', timeout=DEADLINE_MS)
        assert "(2 connections over 2 shards)" in page.inner_text("#totals")
        # The charts draw their axes: a unit on each y axis, "time (UTC)" under each x axis.
        assert page.locator("figure.chart svg text.y-label").all_text_contents()[:3] == ["firings/s", "ms", "firings"]
        assert page.locator("figure.chart svg text.x-label").first.text_content() == "time (UTC)"
        page.screenshot(path=str(shots / "overview.png"), full_page=True)

        page.goto(dashboard.base + "/workers")
        page.wait_for_selector("#workers", timeout=DEADLINE_MS)
        assert page.locator("#workers tbody tr").count() == 2  # the one worker, as each shard sees it
        assert page.locator("#processes tbody tr").count() == 1  # ... and one process
        assert page.inner_text("#processes tbody tr td.shards") == "0, 1"
        page.screenshot(path=str(shots / "workers.png"), full_page=True)

        page.goto(dashboard.base + "/reminders?recipient=user-long")
        page.wait_for_selector("#reminders", timeout=DEADLINE_MS)
        cut = page.locator("#reminders tbody tr td a.id").first
        assert cut.get_attribute("title") == LONG_ID and cut.inner_text() == LONG_ID  # copied whole
        # Cut to its column: the box is narrower than its text, and about 14em (14 x 14px) wide.
        widths = cut.evaluate("e => [e.clientWidth, e.scrollWidth, getComputedStyle(e).textOverflow]")
        assert widths[0] < widths[1] and widths[0] <= 14 * 14 + 1 and widths[2] == "ellipsis", widths
        page.screenshot(path=str(shots / "long-ids.png"), full_page=True)

        page.goto(dashboard.base + "/reminders")
        page.fill('input[name="recipient"]', "user-3")
        page.click('button[type="submit"]')
        page.wait_for_selector("#reminders", timeout=DEADLINE_MS)
        assert page.inner_text("#reminders tbody tr td:nth-child(5)") == HOSTILE
        page.screenshot(path=str(shots / "reminders.png"), full_page=True)
        page.click("#reminders tbody tr td a")
        page.wait_for_selector("#state", timeout=DEADLINE_MS)
        assert page.inner_text("#state") == "pending"
        page.screenshot(path=str(shots / "reminder-detail.png"), full_page=True)
        detail_url = page.url
        page.click("#detail a[href^='/recipients']")
        page.wait_for_selector("#registration", timeout=DEADLINE_MS)
        assert page.inner_text("#zone") == "Europe/Berlin"
        assert page.inner_text("#quiet-hours") == "22:00–07:00 in Europe/Berlin"
        assert page.inner_text("#destinations") == "webhook:http://127.0.0.1:9/hook (1 secret)"
        assert SECRET not in page.content()
        assert page.inner_text("#recipient-reminders tbody tr td.level") == "timeSensitive"
        page.screenshot(path=str(shots / "recipient.png"), full_page=True)
        page.goto(detail_url)
        page.wait_for_selector("#state", timeout=DEADLINE_MS)
        page.click('button:has-text("Disable")')
        page.wait_for_selector("#question", timeout=DEADLINE_MS)
        assert page.inner_text("#question") == "Disable reminder r3 of user-3?"
        page.click('button:has-text("Yes, do it")')
        page.wait_for_selector(".banner.notice", timeout=DEADLINE_MS)
        assert page.inner_text(".banner.notice") == "disabled r3 of user-3"
        listed = cluster.run("list", "--recipient", "user-3", "--all", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [(item["reminder"]["id"], item["state"]) for item in json.loads(listed.stdout)["result"]["reminders"]] == [("r3", "disabled")]

        page.goto(dashboard.base + "/dead-letters")
        page.wait_for_selector("#empty", timeout=DEADLINE_MS)
        page.screenshot(path=str(shots / "dead-letters.png"), full_page=True)

        page.goto(dashboard.base + "/events?recipient=user-live")
        page.wait_for_selector("#tail", state="attached", timeout=DEADLINE_MS)
        due = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 1.5))
        schedule(cluster, {"id": "live", "recipient": "user-live", "trigger": {"at": due}, "content": {"title": "live"}})
        page.wait_for_selector("#tail tr", timeout=DEADLINE_MS)
        shown_at = time.time()
        received = json.loads(request(dashboard.base, "/api/events?after=0&recipient=user-live")[1])["events"][0]
        assert received["kind"] == "fire" and received["shard"] in (0, 1)
        received_at = datetime.fromisoformat(received["receivedAt"].replace("Z", "+00:00")).timestamp()
        # The page polls every second: the row is there within a second (and some slack for CI) of receipt.
        assert shown_at - received_at < 2.5, (shown_at, received["receivedAt"])
        page.screenshot(path=str(shots / "events.png"), full_page=True)
        assert dialogs == []  # no script from a reminder ran

        plain = browser.new_context(java_script_enabled=False).new_page()
        # r3 is disabled now and "live" has fired: 11 of the first 12 are pending, and the long one. The
        # disable is long past; the firing may be younger than the overview the page shows
        # (sampled every second, so an overview taken just before "live" was due still
        # counts it pending): the count is 11 within one sampling interval of the firing.
        settle_by = received_at + 2.5
        plain.goto(dashboard.base + "/")
        while plain.inner_text("#total-pending") != "12" and time.time() < settle_by:
            time.sleep(0.1)
            plain.goto(dashboard.base + "/")
        assert plain.inner_text("#total-pending") == "12"
        plain.goto(dashboard.base + "/events?recipient=user-live")
        assert plain.locator("#tail tr").count() == 1
        plain.screenshot(path=str(shots / "events-no-javascript.png"), full_page=True)
        assert dashboard.stop() == 0
        dashboard = None
    finally:
        if dashboard is not None:
            dashboard.stop()
        cluster.stop()
