"""Issue 37 item 5: without CURVE keys a process on the port of a configured shard that is not
running answered `map` with mapEpoch 99; the worker followed it, 0 of 40 firings of shard 0
were delivered, and it never came back. Now a newer map needs a majority of the shards the
worker serves: one peer cannot redirect it."""

from __future__ import annotations

import json
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import zmq

from conftest import chime_binary, control_request
from sharded import ShardedCluster


def rogue_map(base: int) -> dict:
    """A valid one-shard map of epoch 99 whose endpoints lead nowhere."""
    names = ["control", "dispatch", "results", "events", "eventsIngest"]
    return {"mapEpoch": 99, "slotCount": 4096, "shards": [
        {"id": 0, "slots": [[0, 4095]], "endpoints": {name: f"tcp://127.0.0.1:{base + i}" for i, name in enumerate(names)}}]}


def test_a_rogue_on_a_configured_shards_port_does_not_redirect_the_worker(tmp_path):
    cluster = ShardedCluster(chime_binary(), tmp_path, shards=2, workers=0)
    cluster.start()  # two shards
    configuration = json.loads(cluster.config_path.read_text())
    configuration["cluster"]["mapRefreshSeconds"] = 0.2
    cluster.config_path.write_text(json.dumps(configuration))
    cluster.kill("coordinator-1")  # shard 1 configured but not running
    context = zmq.Context.instance()
    rogue = context.socket(zmq.ROUTER)
    rogue.setsockopt(zmq.LINGER, 0)
    rogue.bind(cluster.control(1))
    asked = []
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            if not rogue.poll(50, zmq.POLLIN):
                continue
            frames = rogue.recv_multipart()
            request = json.loads(frames[-1])
            asked.append(request.get("op"))
            reply = {"ok": True, "requestId": request.get("requestId"), "result": rogue_map(cluster.base + 100)}
            rogue.send_multipart([*frames[:-1], json.dumps(reply).encode()])

    answering = threading.Thread(target=answer, daemon=True)
    answering.start()
    try:
        cluster.spawn("worker-1", ["worker", "--id", "sw-1"])
        cluster.wait("shard 0 to see the worker", lambda: cluster.workers_alive(0) >= 1)
        cluster.wait("the worker to ask the rogue for the map 5 times", lambda: asked.count("map") >= 5)
        due = (datetime.now(timezone.utc) + timedelta(milliseconds=300)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        accepted: list[str] = []
        for index in range(200):
            if len(accepted) == 20:
                break
            recipient = f"rogue-{index}"
            reply = control_request(cluster.control(0), {"op": "schedule", "requestId": str(uuid.uuid4()), "reminder": {
                "id": "r", "recipient": recipient, "content": {"body": "b"}, "trigger": {"at": due}}}, timeout_s=2)
            if reply and reply.get("ok"):
                accepted.append(recipient)
        assert len(accepted) == 20

        def delivered() -> int:
            count = 0
            for recipient in accepted:
                reply = control_request(cluster.control(0), {"op": "delivered", "recipient": recipient}, timeout_s=2)
                count += len(reply["result"]["delivered"]) if reply and reply.get("ok") else 0
            return count

        cluster.wait("all 20 firings of shard 0 delivered", lambda: delivered() == 20)
        log = (tmp_path / "worker-1.log").read_text()
        assert "following a new shard map" not in log, log
        assert log.count("not following a shard map that most shards do not answer") == 1, log
        assert "mapEpoch=99" in log, log
        print(f"the worker asked the rogue {asked.count('map')} times; 20 of 20 firings of shard 0 delivered")
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        stop.set()
        answering.join(timeout=2)
        rogue.close()
        cluster.stop()
