"""Small synthetic FHIR R4 bundles for the reports, orders and presenting-problem nets: one
adult seen on 25 November 2026, planned on 30 November 2026, with whatever reports, orders,
results and problems a test adds. Written for these tests; no real patient."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fhir_mapping.ingest import ingest
from service.record.profile import PatientProfile

PLANNED = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
SEEN = "2026-11-25"
LOINC = "http://loinc.org"
SNOMED = "http://snomed.info/sct"
PATIENT = {"reference": "Patient/p"}


def bundle(*resources: dict[str, Any], seen: str | None = SEEN) -> dict[str, Any]:
    base: list[dict[str, Any]] = [
        {"resourceType": "Patient", "id": "p", "gender": "female", "birthDate": "1966-04-02"},
    ]
    if seen is not None:
        base.append(
            {
                "resourceType": "Encounter",
                "id": "visit",
                "status": "finished",
                "class": {"code": "AMB"},
                "subject": PATIENT,
                "period": {"start": f"{seen}T09:00:00Z", "end": f"{seen}T09:20:00Z"},
            }
        )
    return {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": [{"fullUrl": f"urn:uuid:{r['id']}", "resource": r} for r in (*base, *resources)],
    }


def profile(*resources: dict[str, Any], seen: str | None = SEEN) -> PatientProfile:
    return ingest(bundle(*resources, seen=seen), received=PLANNED)


def report(
    rid: str,
    conclusion: str,
    issued: str,
    *,
    status: str = "final",
    name: str = "Chest X-ray",
    code: str = "36643-5",
    based_on: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resourceType": "DiagnosticReport",
        "id": rid,
        "status": status,
        "code": {"text": name, "coding": [{"system": LOINC, "code": code}]},
        "subject": PATIENT,
        "effectiveDateTime": issued,
        "issued": f"{issued}T15:00:00Z",
        "conclusion": conclusion,
    }
    if based_on is not None:
        out["basedOn"] = [{"reference": f"ServiceRequest/{based_on}"}]
    return out


def order(
    oid: str,
    authored: str,
    *,
    name: str = "Parathyroid hormone",
    code: tuple[str, str] | None = (LOINC, "2731-8"),
    status: str = "active",
    intent: str = "order",
    due: str | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    concept: dict[str, Any] = {"text": name}
    if code is not None:
        concept["coding"] = [{"system": code[0], "code": code[1]}]
    out: dict[str, Any] = {
        "resourceType": "ServiceRequest",
        "id": oid,
        "status": status,
        "intent": intent,
        "code": concept,
        "subject": PATIENT,
        "authoredOn": authored,
    }
    if due is not None:
        out["occurrenceDateTime"] = due
    if reason is not None:
        out["reasonReference"] = [{"reference": f"DiagnosticReport/{reason}"}]
    return out


def result(
    oid: str, loinc: str, value: float, day: str, based_on: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resourceType": "Observation",
        "id": oid,
        "status": "final",
        "code": {"coding": [{"system": LOINC, "code": loinc}]},
        "subject": PATIENT,
        "effectiveDateTime": day,
        "valueQuantity": {"value": value, "unit": "pmol/L"},
        "interpretation": [{"coding": [{"code": "H"}]}],
        "note": [{"text": "Repeat advised."}],
    }
    if based_on is not None:
        out["basedOn"] = [{"reference": f"ServiceRequest/{based_on}"}]
    return out


def condition(cid: str, text: str, code: str, onset: str) -> dict[str, Any]:
    return {
        "resourceType": "Condition",
        "id": cid,
        "clinicalStatus": {"coding": [{"code": "active"}]},
        "verificationStatus": {"coding": [{"code": "confirmed"}]},
        "code": {"text": text, "coding": [{"system": SNOMED, "code": code, "display": text}]},
        "subject": PATIENT,
        "onsetDateTime": onset,
    }
