"""HTTP for machines, read by Python's own tools: `/metrics` parsed with the Prometheus
client library's text parser (`prometheus_client.parser.text_string_to_metric_families`),
`/healthz` and `/readyz` of an active coordinator and of a standby that takes over.

Clusters come from `make_cluster` (conftest): six loopback ports from a random base, the
coordinator's HTTP on base + 5. Every wait has a deadline.
"""

from __future__ import annotations

import os
import signal
import socket
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timezone

from prometheus_client.parser import text_string_to_metric_families

from conftest import STOP_GRACE_S, control_request

DEADLINE_S = 20.0
# Fast liveness: a stopped worker is dropped after 3 × 200 ms.
FAST_HEARTBEAT = {"heartbeat": {"intervalMilliseconds": 200}}


def http_get(url: str) -> tuple[int, str]:
    """GET `url`; the status and body, error statuses included."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def scrape(cluster) -> dict:
    """The coordinator's metrics: family name → family (samples parsed by prometheus_client)."""
    status, text = http_get(cluster.http_url + "/metrics")
    assert status == 200, text
    return {family.name: family for family in text_string_to_metric_families(text)}


def value(families: dict, name: str, sample: str | None = None, **labels) -> float:
    """One sample's value: family `name`, sample `sample` (default: the family's name)."""
    for candidate in families[name].samples:
        if candidate.name == (sample or name) and all(candidate.labels.get(k) == v for k, v in labels.items()):
            return candidate.value
    raise KeyError(f"no sample {sample or name}{labels}")


def eventually(what: str, condition, deadline_s: float = DEADLINE_S):
    """Polls `condition` until it returns a true value, at most `deadline_s`."""
    deadline = time.monotonic() + deadline_s
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {deadline_s} s waiting for {what}")
        time.sleep(0.05)


def schedule_due_now(cluster, count: int) -> None:
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    prefix = uuid.uuid4().hex[:8]
    reply = control_request(cluster.control_endpoint, {"op": "schedule", "reminders": [
        {"id": f"{prefix}-{i}", "recipient": "metrics", "trigger": {"at": now}} for i in range(count)]}, timeout_s=5)
    assert reply and reply.get("ok"), reply


