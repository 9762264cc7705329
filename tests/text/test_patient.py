"""The patient version (``service.text.patient``): only included activities are told, in the
wording stored with the deliberation, grouped by what the patient asks; an activity without a
wording gets the generic line, which states no number."""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.core import evaluate
from service.core.contest import DecideOption, apply
from service.core.model import Meta, PatientWording
from service.text.patient import SECTIONS, generic_wording, patient_text, patient_version
from tests.core.builders import arg, deliberation, option

WORDS = (
    PatientWording("", "watch", "Call your care team if you feel worse."),
    PatientWording(
        "opt-stop-x", "medicines", "Your care team may stop x.", "Call if you feel dizzy."
    ),
    PatientWording("opt-monitor-k", "tests", "You need a blood test to check your potassium."),
)


def _plan():  # type: ignore[no-untyped-def]
    d = deliberation(
        [
            option("opt-stop-x", [arg("a1", "support", 0.9)], category="medication"),
            option("opt-monitor-k", [arg("b1", "support", 0.9)], category="monitoring"),
            option("opt-refer", [arg("c1", "support", 0.9)], category="referral"),
            option("opt-left-out", [arg("d1", "attack", 0.9)], category="medication"),
        ]
    )
    return replace(d, meta=Meta(patient_wordings=WORDS))


def test_sections_follow_the_patients_questions_and_only_included_activities() -> None:
    d = _plan()
    pv = patient_version(d, evaluate(d))
    by = {s.key: s.lines for s in pv.sections}
    assert [s.key for s in pv.sections] == [k for k, _ in SECTIONS if k in by]
    assert by["medicines"] == ("Your care team may stop x.",)
    assert by["tests"] == ("You need a blood test to check your potassium.",)
    # no wording stored: the generic line, by category
    assert by["visits"] == (
        "Your care team will talk with you about seeing another member of your care team.",
    )
    assert by["watch"] == ("Call if you feel dizzy.", "Call your care team if you feel worse.")
    assert "left-out" not in pv.text() and "title" not in pv.text()


def test_an_activity_a_clinician_rejects_is_not_told() -> None:
    d = _plan()
    d2 = apply(
        d,
        DecideOption("opt-stop-x", "exclude"),
        task_id="t1",
        actor="Practitioner/1",
        at="2026-01-01T00:00:00Z",
    )
    text = patient_text(d2, evaluate(d2))
    assert "stop x" not in text and "dizzy" not in text
    assert "potassium" in text


def test_an_activity_a_clinician_adds_in_gets_the_generic_line() -> None:
    d = _plan()
    d2 = apply(
        d,
        DecideOption("opt-left-out", "include"),
        task_id="t1",
        actor="Practitioner/1",
        at="2026-01-01T00:00:00Z",
    )
    assert "about one of your medicines." in patient_text(d2, evaluate(d2))


def test_a_document_without_wordings_still_reads_and_says_when_to_call() -> None:
    d = replace(_plan(), meta=Meta())
    text = patient_text(d, evaluate(d))
    assert "Your care team may stop" not in text
    assert text.count("Your care team will talk with you about") == 3
    assert text.splitlines()[-1] == "- Call your care team if you feel worse or have a question."


def test_an_empty_plan_says_nothing_needs_to_change() -> None:
    d = replace(
        deliberation([option("o", [arg("a", "attack", 0.9)])]), meta=Meta(patient_wordings=WORDS)
    )
    text = patient_text(d, evaluate(d))
    assert "nothing in your plan that needs to change" in text
    assert "Changes to your medicines" not in text


def test_the_generic_line_holds_no_digit_for_any_category() -> None:
    for category in ("medication", "monitoring", "follow-up", "no-such-category"):
        w = generic_wording(option("o1", [], category=category))
        assert w.text.startswith("Your care team will talk with you about ")
        assert not any(ch.isdigit() for ch in w.text)


def test_the_wordings_travel_with_the_document_and_match_its_schema() -> None:
    import jsonschema

    from service.core import deliberation_schema, from_document, to_document

    d = _plan()
    doc = to_document(d, evaluate(d))
    jsonschema.validate(doc, deliberation_schema())
    assert doc["meta"]["patient_wordings"][1] == {
        "option_id": "opt-stop-x",
        "section": "medicines",
        "text": "Your care team may stop x.",
        "watch": "Call if you feel dizzy.",
    }
    assert "watch" not in doc["meta"]["patient_wordings"][2]
    assert from_document(doc).meta.patient_wordings == WORDS
    bad = {
        **doc,
        "meta": {
            **doc["meta"],
            "patient_wordings": [{**doc["meta"]["patient_wordings"][1], "section": "x"}],
        },
    }
    with pytest.raises(jsonschema.ValidationError) as err:
        jsonschema.validate(bad, deliberation_schema())
    assert "section" in list(err.value.absolute_path)
