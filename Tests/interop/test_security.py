"""CURVE, the ZAP handler and roles, against a real cluster started with `--keys`.

The keys come from `chime keys init` (plus one client restricted to recipient prefix `a-`,
from `chime keys add`), read here with pyzmq's `zmq.auth`, the format czmq writes. The
coordinator and its two workers share one configuration whose `security.keys` names the
key directory; the workers take `worker.key_secret` from it.

Each refusal is checked beside a positive control that the same probe gets through with a
key of the right role, so a test cannot pass because the probe itself was wrong. Every wait
is a zmq poll with a deadline; negative checks watch for a bounded time after a positive
barrier (an event that must arrive) rather than sleeping.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import zmq
import zmq.auth

from conftest import (
    ChimeCluster, _start_cluster, _stop_cluster, chime_binary, control_request, curve_client, free_port_base,
)

REPLY_TIMEOUT_S = 3.0
# How long a refused peer is watched for anything getting through, after a positive barrier.
REFUSAL_WATCH_S = 1.0
WORKER_IDS = {"pw-1", "pw-2"}
ENDPOINT_OFFSETS = {"control": 0, "dispatch": 1, "results": 2, "events": 3, "events-ingest": 4}


# --------------------------------------------------------------------------- keys


class Keys:
    """The key directory of a secured cluster and CURVE triples for pyzmq sockets."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.server_public, _ = zmq.auth.load_certificate(directory / "server.key")

    def curve(self, name: str) -> tuple[bytes, bytes, bytes]:
        public, secret = zmq.auth.load_certificate(self.directory / f"{name}.key_secret")
        return public, secret, self.server_public

    def stranger(self) -> tuple[bytes, bytes, bytes]:
        """A fresh key pair no allow-list names, with the right server key."""
        public, secret = zmq.curve_keypair()
        return public, secret, self.server_public


def run_chime(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(chime_binary()), *arguments], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def secured(tmp_path_factory, request):
    """A cluster serving CURVE with `chime keys init` keys, and those keys."""
    keys_directory = tmp_path_factory.mktemp("chime-keys") / "keys"
    made = run_chime("keys", "init", str(keys_directory))
    assert made.returncode == 0, made.stderr
    added = run_chime("keys", "add", str(keys_directory), "client", "a-client", "--recipient-prefix", "a-")
    assert added.returncode == 0, added.stderr
    keys = Keys(keys_directory)

    def prepare(cluster: ChimeCluster) -> None:
        cluster.probe_curve = keys.curve("operator")

    cluster = _start_cluster(tmp_path_factory, {"security": {"keys": str(keys_directory)}}, prepare)
    request.node._chime_clusters = getattr(request.node, "_chime_clusters", []) + [cluster]
    yield cluster, keys
    _stop_cluster(cluster)


@pytest.fixture
def zmq_context():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


# --------------------------------------------------------------------------- helpers


def endpoint(cluster: ChimeCluster, name: str) -> str:
    return f"tcp://127.0.0.1:{cluster.port_base + ENDPOINT_OFFSETS[name]}"


def rfc3339(instant: datetime) -> str:
    instant = instant.astimezone(timezone.utc)
    return f"{instant:%Y-%m-%dT%H:%M:%S}.{instant.microsecond // 1000:03d}Z"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def ask(cluster: ChimeCluster, curve, request: dict, timeout_s: float = REPLY_TIMEOUT_S):
    """One control request with `curve` keys; the reply, or None when none came in time."""
    return control_request(cluster.control_endpoint, request, timeout_s=timeout_s, curve=curve)


def ok(cluster: ChimeCluster, curve, request: dict) -> dict:
    reply = ask(cluster, curve, request)
    assert reply is not None and reply["ok"] is True, reply
    return reply


def error_code(reply) -> str | None:
    assert reply is not None, "no reply"
    assert reply["ok"] is False, reply
    return reply["error"]["code"]


def due_now(recipient: str, reminder_id: str | None = None) -> dict:
    """A one-shot a second in the past: it fires at once."""
    return {
        "op": "schedule",
        "reminder": {
            "id": reminder_id or unique("r"), "recipient": recipient, "content": {"body": "hi"},
            "trigger": {"at": rfc3339(datetime.now(timezone.utc) - timedelta(seconds=1))},
        },
    }


def make_socket(context: zmq.Context, kind: int, curve) -> zmq.Socket:
    sock = context.socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    curve_client(sock, curve)
    return sock


