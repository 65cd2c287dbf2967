#!/usr/bin/env bash
# README command 2: install what is missing, build (warnings are errors), and run the whole
# test suite: Swift unit, in-process and process-level tests, then the Python interop tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
scripts/check-deploy.sh
# The image built here and run under podman-compose (scripts/image.sh --check: a debootstrap
# base, a static release build, a compose run that fires and survives down/up; about 4 min
# from cold), where podman, debootstrap and podman-compose are installed and this is root.
if [ "${CHIME_IMAGE_CHECK:-auto}" != 0 ] && [ "$(id -u)" = 0 ] \
    && command -v podman >/dev/null && command -v debootstrap >/dev/null && command -v podman-compose >/dev/null; then
    scripts/image.sh --check
else
    echo "test.sh: podman, debootstrap or podman-compose missing (or not root): the image check is skipped (apt-get install podman runc debootstrap podman-compose to run it)"
fi
swift build --build-tests -Xswiftc -warnings-as-errors
swift test --skip-build
# The documentation site from this build (scripts/docs.sh: ChimeClient's symbol graph, the
# references generated from the code and compared with the committed pages, docc with
# warnings as errors; about 10 s), before the interop tests, which open it in Chromium.
scripts/docs.sh --check --skip-build
CHIME_BINARY="$(swift build --show-bin-path)/chime" python3 -m pytest -q --timeout 900 Tests/interop
# Fuzzing, bounded: the fuzz build (about 100 s from clean on 2 cores) plus 10 s per target.
# CHIME_FUZZ_SECONDS=N runs longer; 0 skips the step.
if [ "${CHIME_FUZZ_SECONDS:-10}" != 0 ]; then
    scripts/fuzz.sh "${CHIME_FUZZ_SECONDS:-10}"
fi
