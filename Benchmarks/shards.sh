#!/usr/bin/env bash
# One bounded `chime-bench` run with its CPU per process sampled beside it (issue 26's figures).
#
#   Benchmarks/shards.sh OUTDIR LABEL BINDIR [chime-bench arguments…]
#
# Runs BINDIR/chime-bench under `timeout` ($BENCH_TIMEOUT seconds, default 900, then SIGTERM:
# the bench stops its children by pid; SIGKILL 60 s later) and Benchmarks/cpu_share.py on it;
# writes OUTDIR/LABEL.json (the report), .err (progress), .cpu (CPU % per role every 2 s and CPU
# seconds per role) and .load (/proc/loadavg at the start and the end).
set -u
out=$1 label=$2 bindir=$3
shift 3
mkdir -p "$out"
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" > "$out/$label.load"
timeout --signal=TERM --kill-after=60 "${BENCH_TIMEOUT:-900}" "$bindir/chime-bench" "$@" > "$out/$label.json" 2> "$out/$label.err" &
pid=$!
python3 "$(dirname "$0")/cpu_share.py" --pid "$pid" --interval 2 --out "$out/$label.cpu" &
sampler=$!
wait "$pid"
status=$?
wait "$sampler"
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) exit $status" >> "$out/$label.load"
exit "$status"
