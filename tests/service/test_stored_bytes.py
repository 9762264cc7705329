"""The bytes a transport returns are the bytes the store keeps: for every realistic fixture,
GeneratePlan's Bundle and GetDeliberation's document over real gRPC equal the stored text."""

from __future__ import annotations

from pathlib import Path

from canoe_client.v1 import careplan_pb2 as pb
from tests.conftest import REALISTIC_BUNDLES
from tests.service.conftest import Harness, serving


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
