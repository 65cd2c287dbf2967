#!/usr/bin/env bash
# Slot-move figures (issue 27): a 3-shard local cluster with a map register, N reminders on
# shards 0 and 1 (due in a day), then `chime shards move 0-2047 --to 2` while a client writes
# to recipients on the moving slots and records each write's latency (a write that meets the
# hand-over waits out try_again), and while reminders on the moving slots fire every 10 ms at a
# pyzmq subscriber of all three shards' events, which records each firing's lateness (receipt
# minus dueAt) and counts firing ids missing or delivered twice. Prints the mover's JSON, the
# write latencies and the firing lateness.
# Usage: scripts/slot-move-figures.sh [CHIME_BINARY] [REMINDERS] [BATCH_SLOTS] [FIRING_SECONDS]
set -euo pipefail
CHIME=${1:-.build/release/chime}
COUNT=${2:-100000}
BATCH=${3:-64}
FIRING_SECONDS=${4:-60}
BASE=${PORT_BASE:-23100}
DIR=$(mktemp -d /tmp/chime-move-figures-XXXX)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT
endpoints() { local p=$((BASE + 10 * $1)); echo "{\"control\":\"tcp://127.0.0.1:$p\",\"dispatch\":\"tcp://127.0.0.1:$((p+1))\",\"results\":\"tcp://127.0.0.1:$((p+2))\",\"events\":\"tcp://127.0.0.1:$((p+3))\",\"eventsIngest\":\"tcp://127.0.0.1:$((p+4))\"}"; }
cat > "$DIR/chime.json" <<JSON
{"http": {"listen": "off"}, "store": {"fsync": "interval"},
 "cluster": {"mapEpoch": 1, "slotCount": 4096, "register": "$DIR/map.json", "shards": [
   {"id": 0, "slots": [[0, 2047]], "endpoints": $(endpoints 0)},
   {"id": 1, "slots": [[2048, 4095]], "endpoints": $(endpoints 1)},
   {"id": 2, "slots": [], "endpoints": $(endpoints 2)}]}}
JSON
for k in 0 1 2; do
  "$CHIME" coordinator --shard $k --store "$DIR/store-$k" --config "$DIR/chime.json" --log-level warning > "$DIR/shard-$k.log" 2>&1 &
  PIDS+=($!)
done
"$CHIME" worker --config "$DIR/chime.json" --log-level warning > "$DIR/worker.log" 2>&1 &
PIDS+=($!)
sleep 2
python3 - "$COUNT" > "$DIR/reminders.ndjson" <<'PY'
import json, sys
for n in range(int(sys.argv[1])):
    print(json.dumps({"id": f"f{n}", "recipient": f"user-{n % 20000}", "content": {"body": "x"},
                      "trigger": {"in": f"{86400 + n % 3600}s"}}))
PY
start=$(date +%s.%N)
"$CHIME" schedule --file "$DIR/reminders.ndjson" --config "$DIR/chime.json" --json > "$DIR/schedule.json"
echo "scheduled $COUNT reminders in $(echo "$(date +%s.%N) - $start" | bc) s"
"$CHIME" shards map --config "$DIR/chime.json"
# Firings on the moving slots every 10 ms from 5 s from now, for FIRING_SECONDS, and a
# subscriber of every shard's fire events recording each one's lateness.
python3 - "$FIRING_SECONDS" > "$DIR/firings.ndjson" <<'PY'
import json, sys, time
sys.path.insert(0, "clients/python")
from chime_client import slot_of
moving = [r for r in (f"fire-{n}" for n in range(4000)) if slot_of(r, 4096) < 2048][:200]
start = time.time() + 8
for n in range(int(sys.argv[1]) * 100):
    due = start + n / 100
    at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(due)) + f".{int(due * 1000) % 1000:03d}Z"
    print(json.dumps({"id": f"due{n}", "recipient": moving[n % len(moving)], "content": {"body": "d"},
                      "trigger": {"at": at}}))
