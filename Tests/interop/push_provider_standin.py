#!/usr/bin/env python3
"""A stand-in for APNs and FCM over HTTP/2 with TLS, for Chime's push channels' tests.

One hypercorn server on 127.0.0.1 (a free port, printed as `port N` on stdout once it is
listening) with a self-signed certificate for 127.0.0.1 written to DIR/cert.pem, answering:

- `POST /3/device/<token>` as APNs does (Apple, "Sending notification requests to APNs"):
  the `authorization: bearer` JWT is verified with pyjwt (ES256, the public half of
  --apns-key, `kid` = --key-id, `iss` = --team-id), the `apns-*` headers are checked, and a
  JWT whose `iat` is older than the configured minimum gets 403 ExpiredProviderToken.
- `POST /token` as Google's OAuth 2.0 token endpoint does for a service account: the
  `jwt-bearer` assertion is verified (RS256, the public half of --google-key, `aud` = this
  URL, `iss` = --client-email, the FCM scope, `exp - iat` <= 3600) and an access token issued.
- `POST /v1/projects/<project>/messages:send` as FCM HTTP v1 does: the bearer must be an
  issued, unrevoked access token (else 401 UNAUTHENTICATED), and the message is checked.

Tests steer it with `POST /_script` (`{"route": "apns" | "fcm" | "token", "responses":
[{"status", "body"?, "headers"?}]}` answered in order before the defaults), `POST /_config`
(`{"apnsMinimumIat": seconds}`, `{"revokeAccessTokens": true}`) and read what it received
with `GET /_requests`. Each check that fails answers 400 with `StandInCheckFailed: …`, so the
test sees which. The server exits when its stdin closes (its parent is gone).
"""

import argparse
import asyncio
import datetime
import ipaddress
import json
import os
import re
import socket
import sys
import threading
import time
import urllib.parse

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypercorn.asyncio import serve
from hypercorn.config import Config

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def make_certificate(directory):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = os.path.join(directory, "cert.pem")
    key_path = os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as f:
        f.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


def public_key(path):
    with open(path, "rb") as f:
        return serialization.load_pem_private_key(f.read(), None).public_key()


