"""Immunization and Encounter facts: read into the profile when valid, refused naming the entry
and field when not, and a fixture's emergency visit keeps its class, type and reason."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from service.record.vocabulary import CVX, SNOMED
from tests.conftest import FHIR_FIXTURES

from .test_ingest_errors import bundle, condition, issues_of, patient


def immunization(
    iid: str = "i1",
    patient_ref: str = "Patient/p1",
    code: str = "140",
    system: str = CVX,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "resourceType": "Immunization",
        "id": iid,
        "status": "completed",
        "vaccineCode": {
            "coding": [{"system": system, "code": code, "display": "Influenza, seasonal"}],
            "text": "Influenza, seasonal",
        },
        "patient": {"reference": patient_ref},
        "occurrenceDateTime": "2021-10-01T09:00:00+00:00",
        **extra,
    }


def encounter(eid: str = "e1", **extra: Any) -> dict[str, Any]:
    return {
        "resourceType": "Encounter",
        "id": eid,
        "status": "finished",
        "class": {
            "system": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
            "code": "EMER",
        },
        "type": [{"coding": [{"system": SNOMED, "code": "50849002"}], "text": "Emergency visit"}],
        "subject": {"reference": "Patient/p1"},
        "period": {"start": "2021-09-01T10:00:00+00:00", "end": "2021-09-03T10:00:00+00:00"},
        "reasonCode": [
            {"coding": [{"system": SNOMED, "code": "55680006", "display": "Drug overdose"}]}
        ],
        "reasonReference": [{"reference": "Condition/c1"}],
        "hospitalization": {"dischargeDisposition": {"coding": [{"code": "home"}]}},
        **extra,
    }


def test_an_immunization_becomes_a_dated_cvx_fact() -> None:
    p = ingest(json.dumps(bundle(patient(), condition(), immunization())))
    (imm,) = p.immunizations
    assert (imm.ref, imm.status, imm.occurred, imm.cvx()) == (
        "Immunization/i1",
        "completed",
        date(2021, 10, 1),
        ("140",),
    )
    assert imm.given and imm.recognised
    assert p.as_of == date(2021, 10, 1)  # the vaccination is the latest dated fact
    assert "Immunization/i1" in p.source_refs


def test_a_cvx_oid_is_read_as_cvx_and_not_done_is_not_given() -> None:
    imm = immunization(system="urn:oid:2.16.840.1.113883.12.292", status="not-done")
    (got,) = ingest(json.dumps(bundle(patient(), condition(), imm))).immunizations
    assert got.cvx() == ("140",) and not got.given


def test_an_unusable_vaccine_code_is_kept_and_explained() -> None:
    p = ingest(json.dumps(bundle(patient(), condition(), immunization(code="FLU-2021"))))
    (imm,) = p.immunizations
    assert not imm.recognised and imm.cvx() == ("FLU-2021",)
    reasons = {(u.ref, u.field) for u in p.unused}
    assert ("Immunization/i1", "Immunization.vaccineCode.coding[0]") in reasons
    assert ("Immunization/i1", "Immunization.vaccineCode") in reasons


def test_a_date_given_only_as_text_is_reported() -> None:
    imm = immunization()
    del imm["occurrenceDateTime"]
    imm["occurrenceString"] = "last autumn"
    p = ingest(json.dumps(bundle(patient(), condition(), imm)))
    assert p.immunizations[0].occurred is None
    assert any(u.field == "Immunization.occurrence[x]" for u in p.unused)


def test_an_entered_in_error_immunization_is_dropped() -> None:
    p = ingest(json.dumps(bundle(patient(), condition(), immunization(status="entered-in-error"))))
    assert p.immunizations == ()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        # the FHIR code pattern forbids leading whitespace (value sets are not enforced)
        (lambda r: r.update(status=" completed"), ("Bundle.entry[2].resource.status")),
        (lambda r: r.update(vaccineCode="140"), ("Bundle.entry[2].resource.vaccineCode")),
        (lambda r: r.pop("vaccineCode"), ("Bundle.entry[2].resource.vaccineCode")),
        (lambda r: r.pop("patient"), ("Bundle.entry[2].resource.patient")),
        (
            lambda r: r.update(occurrenceDateTime="1st of May"),
            ("Bundle.entry[2].resource.occurrenceDateTime"),
        ),
    ],
    ids=["bad-status", "code-not-a-concept", "no-vaccine-code", "no-patient", "bad-date"],
)
def test_a_bad_immunization_is_refused_with_entry_and_field(mutate: Any, expected: str) -> None:
    imm = immunization()
    mutate(imm)
    issues = issues_of(json.dumps(bundle(patient(), condition(), imm)))
    assert any(where.startswith(expected) for _, where in issues), issues


def test_an_immunization_of_a_patient_not_in_the_bundle_is_refused() -> None:
    imm = immunization(patient_ref="Patient/elsewhere")
    issues = issues_of(json.dumps(bundle(patient(), condition(), imm)))
    assert ("not-found", "Bundle.entry[2].resource.patient") in issues


def test_an_encounter_keeps_class_type_reason_and_discharge() -> None:
    p = ingest(json.dumps(bundle(patient(), condition(), encounter())))
    (e,) = p.encounters
    assert (e.kind, e.class_code, e.start, e.end) == (
        "Emergency visit",
        "EMER",
        date(2021, 9, 1),
        date(2021, 9, 3),
    )
    assert [c.code for c in e.types] == ["50849002"]
    assert [c.code for c in e.reasons] == ["55680006"] and e.reason_text == "Drug overdose"
    assert e.reason_refs == ("Condition/c1",)
    assert e.discharge == "home" and e.emergency_or_inpatient


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda r: r.update(status=" finished"), "Bundle.entry[2].resource.status"),
        (lambda r: r.pop("class"), "Bundle.entry[2].resource.class"),
        (lambda r: r.update(period={"start": "yesterday"}), "Bundle.entry[2].resource.period"),
    ],
    ids=["bad-status", "no-class", "bad-period"],
)
def test_a_bad_encounter_is_refused_with_entry_and_field(mutate: Any, expected: str) -> None:
    enc = encounter()
    mutate(enc)
    issues = issues_of(json.dumps(bundle(patient(), condition(), enc)))
    assert any(where.startswith(expected) for _, where in issues), issues


def test_a_fixture_emergency_visit_is_read_with_its_class_and_type() -> None:
    raw = (FHIR_FIXTURES / "christin_stiedemann_e6d67197.json").read_bytes()
    p = ingest(raw)
    emer = [e for e in p.encounters if e.class_code == "EMER"]
    assert emer and emer[0].emergency_or_inpatient
    assert any(c.code == "183478001" for e in emer for c in e.types)
    assert all(e.class_code for e in p.encounters)
