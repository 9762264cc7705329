"""Living situation: advice that assumes a household (show the household how to give glucagon)
is reworded for a patient recorded as homeless or as living alone, and the line says why; a
neighbour with another social fact keeps the wording. Every phrase the file replaces occurs in
the knowledge, so a reworded criterion cannot leave an adaptation silently unused."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, timedelta

import pytest

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from inference.knowledge.criteria import CRITERIA_DIR
from inference.knowledge.living import LIVING, situation
from service.record.profile import (
    Code,
    Condition,
    Medication,
    PatientProfile,
    SocialFact,
)
from service.record.vocabulary import ICD10, SNOMED

AS_OF = date(2026, 6, 1)
HYPO = Code(SNOMED, "302866003", "Hypoglycemia (disorder)")
T1DM = Code(SNOMED, "46635009", "Diabetes mellitus type 1")


def _patient(*social: SocialFact, problems: tuple[Condition, ...] = ()) -> PatientProfile:
    hypo = Condition(
        "Condition/c1", "Hypoglycemia", (HYPO,), "active", "confirmed", AS_OF - timedelta(days=20)
    )
    dm = Condition(
        "Condition/c2", "Diabetes mellitus type 1", (T1DM,), "active", "confirmed", date(2000, 1, 1)
    )
    insulin = Medication(
        "MedicationRequest/m1",
        "Insulin glargine 100 UNT/ML Injectable Solution",
        (),
        "active",
        "order",
        date(2025, 1, 1),
    )
    return PatientProfile(
        "Patient/p1",
        "male",
        date(1970, 1, 1),
        AS_OF,
        problems=(hypo, dm, *problems),
        medications=(insulin,),
        social=social,
    )


def _glucagon(p: PatientProfile) -> Proposal:
    (line,) = [x for x in analyse(p).proposals if x.id == "opt-start-glucagon"]
    return line


def _said(line: Proposal) -> str:
    return " ".join((line.title, line.description, *(pt.text for pt in line.points)))


def test_a_household_is_assumed_when_nothing_says_otherwise() -> None:
    employed = SocialFact("Condition/s1", "employment", "Full-time employment (finding)")
    line = _glucagon(_patient(employed))
    assert "show the household" in line.title
    assert "Condition/s1" not in line.refs


@pytest.mark.parametrize(
    ("p", "label", "ref"),
    [
        (
            _patient(SocialFact("Condition/s1", "housing", "Homeless (finding)")),
            "homeless",
            "Condition/s1",
        ),
        (
            _patient(
                problems=(
                    Condition(
                        "Condition/c9",
                        "Homelessness",
                        (Code(ICD10, "Z59.01", "Sheltered homelessness"),),
                        "active",
                        "confirmed",
                        None,
                    ),
                )
            ),
            "homeless",
            "Condition/c9",
        ),
        (
            _patient(SocialFact("Condition/s2", "lives_alone", "Lives alone (finding)")),
            "living alone",
            "Condition/s2",
        ),
    ],
    ids=["homeless social fact", "homelessness coded", "lives alone"],
)
def test_no_household_advice_without_a_household(p: PatientProfile, label: str, ref: str) -> None:
    line = _glucagon(p)
    text = _said(line)
    for phrase in ("household", "family or carers", "people around the patient"):
        assert phrase not in text
    assert line.title == "Prescribe glucagon and agree who could give it"
    assert f"The patient is recorded as {label}" in line.description
    assert ref in line.refs


def test_housing_insecurity_is_not_homelessness() -> None:
    insecure = SocialFact("Condition/s1", "housing", "Housing unsatisfactory (finding)")
    assert situation(_patient(insecure)) is None
    assert "show the household" in _glucagon(_patient(insecure)).title


def test_every_replaced_phrase_occurs_in_the_knowledge() -> None:
    options = {
        c["option"]["id"]: json.dumps(c)
        for f in sorted(CRITERIA_DIR.glob("*.json"))
        for c in json.loads(f.read_text(encoding="utf-8"))["criteria"]
    }
    for a in LIVING.adaptations:
        assert a.option in options, a.option
        for r in a.replace:
            assert r.from_ in options[a.option], r.from_


def test_a_resolved_homelessness_record_does_not_count() -> None:
    code = (Code(SNOMED, "32911000", "Homeless (finding)"),)
    past = Condition(
        "Condition/c9", "Homeless", code, "resolved", "confirmed", None, date(2025, 1, 1)
    )
    assert situation(replace(_patient(), problems=(past,))) is None