def stop_workers(cluster) -> None:
    """SIGTERMs every worker by its pid and waits for it to exit."""
    for name, process in list(cluster.children):
        if name.startswith("pw-"):
            os.kill(process.pid, signal.SIGTERM)
            process.wait(timeout=STOP_GRACE_S)
            cluster.children.remove((name, process))


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_every_family_has_help_and_type_and_counters_grow_after_firings(make_cluster):
    cluster = make_cluster({})
    status, text = http_get(cluster.http_url + "/metrics")
    assert status == 200
    families = {family.name: family for family in text_string_to_metric_families(text)}
    for family in families.values():
        assert family.documentation, f"{family.name} has no HELP"
        assert family.type in ("counter", "gauge", "histogram"), f"{family.name} has TYPE {family.type}"
    # The parser names counters without `_total`; the text carries HELP and TYPE for each.
    for name, family in families.items():
        exposed = name + "_total" if family.type == "counter" else name
        assert f"# HELP {exposed} " in text and f"# TYPE {exposed} {family.type}\n" in text
    expected = {
        "chime_reminders", "chime_due_backlog", "chime_oldest_undelivered_age_seconds", "chime_firings_dispatched",
        "chime_firings_redelivered", "chime_firings_dead_lettered", "chime_fire_lateness_seconds", "chime_requests",
        "chime_request_duration_seconds", "chime_journal_fsync_duration_seconds", "chime_journal_write_duration_seconds",
        "chime_journal_bytes",
        "chime_snapshot_bytes", "chime_workers_alive", "chime_epoch", "process_resident_memory_bytes",
        "process_cpu_seconds", "process_start_time_seconds", "process_open_fds", "process_max_fds", "chime_build_info",
    }
    assert expected <= set(families), expected - set(families)
    assert value(families, "chime_epoch") == 1
    assert value(families, "chime_workers_alive") == 2
    assert value(families, "chime_coordinator_phase", phase="active") == 1
    before = value(families, "chime_firings_dispatched", "chime_firings_dispatched_total")

    schedule_due_now(cluster, 20)
    after = eventually("20 acknowledged firings", lambda: (lambda f: f if value(
        f, "chime_firings_acknowledged", "chime_firings_acknowledged_total") >= 20 else None)(scrape(cluster)))
    assert value(after, "chime_firings_dispatched", "chime_firings_dispatched_total") >= before + 20
    assert value(after, "chime_fire_lateness_seconds", "chime_fire_lateness_seconds_count") == 20
    assert value(after, "chime_fire_lateness_seconds", "chime_fire_lateness_seconds_bucket", le="+Inf") == 20
    assert value(after, "chime_requests", "chime_requests_total", op="schedule", code="ok") == 1
    # Durations by operation: the one schedule request, under op="schedule".
    assert value(after, "chime_request_duration_seconds", "chime_request_duration_seconds_count", op="schedule") == 1
    assert value(after, "chime_build_info", version="0.1.0") == 1
    assert value(after, "chime_journal_fsync_duration_seconds", "chime_journal_fsync_duration_seconds_count") >= 1
    # The schedule request's entries and the firings' progress were written at least twice.
    assert value(after, "chime_journal_write_duration_seconds", "chime_journal_write_duration_seconds_count") >= 2
    assert value(after, "chime_journal_bytes") > 0
    assert value(after, "chime_reminders", state="delivered") == 20
    assert value(after, "chime_due_backlog") == 0


def test_backlog_rises_with_workers_stopped_and_falls_when_they_return(make_cluster):
    cluster = make_cluster(FAST_HEARTBEAT)
    stop_workers(cluster)
    eventually("no worker alive", lambda: value(scrape(cluster), "chime_workers_alive") == 0)

    schedule_due_now(cluster, 50)
    stalled = eventually("a backlog of 50", lambda: (lambda f: f if value(f, "chime_due_backlog") == 50 else None)(scrape(cluster)))
    assert value(stalled, "chime_firings_in_flight") == 0
    eventually("the oldest undelivered to age", lambda: value(scrape(cluster), "chime_oldest_undelivered_age_seconds") >= 0.5)
    stats = control_request(cluster.control_endpoint, {"op": "stats"}, timeout_s=5)
    assert stats["result"]["dueBacklog"] == 50

    for index in (1, 2):
        cluster.spawn(f"pw-{index}", ["worker", "--id", f"pw-{index}"])
    drained = eventually("the backlog to drain", lambda: (lambda f: f if value(
        f, "chime_firings_acknowledged", "chime_firings_acknowledged_total") >= 50 else None)(scrape(cluster)))
    assert value(drained, "chime_due_backlog") == 0
    assert value(drained, "chime_oldest_undelivered_age_seconds") == 0


def test_readyz_is_503_on_a_standby_until_it_has_recovered_then_200(make_cluster):
    cluster = make_cluster({})
    assert http_get(cluster.http_url + "/readyz") == (200, "ready: active\n")
    assert http_get(cluster.http_url + "/healthz") == (200, "ok: active\n")
    schedule_due_now(cluster, 5)

    standby_url = f"http://127.0.0.1:{free_loopback_port()}"
    cluster.spawn("standby", ["coordinator", "--standby", "--http", standby_url.removeprefix("http://")])
    eventually("the standby to answer HTTP", lambda: _answers(standby_url + "/readyz"))
    assert http_get(standby_url + "/readyz") == (503, "not ready: standby: waiting for the store lock\n")
    assert http_get(standby_url + "/healthz") == (200, "ok: standby\n")
    standby = scrape_url(standby_url)
    assert value(standby, "chime_coordinator_phase", phase="standby") == 1

    cluster.kill_coordinator()
    eventually("the standby to be ready", lambda: http_get(standby_url + "/readyz")[0] == 200)
    assert http_get(standby_url + "/readyz") == (200, "ready: active\n")
    after = scrape_url(standby_url)
    assert value(after, "chime_epoch") == 2
    assert value(after, "chime_reminders", state="delivered") + value(after, "chime_reminders", state="pending") == 5


