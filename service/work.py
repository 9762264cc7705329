"""How long one request's work may go on: a token that the loops growing with the record check.

A plan runs on a worker thread, and Python cannot stop a thread from outside: when the client
cancels or the deadline passes, the transport cancels the token and the planning loops (ingest,
the case analysis, the criteria, the output) stop at their next ``checkpoint()``. The token
travels in a context variable, so code between the transport and the loops does not carry it;
with none set, ``checkpoint()`` costs a lookup and never stops anything. Holds no patient data.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from service.errors import BackendTimeout

__all__ = ["Work", "checkpoint", "current", "working"]


class Work:
    """One request's right to go on: until ``cancel()`` or the monotonic deadline."""

    __slots__ = ("_deadline", "_limit_s", "_reason")

    def __init__(self, deadline_s: float | None = None) -> None:
        self._limit_s = deadline_s
        self._deadline = None if deadline_s is None else time.monotonic() + deadline_s
        self._reason = ""  # set once, by whichever thread cancels: a plain store is atomic

    def cancel(self, reason: str = "the request was cancelled") -> None:
        if not self._reason:
            self._reason = reason

    @property
    def cancelled(self) -> bool:
        return bool(self._reason)

    def check(self) -> None:
        """Raise ``BackendTimeout`` once the work is cancelled or past its deadline."""
        if self._reason:
            raise BackendTimeout(self._reason)
        if self._deadline is not None and time.monotonic() > self._deadline:
            self.cancel(f"the request passed its deadline of {self._limit_s:g} s")
            raise BackendTimeout(self._reason)


_CURRENT: ContextVar[Work | None] = ContextVar("canoe_work", default=None)


def current() -> Work | None:
    return _CURRENT.get()


def checkpoint() -> None:
    """Stop here if this request's work was cancelled or ran past its deadline."""
    work = _CURRENT.get()
    if work is not None:
        work.check()


@contextmanager
def working(work: Work) -> Iterator[Work]:
    """``work`` is the current request's token inside the block (and in contexts copied from it:
    a worker thread's)."""
    token = _CURRENT.set(work)
    try:
        yield work
    finally:
        _CURRENT.reset(token)
