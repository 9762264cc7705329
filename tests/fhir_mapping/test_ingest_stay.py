"""The hospital stay as ingest reads it: an Encounter's diagnoses and discharge disposition, and a
MedicationRequest's list category, status reason, course, course dates, dispensed supply, the
request a dose change replaces and the Encounter it was written in. Bad shapes are listed as
unusable facts, never guessed."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from fhir_mapping.ingest import ingest
from service.record.profile import PatientProfile

from .test_ingest_errors import bundle, condition, medreq, patient
from .test_ingest_immunization_encounter import encounter

CATEGORY = "http://terminology.hl7.org/CodeSystem/medicationrequest-category"
COURSE = "http://terminology.hl7.org/CodeSystem/medicationrequest-course-of-therapy"


def _stay(**extra: Any) -> dict[str, Any]:
    return encounter(
        "e1",
        **{
            "class": {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "IMP"},
            "period": {"start": "2021-09-01", "end": "2021-09-05"},
            "diagnosis": [
                {"condition": {"reference": "Condition/c2"}, "rank": 2},
                {"condition": {"reference": "Condition/c1"}, "rank": 1},
            ],
            "hospitalization": {
                "dischargeDisposition": {"coding": [{"code": "home", "display": "Home"}]}
            },
            **extra,
        },
    )


def _course(**extra: Any) -> dict[str, Any]:
    dosage = {
        "timing": {"repeat": {"frequency": 2, "period": 1, "periodUnit": "d"}},
        "doseAndRate": [{"doseQuantity": {"value": 1, "unit": "capsule", "code": "{capsule}"}}],
    }
    fields: dict[str, Any] = {
        "authoredOn": "2021-09-04",
        "category": [{"coding": [{"system": CATEGORY, "code": "discharge"}]}],
        "courseOfTherapyType": {"coding": [{"system": COURSE, "code": "acute"}]},
        "dosageInstruction": [dosage],
        "encounter": {"reference": "Encounter/e1"},
    }
    return medreq(mid="m2", **{**fields, **extra})


def _profile(*resources: dict[str, Any]) -> PatientProfile:
    return ingest(json.dumps(bundle(patient(), *resources)))


def _unused(p: PatientProfile) -> list[tuple[str, str]]:
    return [(u.field, u.reason) for u in p.unused]


def test_an_encounter_keeps_its_diagnoses_by_rank_and_its_disposition() -> None:
    p = _profile(condition(), condition(cid="c2"), _stay())
    (e,) = p.encounters
    assert e.diagnoses == ("Condition/c1", "Condition/c2")
    assert (e.discharge, e.discharge_text) == ("home", "Home")


def test_a_diagnosis_that_names_nothing_in_the_bundle_is_listed_not_kept() -> None:
    p = _profile(condition(), _stay())
    assert p.encounters[0].diagnoses == ("Condition/c1",)
    assert (
        "Encounter.diagnosis[0].condition",
        "reference does not resolve in the bundle",
    ) in _unused(p)


def test_a_request_keeps_its_list_reason_course_and_stay() -> None:
    p = _profile(
        condition(),
        _stay(),
        medreq(status="stopped", statusReason={"text": "acute kidney injury"}),
        _course(),
    )
    stopped, course = p.medications
    assert stopped.status_reason == "acute kidney injury"
    assert course.categories == ("discharge",) and course.course == "acute"
    assert course.encounter == "Encounter/e1"


def test_bounds_period_gives_the_first_and_last_day_even_after_the_record_date() -> None:
    bounded = _course()
    bounded["dosageInstruction"][0]["timing"]["repeat"]["boundsPeriod"] = {
        "start": "2021-09-04",
        "end": "2030-01-31",
    }
    (m,) = _profile(bounded).medications
    assert (m.starts, m.ends) == (date(2021, 9, 4), date(2030, 1, 31))


def test_a_course_that_ends_before_it_starts_has_no_end() -> None:
    bad = _course()
    bad["dosageInstruction"][0]["timing"]["repeat"]["boundsPeriod"] = {
        "start": "2021-09-04",
        "end": "2021-09-01",
    }
    p = _profile(bad)
    assert p.medications[0].ends is None
    assert (
        "MedicationRequest.dosageInstruction[0].timing.repeat.boundsPeriod.end",
        "the course ends before it starts",
    ) in _unused(p)


def test_a_short_course_ends_when_its_supply_runs_out() -> None:
    supplied = _course(
        dispenseRequest={"expectedSupplyDuration": {"value": 5, "unit": "days", "code": "d"}}
    )
    (m,) = _profile(supplied).medications
    assert m.ends == date(2021, 9, 8)  # the 4th and the four days after it
    by_quantity = _course(dispenseRequest={"quantity": {"value": 14, "code": "{capsule}"}})
    assert _profile(by_quantity).medications[0].ends == date(2021, 9, 10)  # 14 / 2 a day


def test_a_continuous_medicine_s_dispense_is_not_an_end() -> None:
    refill = _course(
        courseOfTherapyType={"coding": [{"system": COURSE, "code": "continuous"}]},
        dispenseRequest={"expectedSupplyDuration": {"value": 30, "unit": "days", "code": "d"}},
    )
    assert _profile(refill).medications[0].ends is None


def test_a_pack_in_another_unit_or_a_supply_that_is_not_a_time_gives_no_end() -> None:
    pack = _course(dispenseRequest={"quantity": {"value": 1, "code": "{pack}"}})
    assert _profile(pack).medications[0].ends is None
    weird = _course(dispenseRequest={"expectedSupplyDuration": {"value": 5, "code": "mg"}})
    p = _profile(weird)
    assert p.medications[0].ends is None
    assert any(f.endswith("expectedSupplyDuration") for f, _ in _unused(p))


def test_a_prior_prescription_links_a_dose_change_or_is_listed() -> None:
    old = medreq(mid="m1", status="stopped")
    new = medreq(mid="m2", priorPrescription={"reference": "MedicationRequest/m1"})
    p = _profile(old, new)
    assert p.medications[1].prior == "MedicationRequest/m1"
    dangling = medreq(mid="m3", priorPrescription={"reference": "MedicationRequest/gone"})
    q = _profile(dangling)
    assert q.medications[0].prior == ""
    assert (
        "MedicationRequest.priorPrescription",
        "reference does not resolve in the bundle",
    ) in _unused(q)
