"""Regression tests for the hardening findings on the CDS Hooks side, over real transports: the
CDS service and a fake EHR FHIR server under uvicorn, CDS clients with their own egress
allowlists, a raw TCP listener on loopback that counts every connection (the SSRF canary), a
port that is closed and one that speaks something other than HTTP, and a misbehaving FHIR
server (stdlib ``http.server``) that redirects, stalls, pages forever or answers non-JSON.

Findings: 1 (SSRF by default), 2 (ids in logs), 3 (deep JSON), 8 (prefetch deadline and page
cap), 9 (hookInstance), 10 (token over plain http).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import structlog

from service.logs import configure_logging
from tests.cds_hooks.conftest import Keys, Servers, cds_fixture
from tests.conftest import FHIR_FIXTURES, load_json
from tests.support.waiting import until

PV, OSIGN = "careplan-patient-view", "careplan-order-sign"
NO_SERVERS = "https://no-fhir-servers.example.org"  # names no fhir_servers: never fetches
PUBLIC_ONLY = "https://public-only.example.org"  # lists loopback URLs, allows no private net
HTTPS_ONLY = "https://https-only.example.org"  # lists a plain-http URL, no fhir_http_hosts
LOOPBACK = "https://loopback-lab.example.org"  # allowed to read the misbehaving servers
BIG_JWKS = "https://big-jwks.example.org"  # its JWKS URL is the misbehaving server
UNREADABLE = "could not read the FHIR server"
HUGE = 2 * 1024**3  # what a misbehaving server sends: 2 GB
CAP = 8 * 1024 * 1024  # the service's cap on one answer (max_message_bytes)
STALL_S = 8  # how long the "slow" server holds each answer, unless the lab closes first


class Canary:
    """A TCP listener on loopback that counts connections; ``banner`` makes it a non-HTTP
    service (it greets and closes), otherwise it closes at once."""

    def __init__(self, banner: bytes = b"") -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.banner = banner
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            try:
                if self.banner:
                    conn.sendall(self.banner)
                    conn.recv(1024)
            except OSError:
                pass
            conn.close()


class Misbehaving:
    """A FHIR server that does one wrong thing at a time (``mode``)."""

    def __init__(self, canary_port: int) -> None:
        outer = self
        self.mode = "notjson"
        self.requests = 0
        self.closing = threading.Event()  # ends the "slow" mode's stalls when the lab closes
        self.sent: list[int] = []  # "huge", "declared": body bytes written, per request

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:  # stdout noise only
                return

            def do_GET(self) -> None:
                outer.requests += 1
                if outer.mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", f"http://127.0.0.1:{canary_port}/fhir/x")
                    self.end_headers()
                elif outer.mode == "slow":
                    outer.closing.wait(STALL_S)
                    self._json({"resourceType": "Bundle", "type": "searchset"})
                elif outer.mode in ("huge", "declared"):
                    self._endless(declare=outer.mode == "declared")
                elif outer.mode == "pages":
                    page = int(self.path.rsplit("page=", 1)[-1]) if "page=" in self.path else 0
                    nxt = f"{outer.base}/Condition?page={page + 1}"
                    self._json(
                        {
                            "resourceType": "Bundle",
                            "type": "searchset",
                            "link": [{"relation": "next", "url": nxt}],
                            "entry": [],
                        }
                    )
                else:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    self.wfile.write(b"hello, not FHIR")

            def _endless(self, *, declare: bool) -> None:
                """A 2 GB FHIR answer, streamed until the reader hangs up: without a length
                (ended by closing, HTTP/1.0) or declaring it (``declare``)."""
                self.send_response(200)
                self.send_header("Content-Type", "application/fhir+json")
                if declare:
                    self.send_header("Content-Length", str(HUGE))
                self.end_headers()
                chunk, sent = b'{"resourceType": "Bundle", "pad": "' + b"x" * 65500, 0
                outer.sent.append(0)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    while sent < HUGE:
                        self.wfile.write(chunk)
                        sent += len(chunk)
                        outer.sent[-1] = sent

            def _json(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/fhir+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # The service may have given up waiting (the deadline test), as it should.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/fhir"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


class Lab:
    def __init__(self) -> None:
        self.canary = Canary()
        self.ssh = Canary(banner=b"SSH-2.0-OpenSSH_9.2\r\n")
        self.closed = _closed_port()
        self.bad = Misbehaving(self.canary.port)

    @property
    def connections(self) -> int:
        return self.canary.accepted

    def url(self, port: int) -> str:
        return f"http://127.0.0.1:{port}/fhir"


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    lab = Lab()
    yield lab
    lab.bad.closing.set()


@pytest.fixture(scope="module")
def hardened(tmp_path_factory: pytest.TempPathFactory, keys: Keys, lab: Lab) -> Iterator[Servers]:
    def clients(_s: Servers) -> dict[str, Any]:
        loop = ["127.0.0.0/8"]
        return {
            NO_SERVERS: {"tenant": "no-servers"},
            PUBLIC_ONLY: {
                "fhir_servers": [lab.url(lab.canary.port), f"http://localhost:{lab.canary.port}"],
                "fhir_http_hosts": ["127.0.0.1", "localhost"],
            },
            HTTPS_ONLY: {
                "fhir_servers": [lab.url(lab.canary.port)],
                "fhir_private_networks": loop,
            },
            BIG_JWKS: {"jwks": None, "jwks_url": f"{lab.bad.base}/jwks", "tenant": "big"},
            LOOPBACK: {
                "fhir_servers": [lab.bad.base, lab.url(lab.closed), lab.url(lab.ssh.port)],
                "fhir_http_hosts": ["127.0.0.1"],
                "fhir_private_networks": loop,
            },
        }

    s = Servers(
        tmp_path_factory.mktemp("cds-hardening"),
        keys,
        other_clients=clients,
        settings={"cds_prefetch_deadline_s": 1.5, "cds_prefetch_max_pages": 3},
        access_log=True,
    ).start()
    try:
        yield s
    finally:
        s.stop()


def _no_prefetch(server: str, s: Servers) -> dict[str, Any]:
    body = cds_fixture("requests", "order-sign_adan_portillo_no-prefetch.json")
    return body | {"fhirServer": server, "fhirAuthorization": s.fhir_auth()}


def _post(s: Servers, iss: str, body: Any, service: str = OSIGN) -> Any:
    return s.post(service, body, headers=s.auth(service, iss=iss))


# ------------------------------------------------------------------ 1 and 10: SSRF, cleartext


def test_a_client_naming_no_fhir_servers_never_fetches(hardened: Servers, lab: Lab) -> None:
    before = lab.connections
    r = _post(hardened, NO_SERVERS, _no_prefetch(lab.url(lab.canary.port), hardened))
    assert r.status_code == 412, r.text
    assert UNREADABLE in r.text and "fhir_servers" in r.text
    assert lab.connections == before


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_loopback_is_refused_after_name_resolution(hardened: Servers, lab: Lab, host: str) -> None:
    """Listed and allowed over http, but the name resolves to loopback, which this client may
    not reach: refused before any connection."""
    before = lab.connections
    server = f"http://{host}:{lab.canary.port}" + ("/fhir" if host == "127.0.0.1" else "")
    r = _post(hardened, PUBLIC_ONLY, _no_prefetch(server, hardened))
    assert r.status_code == 412, r.text
    assert r.json()["issue"][0]["diagnostics"].endswith(UNREADABLE)  # nothing about why
    assert lab.connections == before


def test_plain_http_is_refused_unless_the_host_is_allowed(hardened: Servers, lab: Lab) -> None:
    before = lab.connections
    r = _post(hardened, HTTPS_ONLY, _no_prefetch(lab.url(lab.canary.port), hardened))
    assert r.status_code == 412 and "plain http" in r.text
    assert lab.connections == before  # the bearer token never went out in clear text


def test_a_server_under_a_listed_prefix_only(hardened: Servers, lab: Lab) -> None:
    """``http://127.0.0.1:P/fhir`` does not cover ``.../fhirx`` nor another port."""
    before = lab.connections
    for server in (lab.url(lab.canary.port) + "x", f"http://127.0.0.1:{lab.canary.port + 1}/fhir"):
        r = _post(hardened, HTTPS_ONLY, _no_prefetch(server, hardened))
        assert r.status_code == 412, r.text
    assert lab.connections == before