def test_http_refuses_other_methods_and_paths(make_cluster):
    cluster = make_cluster({})
    assert http_get(cluster.http_url + "/nope")[0] == 404
    request = urllib.request.Request(cluster.http_url + "/metrics", data=b"x", method="POST")
    try:
        urllib.request.urlopen(request, timeout=5)
        raise AssertionError("POST /metrics was accepted")
    except urllib.error.HTTPError as error:
        assert error.code == 405
        assert error.headers["Allow"] == "GET, HEAD"
    # Garbage over the socket, then the coordinator still answers.
    with socket.create_connection(("127.0.0.1", cluster.port_base + 5), timeout=5) as raw:
        raw.sendall(bytes(range(256)) * 64)
    assert http_get(cluster.http_url + "/healthz")[0] == 200
    assert control_request(cluster.control_endpoint, {"op": "ping"}, timeout_s=5)["ok"]


def _answers(url: str) -> bool:
    try:
        http_get(url)
        return True
    except (urllib.error.URLError, ConnectionError):
        return False


def scrape_url(url: str) -> dict:
    status, text = http_get(url + "/metrics")
    assert status == 200, text
    return {family.name: family for family in text_string_to_metric_families(text)}


def test_a_worker_serves_http_when_asked(make_cluster):
    cluster = make_cluster({})
    worker_url = f"http://127.0.0.1:{free_loopback_port()}"
    cluster.spawn("pw-http", ["worker", "--id", "pw-http", "--http", worker_url.removeprefix("http://")])
    eventually("the worker to be ready", lambda: _answers(worker_url + "/readyz") and http_get(worker_url + "/readyz")[0] == 200)
    assert http_get(worker_url + "/healthz") == (200, "ok\n")
    families = scrape_url(worker_url)
    for family in families.values():
        assert family.documentation and family.type in ("counter", "gauge", "histogram")
    assert value(families, "chime_worker_firings_delivered", "chime_worker_firings_delivered_total") >= 0
    assert value(families, "chime_worker_redeliveries_not_resent", "chime_worker_redeliveries_not_resent_total") == 0
    assert value(families, "chime_worker_firings_awaiting_destinations") == 0
    # Delivery counters are served from the start, at zero, for every channel and outcome.
    deliveries = [sample for sample in families["chime_deliveries"].samples if sample.name == "chime_deliveries_total"]
    assert len(deliveries) == 18 and all(sample.value == 0 for sample in deliveries)
    assert {sample.labels["channel"] for sample in deliveries} == {"webhook", "apns", "fcm"}
    assert value(families, "process_open_fds") > 0


def test_a_snapshot_sets_the_newest_snapshots_time_and_size(make_cluster):
    """Written by the snapshot thread; the loop publishes when the snapshot was written."""
    cluster = make_cluster({})
    schedule_due_now(cluster, 5)
    before = time.time()
    reply = control_request(cluster.control_endpoint, {"op": "snapshot", "requestId": str(uuid.uuid4())}, timeout_s=30)
    after = time.time()
    assert reply is not None and reply["ok"] is True, reply
    assert reply["result"]["snapshots"] >= 1
    families = scrape(cluster)
    written = value(families, "chime_last_snapshot_timestamp_seconds")
    assert before - 1 <= written <= after + 1, (before, written, after)
    assert value(families, "chime_snapshot_bytes") == reply["result"]["snapshotBytes"] > 0
