"""Waiting on a condition in tests, instead of sleeping a fixed time and hoping.

A test that needs another thread or a server to have done something polls for exactly that,
with a deadline that fails loudly (naming what never happened) rather than passing by luck on a
fast machine and failing on a busy one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["until", "until_async"]

POLL_S = 0.01


def until(condition: Callable[[], object], *, what: str, timeout_s: float = 10.0) -> None:
    """Return as soon as ``condition()`` is true; fail after ``timeout_s`` saying ``what``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(POLL_S)


async def until_async(
    condition: Callable[[], object], *, what: str, timeout_s: float = 10.0
) -> None:
    """``until`` for a condition that the running event loop makes true."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        await asyncio.sleep(POLL_S)
