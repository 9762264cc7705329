"""A MedicationRequest whose dose is stated only in ``dosageInstruction.text`` is read with
that dose where the whole text parses; the structured dose wins, and a text that disagrees with
it adds nothing. The criteria then see the dose: a weekly methotrexate is weekly, a citalopram
ceiling is checked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA
from service.record.profile import Medication, PatientProfile
from service.record.vocabulary import RXNORM

from .test_ingest_errors import bundle, medreq, patient


def _order(name: str, **dosage: Any) -> dict[str, Any]:
    concept = {"coding": [{"system": RXNORM, "display": name}], "text": name}
    return medreq(medicationCodeableConcept=concept, dosageInstruction=[dosage])


def _profile(*orders: dict[str, Any]) -> PatientProfile:
    return ingest(json.dumps(bundle(patient(), *orders)))


def _med(**dosage: Any) -> Medication:
    (m,) = _profile(_order("citalopram 20 mg tablet", **dosage)).medications
    return m


def test_a_dose_only_in_text_is_read() -> None:
    m = _med(text="2 tablets of 500 mg twice daily")
    assert (m.dose_value, m.dose_unit, m.times_per_day) == (1000.0, "mg", 2.0)


@pytest.mark.parametrize("text", ["1-2 tablets twice daily", "as directed", "as needed"])
def test_a_text_that_leaves_the_dose_open_stays_unstated(text: str) -> None:
    m = _med(text=text)
    assert (m.dose_value, m.times_per_day) == (None, None)


def test_a_text_dose_taken_as_needed_is_not_read() -> None:
    m = _med(text="500 mg twice daily", asNeededBoolean=True)
    assert (m.dose_value, m.times_per_day) == (None, None)


_STRUCTURED = {
    "doseAndRate": [{"doseQuantity": {"value": 20, "unit": "mg"}}],
}


def test_a_text_that_agrees_with_the_structured_dose_adds_its_frequency() -> None:
    m = _med(text="20 mg once daily", **_STRUCTURED)
    assert (m.dose_value, m.dose_unit, m.times_per_day) == (20.0, "mg", 1.0)


def test_a_text_that_disagrees_with_the_structured_dose_adds_nothing() -> None:
    m = _med(text="40 mg twice daily", **_STRUCTURED)
    assert (m.dose_value, m.dose_unit, m.times_per_day) == (20.0, "mg", None)
    assert "40" not in m.dose


def test_a_weekly_methotrexate_in_text_is_read_as_weekly() -> None:
    p = _profile(_order("methotrexate 2.5 mg tablet", text="15 mg once weekly"))
    (fact,) = Facts(p).meds
    assert fact.unit_mg == 15.0
    assert fact.daily_mg == pytest.approx(15 / 7)


def _ceiling(text: str) -> bool:
    p = _profile(_order("citalopram 20 mg tablet", text=text))
    fired = {x.criterion.id: x for x in evaluate(CRITERIA, Facts(p))}
    return (
        "age-citalopram-dose-ceiling" in fired
        and not fired["age-citalopram-dose-ceiling"].binding.uncertain
    )


def test_the_dose_ceiling_sees_a_dose_stated_in_text() -> None:
    assert _ceiling("20 mg twice daily")  # 40 mg a day over 60
    assert not _ceiling("20 mg once daily")  # at the ceiling, not above it