def test_redirects_are_not_followed_to_another_origin(hardened: Servers, lab: Lab) -> None:
    lab.bad.mode = "redirect"
    before = lab.connections
    r = _post(hardened, LOOPBACK, _no_prefetch(lab.bad.base, hardened))
    assert r.status_code == 412, r.text
    assert lab.connections == before


def test_refusals_do_not_tell_ports_apart(hardened: Servers, lab: Lab) -> None:
    """Closed port, a non-HTTP service, an HTTP server answering non-JSON: one answer."""
    lab.bad.mode = "notjson"
    answers = []
    for server in (lab.url(lab.closed), lab.url(lab.ssh.port), lab.bad.base):
        r = _post(hardened, LOOPBACK, _no_prefetch(server, hardened))
        assert r.status_code == 412, r.text
        answers.append(r.json()["issue"])
    assert answers[0] == answers[1] == answers[2]
    text = json.dumps(answers[0])
    for leak in ("ConnectError", "RemoteProtocolError", "JSON", "refused", "HTTP"):
        assert leak not in text


# ------------------------------------------------------------------ 8: deadline and page cap


def test_prefetch_has_one_deadline_for_the_whole_call(hardened: Servers, lab: Lab) -> None:
    lab.bad.mode = "slow"  # 8 s per request, four keys to read: 32 s without a deadline
    t0 = time.monotonic()
    r = _post(hardened, LOOPBACK, _no_prefetch(lab.bad.base, hardened))
    elapsed = time.monotonic() - t0
    assert r.status_code == 412, r.text
    assert "CANOE_CDS_PREFETCH_DEADLINE_S" in r.text
    assert elapsed < 8  # well under one slow answer: the 1.5 s deadline cut it short


