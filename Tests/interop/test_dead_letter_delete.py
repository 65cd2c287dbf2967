"""`chime ctl delete FIRING_ID` across two shards (issue 29): each delete is routed to the
shard that owns the firing's recipient, the dead letter leaves the merged listing, and a
second delete of it answers not_found.

Dead letters are made by one fake worker (pyzmq) per shard that takes firings and never
acknowledges them, with `maxAttempts` 1. Every process is started here and stopped by its
pid; every wait has a deadline.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from chime_client import shard_of  # noqa: E402
from conftest import chime_binary
from sharded import ShardedCluster
from test_adversarial import call, heartbeat, unique, wait_until, zmq_context  # noqa: F401 (a fixture)

DEADLINE_S = 30.0
SHARD_MAP = {"shards": [{"id": 0, "slots": [[0, 2047]]}, {"id": 1, "slots": [[2048, 4095]]}], "slotCount": 4096}
# Four recipients on each shard of the two (the slots ShardedCluster gives them).
RECIPIENTS = ([r for r in (f"del-{n}" for n in range(10_000)) if shard_of(SHARD_MAP, r) == 0][:4]
              + [r for r in (f"del-{n}" for n in range(10_000)) if shard_of(SHARD_MAP, r) == 1][:4])


def test_ctl_delete_routes_by_the_firings_recipient_across_shards(tmp_path, zmq_context):
    extra = {"coordinator": {"leaseSeconds": 0.2, "maxAttempts": 1}, "heartbeat": {"intervalMilliseconds": 200}}
    sharded = ShardedCluster(chime_binary(), tmp_path, shards=2, workers=0, extra=extra)
    silent: list[zmq.Socket] = []
    try:
        sharded.start()
        names = []
        for shard in range(2):
            sock = zmq_context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            name = unique(f"silent-{shard}")
            sock.setsockopt(zmq.ROUTING_ID, name.encode())
            sock.connect(sharded.endpoint(shard, 1))
            sock.send_multipart([heartbeat(name, capacity=100)])
            silent.append(sock)
            names.append(name)
        due = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 0.5))
        reminders = tmp_path / "reminders.json"
        reminders.write_text(json.dumps([{"id": "r", "recipient": recipient, "content": {"title": "t"}, "trigger": {"at": due}}
                                         for recipient in RECIPIENTS]))
        scheduled = sharded.run("schedule", "--file", str(reminders))
        assert scheduled.returncode == 0, scheduled.stderr

        def dead_letters() -> list[str]:
            for shard, sock in enumerate(silent):
                while sock.poll(0, zmq.POLLIN):
                    sock.recv_multipart()  # taken, never acknowledged
                sock.send_multipart([heartbeat(names[shard], capacity=100)])
            listed = sharded.run("ctl", "dead-letters", "--all-pages", "--json")
            assert listed.returncode == 0, listed.stderr
            return sorted(json.loads(line)["firingId"] for line in listed.stdout.splitlines())

        wait_until("every firing dead-lettered", lambda: len(dead_letters()) == len(RECIPIENTS), timeout_s=DEADLINE_S)
        firings = dead_letters()
        per_shard = [len(call(zmq_context, SimpleNamespace(control_endpoint=sharded.control(shard)), {"op": "deadLetters"})
                         ["result"]["firings"]) for shard in range(2)]
        assert per_shard == [4, 4]
        for firing in firings:
            deleted = sharded.run("ctl", "delete", firing)
            assert (deleted.returncode, deleted.stdout, deleted.stderr) == (0, f"deleted dead letter {firing}\n", "")
        assert dead_letters() == []
        again = sharded.run("ctl", "delete", firings[0], "--json")
        assert again.returncode == 1
        assert json.loads(again.stdout)["error"]["code"] == "not_found"
    finally:
        for sock in silent:
            sock.close()
        sharded.stop()
