#!/usr/bin/env bash
# Slot-move figures (issue 27): a 3-shard local cluster with a map register, N reminders on
# shards 0 and 1 (due in a day), then `chime shards move 0-2047 --to 2` while a client writes
# to recipients on the moving slots and records each write's latency (a write that meets the
# hand-over waits out try_again). Prints the mover's JSON and the write latencies.
# Usage: scripts/slot-move-figures.sh [CHIME_BINARY] [REMINDERS] [BATCH_SLOTS]
set -euo pipefail
CHIME=${1:-.build/release/chime}
COUNT=${2:-100000}
BATCH=${3:-64}
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
# Writes to recipients on the moving slots during the move, each timed.
python3 - "$BASE" "$DIR/latency.txt" <<'PY' &
import sys, time, uuid
sys.path.insert(0, "clients/python")
from chime_client import ClusterClient, slot_of
base, out = int(sys.argv[1]), sys.argv[2]
client = ClusterClient([f"tcp://127.0.0.1:{base}", f"tcp://127.0.0.1:{base + 10}"], timeout_s=5)
moving = [r for r in (f"writer-{n}" for n in range(2000)) if slot_of(r, 4096) < 2048][:50]
latencies = []
deadline = time.time() + 120
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
sleep 1
"$CHIME" shards move 0-2047 --to 2 --batch-slots "$BATCH" --json --config "$DIR/chime.json" | tee "$DIR/move.json"
rm -f "$DIR/latency.txt.stop"
wait $WRITER
python3 - "$DIR/latency.txt" <<'PY'
import sys
xs = sorted(float(x) for x in open(sys.argv[1]).read().split())
q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
print(f"writes to moving slots during the move: {len(xs)}, latency ms p50 {q(0.5):.1f} p99 {q(0.99):.1f} max {xs[-1]:.1f}")
PY
"$CHIME" shards map --config "$DIR/chime.json"
