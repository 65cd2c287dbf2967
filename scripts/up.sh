#!/usr/bin/env bash
# README command 1: install what is missing, build, and run a local cluster
# (one coordinator, two workers) on the bundled configuration. Extra arguments go to `chime up`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product chime 2>&1 | grep -v '^\[' || true
test -x .build/release/chime || { echo "build failed" >&2; exit 1; }
exec .build/release/chime up --config config/chime.json "$@"
