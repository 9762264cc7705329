"""The HTTP side's bounds on slow and idle clients, over real sockets to a real uvicorn on
loopback configured exactly as `canoe serve` configures it (``uvicorn_limits``): request headers
must arrive within the header timeout, idle keep-alive connections close, and a process holds
no more than its connection cap."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from service.cds_hooks.http import uvicorn_limits
from service.settings import load_settings
from tests.support.waiting import until, until_async

HEADER_TIMEOUT_S = 0.6
KEEP_ALIVE_S = 1.0
CAP = 3
REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


async def _echo(request: Request) -> PlainTextResponse:
    body = await request.body()
    return PlainTextResponse(f"ok {len(body)}")


@pytest.fixture
async def server() -> AsyncIterator[uvicorn.Server]:
    settings = load_settings(
        {},
        http_header_timeout_s=HEADER_TIMEOUT_S,
        http_keep_alive_s=KEEP_ALIVE_S,
        http_max_connections=CAP,
    )
    app = Starlette(routes=[Route("/", _echo, methods=["GET", "POST"])])
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_config=None,
            access_log=False,
            lifespan="off",
            **uvicorn_limits(settings),
        )
    )
    task = asyncio.ensure_future(server.serve())
    await until_async(lambda: server.started or task.done(), what="uvicorn to start")
    if task.done():
        task.result()  # it failed to start: say why
    try:
        yield server
    finally:
        server.should_exit = True
        await task


@pytest.fixture
def port(server: uvicorn.Server) -> int:
    port: int = server.servers[0].sockets[0].getsockname()[1]
    return port


@pytest.fixture
def open_connections(server: uvicorn.Server) -> Callable[[], int]:
    """How many connections the server holds now (its protocol instances' shared set)."""
    return lambda: len(server.server_state.connections)


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _read_response(sock: socket.socket) -> bytes:
    """One whole answer (headers and a Content-Length body), leaving the connection open."""
    got = b""
    while b"\r\n\r\n" not in got:
        got += sock.recv(4096)
    head, _, body = got.partition(b"\r\n\r\n")
    length = int(
        next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:"))[15:]
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body


def _read_until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and how long that took."""
    t0, got = time.monotonic(), b""
    while chunk := sock.recv(4096):
        got += chunk
    return got, time.monotonic() - t0


async def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(
    port: int,
) -> None:
    with _connect(port) as sock:
        got, took = await asyncio.to_thread(_read_until_closed, sock)
    assert got == b""
    assert HEADER_TIMEOUT_S * 0.8 <= took <= HEADER_TIMEOUT_S + 2


def _trickle(port: int) -> tuple[int, float]:
    """Send a header one byte every 0.1 s; how many bytes went out before the server closed."""
    header = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    sent, t0 = 0, time.monotonic()
    with _connect(port) as sock:
        for byte in header:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            sent += 1
            time.sleep(0.1)
            sock.setblocking(False)
            try:
                if sock.recv(1) == b"":
                    break
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
    return sent, time.monotonic() - t0


async def test_a_header_trickled_byte_by_byte_is_cut_off(port: int) -> None:
    sent, took = await asyncio.to_thread(_trickle, port)
    assert sent < 40  # fresh bytes do not extend the deadline
    assert took <= HEADER_TIMEOUT_S + 2


def _slow_second_request(port: int) -> tuple[bytes, bytes, float]:
    with _connect(port) as sock:
        sock.sendall(REQUEST)
        first = _read_response(sock)
        sock.sendall(b"GET / HTTP/1.1\r\n")  # the next request's first bytes, then nothing
        rest, took = _read_until_closed(sock)
    return first, rest, took


async def test_a_later_request_on_a_kept_alive_connection_has_the_same_deadline(
    port: int,
) -> None:
    first, rest, took = await asyncio.to_thread(_slow_second_request, port)
    assert first.startswith(b"HTTP/1.1 200") and first.endswith(b"ok 0")
    assert rest == b""
    assert took <= HEADER_TIMEOUT_S + 2


def _idle_after_answer(port: int) -> tuple[bytes, float]:
    with _connect(port) as sock:
        sock.sendall(REQUEST)
        first = _read_response(sock)
        rest, took = _read_until_closed(sock)
    assert rest == b""
    return first, took


async def test_an_idle_kept_alive_connection_is_closed(port: int) -> None:
    first, took = await asyncio.to_thread(_idle_after_answer, port)
    assert first.startswith(b"HTTP/1.1 200")
    assert KEEP_ALIVE_S * 0.8 <= took <= KEEP_ALIVE_S + 2


def _slow_body(port: int) -> bytes:
    with _connect(port) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
        time.sleep(HEADER_TIMEOUT_S * 2)  # the headers are complete: the deadline is over
        sock.sendall(b"hello")
        return _read_response(sock)


async def test_the_deadline_covers_the_headers_not_the_body(port: int) -> None:
    got = await asyncio.to_thread(_slow_body, port)
    assert got.startswith(b"HTTP/1.1 200") and got.endswith(b"ok 5")


def _over_the_cap(port: int, open_connections: Callable[[], int]) -> tuple[bytes, bytes]:
    held = [_connect(port) for _ in range(CAP)]
    try:
        until(lambda: open_connections() == CAP, what=f"the server to hold {CAP} connections")
        with _connect(port) as extra:
            refused, _ = _read_until_closed(extra)
    finally:
        for sock in held:
            sock.close()
    until(lambda: open_connections() == 0, what="the server to let the held connections go")
    with _connect(port) as sock:
        sock.sendall(REQUEST)
        served = _read_response(sock)
    return refused, served


async def test_connections_over_the_cap_are_answered_503_and_closed(
    port: int, open_connections: Callable[[], int]
) -> None:
    refused, served = await asyncio.to_thread(_over_the_cap, port, open_connections)
    assert refused.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert refused.endswith(b"Too many connections; try again shortly.\n")
    assert served.startswith(b"HTTP/1.1 200")  # room again once the others have gone
