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


async def test_calls_handed_to_a_stage_the_client_stopped_before_it_began_are_closed() -> None:
    """The client cancels between stages: the next stage stops at its checkpoint before its
    work starts, and the calls already handed to that work as arguments never run. They are
    closed there (an intermittent "coroutine never awaited" after a cancelled request)."""
    from service.work import Work, working

    run = _Run(cap=4, deadline_s=10.0, progress=None)

    async def waits() -> str:
        await asyncio.sleep(10)
        return "late"

    work = Work()
    with working(work):
        inner = [waits(), waits()]
        handed = [run.optional(f"call {k}", c) for k, c in enumerate(inner)]
        work.cancel()
        with pytest.raises(BaseException):  # noqa: B017 - whatever the stop raises
            await run.stage("scoring", _all(iter(handed)))
    assert [inspect.getcoroutinestate(c) for c in (*inner, *handed)] == [inspect.CORO_CLOSED] * 4
