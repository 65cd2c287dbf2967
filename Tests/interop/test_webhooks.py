"""Webhooks from the workers (issue 39), checked by a Python receiver that verifies every
request with the Standard Webhooks reference library (`standardwebhooks` from PyPI).

The receiver is an http.server on a free loopback port, in a thread of this process; each
path answers from its own script of statuses (then 200). The cluster allows private
addresses (loopback) and retries quickly. Every process is started here and stopped by its
pid; every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from standardwebhooks import Webhook

from conftest import ChimeCluster, chime_binary, control_request, delivered_ids, wait_for

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
DELIVERY = {"allowPrivateAddresses": True, "backoffMilliseconds": 50, "maxBackoffMilliseconds": 200}
DEADLINE_S = 30.0


class Receiver:
    """A webhook receiver: records each request with whether `standardwebhooks` verified it."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.scripts: dict[str, list[int]] = {}
        self.hold: dict[str, threading.Event] = {}
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {name.lower(): value for name, value in self.headers.items()}
                try:
                    Webhook(SECRET).verify(body, headers)
                    verified = True
                except Exception as error:  # noqa: BLE001 (any failure is a finding)
                    verified = repr(error)
                with receiver.lock:
                    receiver.requests.append({"path": self.path, "headers": headers, "body": body, "verified": verified})
                    script = receiver.scripts.get(self.path, [])
                    status = script.pop(0) if script else 200
                    held = receiver.hold.pop(self.path, None)
                if held is not None:
                    held.wait(DEADLINE_S)
                payload = f"status {status} from the test receiver".encode()
                self.send_response(status)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def on(self, path: str) -> list[dict]:
        with self.lock:
            return [request for request in self.requests if request["path"] == path]

    def close(self) -> None:
        for event in list(self.hold.values()):
            event.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    instance = Receiver()
    yield instance
    instance.close()


def chime(cluster: ChimeCluster, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(cluster.binary), *arguments, *cluster.cluster_arguments],
        capture_output=True, text=True, timeout=60, cwd=cluster.directory)


def secret_file(cluster: ChimeCluster, mode: int = 0o600) -> Path:
    path = cluster.directory / f"secret-{uuid.uuid4().hex[:8]}"
    path.write_text(SECRET + "\n")
    os.chmod(path, mode)
    return path


def register_webhook(cluster: ChimeCluster, recipient: str, url: str) -> None:
    done = chime(cluster, "register", recipient, "--webhook", url, "--webhook-secret-file", str(secret_file(cluster)))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"registered {recipient}: allows alert, sound, badge, 0 categories, 1 destinations, badge 0\n"


def schedule_now(cluster: ChimeCluster, recipient: str, reminder: str, in_s: float = 0.3) -> str:
    due = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + in_s)) + ".000Z"
    reply = control_request(cluster.control_endpoint, {
        "op": "schedule", "requestId": str(uuid.uuid4()),
        "reminder": {"id": reminder, "recipient": recipient, "content": {"title": "Stand up"}, "trigger": {"at": due}},
    }, timeout_s=3)
    assert reply and reply["ok"], reply
    return f"{recipient}/{reminder}@{due}"


def start_cluster(tmp_path: Path, workers: int, coordinator: dict | None = None) -> ChimeCluster:
    configuration = {"delivery": DELIVERY, "heartbeat": {"intervalMilliseconds": 200}}
    if coordinator:
        configuration["coordinator"] = coordinator
    cluster = ChimeCluster(chime_binary(), tmp_path, configuration, workers=workers)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture
def webhook_cluster(tmp_path, request):
    cluster = start_cluster(tmp_path, workers=2)
    request.node._chime_clusters = [cluster]
    yield cluster
    cluster.stop()


def test_a_reminder_arrives_signed_and_is_acknowledged(webhook_cluster, receiver):
    cluster = webhook_cluster
    loose = chime(cluster, "register", "alice", "--webhook", receiver.url("/a"),
                  "--webhook-secret-file", str(secret_file(cluster, 0o644)))
    assert loose.returncode != 0 and "chmod 600" in loose.stderr
    register_webhook(cluster, "alice", receiver.url("/a"))
    shown = chime(cluster, "recipient", "alice")
    assert shown.returncode == 0, shown.stderr
    assert f"destination webhook:{receiver.url('/a')} (1 secrets)" in shown.stdout
    listed = chime(cluster, "recipient", "alice", "--json")
    assert SECRET[6:] not in listed.stdout and "<redacted>" in listed.stdout

    firing_id = schedule_now(cluster, "alice", "standup")
    [request] = wait_for("the webhook", lambda: receiver.on("/a"), DEADLINE_S)
    assert request["verified"] is True
    assert request["headers"]["webhook-id"] == firing_id
    assert request["headers"]["content-type"] == "application/json"
    assert abs(int(request["headers"]["webhook-timestamp"]) - time.time()) < 30
    event = json.loads(request["body"])
    assert (event["type"], event["firingId"], event["title"]) == ("fire", firing_id, "Stand up")
    wait_for("the acknowledgement", lambda: firing_id in delivered_ids_of(cluster, "alice"), DEADLINE_S)
    assert len(receiver.on("/a")) == 1


def delivered_ids_of(cluster: ChimeCluster, recipient: str) -> list[str]:
    reply = control_request(cluster.control_endpoint, {"op": "delivered", "recipient": recipient}, timeout_s=3)
    return [item["firingId"] for item in reply["result"]["delivered"]] if reply and reply.get("ok") else []


