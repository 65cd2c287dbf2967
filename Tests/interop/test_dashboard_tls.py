"""`chime dashboard` over HTTPS with a login (issue 29).

A self-signed certificate for 127.0.0.1 is made with `openssl` (or Python's `cryptography`
when it is installed and openssl is not; otherwise the test is skipped with the reason).
The dashboard serves it on a loopback port with a token file: without a login a page
redirects to /login and the API answers 401; with `Authorization: Bearer TOKEN` the API
answers; the login form sets a Secure, HttpOnly, SameSite=Strict cookie that opens the pages.
A non-loopback address with TLS but no token, or a token file group can read, is refused.

The dashboard is started here and stopped by its pid; the port comes from
conftest.free_port_base; every wait has a deadline.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import ssl
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import STOP_GRACE_S, chime_binary, free_port_base

DEADLINE_S = 20.0
TOKEN = "dashboard-token-0123456789abcdef"


def make_certificate(directory: Path) -> tuple[Path, Path]:
    certificate, key = directory / "cert.pem", directory / "key.pem"
    if shutil.which("openssl"):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                        "-keyout", str(key), "-out", str(certificate), "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    else:
        try:
            import datetime
            import ipaddress

            from cryptography import x509
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.x509.oid import NameOID
        except ImportError:
            pytest.skip("neither openssl nor Python's cryptography is installed: cannot make a test certificate")
        private = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
        now = datetime.datetime.now(datetime.timezone.utc)
        made = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(private.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                .not_valid_after(now + datetime.timedelta(days=2))
                .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
                .sign(private, hashes.SHA256()))
        certificate.write_bytes(made.public_bytes(serialization.Encoding.PEM))
        key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
    os.chmod(key, 0o600)
    return certificate, key


class HTTPSDashboard:
    def __init__(self, directory: Path, arguments: list[str], certificate: Path):
        self.port = free_port_base()
        self.context = ssl.create_default_context(cafile=str(certificate))
        self.log_path = directory / "dashboard.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [str(chime_binary()), "dashboard", "--listen", f"127.0.0.1:{self.port}", "--port-base", str(free_port_base()),
                 *arguments], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=directory)
        deadline = time.monotonic() + DEADLINE_S
        while True:
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the dashboard did not answer over HTTPS:\n{self.log_path.read_text(errors='replace')}")
            time.sleep(0.05)

    def request(self, method: str, path: str, headers: dict | None = None, body: str | None = None):
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=15)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read().decode()
        finally:
            connection.close()

    def stop(self) -> int:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return self.process.returncode


def test_https_with_a_token_serves_only_after_login(tmp_path):
    certificate, key = make_certificate(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    dashboard = HTTPSDashboard(tmp_path, ["--tls-cert", str(certificate), "--tls-key", str(key), "--token-file", str(token_file)],
                               certificate)
    try:
        status, headers, _ = dashboard.request("GET", "/workers")
        assert (status, headers.get("Location")) == (303, "/login")
        status, headers, body = dashboard.request("GET", "/api/workers")
        assert (status, body) == (401, "unauthorized: log in at /login or send Authorization: Bearer TOKEN\n")
        assert dashboard.request("GET", "/api/workers", {"Authorization": "Bearer wrong-token-0123456789abcdef"})[0] == 401
        status, _, body = dashboard.request("GET", "/api/history", {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200 and body.startswith("[")
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        status, headers, _ = dashboard.request("POST", "/login", form, urllib.parse.urlencode({"token": "nope"}))
        assert status == 401 and "Set-Cookie" not in headers
        status, headers, _ = dashboard.request("POST", "/login", form, urllib.parse.urlencode({"token": TOKEN}))
        assert status == 303 and headers["Location"] == "/"
        cookie = headers["Set-Cookie"]
        assert cookie.endswith("; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure")
        session = cookie.split(";")[0]
        status, _, body = dashboard.request("GET", "/events", {"Cookie": session})
        assert status == 200 and 'action="/logout"' in body
        status, headers, _ = dashboard.request("POST", "/logout", {"Cookie": session})
        assert status == 303 and headers["Location"] == "/login"
        assert dashboard.request("GET", "/events", {"Cookie": session})[0] == 303
        with pytest.raises(OSError):  # plain HTTP to the HTTPS port gets no HTTP answer
            plain = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=5)
            try:
                plain.request("GET", "/healthz")
                plain.getresponse().read()
            finally:
                plain.close()
    finally:
        assert dashboard.stop() == 0


def test_non_loopback_needs_both_tls_and_a_private_token(tmp_path):
    certificate, key = make_certificate(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    os.chmod(token_file, 0o644)
    binary = str(chime_binary())

    def run(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([binary, "dashboard", "--port-base", "1", *arguments], capture_output=True, text=True, timeout=30,
                              cwd=tmp_path)

    refused = run("--listen", "0.0.0.0:7790", "--tls-cert", str(certificate), "--tls-key", str(key))
    assert refused.returncode == 2
    assert refused.stderr == ("chime: --listen 0.0.0.0:7790: an address other than loopback needs TLS and a login: "
                              "give --tls-cert, --tls-key and --token-file\n")
    loose = run("--listen", "0.0.0.0:7790", "--tls-cert", str(certificate), "--tls-key", str(key), "--token-file", str(token_file))
    assert loose.returncode == 2
    assert loose.stderr == (f"chime: --token-file: {token_file} holds the dashboard's login token and has mode 644; "
                            f"allow only its owner (chmod 600 {token_file})\n")
    half = run("--tls-cert", str(certificate))
    assert (half.returncode, half.stderr) == (2, "chime: --tls-cert and --tls-key go together\n")
