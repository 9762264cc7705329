"""Work bounded by the record, over a real loopback server: a record of thousands of repeated
medicine orders is planned in time that grows with the record, and a plan whose deadline passes
or whose client cancels stops on the worker thread (the planning loops check the request's
token), so the next ordinary plan on that worker is answered at normal speed."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

import service.versions
from fhir_mapping.careplan import deliberation_from_bundle
from service.errors import BackendTimeout, InputError
from service.settings import load_settings
from service.work import Work, checkpoint, current, working
from tests.service.conftest import (
    Harness,
    bundle_bytes,
    first_argument,
    outcome_of,
    pb,
    reject_task,
    serving,
)
from tests.support.large_records import repeated_orders, to_bytes

# Thousands of orders: seconds of planning on this worker's one CPU thread if nothing stops it.
MONSTER = to_bytes(repeated_orders(5000))
LIMITS = {"max_bundle_resources": 10_000, "max_message_bytes": 16 * 1024 * 1024}


async def ordinary(h: Harness) -> float:
    t0 = time.perf_counter()
    await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()), timeout=60)
    return time.perf_counter() - t0


async def test_the_monster_record_is_planned_in_time_bounded_by_the_record(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, **LIMITS) as h:
        t0 = time.perf_counter()
        r = await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=MONSTER), timeout=60)
        took = time.perf_counter() - t0
    assert r.plan_id
    # Quadratic in the orders, this took hours; bounded by the record, seconds on a busy CI core.
    assert took < 30, took


async def test_after_a_passed_deadline_the_worker_answers_at_normal_speed(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, **LIMITS) as h:
        await ordinary(h)  # the first plan of a process loads the knowledge
        normal = await ordinary(h)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=MONSTER), timeout=0.3)
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        recovery = await ordinary(h)
    # Had the worker thread planned on, the next plan would wait seconds behind it.
    assert recovery < normal + 1.0, (normal, recovery)


async def test_after_the_client_cancels_the_worker_answers_at_normal_speed(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, **LIMITS) as h:
        await ordinary(h)  # the first plan of a process loads the knowledge
        normal = await ordinary(h)
        call = h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=MONSTER), timeout=60)
        await asyncio.sleep(0.5)  # the request is on the worker thread by now
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        recovery = await ordinary(h)
    assert recovery < normal + 1.0, (normal, recovery)


async def test_a_contestation_stops_when_its_request_is_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recomputation of a contested plan runs on the worker thread under the request's
    token: once the token is cancelled (the client went away mid-work), it stops at the next
    checkpoint and stores no new version."""
    seen: list[Work | None] = []
    real_evaluate = service.versions.evaluate

    def evaluate_then_cancel(d: Any) -> Any:
        work = current()
        seen.append(work)
        if work is not None and len(seen) == 1:
            work.cancel("the client went away")
        return real_evaluate(d)

    monkeypatch.setattr(service.versions, "evaluate", evaluate_then_cancel)
    async with serving(tmp_path) as h:
        r = await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
        got = await h.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
        patient = deliberation_from_bundle(json.loads(r.careplan_bundle_json)).patient_ref
        argument = first_argument(json.loads(got.deliberation_json))
        task = reject_task(r.plan_id, 1, argument, tid="t1", patient=patient)

        async def contest() -> pb.ContestResponse:
            body = json.dumps(task).encode()
            req = pb.ContestRequest(plan_id=r.plan_id, version=1, tasks_json=body)
            answer: pb.ContestResponse = await h.stub.Contest(req, timeout=60)
            return answer

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await contest()
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "went away" in outcome_of(err.value)["issue"][0]["diagnostics"]
        assert seen and seen[0] is not None  # the worker thread saw the request's token
        latest = await h.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
        assert latest.version == 1  # nothing stored
        assert (await contest()).version == 2  # a fresh request has a fresh token


def test_a_checkpoint_stops_work_that_is_cancelled_or_past_its_deadline() -> None:
    checkpoint()  # no request: never stops
    work = Work()
    with working(work):
        checkpoint()
        work.cancel("the client went away")
        with pytest.raises(BackendTimeout, match="went away"):
            checkpoint()
    with working(Work(0.0)), pytest.raises(BackendTimeout, match="deadline of 0 s"):
        time.sleep(0.001)
        checkpoint()


async def test_a_record_over_the_memory_budget_is_refused_before_the_work(tmp_path: Path) -> None:
    async with serving(tmp_path, max_plan_memory_mb=16, **LIMITS) as h:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=MONSTER), timeout=60)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        (issue,) = outcome_of(err.value)["issue"]
        assert issue["code"] == "too-costly"
        assert "memory budget is 16 MB" in issue["diagnostics"]
        assert "CANOE_MAX_PLAN_MEMORY_MB" in issue["diagnostics"]
        await ordinary(h)  # an ordinary record is well within the same budget


def test_the_memory_budget_setting_is_validated() -> None:
    assert load_settings(environ={"CANOE_MAX_PLAN_MEMORY_MB": "64"}).limits.max_plan_memory_mb == 64
    with pytest.raises(InputError, match="CANOE_MAX_PLAN_MEMORY_MB"):
        load_settings(environ={"CANOE_MAX_PLAN_MEMORY_MB": "0"})
