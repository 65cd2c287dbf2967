#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ (release, --sanitize fuzzer) and runs each target
# for SECONDS_PER_TARGET seconds (default 20) on a copy of its checked-in seed corpus, so
# the checked-in corpus never grows. Fails on the first target that crashes; the crashing
# input is left in the work directory printed at the end.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# CHIME_FUZZ_WORK=DIR keeps the grown corpora and findings in DIR (default: a temp dir,
# removed when every target passed).
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
seconds="${1:-20}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(request frames journal snapshot rrule icalendar rfc3339 firingid subscription lease provider register)
fi
swift build -c release --sanitize fuzzer
binary="$(swift build -c release --sanitize fuzzer --show-bin-path)/chime-fuzz"
work="${CHIME_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/chime-fuzz.XXXXXX")}"
mkdir -p "$work"
status=0
for target in "${targets[@]}"; do
    rm -rf "$work/$target"
    mkdir -p "$work/$target/corpus" "$work/$target/findings"
    cp corpus/"$target"/* "$work/$target/corpus/"
    if CHIME_FUZZ_TARGET="$target" "$binary" "$work/$target/corpus" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$work/$target/findings/" >"$work/$target/log" 2>&1; then
        echo "fuzz $target: $(grep -E '^stat::number_of_executed_units' "$work/$target/log" | awk '{print $2}') executions, no crash"
    else
        status=1
        echo "fuzz $target: FAILED (log and input in $work/$target)"
        tail -n 30 "$work/$target/log"
    fi
done
if [ "$status" = 0 ] && [ -z "${CHIME_FUZZ_WORK:-}" ]; then
    rm -rf "$work"
else
    echo "fuzz work directory: $work"
fi
exit "$status"