def receive_event(sock: zmq.Socket, timeout_s: float):
    """The next [topic, event] on `sock` within `timeout_s`, or None."""
    if not sock.poll(int(timeout_s * 1000), zmq.POLLIN):
        return None
    topic, body = sock.recv_multipart()
    return topic, json.loads(body)


def subscribe_until_live(cluster: ChimeCluster, keys: Keys, sub: zmq.Socket, recipient: str, timeout_s: float = 10.0):
    """Slow-joiner guard: probes fire for `recipient` until one reaches `sub` from every worker."""
    deadline = time.monotonic() + timeout_s
    publishers: set[str] = set()
    while publishers != WORKER_IDS:
        assert time.monotonic() < deadline, f"subscription to {recipient} not live (saw {publishers})"
        probe = unique("probe")
        ok(cluster, keys.curve("operator"), due_now(recipient, probe))
        watch_until = time.monotonic() + 0.3
        while (remaining := watch_until - time.monotonic()) > 0:
            message = receive_event(sub, remaining)
            if message and message[1].get("reminderId") == probe:
                publishers.add(message[1]["publisher"])
                break


def worker_ids(cluster: ChimeCluster, keys: Keys) -> set[str]:
    return {w["id"] for w in ok(cluster, keys.curve("operator"), {"op": "workers"})["result"]["workers"]}


def heartbeat(worker: str) -> bytes:
    return json.dumps({
        "worker": worker, "host": "rogue", "pid": 4242, "capacity": 1000, "delivered": 0, "acks": [],
    }).encode()


ROGUES = ["no-curve", "unknown-key"]


def rogue_curve(keys: Keys, rogue: str):
    return None if rogue == "no-curve" else keys.stranger()


# --------------------------------------------------------------------------- unauthenticated peers


@pytest.mark.parametrize("rogue", ROGUES)
def test_unauthenticated_peer_gets_no_reply_on_control(secured, rogue):
    cluster, keys = secured
    assert ok(cluster, keys.curve("operator"), {"op": "ping"})["result"]["now"]

    assert ask(cluster, rogue_curve(keys, rogue), {"op": "list", "all": True}, timeout_s=REFUSAL_WATCH_S) is None


@pytest.mark.parametrize("rogue", ROGUES + ["worker-key"])
def test_only_a_worker_key_can_pose_as_a_worker_on_dispatch(secured, zmq_context, rogue):
    cluster, keys = secured
    worker = unique("rogue-dispatch")
    dealer = make_socket(zmq_context, zmq.DEALER, keys.curve("worker") if rogue == "worker-key" else rogue_curve(keys, rogue))
    dealer.setsockopt(zmq.ROUTING_ID, worker.encode())
    dealer.connect(endpoint(cluster, "dispatch"))
    try:
        deadline = time.monotonic() + (5.0 if rogue == "worker-key" else REFUSAL_WATCH_S)
        while time.monotonic() < deadline and worker not in worker_ids(cluster, keys):
            try:
                dealer.send(heartbeat(worker), zmq.NOBLOCK)
            except zmq.Again:
                pass  # no completed connection to queue on: what a refused peer sees
            dealer.poll(100, zmq.POLLIN)
        if rogue == "worker-key":
            assert worker in worker_ids(cluster, keys)
        else:
            assert worker not in worker_ids(cluster, keys)
            assert dealer.poll(0, zmq.POLLIN) == 0
    finally:
        dealer.close()


@pytest.mark.parametrize("rogue", ROGUES)
def test_unauthenticated_peer_cannot_report_results(secured, zmq_context, rogue):
    cluster, keys = secured
    worker = unique("rogue-results")
    push = make_socket(zmq_context, zmq.PUSH, rogue_curve(keys, rogue))
    push.connect(endpoint(cluster, "results"))
    try:
        deadline = time.monotonic() + REFUSAL_WATCH_S
        while time.monotonic() < deadline:
            try:
                push.send(heartbeat(worker), zmq.NOBLOCK)
            except zmq.Again:
                pass  # no completed connection to queue on: what a refused peer sees
            assert worker not in worker_ids(cluster, keys)
    finally:
        push.close()