PY
python3 - "$BASE" "$DIR/lateness.txt" "$FIRING_SECONDS" <<'PY' &
import json, sys, time, zmq
from datetime import datetime
base, out, seconds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
sub = zmq.Context().socket(zmq.SUB)
for k in range(3):
    sub.connect(f"tcp://127.0.0.1:{base + 10 * k + 3}")
sub.setsockopt(zmq.SUBSCRIBE, b"fire.")
seen, late, duplicates = set(), [], 0
deadline = time.time() + seconds + 40
while time.time() < deadline and len(seen) < seconds * 100:
    if not sub.poll(1000):
        continue
    received = time.time()
    event = json.loads(sub.recv_multipart()[-1])
    if not event.get("reminderId", "").startswith("due"):
        continue
    if event["firingId"] in seen:
        duplicates += 1
        continue
    seen.add(event["firingId"])
    due = datetime.fromisoformat(event["dueAt"].replace("Z", "+00:00")).timestamp()
    late.append((received - due) * 1000)
with open(out, "w") as f:
    f.write(f"{seconds * 100} {len(seen)} {duplicates}\n" + "\n".join(f"{x:.3f}" for x in late))
PY
SUBSCRIBER=$!
"$CHIME" schedule --file "$DIR/firings.ndjson" --config "$DIR/chime.json" --json > "$DIR/schedule-firings.json"
# Writes to recipients on the moving slots during the move, each timed.
python3 - "$BASE" "$DIR/latency.txt" <<'PY' &
import sys, time, uuid
sys.path.insert(0, "clients/python")
from chime_client import ClusterClient, slot_of
base, out = int(sys.argv[1]), sys.argv[2]
client = ClusterClient([f"tcp://127.0.0.1:{base}", f"tcp://127.0.0.1:{base + 10}"], timeout_s=5)
moving = [r for r in (f"writer-{n}" for n in range(2000)) if slot_of(r, 4096) < 2048][:50]
latencies = []
deadline = time.time() + 1200
with open(out + ".stop", "w"):
    pass
import os
while os.path.exists(out + ".stop") and time.time() < deadline:
    recipient = moving[len(latencies) % len(moving)]
    began = time.monotonic()
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
    reply = client.request({"op": "schedule", "reminder": {"id": str(uuid.uuid4()), "recipient": recipient,
                            "content": {"body": "w"}, "trigger": {"at": at}}}, recipient=recipient)
    latencies.append((time.monotonic() - began) * 1000)
    if not reply.get("ok"):
        print("refused:", reply.get("error"), file=sys.stderr)
    time.sleep(0.005)
with open(out, "w") as f:
    f.write("\n".join(f"{x:.3f}" for x in latencies))
PY
WRITER=$!
sleep 3
"$CHIME" shards move 0-2047 --to 2 --batch-slots "$BATCH" --json --config "$DIR/chime.json" | tee "$DIR/move.json"
rm -f "$DIR/latency.txt.stop"
wait $WRITER
python3 - "$DIR/latency.txt" <<'PY'
import sys
xs = sorted(float(x) for x in open(sys.argv[1]).read().split())
q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
print(f"writes to moving slots during the move: {len(xs)}, latency ms p50 {q(0.5):.1f} p99 {q(0.99):.1f} max {xs[-1]:.1f}")
PY
wait $SUBSCRIBER
python3 - "$DIR/lateness.txt" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
due, seen, duplicates = (int(x) for x in lines[0].split())
xs = sorted(float(x) for x in lines[1:] if x)
q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
print(f"firings on the moving slots: {due} due, {seen} received, {due - seen} missing, {duplicates} duplicates; "
      f"lateness ms p50 {q(0.5):.1f} p99 {q(0.99):.1f} max {xs[-1]:.1f}")
PY
"$CHIME" shards map --config "$DIR/chime.json"
