"""A model's options state no safety findings and no urgency class (its answer has no place for
them); the planner gives an option what the knowledge states under the same option id, so a plan
argued by Triton still writes its DetectedIssues and ranks by urgency."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.protocol import Assess, Assessment
from service.pipeline import Planner
from tests.conftest import REALISTIC_BUNDLES


class FindingsDropped:
    """The embedded experts with every option's findings removed, as a model would answer."""

    name = "findings-dropped"

    def __init__(self) -> None:
        self.inner = EmbeddedExperts()

    async def is_ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None

    async def run(self, step: Any, ctx: Any) -> Any:
        out = await self.inner.run(step, ctx)
        if isinstance(step, Assess):
            assert isinstance(out, Assessment)
            options = tuple(
                replace(o, findings=(), urgency_class=None, treats=None) for o in out.options
            )
            return replace(out, options=options)
        return out


async def test_model_options_get_the_knowledges_findings_by_id() -> None:
    evidence = EvidenceBase.load()
    compared = 0
    for bundle in REALISTIC_BUNDLES:
        profile = ingest(bundle.read_bytes())
        plans = [
            await Planner(experts, evidence).plan(profile, plan_id="p", created="2026-11-30T09:00Z")
            for experts in (EmbeddedExperts(), FindingsDropped())
        ]
        want, got = (
            {o.id: (o.findings, o.urgency_class, o.treats) for o in p.deliberation.options}
            for p in plans
        )
        assert got == want, bundle.name
        compared += sum(1 for f in want.values() if f)
    assert compared > 0  # some fixture has a safety finding to carry


async def test_without_the_knowledge_a_models_options_keep_none() -> None:
    profile = ingest(REALISTIC_BUNDLES[0].read_bytes())
    plan = await Planner(FindingsDropped(), EvidenceBase.load(), known=None).plan(
        profile, plan_id="p", created="2026-11-30T09:00Z"
    )
    assert all(o.findings == () for o in plan.deliberation.options)
    assert all(o.urgency_class is None for o in plan.deliberation.options)
    assert all(o.treats is None for o in plan.deliberation.options)