@pytest.mark.parametrize("rogue", ROGUES)
def test_unauthenticated_peer_reads_no_events(secured, zmq_context, rogue):
    cluster, keys = secured
    recipient = unique("victim")
    legit = make_socket(zmq_context, zmq.SUB, keys.curve("subscriber"))
    legit.setsockopt(zmq.SUBSCRIBE, f"fire.{recipient}".encode())
    legit.connect(endpoint(cluster, "events"))
    spy = make_socket(zmq_context, zmq.SUB, rogue_curve(keys, rogue))
    spy.setsockopt(zmq.SUBSCRIBE, b"")
    spy.connect(endpoint(cluster, "events"))
    try:
        subscribe_until_live(cluster, keys, legit, recipient)
        reminder_id = unique("secret")
        ok(cluster, keys.curve("operator"), due_now(recipient, reminder_id))
        deadline = time.monotonic() + 5.0
        while (message := receive_event(legit, max(0.0, deadline - time.monotonic()))) is not None:
            if message[1]["reminderId"] == reminder_id:
                break
        assert message is not None and message[1]["reminderId"] == reminder_id

        assert receive_event(spy, REFUSAL_WATCH_S) is None
    finally:
        legit.close()
        spy.close()


@pytest.mark.parametrize("publisher", ROGUES + ["subscriber-key", "worker-key"])
def test_only_worker_keys_publish_into_the_event_stream(secured, zmq_context, publisher):
    cluster, keys = secured
    recipient = unique("forged")
    legit = make_socket(zmq_context, zmq.SUB, keys.curve("subscriber"))
    legit.setsockopt(zmq.SUBSCRIBE, f"fire.{recipient}".encode())
    legit.connect(endpoint(cluster, "events"))
    curve = {"subscriber-key": keys.curve("subscriber"), "worker-key": keys.curve("worker")}.get(publisher)
    forger = make_socket(zmq_context, zmq.PUB, curve if curve else rogue_curve(keys, publisher))
    forger.connect(endpoint(cluster, "events-ingest"))
    forged = json.dumps({"type": "fire", "reminderId": "forged", "recipient": recipient, "seq": 1}).encode()
    try:
        subscribe_until_live(cluster, keys, legit, recipient)
        real_id = unique("real")
        ok(cluster, keys.curve("operator"), {
            "op": "schedule",
            "reminder": {"id": real_id, "recipient": recipient, "content": {"body": "real"},
                         "trigger": {"at": rfc3339(datetime.now(timezone.utc) + timedelta(milliseconds=600))}},
        })
        seen: list[str] = []
        real_seen_at = None
        deadline = time.monotonic() + 8.0
        while time.monotonic() < deadline:
            forger.send_multipart([f"fire.{recipient}".encode(), forged])
            message = receive_event(legit, 0.02)
            if message is not None:
                seen.append(message[1]["reminderId"])
                if message[1]["reminderId"] == real_id and real_seen_at is None:
                    real_seen_at = time.monotonic()
            if real_seen_at is not None and time.monotonic() - real_seen_at > REFUSAL_WATCH_S:
                break
        assert real_id in seen
        if publisher == "worker-key":
            assert "forged" in seen
        else:
            assert "forged" not in seen
    finally:
        legit.close()
        forger.close()


def admit_worker_key(cluster: ChimeCluster, keys: Keys, context: zmq.Context) -> tuple[bytes, bytes, bytes]:
    """`chime keys add … worker NAME`, SIGHUP, and wait until NAME is admitted: it announces
    itself as a worker of its own on dispatch and shows up in `workers`."""
    name = unique("w")
    added = run_chime("keys", "add", str(keys.directory), "worker", name)
    assert added.returncode == 0, added.stderr
    os.kill(cluster.coordinator_pid, signal.SIGHUP)
    curve = keys.curve(name)
    deadline = time.monotonic() + 5.0
    while name not in worker_ids(cluster, keys):
        assert time.monotonic() < deadline, "the added worker key was not admitted after SIGHUP"
        # A fresh connection each time: libzmq does not retry one refused by ZAP, and this
        # one may have been made before the coordinator read the SIGHUP.
        dealer = make_socket(context, zmq.DEALER, curve)
        dealer.setsockopt(zmq.ROUTING_ID, name.encode())
        dealer.connect(endpoint(cluster, "dispatch"))
        try:
            dealer.send(heartbeat(name))
            dealer.poll(200, zmq.POLLIN)
        finally:
            dealer.close()
    return curve


