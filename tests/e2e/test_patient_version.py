"""The patient version over every fixture and vignette, planned end to end on the embedded
backend: its Flesch-Kincaid grade is at most 8, it states no number that is not a typed fact
of the record (the property that guards the clinician texts), it never tells an activity a
clinician rejected, and ``canoe plan --for patient`` prints it (text, or the Communication)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inference.knowledge.criteria.schema import NUMBER
from inference.knowledge.facts import Facts
from inference.knowledge.patient import cited_numbers
from service.core import evaluate
from service.pipeline import PlanResult
from service.readability import MAX_PATIENT_GRADE, fkgl
from service.text.patient import patient_text, patient_version
from tests.conftest import FHIR_FIXTURES, REPO_ROOT, fixture_bundle
from tests.e2e.test_plan_end_to_end import CREATED, _canoe, plan_of

_NOT_BUNDLES = {"expectations.json", "known_gaps.json", "blind_expectations.json"}
CASES = sorted(
    [p for p in FHIR_FIXTURES.glob("*.json") if not p.name.startswith("bad_")]
    + [p for p in FHIR_FIXTURES.glob("bad_unknown_codes.json")]
    + [
        p
        for folder in sorted((REPO_ROOT / "examples").glob("vignettes*"))
        for p in folder.glob("*.json")
        if p.name not in _NOT_BUNDLES
    ]
)
ids = [f"{p.parent.name}/{p.stem}" for p in CASES]


def test_every_fixture_and_vignette_is_covered() -> None:
    assert len(CASES) > 100
    assert {p.parent.name for p in CASES} >= {"fhir", "vignettes", "vignettes6"}


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_patient_version_reads_at_grade_eight_or_below(path: Path) -> None:
    r = plan_of(path)
    text = patient_text(r.deliberation, r.evaluation)
    assert fkgl(text) <= MAX_PATIENT_GRADE, text


def _stray_numbers(r: PlanResult, text: str) -> list[str]:
    allowed = Facts(r.profile).numbers() | cited_numbers()
    return [n for n in NUMBER.findall(text) if n not in allowed]


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_every_number_in_the_patient_version_is_a_typed_fact(path: Path) -> None:
    r = plan_of(path)
    text = patient_text(r.deliberation, r.evaluation)
    assert not _stray_numbers(r, text), text


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_every_included_activity_is_told_and_most_in_their_own_words(path: Path) -> None:
    r = plan_of(path)
    d, ev = r.deliberation, r.evaluation
    worded = {w.option_id for w in d.meta.patient_wordings}
    told = [line for s in patient_version(d, ev).sections for line in s.lines]
    assert len(told) >= len({w.text for w in d.meta.patient_wordings if w.option_id in ev.plan})
    assert any(not w.option_id for w in d.meta.patient_wordings)  # the plan-wide lines
    if ev.plan:
        assert worded & set(ev.plan), "no included activity has its own patient wording"


_PROPERTY_CASES = [fixture_bundle("adalberto"), fixture_bundle("josue"), fixture_bundle("trey")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(_PROPERTY_CASES), data=st.data())
def test_rejected_activities_are_never_told_and_no_number_is_invented(
    case: Path, data: st.DataObject
) -> None:
    r = plan_of(case)
    d = r.deliberation
    rejected = data.draw(st.sets(st.sampled_from([o.id for o in d.options])))
    included_by_hand = data.draw(st.sets(st.sampled_from([o.id for o in d.options])))
    options = tuple(
        replace(
            o,
            human_decision="exclude"
            if o.id in rejected
            else "include"
            if o.id in included_by_hand
            else o.human_decision,
        )
        for o in d.options
    )
    d2 = replace(d, options=options)
    ev = evaluate(d2)
    text = patient_text(d2, ev)
    words = {w.option_id: w.text for w in d.meta.patient_wordings}
    for oid in rejected:
        wording = words.get(oid)
        if wording and not any(words.get(k) == wording for k in ev.plan):
            assert wording not in text, (oid, text)
    assert not set(rejected) & set(ev.plan)
    assert not _stray_numbers(r, text), text
    assert fkgl(text) <= MAX_PATIENT_GRADE


def test_cli_prints_the_patient_version_and_its_communication(tmp_path: Path) -> None:
    path = fixture_bundle("adalberto")
    out = _canoe("plan", str(path), "--for", "patient", "--created", CREATED)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert text.startswith("Your care plan\n")
    assert "Changes to your medicines:" in text and "diazepam" in text
    assert "What to watch for and when to call:" in text
    assert "Proposed by" not in text and "MedicationRequest/" not in text
    fhir = _canoe("plan", str(path), "--for", "patient", "--format", "fhir", "--created", CREATED)
    assert fhir.returncode == 0, fhir.stderr
    comm = json.loads(fhir.stdout)
    assert comm["resourceType"] == "Communication" and comm["status"] == "preparation"
    assert comm["basedOn"][0]["reference"].startswith("CarePlan/")
    assert comm["payload"][0]["contentString"] + "\n" == text
    bad = _canoe("plan", str(path), "--for", "patient", "--detail", "--created", CREATED)
    assert bad.returncode == 2 and b"--for patient" in bad.stderr


def test_eval_reports_both_grades_per_case_and_over_the_run() -> None:
    out = _canoe("eval", str(REPO_ROOT / "examples" / "eval"), "--created", CREATED)
    assert out.returncode == 0, out.stderr
    table = out.stdout.decode()
    assert "adalberto_hartmann: PASS (" in table and "FKGL clinician " in table
    last = table.strip().splitlines()[-1]
    assert last.startswith("FKGL: clinician mean ") and "(0 above grade 8)" in last
    js = _canoe(
        "eval", str(REPO_ROOT / "examples" / "eval"), "--created", CREATED, "--format", "json"
    )
    report = json.loads(js.stdout)
    grades = [c["fkgl"] for c in report["cases"]]
    assert len(grades) == report["totals"]["cases"]
    # the patient version reads easier than the clinician text of the same plan, within the bound
    assert all(0 < g["patient"] <= MAX_PATIENT_GRADE for g in grades)
    assert all(g["patient"] < g["clinician"] for g in grades)
    assert report["fkgl"]["patient"]["max"] == max(g["patient"] for g in grades)
    assert report["fkgl"]["patient_over_bound"] == 0
