"""Emergency patterns in the results of a recent contact: each pattern with a record that meets
it and neighbours that do not (a normal bicarbonate, no fever, a contact too long ago), the
source's own operators at the edges, and the timing of a presenting problem whose contact's
results are critical. Synthetic records only."""

from __future__ import annotations

from typing import Any

import pytest

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from inference.knowledge.claims import ResultsOfContact, check
from inference.knowledge.presenting import PRESENTING, PRESENTING_TODAY
from service.record.profile import PatientProfile
from tests.inference.reports_orders_bundles import LOINC, PATIENT, condition, profile

DAY = "2026-11-28"  # two days before the plan day (30 November 2026)


def visit(vid: str = "ed", day: str = DAY, reason: str = "Vomiting") -> dict[str, Any]:
    return {
        "resourceType": "Encounter",
        "id": vid,
        "status": "finished",
        "class": {"code": "EMER"},
        "subject": PATIENT,
        "period": {"start": f"{day}T09:00:00Z", "end": f"{day}T15:00:00Z"},
        "reasonCode": [{"text": reason}],
    }


def obs(oid: str, loinc: str, value: float, unit: str, name: str, day: str = DAY) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": oid,
        "status": "final",
        "code": {"coding": [{"system": LOINC, "code": loinc}], "text": name},
        "subject": PATIENT,
        "effectiveDateTime": f"{day}T10:00:00Z",
        "valueQuantity": {"value": value, "unit": unit},
    }


def glucose(v: float = 25.1, unit: str = "mmol/L") -> dict[str, Any]:
    return obs("glu", "2345-7", v, unit, "Glucose")


def ketones(v: float = 4.2) -> dict[str, Any]:
    return obs("bhb", "104816-4", v, "mmol/L", "Beta-hydroxybutyrate")


def bicarbonate(v: float = 11) -> dict[str, Any]:
    return obs("hco3", "1963-8", v, "mmol/L", "Bicarbonate")


def neutrophils(v: float = 0.3) -> dict[str, Any]:
    return obs("neut", "751-8", v, "10*9/L", "Neutrophils")


def temperature(v: float = 38.6) -> dict[str, Any]:
    return obs("temp", "8310-5", v, "Cel", "Body temperature")


def emergency_lines(*resources: dict[str, Any]) -> list[Proposal]:
    p = profile(visit(), *resources)
    return [x for x in analyse(p).proposals if x.id.startswith("opt-emergency-pattern-")]


def test_results_meeting_the_ketoacidosis_thresholds_make_a_line_for_today() -> None:
    (line,) = emergency_lines(glucose(), ketones(), bicarbonate())
    assert line.title == (
        "Assess today for diabetic ketoacidosis: Glucose 25.1 mmol/L, Beta-hydroxybutyrate "
        "4.2 mmol/L, Bicarbonate 11 mmol/L (contact of 28 November 2026)"
    )
    assert line.criteria == ("net-emergency-pattern",)
    assert set(line.refs) >= {"Observation/glu", "Observation/bhb", "Observation/hco3"}
    assert "meet the thresholds" in line.description and "has " not in line.description


@pytest.mark.parametrize(
    "resources",
    [
        (glucose(), ketones(), bicarbonate(24)),  # a normal bicarbonate and no pH
        (glucose(), ketones(), bicarbonate(18)),  # the source's operator: below 18
        (glucose(), ketones(2.9), bicarbonate()),  # ketones below 3.0
        (glucose(8.0), ketones(), bicarbonate()),  # glucose below 11.1, no diabetes on record
        (glucose(), bicarbonate()),  # no ketone result
    ],
)
def test_results_short_of_any_ketoacidosis_group_make_no_line(
    resources: tuple[dict[str, Any], ...],
) -> None:
    assert emergency_lines(*resources) == []


def test_ketones_at_the_threshold_meet_it_and_glucose_is_read_in_other_units() -> None:
    (line,) = emergency_lines(glucose(450, "mg/dL"), ketones(3.0), bicarbonate(17))
    assert "Glucose 450 mg/dL" in line.title


def test_a_ketone_result_sent_without_a_loinc_code_is_read_by_its_name() -> None:
    uncoded = obs("bhb", "104816-4", 4.0, "mmol/L", "Capillary ketones")
    del uncoded["code"]["coding"]
    (line,) = emergency_lines(glucose(), uncoded, bicarbonate())
    assert "Capillary ketones 4 mmol/L" in line.title
    other = obs("lac", "104816-4", 4.0, "mmol/L", "Lactate")
    del other["code"]["coding"]
    assert emergency_lines(glucose(), other, bicarbonate()) == []