def test_another_worker_key_cannot_take_over_a_live_workers_route(secured, zmq_context):
    """A second connection claiming pw-1's routing id gets no firing: pw-1 keeps delivering."""
    cluster, keys = secured
    thief = make_socket(zmq_context, zmq.DEALER, admit_worker_key(cluster, keys, zmq_context))
    thief.setsockopt(zmq.ROUTING_ID, b"pw-1")
    thief.connect(endpoint(cluster, "dispatch"))
    recipient = unique("route")
    sub = make_socket(zmq_context, zmq.SUB, keys.curve("subscriber"))
    sub.setsockopt(zmq.SUBSCRIBE, f"fire.{recipient}".encode())
    sub.connect(endpoint(cluster, "events"))
    try:
        for _ in range(5):
            thief.send(heartbeat("pw-1"), zmq.NOBLOCK)
        ids = {unique("r") for _ in range(20)}
        subscribe_until_live(cluster, keys, sub, recipient)
        for reminder_id in ids:
            ok(cluster, keys.curve("operator"), due_now(recipient, reminder_id))
        publishers: dict[str, str] = {}
        deadline = time.monotonic() + 5.0
        while not ids <= publishers.keys():
            message = receive_event(sub, max(0.0, deadline - time.monotonic()))
            assert message is not None, f"firings missing: {ids - publishers.keys()}"
            publishers[message[1]["reminderId"]] = message[1]["publisher"]
        assert {publishers[i] for i in ids} <= WORKER_IDS
        assert thief.poll(0, zmq.POLLIN) == 0
    finally:
        thief.close()
        sub.close()


@pytest.mark.parametrize("key", ["another-worker-key", "the-same-worker-key"])
def test_results_count_only_from_the_key_a_worker_announced_itself_with(secured, zmq_context, key):
    """Forged heartbeats claiming pw-1 (host "forged-host"): ignored from another worker key;
    from the key pw-1 itself uses they count, which is why each worker should have its own."""
    cluster, keys = secured
    if key == "another-worker-key":
        curve = admit_worker_key(cluster, keys, zmq_context)
    else:
        curve = keys.curve("worker")
    push = make_socket(zmq_context, zmq.PUSH, curve)
    push.connect(endpoint(cluster, "results"))
    forged = json.dumps({"worker": "pw-1", "host": "forged-host", "pid": 4242, "capacity": 1, "delivered": 0, "acks": []})
    hosts: set[str] = set()
    try:
        deadline = time.monotonic() + (5.0 if key == "the-same-worker-key" else 2.0)
        while time.monotonic() < deadline and "forged-host" not in hosts:
            try:
                push.send(forged.encode(), zmq.NOBLOCK)
            except zmq.Again:
                pass  # the connection is still being made
            workers = ok(cluster, keys.curve("operator"), {"op": "workers"})["result"]["workers"]
            hosts |= {w["host"] for w in workers if w["id"] == "pw-1"}
        if key == "the-same-worker-key":
            assert "forged-host" in hosts
        else:
            assert "forged-host" not in hosts and hosts
    finally:
        push.close()
        if key == "the-same-worker-key":
            # pw-1's own heartbeats (every second) put its real host back.
            deadline = time.monotonic() + 5.0
            while any(w["host"] == "forged-host" for w in ok(cluster, keys.curve("operator"), {"op": "workers"})["result"]["workers"]):
                assert time.monotonic() < deadline
                time.sleep(0.1)


# --------------------------------------------------------------------------- roles


@pytest.mark.parametrize("op", ["status", "workers", "stats", "deadLetters", "snapshot", "compact", "store"])
def test_a_client_key_gets_forbidden_for_operator_operations(secured, op):
    cluster, keys = secured
    assert ok(cluster, keys.curve("operator"), {"op": op})["ok"] is True

    assert error_code(ask(cluster, keys.curve("client"), {"op": op})) == "forbidden"


def test_a_client_key_gets_forbidden_for_retry(secured):
    cluster, keys = secured
    reply = ask(cluster, keys.curve("client"), {"op": "retry", "firingId": "x@2026-12-24T08:00:00.000Z"})
    assert error_code(reply) == "forbidden"


