"""Panels through a real Triton (pytriton's tritonserver, CPU, loopback) hold the size band for
the assessed complexity and the required roles (issue 41, item 5): the schema sent for guided
decoding carries both, the panel that comes back satisfies them for every complexity the
fixtures reach, and a model that leaves the GP out is refused (one repair, then StepFailed)."""

from __future__ import annotations

from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference.embedded import required_roles
from inference.evidence import EvidenceBase
from inference.panel_sizes import DEFAULT_PANEL_SIZES, band
from inference.protocol import AssemblePanel, Assess, CallContext
from inference.triton import TritonExperts, TritonSettings
from service.errors import StepFailed
from tests.conftest import REALISTIC_BUNDLES
from tests.support.triton_models import ServerHandle

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def settings(server: ServerHandle, **kw: Any) -> TritonSettings:
    base: dict[str, Any] = {
        "url": server.url,
        "agent_model": "canoe-agent",
        "adjudicator_model": "canoe-adjudicator",
        "backoff_s": 0.05,
    }
    return TritonSettings(**(base | kw))


async def test_triton_panels_lie_in_their_band_with_every_required_role(
    triton_server: ServerHandle,
) -> None:
    tri = TritonExperts(settings(triton_server))
    seen: dict[str, list[int]] = {}
    try:
        for bundle in REALISTIC_BUNDLES:
            profile = ingest(bundle.read_bytes())
            ctx = CallContext()
            a = await tri.run(Assess(profile, EvidenceBase.load().retrieve(profile)), ctx)
            roles = [m.role for m in await tri.run(AssemblePanel(profile, a), ctx)]
            required = required_roles(profile)
            lo, hi = band(DEFAULT_PANEL_SIZES, a.complexity, required)
            assert lo <= len(roles) <= hi, bundle.name
            assert roles[: len(required)] == list(required), bundle.name
            seen.setdefault(a.complexity, []).append(len(roles))
    finally:
        await tri.aclose()
    assert min(n for sizes in seen.values() for n in sizes) >= 3  # CAMP's k = 3
    assert len(seen) >= 2  # more than one complexity level was exercised


async def test_triton_panel_without_a_required_role_is_refused(
    triton_server: ServerHandle,
) -> None:
    tri = TritonExperts(settings(triton_server, models=(("panel", "canoe-panel-without-gp"),)))
    profile = ingest(REALISTIC_BUNDLES[0].read_bytes())
    try:
        ctx = CallContext()
        a = await tri.run(Assess(profile, EvidenceBase.load().retrieve(profile)), ctx)
        with pytest.raises(StepFailed):
            await tri.run(AssemblePanel(profile, a), ctx)
    finally:
        await tri.aclose()