def test_known_diabetes_stands_for_the_glucose_group_and_is_named_as_recorded() -> None:
    t1 = condition("t1", "Type 1 diabetes mellitus", "46635009", "2001-01-01")
    (line,) = emergency_lines(glucose(9.0), ketones(), bicarbonate(), t1)
    assert '"Type 1 diabetes mellitus" on record' in line.title
    assert "Condition/t1" in line.refs


def test_fever_with_neutropenia_makes_a_line_and_either_alone_does_not() -> None:
    (line,) = emergency_lines(neutrophils(), temperature())
    assert line.title.startswith("Assess today for neutropenic sepsis: Neutrophils 0.3")
    assert "anticancer treatment" in line.description
    assert emergency_lines(neutrophils(), temperature(37.2)) == []  # no fever
    assert emergency_lines(neutrophils(), temperature(38.0)) == []  # higher than 38 only
    assert emergency_lines(neutrophils(1.2), temperature()) == []


def test_a_contact_older_than_the_acute_window_makes_no_line() -> None:
    old = "2026-11-20"
    p = profile(
        visit(day=old),
        obs("neut", "751-8", 0.3, "10*9/L", "Neutrophils", day=old),
        obs("temp", "8310-5", 38.6, "Cel", "Body temperature", day=old),
    )
    assert [x for x in analyse(p).proposals if x.id.startswith("opt-emergency")] == []


def test_the_results_claim_holds_only_for_results_of_that_contact() -> None:
    p = profile(visit(), neutrophils(), obs("old", "8310-5", 38.6, "Cel", "T", day="2026-11-25"))
    assert check(ResultsOfContact(("Observation/neut",), "Encounter/ed"), p, p.plan_day) is None
    assert check(ResultsOfContact(("Observation/old",), "Encounter/ed"), p, p.plan_day)


# -- the timing of a presenting problem ---------------------------------------------------------


def _presenting(p: PatientProfile) -> Proposal:
    (line,) = [x for x in analyse(p).proposals if x.id.startswith("opt-presenting-problem-")]
    return line


def test_a_recent_contact_with_a_critical_result_is_presented_for_today() -> None:
    potassium = obs("k", "2823-3", 6.8, "mmol/L", "Potassium")
    line = _presenting(profile(visit(reason="Palpitations"), potassium))
    assert line.criteria == (PRESENTING_TODAY,)
    assert "Observation/k" in line.refs
    assert "Potassium 6.8 mmol/L" in line.description


def test_a_recent_contact_with_normal_results_keeps_four_weeks() -> None:
    potassium = obs("k", "2823-3", 4.5, "mmol/L", "Potassium")
    line = _presenting(profile(visit(reason="Palpitations"), potassium))
    assert line.criteria == (PRESENTING,)
    assert "Observation/k" not in line.refs


def stools(v: float = 9, name: str = "Bloody stools per day") -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": "stools",
        "status": "final",
        "code": {"text": name},
        "subject": PATIENT,
        "effectiveDateTime": f"{DAY}T10:00:00Z",
        "valueQuantity": {"value": v, "unit": "/d"},
    }


def medicine(mid: str, text: str) -> dict[str, Any]:
    return {
        "resourceType": "MedicationRequest",
        "id": mid,
        "status": "active",
        "intent": "order",
        "subject": PATIENT,
        "authoredOn": "2026-11-20",
        "medicationCodeableConcept": {"text": text},
    }


def test_truelove_witts_severe_colitis_names_the_antimotility_drugs_to_stop() -> None:
    (line,) = emergency_lines(
        stools(),
        obs("hr", "8867-4", 108, "/min", "Heart rate"),
        medicine("lop", "Loperamide 2 mg capsules"),
        medicine("cod", "Codeine phosphate 30 mg tablets"),
        medicine("ome", "Omeprazole 20 mg capsules"),
    )
    assert line.title.startswith("Assess today for acute severe ulcerative colitis: ")
    assert "stop loperamide, codeine" in line.title or "stop codeine, loperamide" in line.title
    assert "omeprazole" not in line.title
    assert {"MedicationRequest/lop", "MedicationRequest/cod"} <= set(line.refs)


def test_bloody_stools_without_systemic_upset_or_a_plain_stool_count_make_no_line() -> None:
    assert not emergency_lines(stools(), obs("hr", "8867-4", 88, "/min", "Heart rate"))
    assert not emergency_lines(
        stools(name="Stool frequency"), obs("hr", "8867-4", 108, "/min", "Heart rate")
    )
    # the source's operator: a pulse of exactly 90 is not above 90
    assert not emergency_lines(stools(), obs("hr", "8867-4", 90, "/min", "Heart rate"))
