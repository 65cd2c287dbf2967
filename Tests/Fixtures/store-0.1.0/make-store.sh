#!/usr/bin/env bash
# Writes a store with today's (pre-DurableState) chime, for the "a store written by the previous
# release opens" test.
set -euo pipefail
B=/tmp/chime-prev
P=47310
cat > cats.json <<'J'
[{"identifier":"meeting","actions":[{"identifier":"snooze","title":"Later"},{"identifier":"join","title":"Join","activationMode":"foreground"}]}]
J
$B coordinator --port-base $P --store store --http off > coord.log 2>&1 &
C=$!
$B worker --port-base $P --id w1 > worker.log 2>&1 &
W=$!
sleep 1.5
S() { local c=$1; shift; $B $c --port-base $P "$@"; }
S register alice --zone Europe/Berlin --categories cats.json --json > /dev/null
S register bob --zone Asia/Tokyo --allow alert,badge --max-pending 2 --json >/dev/null
S schedule --id one --recipient alice --at 2098-01-01T09:00:00Z --title One --badge 1 --json >/dev/null
S schedule --id daily --recipient alice --at 2099-01-01T08:00 --tz Europe/Berlin --repeat day --title Daily --category meeting --json >/dev/null
S schedule --id weekly --recipient bob --at 2099-01-05T07:30 --tz recipient --repeat week --title Weekly --before 15m --json >/dev/null
S schedule --id rr --recipient bob --at 2099-02-02T10:00 --tz America/New_York --rrule 'FREQ=MONTHLY;BYDAY=MO;BYSETPOS=1;COUNT=10' --body rule --json >/dev/null 2>&1 || true
S schedule --id off --recipient carol --at 2099-06-01T12:00:00Z --disabled --user-info '{"k":"v","n":3}' --json >/dev/null
S schedule --id nag --recipient alice --in 1s --title Nag --nag 2 --nag-every 10m --badge +1 --category meeting --json >/dev/null
S schedule --id soon --recipient bob --in 1s --title Soon --badge 3 --json >/dev/null
sleep 3
$B ctl snapshot --port-base $P --json > /dev/null
S schedule --id after --recipient carol --at 2099-05-05T05:05:05Z --title After --json > /dev/null
S cancel off --json > /dev/null
S badge alice 5 --json > /dev/null
F=$($B delivered alice --port-base $P --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["result"]["delivered"][0]["firingId"])')
S act "$F" open --json > /dev/null
sleep 1.5
S list --all --all-pages --json > list.ndjson
S delivered alice --json > delivered-alice.json
S delivered bob --json > delivered-bob.json
kill -TERM $W $C; wait $W $C || true
