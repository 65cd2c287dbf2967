"""The documentation (issue 30) against the code and in a real browser:

- the generated references (every `chime` command's help, `WireError.Code`, the metric
  families) equal what the code gives now, the wire protocol's error table names exactly the
  codes, every public symbol of ChimeClient has a doc comment, every relative link resolves
  (scripts/docs_reference.py; the configuration table is ConfigurationReferenceTests');
- the DocC site scripts/docs.sh builds opens in headless Chromium (Debian's `chromium`, driven
  by Playwright, launched as test_dashboard_browser.py does): the front page, an article, a
  symbol page and the search render.

Screenshots go to $CHIME_SCREENSHOTS (default: the test's temporary directory). The site is
built (`scripts/docs.sh --skip-build`, about 10 s) when .build/docs/site is missing; the HTTP
server serving it runs on a thread of this process and is shut down by the test.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from conftest import chime_binary, free_port_base

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / ".build" / "docs" / "site"
DEADLINE_MS = 15_000

sys.path.insert(0, str(ROOT / "scripts"))
import docs_reference  # noqa: E402


def test_reference_pages_equal_the_code():
    graphs = ROOT / ".build" / "docs" / "symbol-graphs"
    problems = docs_reference.check(str(chime_binary()), graphs if graphs.is_dir() else None)
    assert problems == []


def test_every_metric_and_error_code_is_listed():
    metrics = (docs_reference.REFERENCE / "MetricNames.md").read_text()
    for name, kind, _, _ in docs_reference.metric_families():
        assert f"| `{name}` | {kind} |" in metrics
    assert len(docs_reference.metric_families()) >= 30
    codes = (docs_reference.REFERENCE / "ErrorCodes.md").read_text()
    for _, raw, _ in docs_reference.wire_error_codes():
        assert f"| `{raw}` |" in codes
    assert {"invalid_argument", "not_found", "wrong_shard", "partial"} <= {raw for _, raw, _ in docs_reference.wire_error_codes()}


@pytest.fixture(scope="module")
def site_url():
    if not (SITE / "index.html").exists():
        subprocess.run([str(ROOT / "scripts" / "docs.sh"), "--skip-build"], check=True, timeout=300)
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port_base()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


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


def test_site_in_chromium(browser, site_url, tmp_path):
    shots = Path(os.environ.get("CHIME_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    # The front page: the module's landing page with the article groups in its topics.
    page.goto(site_url + "/documentation/chimeclient")
    page.wait_for_selector("h1", timeout=DEADLINE_MS)
    assert page.inner_text("h1") == "ChimeClient"
    page.wait_for_selector("main h3:has-text('Events')", timeout=DEADLINE_MS)
    topics = [text.strip() for text in page.locator("main h3").all_inner_texts()]
    assert ["Getting started", "Concepts", "Operations", "Reference", "Requests", "Events"] == topics[-6:]
    page.screenshot(path=str(shots / "docs-front.png"), full_page=False)

    # An article, moved from the README, with its tables.
    page.goto(site_url + "/documentation/chimeclient/gettingstarted")
    page.wait_for_selector("h1", timeout=DEADLINE_MS)
    assert page.inner_text("h1") == "Getting started"
    page.get_by_text("scripts/up.sh", exact=False).first.wait_for(timeout=DEADLINE_MS)
    page.screenshot(path=str(shots / "docs-article.png"), full_page=False)

    # A symbol page from the client library's symbol graph: declaration and its doc comment.
    page.goto(site_url + "/documentation/chimeclient/clusterclient")
    page.wait_for_selector("h1", timeout=DEADLINE_MS)
    assert page.inner_text("h1") == "ClusterClient"
    page.wait_for_selector(".declaration-source, .source", timeout=DEADLINE_MS)
    page.get_by_text("func schedule(").first.wait_for(timeout=DEADLINE_MS)
    page.screenshot(path=str(shots / "docs-symbol.png"), full_page=False)

    # The search (DocC's quick navigation, opened with "/"): a symbol found by name.
    page.keyboard.press("/")
    search = page.get_by_placeholder("Search for symbols in ChimeClient")
    search.wait_for(timeout=DEADLINE_MS)
    search.fill("GapFiller")
    page.locator(".quick-navigation").get_by_text("GapFiller").first.wait_for(timeout=DEADLINE_MS)
    page.screenshot(path=str(shots / "docs-search.png"), full_page=False)

    # The generated reference renders as a table.
    page.goto(site_url + "/documentation/chimeclient/metricnames")
    page.wait_for_selector("table", timeout=DEADLINE_MS)
    assert page.locator("table tr").count() > len(docs_reference.metric_families())
    assert errors == []
