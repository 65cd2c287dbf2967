#!/usr/bin/env bash
# W1 across a real network stack: the coordinator, up to 4 workers and the subscriber each in
# a network namespace of their own, joined by veth pairs on a bridge in a namespace made for
# it (addresses 10.77.0.0/24 exist only inside these namespaces). Needs root and iproute2.
#
#   Benchmarks/netns.sh [N=100000] [WORKER COUNTS="1 2 4"]
#
# Prints one JSON line per worker count: N, workers, ingest rate, T->last fire, drain rate,
# lateness p50/p99/max (ms), lost, duplicates. Everything it starts is stopped by pid and
# every namespace it made is deleted on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
COUNTS=${2:-"1 2 4"}
BIN="$(swift build -c release --show-bin-path)/chime"
[ -x "$BIN" ] || { echo "build first: swift build -c release --product chime" >&2; exit 2; }
WORK=$(mktemp -d)
HOSTS=(chime-coord chime-sub chime-w1 chime-w2 chime-w3 chime-w4)
PIDS=()

cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    sleep 1
    for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for host in "${HOSTS[@]}" chime-net; do ip netns del "$host" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

ip netns add chime-net
ip -n chime-net link set lo up
ip -n chime-net link add br0 type bridge
ip -n chime-net link set br0 up
for index in "${!HOSTS[@]}"; do
    host=${HOSTS[$index]}
    ip netns add "$host"
    ip link add "cv$index" type veth peer name "ch$index"
    ip link set "cv$index" netns chime-net
    ip link set "ch$index" netns "$host"
    ip -n chime-net link set "cv$index" master br0 up
    ip -n "$host" addr add "10.77.0.$((index + 1))/24" dev "ch$index"
    ip -n "$host" link set "ch$index" up
    ip -n "$host" link set lo up
done

cat > "$WORK/chime.json" <<EOF
{"endpoints": {
  "control": {"bind": "tcp://10.77.0.1:7700", "connect": "tcp://10.77.0.1:7700"},
  "dispatch": {"bind": "tcp://10.77.0.1:7701", "connect": "tcp://10.77.0.1:7701"},
  "results": {"bind": "tcp://10.77.0.1:7702", "connect": "tcp://10.77.0.1:7702"},
  "events": {"bind": "tcp://10.77.0.1:7703", "connect": "tcp://10.77.0.1:7703"},
  "eventsIngest": {"bind": "tcp://10.77.0.1:7704", "connect": "tcp://10.77.0.1:7704"}},
 "sampleReminders": []}
EOF

for workers in $COUNTS; do
    rm -rf "$WORK/store"
    PIDS=()
    ip netns exec chime-coord "$BIN" coordinator --config "$WORK/chime.json" --store "$WORK/store" --log-level warning &
    PIDS+=($!)
    for w in $(seq 1 "$workers"); do
        ip netns exec "chime-w$w" "$BIN" worker --config "$WORK/chime.json" --id "w$w" --log-level warning &
        PIDS+=($!)
    done
    ip netns exec chime-sub timeout 300 python3 - "$N" "$workers" <<'EOF'
import json, sys, time, zmq
from datetime import datetime, timezone
N, workers = int(sys.argv[1]), int(sys.argv[2])
ctx = zmq.Context()
def request(body):
    s = ctx.socket(zmq.DEALER); s.setsockopt(zmq.LINGER, 0); s.connect("tcp://10.77.0.1:7700")
    s.send_multipart([b"", json.dumps(body).encode()])
    ok = s.poll(10000)
    reply = json.loads(s.recv_multipart()[-1]) if ok else None
    s.close(); return reply
deadline = time.time() + 30
while time.time() < deadline:
    reply = request({"op": "workers"})
    if reply and sum(w["alive"] for w in reply["result"]["workers"]) >= workers: break
    time.sleep(0.1)
sub = ctx.socket(zmq.SUB); sub.setsockopt(zmq.RCVHWM, 0); sub.setsockopt(zmq.SUBSCRIBE, b"fire.")
sub.connect("tcp://10.77.0.1:7703"); time.sleep(0.5)
T = time.time() + max(5, N / 20000 + 4)
at = datetime.fromtimestamp(T, timezone.utc).isoformat().replace("+00:00", "Z")
started = time.time()
for b in range(N // 1000):
    request({"op": "schedule", "reminders": [
        {"id": f"n{b}-{i}", "recipient": f"u{i % 50}", "content": {"body": "x" * 100}, "trigger": {"at": at}}
        for i in range(1000)]})
ingest = time.time() - started
first, count, last = {}, 0, 0.0
end = T + 60
while time.time() < end and len(first) < N:
    if sub.poll(500):
        while True:
            try: _, body = sub.recv_multipart(zmq.NOBLOCK)
            except zmq.Again: break
            now = time.time(); count += 1; last = now
            first.setdefault(json.loads(body)["reminderId"], now)
if first:
    time.sleep(2)
    while sub.poll(100):
        sub.recv_multipart(); count += 1
late = sorted((v - T) * 1000 for v in first.values())
rank = lambda p: late[max(0, min(len(late) - 1, int(-(-p * len(late) // 1)) - 1))]
print(json.dumps({"workload": "W1-netns", "n": N, "workers": workers, "bulk": True,
    "ingestRate": round(N / ingest), "tToLastFireSeconds": round(last - T, 3),
    "drainRate": round(len(first) / max(1e-9, last - T)),
    "latenessMs": {"p50": round(rank(0.5), 2), "p99": round(rank(0.99), 2), "max": round(late[-1], 2)} if late else None,
    "lost": N - len(first), "duplicates": count - len(first)}))
EOF
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
done
