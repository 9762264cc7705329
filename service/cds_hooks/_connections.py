"""Bounds on the HTTP side's connections that uvicorn itself does not keep (slowloris).

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but until a request's
headers are complete it waits for ever: a client that connects and sends nothing, or trickles a
header a byte at a time, holds its connection (and a file descriptor) as long as it likes.
``GuardedH11Protocol`` is uvicorn's h11 protocol with two more bounds: a request's headers must
arrive within ``header_timeout_s`` (counted from the connection, or from the first byte of each
later request on it), and one process holds at most ``max_connections`` connections (more are
answered 503 and closed at once). It must not read or log anything a client sent.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["GuardedH11Protocol", "guarded_protocol"]

_BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: 41\r\n\r\n"
    b"Too many connections; try again shortly.\n"
)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header-read deadline and a cap on open connections."""

    header_timeout_s: float = 10.0
    max_connections: int = 512

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.write(_BUSY)
            transport.close()
            return
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._arm_header_timer()  # the first byte of a later request on this connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_timer()  # the headers are in: the app reads the body

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(*, header_timeout_s: float, max_connections: int) -> type[GuardedH11Protocol]:
    """The protocol class with these bounds, for ``uvicorn.Config(http=...)``."""
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"header_timeout_s": header_timeout_s, "max_connections": max_connections},
    )