def test_search_pages_are_capped(hardened: Servers, lab: Lab) -> None:
    lab.bad.mode = "pages"
    before = lab.bad.requests
    r = _post(hardened, LOOPBACK, _no_prefetch(lab.bad.base, hardened))
    assert r.status_code == 412, r.text
    assert "more than 3 pages" in r.text
    assert lab.bad.requests - before <= 1 + 3  # the first answer and three more pages


@pytest.mark.parametrize("mode", ["huge", "declared"])
def test_a_huge_fhir_answer_is_cut_at_the_cap(hardened: Servers, lab: Lab, mode: str) -> None:
    lab.bad.mode = mode
    before = len(lab.bad.sent)
    r = _post(hardened, LOOPBACK, _no_prefetch(lab.bad.base, hardened))
    assert r.status_code == 412, r.text
    assert UNREADABLE in r.text
    sent = lab.bad.sent[before:]
    assert sent  # the server was read from...
    # ...and hung up on near the cap (plus what loopback buffers hold), never the 2 GB; an
    # answer that declares its size is refused before its body is read.
    limit = CAP + 16 * 1024 * 1024 if mode == "huge" else 16 * 1024 * 1024
    assert max(sent) < limit, sent


def test_a_huge_jwks_is_cut_at_the_cap(hardened: Servers, lab: Lab) -> None:
    lab.bad.mode = "huge"
    before = len(lab.bad.sent)
    r = hardened.post(PV, {}, headers=hardened.auth(PV, iss=BIG_JWKS))
    assert r.status_code == 401, r.text
    assert "cannot fetch the client's JWKS" in r.text
    (sent,) = lab.bad.sent[before:]
    assert sent < 1024 * 1024 + 16 * 1024 * 1024


# ------------------------------------------------------------------ 3 and 9: request shape

DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    "body",
    [
        DEEP,
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b'{"hook": "patient-view", "x": ' + b"[" * 70 + b"]" * 70 + b"}",
        b'{"hook": "\xff\xfe"}',
        b'{"hook": "\\ud800"}',
        b"NaN",
    ],
)
def test_unusable_json_is_400_never_500(hardened: Servers, body: bytes) -> None:
    for path in (PV, f"{PV}/feedback"):
        r = hardened.post(path, body, headers=hardened.auth(PV))
        assert r.status_code == 400, (path, r.status_code, r.text[:300])
        assert r.json()["resourceType"] == "OperationOutcome"