def test_a_client_restricted_to_prefix_a_cannot_touch_b_recipients(secured):
    cluster, keys = secured
    operator, restricted = keys.curve("operator"), keys.curve("a-client")
    b_id = unique("b-reminder")
    ok(cluster, operator, {
        "op": "schedule",
        "reminder": {"id": b_id, "recipient": "b-bob", "content": {"body": "b"}, "trigger": {"at": "2030-01-01T00:00:00Z"}},
    })

    assert error_code(ask(cluster, restricted, {"op": "list", "recipient": "b-bob"})) == "forbidden"
    assert error_code(ask(cluster, restricted, {"op": "list", "all": True})) == "forbidden"
    # Another tenant's reminder reads as a missing one (no existence oracle).
    assert error_code(ask(cluster, restricted, {"op": "cancel", "ids": [b_id]})) == "not_found"
    assert error_code(ask(cluster, restricted, {"op": "cancel", "recipient": "b-bob"})) == "forbidden"
    assert error_code(ask(cluster, restricted, {"op": "cancel", "all": True})) == "forbidden"
    assert error_code(ask(cluster, restricted, {"op": "disable", "ids": [b_id]})) == "not_found"
    assert error_code(ask(cluster, restricted, {"op": "badge", "recipient": "b-bob", "value": 9})) == "forbidden"
    # Ids are unique per recipient: the same id for a-ann is a reminder of a-ann's own and
    # leaves b-bob's as it was.
    same_id = {"id": b_id, "recipient": "a-ann", "content": {"body": "mine"}, "trigger": {"at": "2030-01-01T00:00:00Z"}}
    assert ok(cluster, restricted, {"op": "schedule", "reminder": same_id})["result"]["scheduled"][0]["replaced"] is False
    assert error_code(ask(cluster, restricted, {"op": "events", "after": 0})) == "forbidden"

    a_id = unique("a-reminder")
    ok(cluster, restricted, {
        "op": "schedule",
        "reminder": {"id": a_id, "recipient": "a-ann", "content": {"body": "a"}, "trigger": {"at": "2030-01-01T00:00:00Z"}},
    })
    listed = ok(cluster, restricted, {"op": "list", "recipient": "a-ann"})["result"]["reminders"]
    assert sorted(r["reminder"]["id"] for r in listed) == sorted([a_id, b_id])
    still = ok(cluster, operator, {"op": "list", "recipient": "b-bob"})["result"]["reminders"]
    assert [(r["reminder"]["id"], r["reminder"]["content"]["body"]) for r in still] == [(b_id, "b")]


@pytest.mark.parametrize("request_body", [
    {"op": "ping"}, {"op": "list", "all": True}, {"op": "status"}, {"op": "events", "after": 0},
    {"op": "schedule", "reminder": {"recipient": "x", "content": {"body": "x"}, "trigger": {"at": "2030-01-01T00:00:00Z"}}},
])
def test_a_worker_key_cannot_use_control_beyond_the_map(secured, request_body):
    cluster, keys = secured
    assert error_code(ask(cluster, keys.curve("worker"), request_body)) == "forbidden"


def test_a_worker_key_may_read_the_shard_map(secured):
    # A worker follows the map (cluster.mapRefreshSeconds): `map` is the one op its key may use.
    cluster, keys = secured
    shard_map = ok(cluster, keys.curve("worker"), {"op": "map"})["result"]
    assert [shard["id"] for shard in shard_map["shards"]] == [0]
    assert shard_map["mapEpoch"] == 1


def test_a_subscriber_key_may_only_catch_up_on_control(secured):
    cluster, keys = secured
    subscriber = keys.curve("subscriber")
    assert ok(cluster, subscriber, {"op": "events", "after": 0})["result"]["through"] >= 0
    assert error_code(ask(cluster, subscriber, {"op": "list", "all": True})) == "forbidden"
    assert error_code(ask(cluster, subscriber, due_now("x"))) == "forbidden"


def test_a_token_is_replaced_only_with_the_current_token_or_by_an_operator(secured):
    cluster, keys = secured
    operator, client = keys.curve("operator"), keys.curve("client")
    recipient = unique("tok")
    ok(cluster, operator, {"op": "register", "recipient": {"id": recipient, "token": "first-secret"}})

    taken = ask(cluster, client, {"op": "register", "recipient": {"id": recipient, "token": "attacker"}})
    assert error_code(taken) == "forbidden"
    assert taken["error"]["field"] == "currentToken"
    assert error_code(ask(cluster, client, {"op": "register", "recipient": {"id": recipient}})) == "forbidden"
    ok(cluster, client, {"op": "register", "recipient": {"id": recipient, "token": "second"}, "currentToken": "first-secret"})
    ok(cluster, operator, {"op": "register", "recipient": {"id": recipient, "token": "third"}})


