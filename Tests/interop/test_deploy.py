"""The shipped systemd unit's command line runs: the coordinator starts with it and keeps its store.

The unit's `ExecStart=`, `Environment=` and `WorkingDirectory=` are read from
deploy/systemd/chime-coordinator.service and deploy/systemd/chime.json, with the paths
moved into a temporary directory and `--port-base` added; the process is given what
systemd would give it (`NOTIFY_SOCKET`, `WATCHDOG_USEC`, `JOURNAL_STREAM`) and stopped by
its pid.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
import uuid

from conftest import REPO_ROOT, chime_binary, control_request, free_port_base

UNIT = REPO_ROOT / "deploy" / "systemd" / "chime-coordinator.service"
DEADLINE_S = 20.0


def unit_settings(path) -> dict[str, list[str]]:
    """`[Service]` assignments of a unit file, each key with its values in order."""
    settings: dict[str, list[str]] = {}
    section = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    return settings


def test_coordinator_starts_with_the_shipped_unit_command_line(tmp_path):
    settings = unit_settings(UNIT)
    state = settings["WorkingDirectory"][0]
    assert settings["StateDirectory"] == ["chime"] and state == "/var/lib/chime"
    environment = dict(value.split("=", 1) for value in settings["Environment"])
    command = shlex.split(settings["ExecStart"][0])
    assert command[0] == "/usr/local/bin/chime"
    assert command[command.index("--store") + 1] == "/var/lib/chime/store", "the store sits in StateDirectory"

    configuration = json.loads((REPO_ROOT / "deploy" / "systemd" / "chime.json").read_text())
    assert configuration["store"]["directory"] == "/var/lib/chime/store"
    configuration["store"]["directory"] = str(tmp_path / "state" / "store")
    config_path = tmp_path / "chime.json"
    config_path.write_text(json.dumps(configuration))
    (tmp_path / "state").mkdir()
    base = free_port_base()
    command = [str(chime_binary())] + [
        argument.replace(state, str(tmp_path / "state")) for argument in command[1:]
    ] + ["--port-base", str(base)]

    notify_path = tmp_path / "notify"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    notify.settimeout(0.2)
    child_environment = dict(os.environ)
    child_environment.update({
        "CHIME_CONFIG": str(config_path) if environment["CHIME_CONFIG"] == "/etc/chime/chime.json" else "unexpected",
        "NOTIFY_SOCKET": str(notify_path), "WATCHDOG_USEC": "1000000", "JOURNAL_STREAM": "8:4242",
    })
    log_path = tmp_path / "coordinator.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=tmp_path / "state", env=child_environment, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT)
    try:
        messages: list[str] = []
        deadline = time.monotonic() + DEADLINE_S
        while not ({"READY=1", "WATCHDOG=1"} <= set(messages)):
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, f"no READY=1 and WATCHDOG=1: {messages}\n{log_path.read_text()}"
            try:
                messages += notify.recv(4096).decode().split("\n")
            except socket.timeout:
                pass
        reply = control_request(f"tcp://127.0.0.1:{base}", {"op": "ping", "requestId": f"unit-{uuid.uuid4()}"}, 2.0)
        assert reply and reply["ok"], reply
        assert (tmp_path / "state" / "store" / "journal").is_dir()
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
        notify.close()
    lines = log_path.read_text().splitlines()
    # Under journald (JOURNAL_STREAM) each line carries its syslog priority.
    assert any(line.startswith("<6>") and "INFO coordinator: recovered" in line for line in lines), lines
    assert all(line.startswith(("<3>", "<4>", "<6>", "<7>")) for line in lines), lines
