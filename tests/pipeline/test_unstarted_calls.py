"""A model call handed to a plan run whose task is cancelled before it ever runs (a sibling
failed first, or the deadline passed) is closed when its stage ends: never left for the
interpreter to report as a coroutine never awaited (which the suite turns into an error)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from service.errors import BackendUnavailable
from service.pipeline import _all, _Run


async def test_calls_cancelled_before_they_start_are_closed_with_their_stage() -> None:
    run = _Run(cap=4, deadline_s=10.0, progress=None)

    async def fails() -> None:
        raise BackendUnavailable("down")

    async def waits() -> str:
        await asyncio.sleep(10)
        return "late"

    inner: list[Any] = [fails(), waits(), waits()]
    with pytest.raises(BackendUnavailable):
        await run.stage("scoring", _all(run.optional(f"call {k}", c) for k, c in enumerate(inner)))
    assert [inspect.getcoroutinestate(c) for c in inner] == [inspect.CORO_CLOSED] * 3


async def test_a_call_handed_but_never_run_is_closed_when_its_stage_ends() -> None:
    """The case the deadline makes: a call's task cancelled before its first step never runs
    its wrapper, so only the run, which was handed the call, can close it."""
    run = _Run(cap=4, deadline_s=10.0, progress=None)

    async def waits() -> str:
        await asyncio.sleep(10)
        return "late"

    async def stopped() -> None:
        raise asyncio.CancelledError

    inner = waits()
    outer = run.optional("never run", inner)
    with pytest.raises(asyncio.CancelledError):
        await run.stage("scoring", stopped())
    assert inspect.getcoroutinestate(inner) == inspect.CORO_CLOSED
    outer.close()
