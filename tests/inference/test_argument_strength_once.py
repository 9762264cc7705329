"""Each strength factor counts once (issue 41, item 4): an embedded argument that cites retrieved
evidence and patient facts weighs what its strongest point's table factors give
(``inference.knowledge.strength``, the evidence grade among them), with no second bonus for a
grade-A document (before 2026-12 such an argument got +0.05 on top of the grade's own share)."""

from __future__ import annotations

from typing import Any

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.knowledge import analyse
from inference.knowledge.strength import uncited
from inference.protocol import AssemblePanel, Assess, CallContext, Consult
from tests.conftest import REALISTIC_BUNDLES


async def _grade_a_checked(bundle: Any) -> int:
    """Checks every cited argument of one bundle; returns how many cite a grade-A document."""
    profile = ingest(bundle.read_bytes())
    ex, ctx = EmbeddedExperts(), CallContext()
    evidence = EvidenceBase.load().retrieve(profile)
    grade = {d.id: d.grade for d in evidence}
    a = await ex.run(Assess(profile, evidence), ctx)
    analysis = analyse(profile)
    grade_a = 0
    for member in await ex.run(AssemblePanel(profile, a), ctx):
        c = await ex.run(Consult(profile, member, a.problems, a.options, evidence), ctx)
        for g in c.arguments:
            prop = analysis.proposal(g.option_id)
            assert prop is not None
            points = [p for p in prop.points if p.role == g.role and p.stance == g.stance]
            if not (g.evidence and points and all(p.facts for p in points)):
                continue  # the evidence and fact adjustments apply: not this test's case
            best = max(uncited(p.tau) if not p.facts else p.tau for p in points)
            assert g.tau == round(min(0.95, max(0.05, best)), 3), g.id
            grade_a += any(grade.get(e) == "A" for e in g.evidence)
    return grade_a


async def test_cited_arguments_weigh_their_strongest_point_and_no_more() -> None:
    checked = [await _grade_a_checked(b) for b in REALISTIC_BUNDLES]
    assert sum(checked) > 0  # grade-A citations were exercised
