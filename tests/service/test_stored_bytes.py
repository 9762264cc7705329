"""The bytes a transport returns are the bytes the store keeps: for every realistic fixture,
GeneratePlan's Bundle and GetDeliberation's document over real gRPC equal the stored text, and
``canoe plan --format fhir`` prints the same bytes for the same plan."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from canoe_client.v1 import careplan_pb2 as pb
from service.app import CarePlanService
from service.cli import main
from service.pipeline import new_plan_id
from tests.conftest import REALISTIC_BUNDLES
from tests.service.conftest import Harness, serving

CREATED = "2026-11-30T09:00:00.000+00:00"


async def _stored(h: Harness, plan_id: str) -> tuple[str, str]:
    """The version's document and Bundle as the store holds them (the row's own text)."""
    async with h.app.store.driver.transaction() as tx:
        rows = await tx.fetchall(
            "SELECT deliberation, bundle FROM plan_versions WHERE plan_id = ? AND version = 1",
            (plan_id,),
        )
    return rows[0][0], rows[0][1]


async def test_grpc_returns_the_stored_bytes_for_every_fixture(tmp_path: Path) -> None:
    assert REALISTIC_BUNDLES
    async with serving(tmp_path) as h:
        for path in REALISTIC_BUNDLES:
            r = await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=path.read_bytes()))
            document, bundle = await _stored(h, r.plan_id)
            assert r.careplan_bundle_json == bundle.encode("utf-8"), path.name
            got = await h.stub.GetDeliberation(pb.GetDeliberationRequest(plan_id=r.plan_id))
            assert got.deliberation_json == document.encode("utf-8"), path.name


async def test_the_cli_prints_the_bytes_the_service_stores_and_returns(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = REALISTIC_BUNDLES[0]
    raw = path.read_bytes()
    document_file = tmp_path / "deliberation.json"
    argv = ["plan", str(path), "--format", "fhir", "--created", CREATED, "--no-progress"]
    # The command line runs its own event loop: off this test's loop, on a thread.
    assert await asyncio.to_thread(main, [*argv, "--deliberation", str(document_file)]) == 0
    printed = capsysbinary.readouterr().out
    async with serving(tmp_path) as h:
        # The same plan, served: named as the command line names it (from the Bundle's bytes)
        # and stamped with the same request time.
        app: CarePlanService = h.app
        app.clock, app.plan_ids = (lambda: CREATED), (lambda: new_plan_id(raw))
        r = await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=raw))
        document, bundle = await _stored(h, r.plan_id)
    assert r.plan_id == new_plan_id(raw)
    assert printed == r.careplan_bundle_json + b"\n" == bundle.encode("utf-8") + b"\n"
    assert document_file.read_bytes() == document.encode("utf-8") + b"\n"
    assert json.loads(printed)["resourceType"] == "Bundle"


async def test_each_version_stores_the_clinician_summary_its_bundle_was_written_from(
    tmp_path: Path,
) -> None:
    from service.stored_summary import summary_from_record

    async with serving(tmp_path) as h:
        outcome = await h.app.generate(REALISTIC_BUNDLES[0].read_bytes(), tenant="default")
        rec = await h.app.plan_version(tenant="default", plan_id=outcome.plan_id, version=1)
    assert outcome.clinician is not None and outcome.clinician.lines
    assert summary_from_record(rec.summary) == outcome.clinician
