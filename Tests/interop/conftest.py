"""Fixtures that run a real Chime cluster (one coordinator, two workers) on loopback.

Every child is started by this module and stopped by its own pid: SIGTERM, up to 5 s to
exit, then SIGKILL. Nothing here signals processes by name. Children's output goes to
log files in a per-cluster temporary directory; the logs are attached to the report of
any failing test that used the cluster, and included in the error when startup fails.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import zmq

REPO_ROOT = Path(__file__).resolve().parents[2]
STARTUP_DEADLINE_S = 20.0
STOP_GRACE_S = 5.0
WORKER_COUNT = 2


# --------------------------------------------------------------------------- binary


def chime_binary() -> Path:
    """`$CHIME_BINARY`, else `$(swift build --show-bin-path)/chime` from the repo root."""
    configured = os.environ.get("CHIME_BINARY")
    if configured:
        path = Path(configured)
    else:
        try:
            bin_dir = subprocess.run(
                ["swift", "build", "--show-bin-path"],
                cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError) as error:
            pytest.fail(f"set CHIME_BINARY: cannot ask SwiftPM for the bin path ({error})")
        path = Path(bin_dir) / "chime"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"the chime executable is missing or not executable: {path} (set CHIME_BINARY)")
    return path


# --------------------------------------------------------------------------- ports


# Five ZeroMQ endpoints (port base … base + 4), the coordinator's HTTP (base + 5) and
# `chime up`'s dashboard (base + 6).
PORTS_PER_CLUSTER = 7


def wait_for(what: str, condition, deadline_s: float = 20.0):
    """Polls `condition` every 50 ms until it returns a truthy value (returned) or
    `deadline_s` seconds pass (AssertionError naming `what`)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def delivered_ids(client, recipient: str) -> list[str]:
    """The firing ids of `recipient`'s delivered, unhandled firings (the `delivered` op, every
    page: a reply ends at `limits.maxReplyBytes` with a `nextCursor`), newest first; `client`
    is a chime_client.ClusterClient."""
    ids: list[str] = []
    request: dict = {"op": "delivered", "recipient": recipient}
    for _ in range(10_000):
        result = client.request(request, recipient)["result"]
        ids += [item["firingId"] for item in result["delivered"]]
        if not result.get("nextCursor") or not result["delivered"]:
            return ids
        request = {"op": "delivered", "recipient": recipient, "cursor": result["nextCursor"]}
    raise AssertionError("the delivered list did not end within 10,000 pages")


