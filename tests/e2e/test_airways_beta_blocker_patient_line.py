"""A non-selective beta-blocker in asthma, which the labels contraindicate, is an urgent switch:
the clinician line is for today and the patient is told to call the care team today, never to
keep taking it. In COPD alone the same medicine is a switch at the next steps of care, and the
patient keeps taking it until told. New synthetic records through the real embedded planner."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from service.core.model import Option
from service.pipeline import PlanResult
from service.record.profile import Code, Condition, Medication, PatientProfile
from service.record.vocabulary import RXNORM, SNOMED
from tests.e2e.test_plan_end_to_end import CREATED, _planner

ASTHMA = Code(SNOMED, "195967001", "Asthma")
COPD = Code(SNOMED, "13645005", "Chronic obstructive lung disease")


def _plan(condition: Code, medicine: str) -> PlanResult:
    problem = Condition("Condition/a", condition.display, (condition,), "active", "confirmed",
                        date(2011, 4, 1))  # fmt: skip
    med = Medication("MedicationRequest/b", medicine, (Code(RXNORM, "", medicine),), "active",
                     "order", date(2026, 8, 3))  # fmt: skip
    p = PatientProfile("Patient/p", "female", date(1979, 6, 2), date(2026, 11, 30),
                       problems=(problem,), medications=(med,))  # fmt: skip
    return asyncio.run(_planner().plan(p, plan_id="plan-airways", created=CREATED))


def _switch(r: PlanResult) -> tuple[Option, str]:
    o = next(o for o in r.deliberation.options if o.id.endswith("-airways"))
    said = " ".join(
        t
        for w in r.deliberation.meta.patient_wordings
        if w.option_id == o.id
        for t in (w.text, w.watch)
    )
    return o, said.lower()


@pytest.mark.parametrize(
    "medicine", ["propranolol 40 MG Oral Tablet", "timolol 0.25% ophthalmic solution"]
)
def test_in_asthma_it_is_an_urgent_switch_and_the_patient_calls_today(medicine: str) -> None:
    o, said = _switch(_plan(ASTHMA, medicine))
    assert (o.action, o.urgency_class, o.timeframe) == ("switch", "urgent", "now")
    assert "keep taking" not in said and "today" in said


def test_in_copd_alone_it_stays_a_switch_the_patient_keeps_taking_until_told() -> None:
    o, said = _switch(_plan(COPD, "propranolol 40 MG Oral Tablet"))
    assert o.action == "switch" and o.urgency_class != "urgent" and o.timeframe != "now"
    assert "keep taking" in said
