"""A Task id is one decision: re-sent with the same content it replays, re-sent with another
decision it is refused (ALREADY_EXISTS naming what differs), and concurrent copies of one new
Task all answer the version it made, none "stale". A real gRPC server on port 0, both stores."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.service.conftest import (
    Harness,
    bundle_bytes,
    first_argument,
    outcome_of,
    pb,
    reject_task,
    serving,
)


async def _plan(h: Harness) -> tuple[str, str, str]:
    r = await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
    doc = json.loads(
        (
            await h.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id, version=1))
        ).deliberation_json
    )
    patient = str(doc["patient_ref"])
    return r.plan_id, first_argument(doc), patient


async def _contest(h: Harness, plan_id: str, task: dict[str, Any]) -> Any:
    return await h.stub.Contest(
        pb.ContestRequest(plan_id=plan_id, version=1, tasks_json=json.dumps(task).encode())
    )


async def test_a_task_id_resent_with_another_decision_is_refused(
    tmp_path: Path, store_dsn: str
) -> None:
    async with serving(tmp_path, dsn=store_dsn) as h:
        plan_id, arg, patient = await _plan(h)
        # a fresh id: the PostgreSQL store outlives one run of the suite
        tid = f"task-once-{uuid.uuid4().hex[:12]}"
        task = reject_task(plan_id, 1, arg, tid=tid, patient=patient)
        first = await _contest(h, plan_id, task)
        assert (first.version, first.replayed) == (2, False)
        same = await _contest(h, plan_id, task)
        assert (same.version, same.replayed) == (2, True)
        other = {**task, "reasonCode": {"text": "a different reason"}}
        other["input"] = [*task["input"]]
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await _contest(h, plan_id, other)
        assert err.value.code() is grpc.StatusCode.ALREADY_EXISTS
        assert tid in str(err.value.details())
        assert "reasonCode" in str(err.value.details())
        issue = outcome_of(err.value)["issue"][0]
        assert issue["code"] == "duplicate" and issue["expression"] == ["Task.reasonCode"]
        # the first decision stands: no new version
        versions = await h.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=plan_id))
        assert [v.version for v in versions.versions] == [1, 2]


async def test_concurrent_copies_of_one_new_task_are_not_stale(
    tmp_path: Path, store_dsn: str
) -> None:
    async with serving(tmp_path, dsn=store_dsn) as h:
        plan_id, arg, patient = await _plan(h)
        task = reject_task(
            plan_id, 1, arg, tid=f"task-burst-{uuid.uuid4().hex[:12]}", patient=patient
        )
        answers = await asyncio.gather(
            *(_contest(h, plan_id, task) for _ in range(6)), return_exceptions=True
        )
        errors = [a for a in answers if isinstance(a, BaseException)]
        assert errors == []
        assert {a.version for a in answers} == {2}
        assert sum(not a.replayed for a in answers) == 1
        versions = await h.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=plan_id))
        assert [v.version for v in versions.versions] == [1, 2]