def _range_is_free(base: int, count: int = PORTS_PER_CLUSTER) -> bool:
    """Binds test sockets on 127.0.0.1 to `base` … `base + count - 1`, all at once."""
    held = []
    try:
        for port in range(base, base + count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(sock)
            sock.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        for sock in held:
            sock.close()


def _ephemeral_start() -> int:
    """The first port of the kernel's ephemeral range (32768 when it cannot be read)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_base(attempts: int = 200) -> int:
    """A random base whose PORTS_PER_CLUSTER consecutive loopback ports are free, from 10000 up to the
    kernel's ephemeral range: a client reconnecting to a port nobody listens on can get that
    port as its own ephemeral one and hold it, and a restarted coordinator then cannot bind."""
    ceiling = min(60000, _ephemeral_start()) - 100
    low, high = (10000, ceiling) if ceiling > 12000 else (20000, 60000 - PORTS_PER_CLUSTER)
    for _ in range(attempts):
        base = random.randint(low, high)
        if _range_is_free(base):
            return base
    raise RuntimeError(f"no {PORTS_PER_CLUSTER} consecutive free loopback ports found in {low}-{high}")


# --------------------------------------------------------------------------- control


def curve_client(sock: zmq.Socket, curve: tuple[bytes, bytes, bytes] | None) -> None:
    """Makes `sock` a CURVE client: `curve` is (own public key, own secret key, server public key)."""
    if curve is None:
        return
    public, secret, server = curve
    sock.curve_publickey = public
    sock.curve_secretkey = secret
    sock.curve_serverkey = server


def control_request(
    endpoint: str, request: dict, timeout_s: float = 0.3, context: zmq.Context | None = None,
    curve: tuple[bytes, bytes, bytes] | None = None,
):
    """One request on a fresh DEALER (with the empty delimiter, as REQ sends it).

    Returns the decoded reply, or None when no reply came within `timeout_s`. A fresh
    socket per call (Lazy Pirate) so a lost reply never wedges the next attempt. With
    `curve` the socket is a CURVE client (see `curve_client`). The send is bounded by
    `timeout_s` too: a DEALER whose only connection failed its handshake (a plain client of a
    CURVE server) has no pipe left and would block in send forever.
    """
    context = context or zmq.Context.instance()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDTIMEO, max(1, int(timeout_s * 1000)))
    curve_client(sock, curve)
    try:
        sock.connect(endpoint)
        try:
            sock.send_multipart([b"", json.dumps(request).encode()])
        except zmq.Again:
            return None
        if not sock.poll(int(timeout_s * 1000), zmq.POLLIN):
            return None
        frames = sock.recv_multipart()
        return json.loads(frames[-1])
    finally:
        sock.close()


# --------------------------------------------------------------------------- cluster


class ChimeCluster:
    """A coordinator and `workers` workers of the binary under test on six loopback ports."""

    def __init__(self, binary: Path, directory: Path, configuration: dict | None = None, workers: int = WORKER_COUNT):
        self.binary = binary
        self.directory = directory
        self.configuration = configuration or {}
        self.worker_count = workers
        self.port_base = 0
        self.children: list[tuple[str, subprocess.Popen]] = []
        self.exit_statuses: dict[str, int] = {}
        self.killed: list[str] = []
        self.config_path = directory / "chime.json"
        # CURVE keys (own public, own secret, server public) for the readiness probes, when
        # the configuration turns security on.
        self.probe_curve: tuple[bytes, bytes, bytes] | None = None

    # Endpoints ------------------------------------------------------------------------

    @property
    def control_endpoint(self) -> str:
        return f"tcp://127.0.0.1:{self.port_base}"

    @property
    def events_endpoint(self) -> str:
        return f"tcp://127.0.0.1:{self.port_base + 3}"

    @property
    def http_url(self) -> str:
        """The coordinator's HTTP endpoint (port base + 5): /metrics, /healthz, /readyz."""
        return f"http://127.0.0.1:{self.port_base + 5}"

    @property
    def coordinator_pid(self) -> int:
        return next(p.pid for name, p in self.children if name.startswith("coordinator"))

    @property
    def cluster_arguments(self) -> list[str]:
        return ["--config", str(self.config_path), "--port-base", str(self.port_base)]

    # Lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Writes the config, starts everything, waits for ping and for all workers alive.

        A port range taken between the probe and the coordinator's bind shows up as the
        coordinator exiting; then a new range is tried (at most three times).
        """
        self.config_path.write_text(json.dumps(self.configuration))
        last_error = None
        for attempt in range(3):
            self.port_base = free_port_base()
            coordinator = self.spawn(f"coordinator-{attempt}" if attempt else "coordinator", ["coordinator"])
            try:
                self._wait("the coordinator to answer ping", self._pings)
            except ChildExited as error:
                if coordinator.poll() is None:
                    raise
                last_error = error
                self.stop()
                continue
            break
        else:
            raise RuntimeError(f"the coordinator did not start on three port ranges: {last_error}\n{self.logs()}")
        for index in range(1, self.worker_count + 1):
            self.spawn(f"pw-{index}", ["worker", "--id", f"pw-{index}"])
        self._wait(f"{self.worker_count} workers to be alive", self._workers_alive)

    def kill_coordinator(self, sig: int = signal.SIGKILL) -> None:
        """Signals the coordinator by its pid and waits for it to exit (it leaves `children`)."""
        for index, (name, process) in enumerate(self.children):
            if name.startswith("coordinator"):
                os.kill(process.pid, sig)
                process.wait(timeout=STOP_GRACE_S)
                self.exit_statuses[name] = process.returncode
                del self.children[index]
                return
        raise RuntimeError("no coordinator is running")

    def start_coordinator(self, name: str) -> None:
        """Starts a coordinator on the same ports and store; waits until it answers ping."""
        self.spawn(name, ["coordinator"])
        self._wait(f"{name} to answer ping", self._pings)

    def spawn(self, name: str, arguments: list[str]) -> subprocess.Popen:
        log = open(self.directory / f"{name}.log", "wb")
        try:
            process = subprocess.Popen(
                [str(self.binary), *arguments, *self.cluster_arguments],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.directory,
            )
        finally:
            log.close()  # the child holds its own descriptor
        self.children.append((name, process))
        return process

    def _pings(self) -> bool:
        reply = control_request(
            self.control_endpoint, {"op": "ping", "requestId": f"ready-{uuid.uuid4()}"}, curve=self.probe_curve)
        return bool(reply and reply.get("ok"))

    def _workers_alive(self) -> bool:
        reply = control_request(self.control_endpoint, {"op": "workers"}, curve=self.probe_curve)
        if not (reply and reply.get("ok")):
            return False
        alive = [w for w in reply["result"]["workers"] if w.get("alive")]
        return len(alive) >= self.worker_count

    def _wait(self, what: str, condition) -> None:
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        while True:
            self.check_children()
            if condition():
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"timed out after {STARTUP_DEADLINE_S} s waiting for {what}\n{self.logs()}")
            # Pacing between polls only; each condition() itself waits on zmq poll.
            time.sleep(0.05)

    def check_children(self) -> None:
        for name, process in self.children:
            status = process.poll()
            if status is not None:
                raise ChildExited(f"{name} (pid {process.pid}) exited with status {status}\n{self.logs()}")

    def stop(self) -> dict[str, int]:
        """SIGTERM each child by its pid, wait up to 5 s in all, SIGKILL what is left."""
        for _, process in self.children:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for name, process in self.children:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
                self.killed.append(name)
            self.exit_statuses[name] = process.returncode
        self.children.clear()
        return self.exit_statuses

    def logs(self) -> str:
        parts = []
        for path in sorted(self.directory.glob("*.log")):
            text = path.read_text(errors="replace")
            parts.append(f"== {path.name}\n{text}")
        return "\n".join(parts)


class ChildExited(RuntimeError):
    pass


# --------------------------------------------------------------------------- fixtures


def _start_cluster(tmp_path_factory, configuration: dict | None, prepare=None) -> ChimeCluster:
    """Starts a cluster; `prepare(cluster)` runs first (to write keys and set `probe_curve`)."""
    directory = tmp_path_factory.mktemp("chime-cluster")
    cluster = ChimeCluster(chime_binary(), directory, configuration)
    if prepare is not None:
        prepare(cluster)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        print(f"chime cluster failed to start; logs:\n{cluster.logs()}")
        raise
    return cluster


def _stop_cluster(cluster: ChimeCluster) -> None:
    statuses = cluster.stop()
    killed = cluster.killed
    unclean = {name: s for name, s in statuses.items() if s not in (0, -signal.SIGTERM)}
    if killed or unclean:
        print(f"chime children did not stop cleanly: killed={killed} statuses={statuses}\n{cluster.logs()}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    """A shared cluster with the default configuration (`{}`) for one test module."""
    started = _start_cluster(tmp_path_factory, {})
    request.node._chime_clusters = getattr(request.node, "_chime_clusters", []) + [started]
    yield started
    _stop_cluster(started)


@pytest.fixture
def make_cluster(tmp_path_factory, request):
    """Starts a private cluster with the given configuration (JSON merged over defaults)."""
    started: list[ChimeCluster] = []

    def make(configuration: dict | None = None) -> ChimeCluster:
        instance = _start_cluster(tmp_path_factory, configuration)
        started.append(instance)
        request.node._chime_clusters = getattr(request.node, "_chime_clusters", []) + [instance]
        return instance

    yield make
    for instance in started:
        _stop_cluster(instance)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attaches the logs of every cluster a failing test used to its report."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    clusters = list(getattr(item, "_chime_clusters", []))
    module_cluster = item.funcargs.get("cluster") if hasattr(item, "funcargs") else None
    if isinstance(module_cluster, ChimeCluster) and module_cluster not in clusters:
        clusters.append(module_cluster)
    for index, instance in enumerate(clusters):
        report.sections.append((f"chime cluster {index} logs ({instance.directory})", instance.logs()))
