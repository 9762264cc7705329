"""Every RPC over a real loopback server and a real client: the happy paths, the contest
guarantees (new version, idempotent Task ids, stale versions, concurrent contestations) against
SQLite and PostgreSQL, and each refusal with its status code and OperationOutcome."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from fhir_mapping.careplan import deliberation_from_bundle
from service.pipeline import STAGES
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

CODE = grpc.StatusCode


def resources(bundle_json: bytes, kind: str) -> list[dict[str, Any]]:
    b = json.loads(bundle_json)
    return [e["resource"] for e in b["entry"] if e["resource"]["resourceType"] == kind]


async def plan(h: Harness, name: str = "adalberto") -> pb.GeneratePlanResponse:
    r: pb.GeneratePlanResponse = await h.stub.GeneratePlan(
        pb.GeneratePlanRequest(bundle_json=bundle_bytes(name))
    )
    return r


async def contest(h: Harness, plan_id: str, version: int, *tasks: dict[str, Any]) -> Any:
    body = (
        tasks[0]
        if len(tasks) == 1
        else {
            "resourceType": "Bundle",
            "type": "transaction",
            "entry": [{"resource": t} for t in tasks],
        }
    )
    return await h.stub.Contest(
        pb.ContestRequest(plan_id=plan_id, version=version, tasks_json=json.dumps(body).encode())
    )


async def doc_of(h: Harness, plan_id: str, version: int | None = None) -> dict[str, Any]:
    req = pb.GetDeliberationRequest(plan_id=plan_id)
    if version is not None:
        req.version = version
    r = await h.stub.GetDeliberation(req)
    out: dict[str, Any] = json.loads(r.deliberation_json)
    assert out["version"] == r.version
    return out


def patient_of(r: pb.GeneratePlanResponse) -> str:
    (careplan,) = resources(r.careplan_bundle_json, "CarePlan")
    return str(careplan["subject"]["reference"])


async def expect_error(aw: Any, code: grpc.StatusCode) -> dict[str, Any]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await aw
    assert err.value.code() == code, err.value.details()
    return outcome_of(err.value)


# --------------------------------------------------------------------------- plans


async def test_generate_plan_returns_the_plan_and_persists_it_first(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        r = await plan(h)
        assert len(r.plan_id) == 32 and int(r.plan_id, 16) >= 0  # uuid4 hex
        assert r.version == 1
        (careplan,) = resources(r.careplan_bundle_json, "CarePlan")
        (provenance,) = resources(r.careplan_bundle_json, "Provenance")
        assert careplan["id"] == f"{r.plan_id}-v1"
        assert provenance["target"][0]["reference"].startswith(f"CarePlan/{r.plan_id}-v1")
        d = deliberation_from_bundle(json.loads(r.careplan_bundle_json))
        s = r.summary
        assert s.counts["options"] == len(d.options) > 0
        assert s.counts["arguments"] == sum(len(o.arguments) for o in d.options)
        assert 0 < s.counts["options_included"] <= s.counts["options"]
        assert s.counts["model_calls"] > 0 and s.backend == real_experts().name
        assert set(STAGES) <= set(s.timings_ms) and s.timings_ms["total"] > 0
        # total is the whole request: ingest, the (sequential) stages and the store write.
        assert {"ingest", "store"} <= set(s.timings_ms)
        # Routing the votes and the arena run concurrently (pipeline.py): they overlap, so only
        # the longer of the two adds to the wall-clock total.
        t = dict(s.timings_ms)
        concurrent = max(t.pop("votes"), t.pop("arena"))
        parts = sum(v for k, v in t.items() if k != "total") + concurrent
        assert s.timings_ms["total"] >= parts - 0.01  # 0.01: per-entry rounding to 1 us
        doc = await doc_of(h, r.plan_id)
        assert set(s.borderline_option_ids) == {o["id"] for o in doc["options"] if o["borderline"]}
        # Stored before the answer: the store has exactly what was returned.
        stored = await h.app.store.get_version(tenant="default", plan_id=r.plan_id, version=1)
        assert stored.bundle == json.loads(r.careplan_bundle_json)
        assert stored.deliberation == doc


async def test_stream_plan_reports_every_stage_then_the_plan(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        events = [
            e async for e in h.stub.StreamPlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
        ]
        *progress, final = events
        assert final.HasField("plan") and all(e.HasField("progress") for e in progress)
        started = [e.progress.stage for e in progress if e.progress.state == 1]
        finished = [e.progress.stage for e in progress if e.progress.state == 2]
        assert sorted(started) == sorted(STAGES) == sorted(finished)
        assert started[0] == "ingest" and finished[-1] == "synthesis"
        done = [e.progress.model_calls_done for e in progress]
        assert done == sorted(done) and done[-1] == final.plan.summary.counts["model_calls"]
        assert all(e.progress.model_calls_done <= e.progress.model_calls_total for e in progress)
        versions = await h.stub.ListPlanVersions(
            pb.ListPlanVersionsRequest(plan_id=final.plan.plan_id)
        )
        assert [v.version for v in versions.versions] == [1]


# --------------------------------------------------------------------------- contestation


async def test_contest_makes_a_new_version_and_keeps_the_old(
    tmp_path: Path, store_dsn: str
) -> None:
    async with serving(tmp_path, dsn=store_dsn) as h:
        r = await plan(h)
        before = await doc_of(h, r.plan_id)
        arg = first_argument(before)
        task = reject_task(r.plan_id, 1, arg, tid="task-reject-1", patient=patient_of(r))
        c = await contest(h, r.plan_id, 1, task)
        assert (c.plan_id, c.version, c.replayed) == (r.plan_id, 2, False)
        assert [(t.task_id, t.status) for t in c.tasks] == [("task-reject-1", "completed")]
        (careplan,) = resources(c.careplan_bundle_json, "CarePlan")
        assert careplan["id"] == f"{r.plan_id}-v2"
        assert any(f"{r.plan_id}-v1" in x["reference"] for x in careplan["replaces"])
        (returned,) = [e["resource"] for e in json.loads(c.tasks_bundle_json)["entry"]]
        assert returned["status"] == "completed" and returned["id"] == "task-reject-1"
        after = await doc_of(h, r.plan_id)
        assert after["version"] == 2
        node = next(n for o in after["options"] for n in o["nodes"] if n["id"] == arg)
        assert node["status"] == "rejected" and node["sigma"] is None
        assert [x["id"] for x in after["contestations"]] == ["task-reject-1"]
        assert await doc_of(h, r.plan_id, 1) == before  # history is never rewritten
        listed = await h.stub.ListPlanVersions(
            pb.ListPlanVersionsRequest(patient_ref=patient_of(r))
        )
        mine = [
            (v.version, v.kind, v.current, list(v.task_ids))
            for v in listed.versions
            if v.plan_id == r.plan_id
        ]
        assert mine == [(1, "generated", False, []), (2, "contested", True, ["task-reject-1"])]


async def test_each_version_serialises_its_deliberation_once(tmp_path: Path) -> None:
    """The stored, returned deliberation is the very bytes the plan's Binary carries, for a
    generated version and a contested one: one serialisation, with sorted keys."""
    async with serving(tmp_path) as h:
        r = await plan(h)
        task = reject_task(
            r.plan_id,
            1,
            first_argument(await doc_of(h, r.plan_id)),
            tid="t-1",
            patient=patient_of(r),
        )
        c = await contest(h, r.plan_id, 1, task)
        for version, bundle_json in ((1, r.careplan_bundle_json), (2, c.careplan_bundle_json)):
            (binary,) = resources(bundle_json, "Binary")
            got = await h.stub.GetDeliberation(
                pb.GetDeliberationRequest(plan_id=r.plan_id, version=version)
            )
            assert got.deliberation_json == base64.b64decode(binary["data"])
            doc = json.loads(got.deliberation_json)
            assert list(doc) == sorted(doc) and doc["version"] == version


async def test_the_same_task_twice_changes_nothing(tmp_path: Path, store_dsn: str) -> None:
    async with serving(tmp_path, dsn=store_dsn) as h:
        r = await plan(h)
        arg = first_argument(await doc_of(h, r.plan_id))
        task = reject_task(r.plan_id, 1, arg, tid="task-once", patient=patient_of(r))
        first = await contest(h, r.plan_id, 1, task)
        again = await contest(h, r.plan_id, 1, task)
        assert (again.version, again.replayed) == (2, True)
        assert json.loads(again.careplan_bundle_json) == json.loads(first.careplan_bundle_json)
        assert json.loads(again.tasks_bundle_json) == json.loads(first.tasks_bundle_json)
        versions = await h.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=r.plan_id))
        assert [v.version for v in versions.versions] == [1, 2]


async def test_a_bundle_of_tasks_is_one_new_version(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        r = await plan(h)
        doc = await doc_of(h, r.plan_id)
        args = [n["id"] for o in doc["options"] for n in o["nodes"] if n["kind"] == "argument"]
        p = patient_of(r)
        first = reject_task(r.plan_id, 1, args[0], tid="b-1", patient=p)
        second = reject_task(r.plan_id, 1, args[1], tid="b-2", patient=p)
        c = await contest(h, r.plan_id, 1, first, second)
        assert c.version == 2 and [t.task_id for t in c.tasks] == ["b-1", "b-2"]
        after = await doc_of(h, r.plan_id)
        rejected = {
            n["id"] for o in after["options"] for n in o["nodes"] if n.get("status") == "rejected"
        }
        assert rejected == {args[0], args[1]}


async def test_a_stale_version_fails_naming_the_current_one(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        r = await plan(h)
        arg = first_argument(await doc_of(h, r.plan_id))
        p = patient_of(r)
        await contest(h, r.plan_id, 1, reject_task(r.plan_id, 1, arg, tid="a", patient=p))
        oo = await expect_error(
            contest(h, r.plan_id, 1, reject_task(r.plan_id, 1, arg, tid="b", patient=p)),
            CODE.FAILED_PRECONDITION,
        )
        assert oo["issue"][0]["code"] == "conflict"
        assert "current version" in oo["issue"][0]["diagnostics"]
        assert oo["issue"][0]["diagnostics"].rstrip(".").endswith("2")


async def test_concurrent_contests_of_one_version_exactly_one_wins(
    tmp_path: Path, store_dsn: str
) -> None:
    async with serving(tmp_path, dsn=store_dsn) as h:
        r = await plan(h)
        arg = first_argument(await doc_of(h, r.plan_id))
        p = patient_of(r)
        results = await asyncio.gather(
            *(
                contest(h, r.plan_id, 1, reject_task(r.plan_id, 1, arg, tid=f"race-{i}", patient=p))
                for i in range(4)
            ),
            return_exceptions=True,
        )
        wins = [x for x in results if not isinstance(x, BaseException)]
        losses = [x for x in results if isinstance(x, grpc.aio.AioRpcError)]
        assert len(wins) == 1 and wins[0].version == 2
        assert len(losses) == 3
        for e in losses:
            assert e.code() == CODE.FAILED_PRECONDITION
            assert "current version" in e.details() and "2" in e.details()
        versions = await h.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=r.plan_id))
        assert [(v.version, list(v.task_ids)) for v in versions.versions] == [
            (1, []),
            (2, [wins[0].tasks[0].task_id]),
        ]


async def test_a_bad_task_is_invalid_argument_with_its_fhirpath(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        r = await plan(h)
        task = reject_task(r.plan_id, 1, "arg-that-does-not-exist", tid="t", patient=patient_of(r))
        oo = await expect_error(contest(h, r.plan_id, 1, task), CODE.INVALID_ARGUMENT)
        assert any("input" in x for i in oo["issue"] for x in i.get("expression", []))
        oo = await expect_error(
            h.stub.Contest(
                pb.ContestRequest(plan_id=r.plan_id, version=1, tasks_json=b"{not json")
            ),
            CODE.INVALID_ARGUMENT,
        )
        assert oo["issue"]


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "name", ["bad_missing_patient", "bad_wrong_resourcetype", "bad_medreq_dangling_patient"]
)
async def test_bad_fhir_is_invalid_argument_with_an_operation_outcome(
    tmp_path: Path, name: str
) -> None:
    async with serving(tmp_path) as h:
        oo = await expect_error(plan(h, name), CODE.INVALID_ARGUMENT)
        assert oo["issue"] and all(i["severity"] in ("error", "fatal") for i in oo["issue"])


async def test_not_json_and_empty_are_invalid_argument(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        for raw in (b"not json at all", b""):
            await expect_error(
                h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=raw)), CODE.INVALID_ARGUMENT
            )
        await expect_error(
            h.stub.ListPlanVersions(pb.ListPlanVersionsRequest()), CODE.INVALID_ARGUMENT
        )


async def test_unknown_plans_and_versions_are_not_found(tmp_path: Path) -> None:
    async with serving(tmp_path) as h:
        oo = await expect_error(doc_of(h, "0" * 32), CODE.NOT_FOUND)
        assert oo["issue"][0]["code"] == "not-found"
        r = await plan(h)
        await expect_error(doc_of(h, r.plan_id, 9), CODE.NOT_FOUND)
        task = reject_task("0" * 32, 1, "x", tid="t", patient=patient_of(r))
        await expect_error(contest(h, "0" * 32, 1, task), CODE.NOT_FOUND)


async def test_resource_limits_are_resource_exhausted(tmp_path: Path) -> None:
    async with serving(tmp_path, max_bundle_resources=5) as h:
        oo = await expect_error(plan(h), CODE.RESOURCE_EXHAUSTED)
        assert oo["issue"][0]["code"] == "too-costly"
    async with serving(tmp_path, max_message_bytes=16 * 1024) as h:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await plan(h)  # ~70 kB: refused by the transport before any work
        assert err.value.code() == CODE.RESOURCE_EXHAUSTED


async def test_more_plans_than_allowed_at_once_are_refused(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.2)
    async with serving(tmp_path, experts=slow, max_concurrent_plans=1) as h:
        first = asyncio.ensure_future(plan(h))
        await asyncio.wait_for(slow.started.wait(), 10)
        oo = await expect_error(plan(h), CODE.RESOURCE_EXHAUSTED)
        assert "CANOE_MAX_CONCURRENT_PLANS" in oo["issue"][0]["diagnostics"]
        assert (await first).version == 1  # the one in flight is unaffected


async def test_backend_down_is_unavailable(tmp_path: Path) -> None:
    down = Faulty(real_experts(), down=True)
    async with serving(tmp_path, experts=down) as h:
        oo = await expect_error(plan(h), CODE.UNAVAILABLE)
        assert oo["issue"][0]["code"] == "transient"


async def test_health_is_not_serving_until_the_backend_is_ready(tmp_path: Path) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    experts = Faulty(real_experts(), ready=False)
    async with serving(tmp_path, experts=experts, wait=False) as h:
        health = health_pb2_grpc.HealthStub(h.channel)
        for _ in range(3):
            for name in ("", "canoe.v1.CarePlanService"):
                got = await health.Check(health_pb2.HealthCheckRequest(service=name))
                assert got.status == health_pb2.HealthCheckResponse.NOT_SERVING
            await asyncio.sleep(0.1)
        experts.ready = True
        await h.wait_serving(5)
        experts.ready_raises = True  # the backend stops answering: back to NOT_SERVING
        for _ in range(50):
            got = await health.Check(health_pb2.HealthCheckRequest(service=""))
            if got.status == health_pb2.HealthCheckResponse.NOT_SERVING:
                break
            await asyncio.sleep(0.05)
        assert got.status == health_pb2.HealthCheckResponse.NOT_SERVING
        # ...while the liveness name stays SERVING: an outage must not restart every pod
        got = await health.Check(health_pb2.HealthCheckRequest(service="liveness"))
        assert got.status == health_pb2.HealthCheckResponse.SERVING


async def test_request_deadline_is_deadline_exceeded_and_stores_nothing(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.5)
    async with serving(tmp_path, experts=slow, request_deadline_s=0.3) as h:
        oo = await expect_error(plan(h), CODE.DEADLINE_EXCEEDED)
        assert oo["issue"][0]["code"] == "timeout"
        assert slow.cancelled >= 1
        assert await h.app.store.list_versions(tenant="default", patient_ref=_adalberto()) == []


async def test_client_deadline_stops_the_work(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.5)
    async with serving(tmp_path, experts=slow) as h:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.GeneratePlan(
                pb.GeneratePlanRequest(bundle_json=bundle_bytes()), timeout=0.3
            )
        assert err.value.code() == CODE.DEADLINE_EXCEEDED
        await _until(lambda: slow.cancelled >= 1)
        assert await h.app.store.list_versions(tenant="default", patient_ref=_adalberto()) == []


async def test_a_client_that_cancels_stops_the_work(tmp_path: Path) -> None:
    slow = Faulty(real_experts(), delay_s=0.3)
    async with serving(tmp_path, experts=slow) as h:
        call = h.stub.StreamPlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
        first = await call.read()
        assert first.progress.stage == "ingest"
        await asyncio.wait_for(slow.started.wait(), 10)
        call.cancel()
        await _until(lambda: slow.cancelled >= 1)
        calls = slow.calls
        await asyncio.sleep(0.8)
        assert slow.calls == calls  # no model call started after the cancel
        assert h.app._running == 0
        assert await h.app.store.list_versions(tenant="default", patient_ref=_adalberto()) == []


def _adalberto() -> str:
    raw = json.loads(bundle_bytes())
    (p,) = [e["resource"] for e in raw["entry"] if e["resource"]["resourceType"] == "Patient"]
    return f"Patient/{p['id']}"


async def _until(cond: Any, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")
