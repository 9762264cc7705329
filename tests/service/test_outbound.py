"""Outbound reads stop at their cap: a real HTTP server on loopback streams a 2 GB answer
(with and without a declared length) to the capped reader and to the SMART client's reads
(discovery, token endpoint, signing keys); each stops near the cap, closes the connection
and answers its documented error."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from service.errors import AuthError
from service.outbound import DOCUMENT_MAX_BYTES, AnswerTooLarge, read_capped
from service.review.smart import SmartConfiguration, discover, exchange

HUGE = 2 * 1024**3
BUFFERS = 16 * 1024 * 1024  # what loopback socket buffers may hold past the hang-up


class Endless:
    """Answers every request with a 2 GB JSON body; ``/declared/...`` says so up front."""

    def __init__(self) -> None:
        self.sent: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._endless()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._endless()

            def _endless(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if self.path.startswith("/declared"):
                    self.send_header("Content-Length", str(HUGE))
                self.end_headers()
                chunk, sent = b'{"issuer": "' + b"x" * 65520, 0
                outer.sent.append(0)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    while sent < HUGE:
                        self.wfile.write(chunk)
                        sent += len(chunk)
                        outer.sent[-1] = sent

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def endless() -> Iterator[Endless]:
    e = Endless()
    yield e
    e.server.shutdown()
    e.server.server_close()


@pytest.mark.parametrize("path", ["/streamed", "/declared"])
async def test_the_reader_stops_at_the_cap_and_hangs_up(endless: Endless, path: str) -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(AnswerTooLarge):
            await read_capped(http, "GET", endless.base + path, max_bytes=1024 * 1024)
    assert endless.sent[-1] < 1024 * 1024 + BUFFERS


async def test_an_answer_within_the_cap_is_read_whole() -> None:
    transport = httpx.MockTransport(lambda _r: httpx.Response(200, content=b"x" * 1000))
    async with httpx.AsyncClient(transport=transport) as http:
        answer = await read_capped(http, "GET", "http://x.example/", max_bytes=1000)
    assert answer.status_code == 200 and answer.content == b"x" * 1000


@pytest.mark.parametrize("path", ["", "/declared"])
async def test_smart_discovery_is_capped(endless: Endless, path: str) -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError, match="over the size limit"):
            await discover(http, endless.base + path)
    assert endless.sent[-1] < DOCUMENT_MAX_BYTES + BUFFERS


async def test_the_smart_token_answer_is_capped(endless: Endless) -> None:
    cfg = SmartConfiguration(
        issuer=endless.base,
        authorization_endpoint=f"{endless.base}/authorize",
        token_endpoint=f"{endless.base}/token",
        jwks_uri=f"{endless.base}/jwks",
        id_token_issuer=endless.base,
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(AuthError, match="over the size limit"):
            await exchange(
                http, cfg, client_id="c", redirect_uri="https://r.example", code="x", verifier="v"
            )
    assert endless.sent[-1] < DOCUMENT_MAX_BYTES + BUFFERS
