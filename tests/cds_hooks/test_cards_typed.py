"""The CDS cards read the typed plan where the caller has it (``card_plan``: the deliberation,
evaluation and clinician summary the writing step made), and a stored document only where that
is all there is: for the same plan version the two give the very same cards. Real plans of the
example records, embedded backend."""

from __future__ import annotations

import pytest

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from service.app import request_time
from service.cds_hooks.cards import (
    CardRecord,
    card_plan,
    order_card,
    order_findings,
    summary_card,
)
from service.core import to_document
from service.pipeline import Planner
from service.text.summary import summarise
from tests.support.plan_hashes import CREATED, ROOT

RECORDS = ("adalberto_hartmann_ba18818d", "cruz_halvorson_a8ddde95", "trey_berge_f46d1649")
URL = "https://cds.example.org/review"


def _record(kind: str, draft: str = "") -> CardRecord:
    return CardRecord(
        card_id=f"card-{kind}-{draft}",
        tenant="t",
        service_id="s",
        plan_id="p",
        version=1,
        patient_ref="Patient/p",
        user_ref="Practitioner/u",
        kind="summary" if kind == "summary" else "order",
        draft_ref=draft,
    )


@pytest.mark.parametrize("name", RECORDS)
async def test_typed_and_stored_plans_give_the_same_cards(name: str) -> None:
    path = ROOT / "examples" / "fixtures" / "fhir" / f"{name}.json"
    profile = ingest(path.read_bytes(), received=request_time(CREATED))
    planner = Planner(EmbeddedExperts(), EvidenceBase.load())
    result = await planner.plan(profile, plan_id=name[:8], created=CREATED)
    d, ev = result.deliberation, result.evaluation
    typed, document = card_plan(d, ev, summarise(d, ev)), to_document(d, ev)

    rec = _record("summary")
    card = summary_card(typed, review_url=URL, record=rec, notes=("a note",))
    assert card == summary_card(document, review_url=URL, record=rec, notes=("a note",))
    assert "cleared the" in card["detail"]

    drafts = sorted({o.medication_ref for o in d.options if o.medication_ref})
    assert drafts, f"{name}: no option is about a medicine"
    found = order_findings(typed, drafts)
    assert found, f"{name}: no order card to compare"
    assert [(f.draft_ref, f.option_id, f.severity) for f in found] == [
        (f.draft_ref, f.option_id, f.severity) for f in order_findings(document, drafts)
    ]
    for ref in drafts:
        mine = [f for f in found if f.draft_ref == ref]
        if not mine:
            continue
        rec = _record("order", ref)
        card = order_card(mine, plan=typed, draft=None, review_url=URL, record=rec)
        assert card == order_card(
            order_findings(document, [ref]), plan=document, draft=None, review_url=URL, record=rec
        )