# --------------------------------------------------------------------------- pyzmq certificates and reload


def test_a_zmq_auth_certificate_added_on_sighup_works_and_stops_when_removed(secured, zmq_context, tmp_path):
    cluster, keys = secured
    public_file, secret_file = zmq.auth.create_certificates(tmp_path, "pyclient")
    public, secret = zmq.auth.load_certificate(secret_file)
    curve = (public, secret, keys.server_public)
    assert ask(cluster, curve, {"op": "ping"}, timeout_s=REFUSAL_WATCH_S) is None

    allowed = keys.directory / "client" / "pyclient.key"
    shutil.copy(public_file, allowed)
    os.chmod(allowed, 0o644)
    os.kill(cluster.coordinator_pid, signal.SIGHUP)
    deadline = time.monotonic() + 5.0
    while (reply := ask(cluster, curve, {"op": "ping"}, timeout_s=0.3)) is None:
        assert time.monotonic() < deadline, "the added key was not admitted after SIGHUP"

    # Schedules, lists and subscribes with the zmq.auth certificate.
    recipient = unique("py")
    reminder_id = unique("py-r")
    control = make_socket(zmq_context, zmq.DEALER, curve)
    control.connect(cluster.control_endpoint)
    sub = make_socket(zmq_context, zmq.SUB, curve)
    sub.setsockopt(zmq.SUBSCRIBE, f"fire.{recipient}".encode())
    sub.connect(endpoint(cluster, "events"))
    try:
        subscribe_until_live(cluster, keys, sub, recipient)
        control.send_multipart([b"", json.dumps(due_now(recipient, reminder_id)).encode()])
        assert control.poll(3000, zmq.POLLIN)
        assert json.loads(control.recv_multipart()[-1])["ok"] is True
        message = None
        deadline = time.monotonic() + 5.0
        while (message := receive_event(sub, max(0.0, deadline - time.monotonic()))) is not None:
            if message[1]["reminderId"] == reminder_id:
                break
        assert message is not None and message[1]["recipient"] == recipient
        control.send_multipart([b"", json.dumps({"op": "list", "ids": [reminder_id], "all": True}).encode()])
        assert control.poll(3000, zmq.POLLIN)
        listed = json.loads(control.recv_multipart()[-1])["result"]["reminders"]
        assert [r["reminder"]["id"] for r in listed] == [reminder_id]

        allowed.unlink()
        os.kill(cluster.coordinator_pid, signal.SIGHUP)
        deadline = time.monotonic() + 5.0
        while True:
            control.send_multipart([b"", json.dumps({"op": "ping"}).encode()])
            assert control.poll(3000, zmq.POLLIN)
            reply = json.loads(control.recv_multipart()[-1])
            if reply["ok"] is False:
                break
            assert time.monotonic() < deadline, "the removed key still works after SIGHUP"
        assert reply["error"]["code"] == "forbidden"
        assert ask(cluster, curve, {"op": "ping"}, timeout_s=REFUSAL_WATCH_S) is None
    finally:
        control.close()
        sub.close()


def test_a_wrong_server_key_gets_nothing(secured):
    cluster, keys = secured
    public, secret, _ = keys.curve("operator")
    wrong_server, _ = zmq.curve_keypair()
    assert ask(cluster, (public, secret, wrong_server), {"op": "ping"}, timeout_s=REFUSAL_WATCH_S) is None


# --------------------------------------------------------------------------- safe defaults


def test_binding_a_non_loopback_address_without_keys_is_refused(tmp_path):
    port = free_port_base()
    started = subprocess.Popen(
        [str(chime_binary()), "coordinator", "--store", "none", "--port-base", str(port),
         "--control", f"tcp://0.0.0.0:{port}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    try:
        _, stderr = started.communicate(timeout=20)
    finally:
        if started.poll() is None:
            os.kill(started.pid, signal.SIGKILL)
            started.wait()
    assert started.returncode == 1
    # The `configuration loaded` log line comes first; the refusal is the one error line.
    errors = [line for line in stderr.splitlines() if line.startswith("chime:")]
    assert len(errors) == 1, stderr
    assert errors[0].startswith(f"chime: insecure_bind: refusing to bind control at tcp://0.0.0.0:{port} without CURVE keys"), stderr
