"""Admission control over a real loopback server: at most ``max_concurrent_plans`` plans and
contestations at once per process. One over the limit is refused at once with
RESOURCE_EXHAUSTED, an OperationOutcome naming the limit, and gRPC's retry pushback; it stores
nothing. Under the limit nothing is refused. canoe_client reads the hint and, when asked to,
backs off and retries."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from canoe_client import AsyncCarePlanClient, CarePlanClient, RetryPolicy
from canoe_client._status import RETRY_PUSHBACK_KEY
from service.errors import LimitError
from service.telemetry import Telemetry
from tests.service.conftest import (
    Faulty,
    Harness,
    bundle_bytes,
    first_argument,
    outcome_of,
    pb,
    real_experts,
    reject_task,
    serving,
)

BUSY = grpc.StatusCode.RESOURCE_EXHAUSTED


async def plan(h: Harness) -> pb.GeneratePlanResponse:
    r: pb.GeneratePlanResponse = await h.stub.GeneratePlan(
        pb.GeneratePlanRequest(bundle_json=bundle_bytes()), timeout=60
    )
    return r


def patient_of(r: pb.GeneratePlanResponse) -> str:
    bundle = json.loads(r.careplan_bundle_json)
    (careplan,) = (
        e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "CarePlan"
    )
    return str(careplan["subject"]["reference"])


async def stored_plans(h: Harness, patient: str) -> set[str]:
    versions = await h.app.versions(tenant="default", patient_ref=patient)
    return {v.plan_id for v in versions}


def refusal(exc: BaseException) -> grpc.aio.AioRpcError:
    assert isinstance(exc, grpc.aio.AioRpcError), exc
    assert exc.code() == BUSY, exc.details()
    return exc


async def test_over_the_limit_is_refused_naming_it_and_stores_nothing(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.1)
    async with serving(tmp_path, experts=slow, max_concurrent_plans=1) as h:
        first = asyncio.ensure_future(plan(h))
        await asyncio.wait_for(slow.started.wait(), 10)
        others = await asyncio.gather(*(plan(h) for _ in range(3)), return_exceptions=True)
        for exc in others:
            err = refusal(exc)
            oo = outcome_of(err)
            (issue,) = oo["issue"]
            assert issue["code"] == "throttled"
            assert "the limit is 1 (CANOE_MAX_CONCURRENT_PLANS)" in issue["diagnostics"]
            assert "retry in about" in issue["diagnostics"]
            pushback = dict(err.trailing_metadata() or ())[RETRY_PUSHBACK_KEY]
            assert isinstance(pushback, str) and int(pushback) >= 1
        done = await first
        assert done.version == 1  # the admitted one is unaffected
        # Only the admitted plan was stored.
        assert await stored_plans(h, patient_of(done)) == {done.plan_id}


async def test_a_refusal_comes_first_and_is_counted_with_its_request_id(tmp_path: Path) -> None:
    """Refused for load before anything else, the caller's credentials included (they are
    checked once a place is free), with the request id in the trailers and in the metrics."""
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("tokens:\n  - {token: token-a, tenant: clinic-a}\n")
    reader = InMemoryMetricReader()
    telemetry = Telemetry(TracerProvider(), MeterProvider(metric_readers=[reader]))
    slow = Faulty(real_experts(), delay_s=0.2)
    async with serving(
        tmp_path,
        experts=slow,
        telemetry=telemetry,
        max_concurrent_plans=1,
        auth_mode="tokens",
        auth_tokens_file=str(tokens),
    ) as h:
        request = pb.GeneratePlanRequest(bundle_json=bundle_bytes())
        first = asyncio.ensure_future(
            h.stub.GeneratePlan(request, metadata=(("authorization", "Bearer token-a"),))
        )
        await asyncio.wait_for(slow.started.wait(), 10)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.GeneratePlan(request, metadata=(("x-request-id", "req-busy"),))
        trailers = dict(refusal(err.value).trailing_metadata() or ())
        assert trailers["x-request-id"] == "req-busy"
        assert int(str(trailers[RETRY_PUSHBACK_KEY])) >= 1
        assert (await first).version == 1
        # Once a place is free, the same anonymous request is refused for what it is.
        with pytest.raises(grpc.aio.AioRpcError) as anonymous:
            await h.stub.GeneratePlan(request)
        assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
    counted = {
        (dict(p.attributes or {}).get("rpc.grpc.status_code"), m.name): p.value
        for rm in reader.get_metrics_data().resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        if m.name in ("canoe.rpc.requests", "canoe.rpc.errors")
        for p in m.data.data_points
    }
    assert counted[("RESOURCE_EXHAUSTED", "canoe.rpc.requests")] == 1
    assert counted[("RESOURCE_EXHAUSTED", "canoe.rpc.errors")] == 1
    assert counted[("OK", "canoe.rpc.requests")] == 1


async def test_under_the_limit_nothing_is_refused(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.05)
    async with serving(tmp_path, experts=slow, max_concurrent_plans=3) as h:
        got = await asyncio.gather(*(plan(h) for _ in range(3)))
        assert [r.version for r in got] == [1, 1, 1]
        assert await stored_plans(h, patient_of(got[0])) == {r.plan_id for r in got}


async def test_a_contest_waits_for_no_place_either(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.1)
    async with serving(tmp_path, experts=slow, max_concurrent_plans=1) as h:
        made = await plan(h)
        doc = json.loads(
            (
                await h.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=made.plan_id))
            ).deliberation_json
        )
        slow.started.clear()
        busy = asyncio.ensure_future(plan(h))
        await asyncio.wait_for(slow.started.wait(), 10)
        task = reject_task(
            made.plan_id, 1, first_argument(doc), tid="t-busy", patient=patient_of(made)
        )
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.Contest(
                pb.ContestRequest(
                    plan_id=made.plan_id, version=1, tasks_json=json.dumps(task).encode()
                )
            )
        refusal(err.value)
        await busy
        # Nothing was applied: the plan is still at version 1 and the Task is unknown.
        assert await h.app.store.current_version(tenant="default", plan_id=made.plan_id) == 1
        assert await h.app.store.get_tasks(tenant="default", task_ids=["t-busy"]) == {}


async def test_the_client_reads_the_hint_and_retries_when_asked(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.05)
    async with serving(tmp_path, experts=slow, max_concurrent_plans=1) as h:
        target = f"127.0.0.1:{h.port}"
        async with (
            AsyncCarePlanClient(target, timeout_s=60) as once,
            AsyncCarePlanClient(
                target, timeout_s=60, retry=RetryPolicy(attempts=1000, max_backoff_s=0.2)
            ) as patient,
        ):
            first = asyncio.ensure_future(once.plan(bundle_bytes()))
            await asyncio.wait_for(slow.started.wait(), 10)
            with pytest.raises(LimitError) as refused:
                await once.plan(bundle_bytes())
            hint = refused.value.retry_after_s
            assert hint is not None and hint > 0
            assert refused.value.status_code == "RESOURCE_EXHAUSTED"
            # The retrying client is refused while the first holds the place, then served.
            second: dict[str, Any] = await patient.plan(bundle_bytes())
            assert first.done()  # with one place, it was admitted only after the first ended
            assert second["version"] == 1
            assert (await first)["plan_id"] != second["plan_id"]


def test_retry_policy_backs_off_from_the_hint_within_bounds() -> None:
    policy = RetryPolicy(attempts=3, initial_backoff_s=0.1, max_backoff_s=1.0)
    assert policy.delay_s(0, 0.4, jitter=0.5) == pytest.approx(0.4)  # the hint when longer
    assert policy.delay_s(2, 0.01, jitter=0.5) == pytest.approx(0.4)  # else the backoff
    assert policy.delay_s(9, None, jitter=0.0) == pytest.approx(0.5)  # capped, then jittered
    busy = LimitError("busy", retry_after_s=0.01)
    assert policy.wait_s(busy, 0, deadline=float("inf")) is not None
    assert policy.wait_s(busy, 2, deadline=float("inf")) is None  # three tries in all
    assert policy.wait_s(busy, 0, deadline=0.0) is None  # never past the deadline
    assert policy.wait_s(LimitError("too big"), 0, deadline=float("inf")) is None


async def test_the_blocking_client_retries_too(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.05)
    async with serving(tmp_path, experts=slow, max_concurrent_plans=1) as h:
        retry = RetryPolicy(attempts=1000, max_backoff_s=0.2)
        with CarePlanClient(f"127.0.0.1:{h.port}", timeout_s=60, retry=retry) as client:
            first = asyncio.ensure_future(plan(h))
            await asyncio.wait_for(slow.started.wait(), 10)
            # On a thread: the server runs on this test's loop.
            second = await asyncio.to_thread(client.plan, bundle_bytes())
            assert first.done()  # with one place, it was admitted only after the first ended
            assert second["version"] == 1
            assert (await first).plan_id != second["plan_id"]
            assert slow.completed > 0
