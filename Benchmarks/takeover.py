#!/usr/bin/env python3
"""Cold vs warm standby takeover with N pending reminders (issue 13, item 7).

Starts an active coordinator on a fresh store, schedules N one-shot reminders due tomorrow
(bulk requests of 1,000, the coordinator's limit per request), starts a standby (warm, or --cold-standby), waits until it waits
for the lock (warm: until it has loaded the state and caught up), SIGKILLs the active one by
its pid, and measures from the SIGKILL to the first `ping` the standby answers. Also reads
the standby's own `takeoverMilliseconds` (lock taken -> serving) from its log.

    python3 Benchmarks/takeover.py --binary .build/release/chime --count 100000 --runs 3

`--fault stop` SIGSTOPs the active coordinator instead (the standby takes over when its
lease expires, then kills it). Also reported: the resident memory of the active coordinator
right after the ingest and 8 s later (after the snapshot that follows it), of the standby
while it waits, and of the standby after the takeover. Run it from a directory without a
`config/chime.json` of another version.
"""
import argparse, json, os, re, shutil, signal, subprocess, sys, tempfile, time
import zmq

def schedule(sock, first, count):
    due = time.time() + 86400
    reminders = [{"id": f"p-{i}", "recipient": f"user-{i % 1000}",
                  "content": {"title": f"t{i}", "body": "pending reminder %d" % i, "userInfo": {"n": i}},
                  "trigger": {"at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(due + i / 1000)) + "Z"}}
                 for i in range(first, first + count)]
    sock.send_json({"op": "schedule", "requestId": f"bulk-{first}", "reminders": reminders})
    reply = sock.recv_json()
    assert reply["ok"], reply

def ping(endpoint, timeout_ms):
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.REQ); s.setsockopt(zmq.LINGER, 0); s.connect(endpoint)
    s.send_json({"op": "ping"})
    ok = s.poll(timeout_ms) != 0
    if ok: s.recv()
    s.close()
    return ok

def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"): return int(line.split()[1]) // 1024
    return None

def run_once(binary, count, mode, port, fault="kill"):
    directory = tempfile.mkdtemp(prefix="takeover-")
    store = os.path.join(directory, "store")
    common = ["--store", store, "--port-base", str(port), "--log-level", "info"]
    active_log = open(os.path.join(directory, "active.log"), "w")
    active = subprocess.Popen([binary, "coordinator"] + common, stdout=active_log, stderr=subprocess.STDOUT)
    endpoint = f"tcp://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while not ping(endpoint, 200):
            assert time.time() < deadline, "active coordinator did not start"
        ctx = zmq.Context.instance()
        s = ctx.socket(zmq.REQ); s.connect(endpoint)
        t = time.time()
        # coordinator.maxRemindersPerRequest (1,000 by default): one request, one short loop turn.
        for first in range(0, count, 1000):
            schedule(s, first, min(1000, count - first))
        s.close(linger=0)
        ingest = time.time() - t
        active_rss = rss_mb(active.pid)
        time.sleep(8)  # the snapshot after the ingest (once quiet for a second), then its trim
        active_settled_rss = rss_mb(active.pid)
        standby_log_path = os.path.join(directory, "standby.log")
        standby_log = open(standby_log_path, "w")
        extra = ["--cold-standby"] if mode == "cold" else []
        standby = subprocess.Popen([binary, "coordinator", "--standby"] + extra + common, stdout=standby_log, stderr=subprocess.STDOUT)
        marker = "waiting for the store lock" if mode == "cold" else "warm state loaded"
        deadline = time.time() + 120
        while marker not in open(standby_log_path).read():
            assert time.time() < deadline, "standby not ready"
            time.sleep(0.05)
        time.sleep(1.0)  # let it settle (warm: a few follow rounds)
        waiting_rss = rss_mb(standby.pid)
        killed = time.time()
        os.kill(active.pid, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
        if fault == "kill": active.wait()
        while not ping(endpoint, 20):
            assert time.time() < killed + 120, "standby did not take over"
        answered = time.time() - killed
        log = open(standby_log_path).read()
        m = re.search(r"takeoverMilliseconds=([0-9.]+)", log)
        rss = rss_mb(standby.pid)
        standby.send_signal(signal.SIGTERM)
        standby.wait(timeout=30)
        return {"mode": mode, "fault": fault, "count": count, "ingestSeconds": round(ingest, 2),
                "faultToPingMs": round(answered * 1000, 1), "lockToServingMs": float(m.group(1)) if m else None,
                "activeRssMB": active_rss, "activeSettledRssMB": active_settled_rss, "standbyWaitingRssMB": waiting_rss, "standbyRssMB": rss}
    finally:
        for p in (active,):
            if p.poll() is None: p.kill(); p.wait()
        try:
            if standby.poll() is None: standby.kill(); standby.wait()
        except NameError:
            pass
        shutil.rmtree(directory, ignore_errors=True)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/chime")
    parser.add_argument("--count", type=int, default=100000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--port", type=int, default=27400)
    parser.add_argument("--fault", choices=["kill", "stop"], default="kill")
    parser.add_argument("--modes", default="cold,warm")
    args = parser.parse_args()
    for run in range(args.runs):
        for mode in args.modes.split(","):
            print(json.dumps(run_once(args.binary, args.count, mode, args.port, args.fault)), flush=True)
