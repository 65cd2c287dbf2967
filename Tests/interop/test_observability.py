"""The Prometheus alert rules and the Grafana board work against a real coordinator.

- Every metric name in deploy/prometheus/chime-alerts.yml and deploy/grafana/chime.json is
  served by a running coordinator's or worker's /metrics (node_exporter's filesystem
  metrics and Prometheus' own `up` excepted).
- A real Prometheus (Debian's `prometheus`, installed by scripts/install-deps.sh --test)
  scrapes the coordinator and a worker every second; every query of the Grafana board
  evaluates without error and returns series, and the alert rules load.

Processes: the module's cluster (conftest), one extra worker with --http, and Prometheus, on
loopback ports, each stopped by its pid. Every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from conftest import REPO_ROOT, STOP_GRACE_S, free_port_base

GRAFANA = REPO_ROOT / "deploy" / "grafana" / "chime.json"
ALERTS = REPO_ROOT / "deploy" / "prometheus" / "chime-alerts.yml"
# Not Chime's: node_exporter's filesystem figures and Prometheus' scrape health.
FOREIGN = {"node_filesystem_avail_bytes", "node_filesystem_size_bytes", "up"}
METRIC = re.compile(r"\b((?:chime|process|node)_[a-z_]+)\b")
DEADLINE_S = 40.0


def grafana_queries() -> list[str]:
    board = json.loads(GRAFANA.read_text())
    queries = [target["expr"] for panel in board["panels"] for target in panel.get("targets", [])]
    assert len(queries) >= 20
    return queries


def alert_expressions() -> list[str]:
    rules = yaml.safe_load(ALERTS.read_text())
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


def http_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def sample_names(text: str) -> set[str]:
    return {sample.name for family in text_string_to_metric_families(text) for sample in family.samples}


@pytest.fixture(scope="module")
def worker_http(cluster):
    """An extra worker serving /metrics on a free loopback port; its address."""
    port = free_port_base() + 2
    process = cluster.spawn("observed-worker", ["worker", "--id", "observed", "--http", f"127.0.0.1:{port}"])
    deadline = time.monotonic() + DEADLINE_S
    while True:
        try:
            http_text(f"http://127.0.0.1:{port}/metrics")
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker's /metrics did not answer\n{cluster.logs()}")
            time.sleep(0.1)
    return f"127.0.0.1:{port}"


def test_board_is_json_with_a_shard_variable():
    board = json.loads(GRAFANA.read_text())
    variables = {variable["name"]: variable for variable in board["templating"]["list"]}
    assert variables["shard"]["query"]["query"] == "label_values(chime_coordinator_phase, shard)"
    assert variables["shard"]["allValue"] == ".*"
    assert board["uid"] == "chime-cluster"
    assert len({panel["id"] for panel in board["panels"]}) == len(board["panels"])


def test_every_metric_named_is_served(cluster, worker_http):
    served = sample_names(http_text(cluster.http_url + "/metrics")) | sample_names(http_text(f"http://{worker_http}/metrics"))
    named = {name for expression in grafana_queries() + alert_expressions() for name in METRIC.findall(expression)}
    assert {"chime_fire_lateness_seconds_bucket", "chime_coordinator_phase", "chime_store_full"} <= named
    missing = sorted(named - served - FOREIGN)
    assert missing == [], f"named in the board or the rules but not served: {missing}"


def test_real_prometheus_evaluates_every_board_query(cluster, worker_http, tmp_path):
    binary = shutil.which("prometheus")
    assert binary, "prometheus is not installed: run scripts/install-deps.sh --test"
    port = free_port_base() + 1
    shutil.copy(ALERTS, tmp_path / "chime-alerts.yml")
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": ["chime-alerts.yml"],
        "scrape_configs": [
            {"job_name": "chime-coordinator", "static_configs": [{"targets": [cluster.http_url.removeprefix("http://")]}]},
            {"job_name": "chime-worker", "static_configs": [{"targets": [worker_http]}]},
        ],
    }))
    log = open(tmp_path / "prometheus.log", "wb")
    process = subprocess.Popen(
        [binary, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    log.close()
    base = f"http://127.0.0.1:{port}"

    def query(expression: str) -> dict:
        text = http_text(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expression}))
        return json.loads(text)

    try:
        # Three scrapes of both targets: every rate() then has two samples in its window.
        deadline = time.monotonic() + DEADLINE_S
        while True:
            try:
                counts = query("count_over_time(up[1m])")["data"]["result"]
                if len(counts) == 2 and all(float(entry["value"][1]) >= 3 for entry in counts):
                    break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("prometheus did not scrape both targets three times:\n"
                                   + (tmp_path / "prometheus.log").read_text(errors="replace")[-3000:])
            time.sleep(0.25)
        empty = []
        for expression in grafana_queries():
            concrete = expression.replace('"$shard"', '".*"').replace("$__rate_interval", "1m")
            reply = query(concrete)
            assert reply["status"] == "success", (concrete, reply)
            if not reply["data"]["result"]:
                empty.append(concrete)
        assert empty == [], f"queries with no series against a live coordinator: {empty}"
        rules = json.loads(http_text(f"{base}/api/v1/rules"))
        loaded = [rule["name"] for group in rules["data"]["groups"] for rule in group["rules"]]
        assert len(loaded) == 13 and "ChimeStoreFull" in loaded and "ChimeDeliveryFailing" in loaded
        assert all(rule["health"] == "ok" for group in rules["data"]["groups"] for rule in group["rules"])
        firing = [alert["labels"]["alertname"] for alert in json.loads(http_text(f"{base}/api/v1/alerts"))["data"]["alerts"]]
        # A healthy cluster with live workers and an active coordinator: nothing pending or firing
        # but the standby rule (this cluster has no standby) once its 15 minutes pass.
        assert set(firing) <= {"ChimeStandbyMissing"}, firing
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
