"""Regression tests for the hardening findings on the gRPC side, over a real server and client
on loopback, on SQLite and PostgreSQL where the store takes part.

Findings: 3 (deep JSON -> INVALID_ARGUMENT, not INTERNAL), 7 (a cap on Tasks per request; big
requests parsed off the event loop, so ``/livez`` on the same loop keeps answering). Findings 4
and 5 (JWT replay, lifetime and scopes; no existence oracle) are in ``test_security.py``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import uvicorn

from tests.service.conftest import (
    bundle_bytes,
    first_argument,
    outcome_of,
    pb,
    reject_task,
    serving,
)

CODE = grpc.StatusCode
DEEP = b"[" * 100_000 + b"]" * 100_000


async def _refused(aw: Any, code: grpc.StatusCode) -> dict[str, Any]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await aw
    assert err.value.code() == code, err.value.details()
    return outcome_of(err.value)


async def _plan(h: Any) -> tuple[str, str, str]:
    r = await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=bundle_bytes()))
    doc = json.loads(
        (
            await h.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
        ).deliberation_json
    )
    return r.plan_id, doc["patient_ref"], first_argument(doc)


def _tasks(plan_id: str, patient: str, argument: str, n: int) -> bytes:
    entries = [
        {"resource": reject_task(plan_id, 1, argument, tid=f"t-{i}", patient=patient)}
        for i in range(n)
    ]
    return json.dumps({"resourceType": "Bundle", "type": "transaction", "entry": entries}).encode()


@pytest.mark.parametrize(
    "body",
    [
        DEEP,
        b'{"resourceType": "Bundle", "entry": ' + b"[" * 80 + b"]" * 80 + b"}",
        b'{"resourceType": "Task", "id": "\xff"}',
        b"[]",
    ],
)
async def test_unusable_json_is_invalid_argument_never_internal(
    tmp_path: Path, store_dsn: str, body: bytes
) -> None:
    async with serving(tmp_path, dsn=store_dsn) as h:
        plan_id, _patient, _arg = await _plan(h)
        contest = pb.ContestRequest(plan_id=plan_id, version=1, tasks_json=body)
        oo = await _refused(h.stub.Contest(contest), CODE.INVALID_ARGUMENT)
        assert oo["issue"][0]["code"] == "structure"
        oo = await _refused(
            h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=body)), CODE.INVALID_ARGUMENT
        )
        assert oo["issue"][0]["code"] == "structure"
        # Nothing was applied: the plan is still at version 1.
        versions = await h.stub.ListPlanVersions(pb.ListPlanVersionsRequest(plan_id=plan_id))
        assert [v.version for v in versions.versions] == [1]


async def test_tasks_per_request_are_capped(tmp_path: Path, store_dsn: str) -> None:
    async with serving(tmp_path, dsn=store_dsn, max_tasks_per_request=5) as h:
        plan_id, patient, arg = await _plan(h)
        too_many = pb.ContestRequest(
            plan_id=plan_id, version=1, tasks_json=_tasks(plan_id, patient, arg, 6)
        )
        oo = await _refused(h.stub.Contest(too_many), CODE.RESOURCE_EXHAUSTED)
        diagnostics = oo["issue"][0]["diagnostics"]
        assert "CANOE_MAX_TASKS_PER_REQUEST" in diagnostics
        assert "holds 6 entries" in diagnostics and "at most 5" in diagnostics
        assert oo["issue"][0]["expression"] == ["Bundle.entry"]
        one = pb.ContestRequest(
            plan_id=plan_id, version=1, tasks_json=_tasks(plan_id, patient, arg, 1)
        )
        assert (await h.stub.Contest(one)).version == 2


def test_the_default_cap_is_200() -> None:
    from service.settings import load_settings

    assert load_settings({}).limits.max_tasks_per_request == 200


async def test_livez_answers_while_a_huge_contest_is_parsed(tmp_path: Path) -> None:
    """The HTTP side shares the gRPC server's event loop (as under ``canoe serve``). While a
    Contest of 3,000 Tasks is parsed and validated, ``/livez`` keeps answering: at least one
    answer arrives before the Contest's. (How fast is a benchmark's business:
    tests/benchmarks/livez_under_load.py.)"""
    from service.cds_hooks import create_app

    async with serving(tmp_path, max_tasks_per_request=5000) as h:
        plan_id, patient, arg = await _plan(h)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        http = uvicorn.Server(
            uvicorn.Config(
                create_app(h.app, h.settings), log_config=None, access_log=False, lifespan="on"
            )
        )
        serving_http = asyncio.ensure_future(http.serve(sockets=[sock]))
        try:
            while not http.started:
                await asyncio.sleep(0.01)
            body = _tasks(plan_id, patient, arg, 3000)
            started = time.perf_counter()
            contest = asyncio.ensure_future(
                h.stub.Contest(pb.ContestRequest(plan_id=plan_id, version=1, tasks_json=body))
            )
            latencies: list[float] = []
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                while not contest.done():
                    t0 = time.perf_counter()
                    r = await client.get("/livez", timeout=60)
                    assert r.status_code == 200
                    latencies.append(time.perf_counter() - t0)
                    await asyncio.sleep(0.01)
            took = time.perf_counter() - started
            try:
                await contest
            except grpc.aio.AioRpcError as err:  # one argument rejected 3,000 times
                assert err.code() != CODE.INTERNAL
            # Blocked, the loop would answer one probe after the whole parse (latency ~ took);
            # off the loop, many probes are answered while it runs, each in a fraction of it.
            assert len(latencies) >= 3, (latencies, took)
            assert max(latencies) < took / 2, (max(latencies), took)
        finally:
            http.should_exit = True
            await serving_http
            sock.close()