class StandIn:
    def __init__(self, arguments, port):
        self.arguments = arguments
        self.port = port
        self.apns_key = public_key(arguments.apns_key)
        self.google_key = public_key(arguments.google_key)
        self.requests = []
        self.scripts = {"apns": [], "fcm": [], "token": []}
        self.apns_minimum_iat = 0
        self.access_tokens = {}  # token -> revoked?
        self.issued = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            headers[key] = headers[key] + ", " + value.decode("latin-1") if key in headers else value.decode("latin-1")
        status, answer_headers, answer = self.route(scope["method"], scope["path"], scope["http_version"], headers, body)
        payload = answer if isinstance(answer, bytes) else json.dumps(answer, sort_keys=True).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")]
                + [(k.encode(), str(v).encode()) for k, v in answer_headers.items()],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    def route(self, method, path, version, headers, body):
        if path == "/_requests" and method == "GET":
            return 200, {}, self.requests
        if path == "/_script" and method == "POST":
            script = json.loads(body)
            self.scripts[script["route"]].extend(script["responses"])
            return 200, {}, {"queued": len(self.scripts[script["route"]])}
        if path == "/_config" and method == "POST":
            config = json.loads(body)
            if "apnsMinimumIat" in config:
                self.apns_minimum_iat = config["apnsMinimumIat"]
            if config.get("revokeAccessTokens"):
                for token in self.access_tokens:
                    self.access_tokens[token] = True
            return 200, {}, {}
        record = {"method": method, "path": path, "httpVersion": version, "headers": headers}
        try:
            record["body"] = json.loads(body) if body else None
        except ValueError:
            record["body"] = body.decode("utf-8", "replace")
        self.requests.append(record)
        if path.startswith("/3/device/"):
            return self.apns(record, headers)
        if path == "/token":
            return self.token(record, body)
        if re.fullmatch(r"/v1/projects/[^/]+/messages:send", path):
            return self.fcm(record, headers)
        return 404, {}, {"error": "no such path"}

    def failed(self, route, why):
        if route == "apns":
            return 400, {}, {"reason": "StandInCheckFailed: " + why}
        if route == "token":
            return 400, {}, {"error": "invalid_grant", "error_description": "StandInCheckFailed: " + why}
        return 400, {}, {"error": {"code": 400, "message": "StandInCheckFailed: " + why, "status": "INVALID_ARGUMENT"}}

    def scripted(self, route, record):
        if not self.scripts[route]:
            return None
        response = self.scripts[route].pop(0)
        record["answered"] = response["status"]
        return response["status"], response.get("headers", {}), response.get("body", {})

    def apns(self, record, headers):
        if record["httpVersion"] != "2":
            return self.failed("apns", "APNs takes HTTP/2 only, not " + record["httpVersion"])
        authorization = headers.get("authorization", "")
        if not authorization.startswith("bearer "):
            return 403, {}, {"reason": "MissingProviderToken"}
        token = authorization[len("bearer "):]
        try:
            header = jwt.get_unverified_header(token)
            claims = jwt.decode(token, self.apns_key, algorithms=["ES256"], options={"verify_iat": False, "require": ["iss", "iat"]})
        except jwt.PyJWTError as error:
            record["jwtError"] = str(error)
            return 403, {}, {"reason": "InvalidProviderToken"}
        record["jwt"] = {"header": header, "claims": claims}
        if header.get("kid") != self.arguments.key_id or claims.get("iss") != self.arguments.team_id:
            return 403, {}, {"reason": "InvalidProviderToken"}
        if claims["iat"] < self.apns_minimum_iat:
            record["answered"] = 403
            return 403, {}, {"reason": "ExpiredProviderToken"}
        for name in ("apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-id"):
            if name not in headers:
                return self.failed("apns", "no " + name)
        if headers["apns-push-type"] not in ("alert", "background") or headers["apns-priority"] not in ("5", "10"):
            return self.failed("apns", "apns-push-type or apns-priority")
        if not headers["apns-expiration"].isdigit() or not UUID.match(headers["apns-id"]):
            return self.failed("apns", "apns-expiration or apns-id")
        if not isinstance(record["body"], dict) or not isinstance(record["body"].get("aps"), dict):
            return self.failed("apns", "the payload has no aps dictionary")
        answer = self.scripted("apns", record)
        if answer:
            status, extra, body = answer
            return status, {"apns-id": headers["apns-id"], **extra}, body
        record["answered"] = 200
        return 200, {"apns-id": headers["apns-id"]}, b""

    def token(self, record, body):
        form = urllib.parse.parse_qs(body.decode())
        if form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"] or len(form.get("assertion", [])) != 1:
            return self.failed("token", "grant_type or assertion")
        assertion = form["assertion"][0]
        audience = "https://127.0.0.1:%d/token" % self.port
        try:
            header = jwt.get_unverified_header(assertion)
            claims = jwt.decode(
                assertion,
                self.google_key,
                algorithms=["RS256"],
                audience=audience,
                options={"verify_iat": False, "verify_exp": False, "require": ["iss", "aud", "iat", "exp", "scope"]},
            )
        except jwt.PyJWTError as error:
            record["jwtError"] = str(error)
            return self.failed("token", "assertion: " + str(error))
        record["jwt"] = {"header": header, "claims": claims}
        if claims["iss"] != self.arguments.client_email or claims["scope"] != FCM_SCOPE or not 0 < claims["exp"] - claims["iat"] <= 3600:
            return self.failed("token", "iss, scope or lifetime")
        answer = self.scripted("token", record)
        if answer:
            return answer
        self.issued += 1
        access_token = "ya29.stand-in-%d" % self.issued
        self.access_tokens[access_token] = False
        record["answered"] = 200
        return 200, {}, {"access_token": access_token, "expires_in": 3599, "token_type": "Bearer"}

    def fcm(self, record, headers):
        authorization = headers.get("authorization", "")
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        if token not in self.access_tokens or self.access_tokens[token]:
            record["answered"] = 401
            return 401, {}, {"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}
        message = (record["body"] or {}).get("message") if isinstance(record["body"], dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("token"), str):
            return self.failed("fcm", "no message.token")
        if not all(isinstance(v, str) for v in message.get("data", {}).values()):
            return self.failed("fcm", "data values must be strings")
        answer = self.scripted("fcm", record)
        if answer:
            return answer
        record["answered"] = 200
        return 200, {}, {"name": "projects/%s/messages/%d" % (record["path"].split("/")[3], len(self.requests))}


def exit_when_stdin_closes():
    sys.stdin.buffer.read()
    os._exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--apns-key", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--google-key", required=True)
    parser.add_argument("--client-email", required=True)
    arguments = parser.parse_args()
    cert_path, key_path = make_certificate(arguments.dir)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.set_inheritable(True)
    port = listener.getsockname()[1]
    config = Config()
    config.bind = ["fd://%d" % listener.fileno()]
    config.certfile = cert_path
    config.keyfile = key_path
    config.alpn_protocols = ["h2", "http/1.1"]
    config.accesslog = None
    config.errorlog = "-"
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    print("port %d" % port, flush=True)
    asyncio.run(serve(StandIn(arguments, port), config))


if __name__ == "__main__":
    main()
