"""A coded Observation value reaches the profile with its codes: the tobacco smoking status
(LOINC 72166-2) keeps the SNOMED CT concept the reasoning reads, the latest one per code."""

from __future__ import annotations

import json
from typing import Any

from fhir_mapping.ingest import ingest
from inference.knowledge.facts import Facts
from service.record.vocabulary import LOINC, SNOMED

from .test_ingest_errors import bundle, patient


def smoking(oid: str, when: str, code: str, display: str) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": oid,
        "status": "final",
        "code": {
            "coding": [{"system": LOINC, "code": "72166-2"}],
            "text": "Tobacco smoking status",
        },
        "subject": {"reference": "Patient/p1"},
        "effectiveDateTime": when,
        "valueCodeableConcept": {"coding": [{"system": SNOMED, "code": code, "display": display}]},
    }


def _profile(*obs: dict[str, Any]) -> Any:
    return ingest(json.dumps(bundle(patient(), *obs)).encode())


def test_the_coded_value_keeps_its_snomed_code() -> None:
    p = _profile(smoking("o1", "2024-03-01", "449868002", "Smokes tobacco daily (finding)"))
    (o,) = [o for o in p.observations if o.loinc == "72166-2"]
    assert [(c.system, c.code) for c in o.value_codes] == [(SNOMED, "449868002")]
    assert o.value is None and o.value_text == "Smokes tobacco daily (finding)"
    sm = Facts(p).smoking
    assert sm is not None and sm.current and sm.text == "Smokes tobacco daily"
    assert sm.refs == ("Observation/o1",)


def test_the_latest_status_wins_over_an_older_current_one() -> None:
    p = _profile(
        smoking("o1", "2019-03-01", "449868002", "Smokes tobacco daily (finding)"),
        smoking("o2", "2023-03-01", "8517006", "Ex-smoker (finding)"),
    )
    sm = Facts(p).smoking
    assert sm is not None and sm.status == "former" and not sm.current


def test_a_numeric_observation_has_no_value_codes() -> None:
    weight = {
        "resourceType": "Observation",
        "id": "w1",
        "status": "final",
        "code": {"coding": [{"system": LOINC, "code": "29463-7"}]},
        "subject": {"reference": "Patient/p1"},
        "effectiveDateTime": "2024-03-01",
        "valueQuantity": {"value": 70, "unit": "kg"},
    }
    (o,) = _profile(weight).observations
    assert o.value == 70 and o.value_codes == ()
    assert Facts(_profile(weight)).smoking is None