def test_a_503_is_retried_with_the_same_webhook_id(webhook_cluster, receiver):
    cluster = webhook_cluster
    receiver.scripts["/busy"] = [503, 503]
    register_webhook(cluster, "bob", receiver.url("/busy"))
    firing_id = schedule_now(cluster, "bob", "retry")
    wait_for("the acknowledgement", lambda: firing_id in delivered_ids_of(cluster, "bob"), DEADLINE_S)
    requests = receiver.on("/busy")
    assert len(requests) == 3
    assert [r["verified"] for r in requests] == [True, True, True]
    assert {r["headers"]["webhook-id"] for r in requests} == {firing_id}


def test_a_410_removes_the_destination(webhook_cluster, receiver):
    cluster = webhook_cluster
    receiver.scripts["/gone"] = [410]
    register_webhook(cluster, "carol", receiver.url("/gone"))
    firing_id = schedule_now(cluster, "carol", "gone")

    def removed() -> bool:
        shown = chime(cluster, "recipient", "carol")
        return shown.returncode == 0 and "destination" not in shown.stdout

    wait_for("the destination removed", removed, DEADLINE_S)
    wait_for("the acknowledgement", lambda: firing_id in delivered_ids_of(cluster, "carol"), DEADLINE_S)
    assert [r["verified"] for r in receiver.on("/gone")] == [True]


def test_a_400_makes_a_dead_letter_whose_cause_names_the_status(webhook_cluster, receiver):
    cluster = webhook_cluster
    receiver.scripts["/bad"] = [400]
    register_webhook(cluster, "dave", receiver.url("/bad"))
    firing_id = schedule_now(cluster, "dave", "bad")

    def listing() -> str | None:
        listed = chime(cluster, "ctl", "dead-letters")
        return listed.stdout if firing_id in listed.stdout else None

    text = wait_for("the dead letter", listing, DEADLINE_S)
    assert f"  cause: webhook:{receiver.url('/bad')} refused: HTTP 400: status 400 from the test receiver" in text
    assert "#1 " in text and "HTTP 400" in text
    reply = control_request(cluster.control_endpoint, {"op": "deadLetters"}, timeout_s=3)
    failure = reply["result"]["failures"][firing_id]
    assert failure["outcomes"][0]["attempts"][0]["status"] == 400
    assert [r["verified"] for r in receiver.on("/bad")] == [True]


def test_at_least_once_with_one_webhook_id_across_a_worker_kill(tmp_path, receiver, request):
    cluster = start_cluster(tmp_path, workers=1, coordinator={"leaseSeconds": 2})
    request.node._chime_clusters = [cluster]
    try:
        hold = threading.Event()
        receiver.hold["/slow"] = hold
        register_webhook(cluster, "erin", receiver.url("/slow"))
        firing_id = schedule_now(cluster, "erin", "killed")
        wait_for("the first request", lambda: receiver.on("/slow"), DEADLINE_S)
        name, worker = next((n, p) for n, p in cluster.children if n == "pw-1")
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=5)
        cluster.children.remove((name, worker))
        hold.set()
        cluster.spawn("pw-2", ["worker", "--id", "pw-2"])
        wait_for("the acknowledgement", lambda: firing_id in delivered_ids_of(cluster, "erin"), DEADLINE_S)
        requests = receiver.on("/slow")
        assert len(requests) >= 2
        assert all(r["verified"] is True for r in requests)
        assert {r["headers"]["webhook-id"] for r in requests} == {firing_id}
    finally:
        cluster.stop()


def test_a_category_whose_webhook_channel_is_opted_out_of_is_acknowledged_without_a_post(webhook_cluster, receiver):
    """Issue 40 item 7: `chime register --opt-out-channels promo:webhook` (with the webhook
    re-registered by the same command line's destination options): a firing of category
    "promo" is acknowledged with no request to the webhook, a plain one is posted and verified."""
    cluster = webhook_cluster
    done = chime(cluster, "register", "carol", "--opt-out-channels", "promo:webhook",
                 "--webhook", receiver.url("/c"), "--webhook-secret-file", str(secret_file(cluster)))
    assert done.returncode == 0, done.stderr
    shown = json.loads(chime(cluster, "recipient", "carol", "--json").stdout)
    assert shown["result"]["recipient"]["optedOutChannels"] == {"promo": ["webhook"]}
    bad = chime(cluster, "register", "carol", "--opt-out-channels", "promo:sms")
    assert bad.returncode != 0
    assert "--opt-out-channels takes CHANNEL or CATEGORY:CHANNEL (channels: webhook, apns, fcm), not 'promo:sms'" in bad.stderr

    due = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 0.3)) + ".000Z"
    for reminder, content in [("sale", {"title": "Sale", "category": "promo"}), ("note", {"title": "Note"})]:
        reply = control_request(cluster.control_endpoint, {
            "op": "schedule", "requestId": str(uuid.uuid4()),
            "reminder": {"id": reminder, "recipient": "carol", "content": content, "trigger": {"at": due}},
        }, timeout_s=3)
        assert reply and reply["ok"], reply
    sale, note = f"carol/sale@{due}", f"carol/note@{due}"
    wait_for("both acknowledged", lambda: sorted(delivered_ids_of(cluster, "carol")) == sorted([sale, note]), DEADLINE_S)
    [request] = receiver.on("/c")
    assert request["verified"] is True
    assert request["headers"]["webhook-id"] == note
