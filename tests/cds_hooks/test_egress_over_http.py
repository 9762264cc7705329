"""The FHIR egress policy over real connections: the CDS service under uvicorn, CDS clients
with their own allowlists, and a recording FHIR server on loopback (stdlib ``http.server``)
that logs every request's path and whether it carried the bearer token, and serves a
``/secret`` beside its ``/fhir`` base so that any walk out of the base would show.

Each case is one a raw string comparison let through or answered with a 500: dot segments
(plain and percent-encoded) in ``fhirServer``, in a ``next`` link and in a redirect; IPv6
addresses that embed a loopback IPv4 address; IPv4 hosts in octal, hexadecimal or integer form.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from service.cds_hooks.egress import EgressPolicy, EgressRefused, GuardedTransport
from tests.cds_hooks.conftest import Keys, Servers, cds_fixture

OSIGN = "careplan-order-sign"
WALKER = "https://walker.example.org"  # may read the recorder's /fhir over plain http
EMBEDDED = "https://embedded.example.org"  # lists the recorder under embedded IPv6 forms
UNREADABLE = "could not read the FHIR server"

# IPv6 spellings of 127.0.0.1 (or routes to it) that a socket or a relay could reach.
EMBEDDED_LOOPBACK = {
    "IPv4-mapped": "::ffff:127.0.0.1",
    "6to4": "2002:7f00:1::",
    "Teredo": "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "NAT64": "64:ff9b::7f00:1",
    "NAT64 local-use": "64:ff9b:1::7f00:1",
    "IPv4-compatible": "::127.0.0.1",
}


class Recorder:
    """A FHIR server that records ``(path, authorization)`` for every request. ``mode``:
    ``plain`` (a Patient or an empty searchset), ``next`` (searches link to ``link``) or
    ``redirect`` (every /fhir request is sent to ``link``)."""

    def __init__(self) -> None:
        outer = self
        self.mode = "plain"
        self.link = ""
        self.requests: list[tuple[str, str | None]] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:  # stdout noise only
                return

            def do_GET(self) -> None:
                outer.requests.append((self.path, self.headers.get("Authorization")))
                path = self.path.split("?", 1)[0]
                if outer.mode == "redirect" and path.startswith("/fhir"):
                    self.send_response(302)
                    self.send_header("Location", outer.link)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                parts = path.strip("/").split("/")
                if parts[-2:-1] == ["Patient"]:
                    self._json({"resourceType": "Patient", "id": parts[-1]})
                    return
                links = [{"relation": "next", "url": outer.link}] if outer.mode == "next" else []
                self._json({"resourceType": "Bundle", "type": "searchset", "link": links})

            def _json(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/fhir+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base = f"{self.origin}/fhir"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def since(self, count: int) -> list[tuple[str, str | None]]:
        return self.requests[count:]


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    yield rec
    rec.server.shutdown()
    rec.server.server_close()


@pytest.fixture(scope="module")
def cds(
    tmp_path_factory: pytest.TempPathFactory, keys: Keys, recorder: Recorder
) -> Iterator[Servers]:
    def clients(_s: Servers) -> dict[str, Any]:
        return {
            WALKER: {
                "fhir_servers": [recorder.base],
                "fhir_http_hosts": ["127.0.0.1"],
                "fhir_private_networks": ["127.0.0.1/32"],
            },
            EMBEDDED: {
                "fhir_servers": [
                    f"http://[{a}]:{recorder.port}/fhir" for a in EMBEDDED_LOOPBACK.values()
                ],
                "fhir_http_hosts": list(EMBEDDED_LOOPBACK.values()),
            },
        }

    s = Servers(
        tmp_path_factory.mktemp("cds-egress"),
        keys,
        other_clients=clients,
        settings={"cds_prefetch_deadline_s": 5},
    ).start()
    try:
        yield s
    finally:
        s.stop()


def _call(s: Servers, iss: str, server: str) -> httpx.Response:
    body = cds_fixture("requests", "order-sign_adan_portillo_no-prefetch.json")
    body |= {"fhirServer": server, "fhirAuthorization": s.fhir_auth()}
    return s.post(OSIGN, body, headers=s.auth(OSIGN, iss=iss))


def _diagnostics(r: httpx.Response) -> str:
    return " ".join(i.get("diagnostics", "") for i in r.json()["issue"])


# ------------------------------------------------------------------ dot segments


@pytest.mark.parametrize("tail", ["/../secret", "/Patient/../../secret", "/.."])
def test_a_dot_segment_walk_out_of_the_base_sends_nothing(
    cds: Servers, recorder: Recorder, tail: str
) -> None:
    recorder.mode = "plain"
    before = len(recorder.requests)
    r = _call(cds, WALKER, recorder.base + tail)
    assert r.status_code == 412, r.text
    assert "not under any of the client's fhir_servers" in _diagnostics(r)
    assert recorder.since(before) == []  # neither /secret nor anything else, token or not


@pytest.mark.parametrize(
    "tail", ["/%2e%2e/secret", "/%2E%2E/secret", "/.%2e/secret", "/..%2fsecret", "/..;/secret"]
)
def test_percent_encoded_dots_in_fhir_server_send_nothing(
    cds: Servers, recorder: Recorder, tail: str
) -> None:
    recorder.mode = "plain"
    before = len(recorder.requests)
    r = _call(cds, WALKER, recorder.base + tail)
    assert r.status_code == 412, r.text
    assert "encoded or disguised segment" in _diagnostics(r)
    assert recorder.since(before) == []


@pytest.mark.parametrize(
    ("mode", "link"),
    [
        ("next", "{origin}/fhir/../secret/Condition?page=2"),
        ("next", "{origin}/fhir/%2e%2e/secret/Condition?page=2"),
        ("redirect", "/fhir/../secret/Condition"),
        ("redirect", "/secret/Condition"),
    ],
)
def test_links_and_redirects_out_of_the_base_are_not_followed(
    cds: Servers, recorder: Recorder, mode: str, link: str
) -> None:
    recorder.mode, recorder.link = mode, link.format(origin=recorder.origin)
    before = len(recorder.requests)
    try:
        r = _call(cds, WALKER, recorder.base)
    finally:
        recorder.mode = "plain"
    assert r.status_code == 412, r.text
    sent = recorder.since(before)
    assert sent, "the base itself was read"
    assert all(path.startswith("/fhir/") for path, _ in sent), sent
    assert all(auth == f"Bearer {cds.fhir_auth()['access_token']}" for _, auth in sent)


def test_the_base_itself_is_still_read(cds: Servers, recorder: Recorder) -> None:
    """The control: the same client and server, no walk, reads the record with its token."""
    recorder.mode = "plain"
    before = len(recorder.requests)
    r = _call(cds, WALKER, recorder.base + "/./")
    assert r.status_code == 200, r.text
    sent = recorder.since(before)
    assert sent and all(path.startswith("/fhir/") for path, _ in sent)


# ------------------------------------------------------------------ addresses


@pytest.mark.parametrize("form", sorted(EMBEDDED_LOOPBACK))
def test_addresses_embedding_loopback_are_refused(
    cds: Servers, recorder: Recorder, form: str
) -> None:
    before = len(recorder.requests)
    r = _call(cds, EMBEDDED, f"http://[{EMBEDDED_LOOPBACK[form]}]:{recorder.port}/fhir")
    assert r.status_code == 412, r.text
    assert _diagnostics(r).endswith(UNREADABLE)  # nothing about the network
    assert recorder.since(before) == []


@pytest.mark.parametrize("form", sorted(EMBEDDED_LOOPBACK))
def test_the_transport_refuses_embedded_loopback_before_connecting(
    recorder: Recorder, form: str
) -> None:
    """Refused by the guard itself, not by a missing route (a 6to4 address used to pass the
    guard and fail only because this machine has no 6to4 relay)."""
    address = EMBEDDED_LOOPBACK[form]
    policy = EgressPolicy.from_config(
        "test-client",
        {
            "fhir_servers": [f"http://[{address}]:{recorder.port}/fhir"],
            "fhir_http_hosts": [address],
        },
    )

    async def fetch() -> None:
        transport = GuardedTransport(policy, ssl_context=ssl.create_default_context())
        async with httpx.AsyncClient(transport=transport, trust_env=False) as http:
            await http.get(policy.check_url(f"http://[{address}]:{recorder.port}/fhir/Patient/1"))

    with pytest.raises(EgressRefused, match=UNREADABLE) as err:
        asyncio.run(fetch())
    assert err.value.reason == "host resolves to a non-public address"


@pytest.mark.parametrize("host", ["0177.0.0.1", "2130706433", "0x7f.1", "0x7f000001", "127.1"])
def test_ipv4_in_another_notation_is_412_never_500(
    cds: Servers, recorder: Recorder, host: str
) -> None:
    before = len(recorder.requests)
    r = _call(cds, WALKER, f"http://{host}:{recorder.port}/fhir")
    assert r.status_code == 412, r.text
    assert UNREADABLE in _diagnostics(r)
    assert recorder.since(before) == []


@pytest.mark.parametrize(
    ("server", "link"),
    [
        ("{base}/\x01", ""),  # under the base as a string, but httpx cannot parse it
        ("{base}", "{base}/Condition?page=2\x01"),
        ("{base}", "http://0177.0.0.1:{port}/fhir/Condition?page=2"),
    ],
)
def test_urls_the_client_cannot_parse_are_412_never_500(
    cds: Servers, recorder: Recorder, server: str, link: str
) -> None:
    names = {"base": recorder.base, "port": recorder.port}
    recorder.mode, recorder.link = ("next" if link else "plain"), link.format(**names)
    try:
        r = _call(cds, WALKER, server.format(**names))
    finally:
        recorder.mode = "plain"
    assert r.status_code == 412, r.text
    assert UNREADABLE in _diagnostics(r)
