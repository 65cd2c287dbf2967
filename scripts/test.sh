#!/usr/bin/env bash
# README command 2: install what is missing, build (warnings are errors), and run the whole
# test suite: Swift unit, in-process and process-level tests, then the Python interop tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build
CHIME_BINARY="$(swift build --show-bin-path)/chime" python3 -m pytest -q Tests/interop
