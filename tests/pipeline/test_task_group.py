"""The pipeline runs a stage's model calls in an ``asyncio.TaskGroup``: the first failure cancels
the siblings (no orphaned model calls) and reaches the caller as itself, with its own cause, never
wrapped in an ``ExceptionGroup`` (the error tree maps types to gRPC codes)."""

from __future__ import annotations

import asyncio

import pytest

from service.errors import BackendUnavailable, StepFailed
from service.pipeline import _all


async def test_results_come_in_order() -> None:
    async def after(delay: float, value: int) -> int:
        await asyncio.sleep(delay)
        return value

    assert await _all([after(0.02, 1), after(0.0, 2), after(0.01, 3)]) == [1, 2, 3]
    assert await _all([]) == []


async def test_the_first_error_is_raised_as_itself_and_the_siblings_are_cancelled() -> None:
    cancelled: list[str] = []

    async def hangs(name: str) -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise

    async def fails(delay: float, exc: Exception) -> None:
        await asyncio.sleep(delay)
        try:
            raise OSError("connection refused")
        except OSError as cause:
            raise exc from cause

    first = BackendUnavailable("triton is down")
    with pytest.raises(BackendUnavailable) as info:
        await _all([hangs("a"), fails(0.01, first), fails(0.05, StepFailed("late")), hangs("b")])
    assert info.value is first
    assert isinstance(info.value.__cause__, OSError)  # its own cause, not the group
    assert not isinstance(info.value.__context__, BaseExceptionGroup)
    assert sorted(cancelled) == ["a", "b"]


async def test_nested_groups_unwrap_to_the_innermost_first_error() -> None:
    async def inner() -> list[None]:
        async def boom() -> None:
            raise StepFailed("inner step")

        return await _all([boom()])

    with pytest.raises(StepFailed, match="inner step"):
        await _all([inner()])
