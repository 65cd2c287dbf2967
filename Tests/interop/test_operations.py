"""What an operator sees in the logs: worker loss with its leases, typed JSON lines, SIGHUP.

Each test runs a private cluster whose configuration asks for JSON logs (`log.format`), so
every line of `coordinator.log` and `pw-N.log` parses as one JSON object, and waits on the
lines it expects with a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from datetime import datetime, timedelta, timezone

from conftest import control_request

LINE_DEADLINE_S = 15.0
# A short liveness window (200 ms x 10 = 2 s) keeps the test short; a long lease keeps the
# dead worker's firings leased until the loss, not the lease, releases them.
CONFIGURATION = {
    "log": {"format": "json"},
    "heartbeat": {"intervalMilliseconds": 200, "liveness": 10},
    "coordinator": {"leaseSeconds": 60},
}


def ok(cluster, request: dict) -> dict:
    """A control request retried (same requestId) until answered, at most 10 s."""
    request = dict(request, requestId=f"ops-{uuid.uuid4()}")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reply = control_request(cluster.control_endpoint, request, timeout_s=1.0)
        if reply is not None:
            assert reply.get("ok"), reply
            return reply["result"]
    raise AssertionError(f"no reply to {request['op']} within 10 s")


def log_lines(cluster, name: str) -> list[dict]:
    """The JSON lines of a child's log so far (a line still being written is left out)."""
    lines = []
    for text in (cluster.directory / f"{name}.log").read_text(errors="replace").splitlines():
        if text.startswith("{") and text.endswith("}"):
            lines.append(json.loads(text))
    return lines


def wait_for_line(cluster, name: str, matches, what: str) -> dict:
    deadline = time.monotonic() + LINE_DEADLINE_S
    while True:
        found = [line for line in log_lines(cluster, name) if matches(line)]
        if found:
            return found[0]
        if time.monotonic() >= deadline:
            raise AssertionError(f"no {what} in {name}.log within {LINE_DEADLINE_S} s\n{cluster.logs()}")
        cluster.check_children()
        time.sleep(0.05)  # pacing between reads of the log file


def wait_until(condition, what: str, cluster) -> None:
    deadline = time.monotonic() + LINE_DEADLINE_S
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}\n{cluster.logs()}")
        time.sleep(0.05)


def process(cluster, name: str):
    return next(p for n, p in cluster.children if n == name)


def alive_workers(cluster) -> set[str]:
    return {w["id"] for w in ok(cluster, {"op": "workers"})["workers"] if w["alive"]}


def test_killed_worker_gives_exactly_one_worker_lost_line_naming_its_leases(make_cluster):
    cluster = make_cluster(CONFIGURATION)
    first, second = process(cluster, "pw-1"), process(cluster, "pw-2")
    joined = {line["worker"] for line in log_lines(cluster, "coordinator") if line["message"] == "worker joined"}
    assert joined == {"pw-1", "pw-2"}
    # pw-2 sleeps until the coordinator counts it lost; pw-1 is stopped next, so the firings
    # due now go to pw-1 (still within its liveness window) and stay unacknowledged.
    os.kill(second.pid, signal.SIGSTOP)
    try:
        wait_until(lambda: alive_workers(cluster) == {"pw-1"}, "pw-2 to be counted lost", cluster)
        os.kill(first.pid, signal.SIGSTOP)
        past = (datetime.now(timezone.utc) - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        ids = [f"lost-{index}-{uuid.uuid4().hex[:6]}" for index in range(3)]
        ok(cluster, {"op": "schedule", "reminders": [{"id": i, "recipient": "ops", "trigger": {"at": past}} for i in ids]})
        wait_until(lambda: ok(cluster, {"op": "status"})["inFlight"] == 3, "3 firings in flight", cluster)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=5)
        cluster.children = [(n, p) for n, p in cluster.children if n != "pw-1"]
        lost = wait_for_line(
            cluster, "coordinator", lambda line: line["message"] == "worker lost" and line["worker"] == "pw-1",
            "worker lost line for pw-1")
    finally:
        if second.poll() is None:
            os.kill(second.pid, signal.SIGCONT)
    assert lost["level"] == "warn"
    assert lost["leases"] == 3 and isinstance(lost["leases"], int)
    assert lost["pid"] == first.pid
    assert sorted(firing.split("@")[0] for firing in lost["firings"].split(",")) == sorted(f"ops/{i}" for i in ids)
    # pw-2 comes back and delivers the redelivered firings; by then any second loss line
    # for pw-1 would have been written.
    wait_until(lambda: ok(cluster, {"op": "status"})["inFlight"] == 0 and alive_workers(cluster) == {"pw-2"},
               "pw-2 to deliver the redelivered firings", cluster)
    lines = log_lines(cluster, "coordinator")
    assert [line["worker"] for line in lines if line["message"] == "worker lost"].count("pw-1") == 1
    redelivered = [line for line in lines if line["message"] == "firings redelivered"]
    assert sum(line["count"] for line in redelivered) == 3, redelivered
    assert any(line["message"] == "worker rejoined" and line["worker"] == "pw-2" for line in lines)


def test_json_log_lines_are_typed_and_keep_slashes(make_cluster):
    cluster = make_cluster({"log": {"format": "json"}})
    lines = log_lines(cluster, "coordinator")
    loaded = next(line for line in lines if line["message"] == "configuration loaded")
    assert loaded["config"] == str(cluster.config_path)
    assert isinstance(loaded["pid"], int) and loaded["pid"] == cluster.coordinator_pid
    raw = (cluster.directory / "coordinator.log").read_text()
    assert "\\/" not in raw
    recovered = next(line for line in lines if line["message"] == "recovered")
    assert isinstance(recovered["reminders"], int) and isinstance(recovered["milliseconds"], float)


def test_sighup_reloads_the_log_level_and_keeps_serving(make_cluster):
    cluster = make_cluster({"log": {"format": "json"}})
    configuration = json.loads(cluster.config_path.read_text())
    configuration["log"]["level"] = "debug"
    cluster.config_path.write_text(json.dumps(configuration))
    for name in ("coordinator", "pw-1"):
        os.kill(process(cluster, name).pid, signal.SIGHUP)
        reloaded = wait_for_line(cluster, name, lambda line: line["message"] == "reloaded", f"reloaded line of {name}")
        assert reloaded["level"] == "info"
        assert reloaded["logLevel"] == "debug"
        assert reloaded["config"] == str(cluster.config_path)
    cluster.check_children()
    assert ok(cluster, {"op": "ping"})
    assert alive_workers(cluster) == {"pw-1", "pw-2"}
    # A broken file is reported and leaves the running settings alone.
    cluster.config_path.write_text("{not json")
    os.kill(cluster.coordinator_pid, signal.SIGHUP)
    failed = wait_for_line(cluster, "coordinator", lambda line: line["message"].startswith("reload failed"),
                           "reload failed line")
    assert failed["level"] == "error"
    assert ok(cluster, {"op": "ping"})