# Fixed values: every xdist worker must collect the same ids (a UUID short of its last digit).
@pytest.mark.parametrize(
    "instance",
    ["x", "not-a-uuid", "u" * 100_000, "0b1d9c52-6f3e-4a7d-9c2e-5d8f1a2b3c4"],
    ids=["one-letter", "words", "100k", "uuid-short-a-digit"],
)
def test_hook_instance_must_be_a_uuid(hardened: Servers, instance: str) -> None:
    body = cds_fixture("requests", "patient-view_trey_berge.json") | {"hookInstance": instance}
    r = hardened.post(PV, body)
    assert r.status_code == 400, r.text
    assert "hookInstance" in r.text and "UUID" in r.text
    assert len(r.content) < 10_000  # the 100k string is not echoed back


# ------------------------------------------------------------------ 2: no ids in any log line


def _record_ids(path: Path) -> set[str]:
    bundle = load_json(path)
    return {e["resource"]["id"] for e in bundle["entry"] if e["resource"].get("id")}


@contextlib.contextmanager
def _captured_logs() -> Iterator[io.StringIO]:
    """The service's own logging set-up, writing to a buffer; undone afterwards, as the
    observability tests do, so later tests see the default again."""
    buffer = io.StringIO()
    root = logging.getLogger()
    level = root.level
    configure_logging("debug", stream=buffer)
    try:
        yield buffer
    finally:
        structlog.reset_defaults()
        for h in [h for h in root.handlers if getattr(h, "_canoe", False)]:
            root.removeHandler(h)
        root.setLevel(level)


def _until_access_logged(buffer: io.StringIO, requests: list[str]) -> None:
    """Wait for uvicorn's access line of each request (its last word on one), so that what
    the servers' thread logs for these calls is in the buffer before it is searched."""

    def logged() -> bool:
        lines = [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]
        access = [
            str(line.get("event")) for line in lines if line.get("logger") == "uvicorn.access"
        ]
        return all(any(r in event for event in access) for r in requests)

    until(logged, what=f"the access lines of {requests}")


def test_no_record_id_reaches_any_log_line(hardened: Servers) -> None:
    """A whole hook call whose record is read over FHIR REST (five fetches, each logged by
    httpx; uvicorn access logs on both servers): every line, ours and the libraries', is
    searched for every id of the record, the draft order's id and the FHIR token."""
    with _captured_logs() as buffer:
        body = _no_prefetch(hardened.fhir_base, hardened)
        before = len(hardened.fhir.requests)
        r = hardened.post(OSIGN, body)
        assert r.status_code == 200, r.text
        assert len(hardened.fhir.requests) - before >= 4  # the record did come over REST
        card = r.json()["cards"][0]
        feedback = cds_fixture("spec", "feedback_accepted.json")
        feedback["feedback"][0]["card"] = card["uuid"]
        feedback["feedback"][0]["acceptedSuggestions"] = [{"id": card["suggestions"][0]["uuid"]}]
        done = hardened.feedback(OSIGN, feedback)
        assert done.status_code == 200, done.text
        _until_access_logged(buffer, [f"POST /cds-services/{OSIGN}/feedback "])
    lines = [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]
    loggers = {line.get("logger") for line in lines}
    assert sum(1 for line in lines if line.get("logger") == "httpx") >= 4, loggers
    assert "uvicorn.access" in loggers, loggers
    secrets = _record_ids(FHIR_FIXTURES / "adan_portillo_43b6ae50.json") | {
        body["context"]["patientId"],
        body["context"]["encounterId"],
        "draft-diphenhydramine-1",
        "fixture-fhir-access-token",
    }
    text = buffer.getvalue()
    leaked = sorted(s for s in secrets if s in text)
    assert not leaked, leaked


def test_a_refused_feedback_with_deep_json_leaves_no_traceback(hardened: Servers) -> None:
    with _captured_logs() as buffer:
        r = hardened.post(f"{PV}/feedback", DEEP, headers=hardened.auth(PV))
        body = copy.deepcopy(cds_fixture("requests", "patient-view_trey_berge.json"))
        body["prefetch"] = json.loads("[" * 80 + "]" * 80)
        deep_request = hardened.post(PV, body)
        _until_access_logged(
            buffer, [f"POST /cds-services/{PV}/feedback ", f"POST /cds-services/{PV} "]
        )
    assert r.status_code == 400 and deep_request.status_code == 400
    assert "Traceback" not in buffer.getvalue() and "cds.failed" not in buffer.getvalue()
