"""Two readings of one quantity on one day are "cannot both be right" only when they were taken
the same way: a lying and a standing blood pressure, labelled so, are two true readings (their
difference is a finding), never a conflict to repeat. The record goes through the real ingest
(body position, method and notes are read from the Observation) and the real knowledge."""

from __future__ import annotations

from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge import analyse
from inference.knowledge.facts import Facts
from tests.fhir_mapping.test_ingest_errors import bp, bundle, patient

POSITION = {"system": "http://loinc.org", "code": "8361-8", "display": "Body position"}


def _bp(oid: str, systolic: float, **how: Any) -> dict[str, Any]:
    r = bp(oid=oid, when="2026-11-20T10:00:00+00:00")
    r["component"][0]["valueQuantity"]["value"] = systolic
    return {**r, **how}


def _positioned(oid: str, systolic: float, position: str) -> dict[str, Any]:
    r = _bp(oid, systolic)
    r["component"].append({"code": {"coding": [POSITION]}, "valueString": position})
    return r


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            _bp("a", 150, note=[{"text": "lying"}]),
            _bp("b", 104, note=[{"text": "standing, 3 min"}]),
        ),
        (_positioned("a", 150, "Supine"), _positioned("b", 104, "Standing")),
        (_bp("a", 150, method={"text": "manual"}), _bp("b", 104, method={"text": "ambulatory"})),
    ],
)
def test_readings_taken_differently_are_not_a_conflict(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    p = ingest(bundle(patient(), first, second))
    assert Facts(p).conflicts == {}
    assert "opt-repeat-conflicting-result" not in {x.id for x in analyse(p).proposals}


def test_readings_taken_the_same_way_that_differ_are_still_one_to_repeat() -> None:
    p = ingest(bundle(patient(), _bp("a", 150), _bp("b", 104)))
    assert Facts(p).conflicts
    said = [x for x in analyse(p).proposals if x.id == "opt-repeat-conflicting-result"]
    assert said
    texts = " ".join(f"{x.title} {x.description}" for x in said)
    assert "blood_pressure" not in texts and "systolic blood pressure" in texts
