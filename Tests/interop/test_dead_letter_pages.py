"""`chime ctl dead-letters` pages: `--limit`, `--cursor` and `--all-pages` (issue 15).

Dead letters are made by a fake worker (pyzmq) that takes firings and never acknowledges
them: with `maxAttempts` 1 each lease that runs out dead-letters its firing.
"""

from __future__ import annotations

import json
import subprocess
import time

import zmq

from conftest import ChimeCluster, _stop_cluster, chime_binary
from test_adversarial import call, heartbeat, unique, wait_until, zmq_context  # noqa: F401 (a fixture)

COUNT = 7


def ctl(cluster: ChimeCluster, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(cluster.binary), "ctl", "dead-letters", *arguments, *cluster.cluster_arguments],
        capture_output=True, text=True, timeout=30)


def test_dead_letters_page_by_limit_cursor_and_all_pages(tmp_path_factory, zmq_context):
    configuration = {"coordinator": {"leaseSeconds": 0.2, "maxAttempts": 1}}
    cluster = ChimeCluster(chime_binary(), tmp_path_factory.mktemp("chime-cluster"), configuration, workers=0)
    worker = zmq_context.socket(zmq.DEALER)
    worker.setsockopt(zmq.LINGER, 0)
    try:
        cluster.start()
        name = unique("silent")
        worker.setsockopt(zmq.ROUTING_ID, name.encode())
        worker.connect(f"tcp://127.0.0.1:{cluster.port_base + 1}")
        worker.send_multipart([heartbeat(name, capacity=100)])
        due = time.time() + 0.3
        reminders = [{"id": f"dl-{index}", "recipient": "dl", "trigger": {
            "at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(due)) + f".{index:03d}Z"}} for index in range(COUNT)]
        reply = call(zmq_context, cluster, {"op": "schedule", "reminders": reminders})
        assert reply["ok"] is True, reply

        def dead_letter_count() -> int:
            while worker.poll(0, zmq.POLLIN):
                worker.recv_multipart()  # taken, never acknowledged
            return len(call(zmq_context, cluster, {"op": "deadLetters"})["result"]["firings"])

        wait_until("every firing dead-lettered", lambda: dead_letter_count() == COUNT, timeout_s=20)
        expected = [f"dl-{index}" for index in range(COUNT)]

        every = ctl(cluster, "--all-pages", "--json", "--limit", "2")
        assert every.returncode == 0, every.stderr
        lines = [json.loads(line) for line in every.stdout.splitlines()]
        assert [line["reminderId"] for line in lines] == expected  # oldest due first, each once

        table = ctl(cluster, "--all-pages", "--limit", "3")
        assert table.returncode == 0, table.stderr
        # Firing ids lead with their recipient: dl/dl-0@…
        assert [line.split("@")[0] for line in table.stdout.splitlines()] == [f"dl/{i}" for i in expected]

        first = ctl(cluster, "--limit", "3")
        assert first.returncode == 0, first.stderr
        *rows, hint = first.stdout.splitlines()
        assert [row.split("@")[0] for row in rows] == [f"dl/{i}" for i in expected[:3]]
        cursor = hint.split("--cursor ")[1].split(",")[0]
        page = json.loads(ctl(cluster, "--limit", "3", "--cursor", cursor, "--json").stdout)
        assert [firing["reminderId"] for firing in page["result"]["firings"]] == expected[3:6]

        refused = ctl(cluster, "--all-pages", "--cursor", cursor)
        assert refused.returncode == 2 and refused.stderr == "chime: give --cursor or --all-pages, not both\n"
        misplaced = subprocess.run(
            [str(cluster.binary), "ctl", "status", "--all-pages", *cluster.cluster_arguments],
            capture_output=True, text=True, timeout=30)
        assert misplaced.returncode == 2
        assert misplaced.stderr == "chime: --all-pages applies to ctl dead-letters only\n"
    finally:
        worker.close()
        _stop_cluster(cluster)
