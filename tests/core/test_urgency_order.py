"""Ranking by how soon to act (urgency class), then priority class, then score; the summary's
labels, heading and line length, on hand-built deliberations."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

import pytest

from service.core import evaluate, from_document, recompute_document, to_document
from service.core.model import Meta
from service.errors import DocumentError
from service.record.profile import PatientProfile
from service.text.summary import LINE_CHARS, patient_words, summarise, summary_text
from tests.core.builders import arg, deliberation, option, sample


def _plan(*specs: tuple[str, str | None, str | None, float]) -> tuple[str, ...]:
    """(id, priority, urgency class, supporter tau) -> the plan order."""
    opts = [
        option(oid, [arg(f"{oid}-a", "support", tau)], priority=prio, urgency_class=when)
        for oid, prio, when, tau in specs
    ]
    return evaluate(deliberation(opts)).plan


def test_urgency_class_orders_before_the_priority_class() -> None:
    plan = _plan(
        ("vaccines", "omission", "routine", 0.95),
        ("bp-uncontrolled", "review", "urgent", 0.6),
        ("acei-missing", "omission", "soon", 0.7),
        ("dose-check", "safety", "soon", 0.65),
        ("repeat-egfr", "monitoring", "resolve-first", 0.55),
    )
    # the repeat that settles contradicting results first; a routine vaccination last, although
    # it is an omission with the highest score
    assert plan == ("repeat-egfr", "bp-uncontrolled", "dose-check", "acei-missing", "vaccines")


def test_a_routine_item_leads_when_nothing_else_is_wrong() -> None:
    plan = _plan(("vaccines", "omission", "routine", 0.7), ("review", "review", "routine", 0.9))
    assert plan == ("vaccines", "review")  # omission before review within the class


def test_without_urgency_classes_the_priority_order_stays() -> None:
    plan = _plan(
        ("review-high", "review", None, 0.9),
        ("safety-low", "safety", None, 0.6),
        ("omission", "omission", None, 0.7),
    )
    assert plan == ("safety-low", "omission", "review-high")


def test_urgency_class_round_trips_and_old_documents_recompute_bit_for_bit() -> None:
    d = sample()
    o = d.options[0]
    d2 = replace(
        d,
        options=(replace(o, priority="review", urgency_class="urgent"), *d.options[1:]),
        meta=replace(d.meta, patient="Ann Lee, 78, female. Record up to 2019-03-02."),
    )
    doc = json.loads(json.dumps(to_document(d2)))
    assert doc["options"][0]["urgency_class"] == "urgent"
    assert doc["meta"]["patient"].startswith("Ann Lee")
    assert from_document(doc) == d2
    assert recompute_document(doc) == doc
    old = json.loads(json.dumps(to_document(d)))
    assert all("urgency_class" not in x for x in old["options"])
    assert "patient" not in old["meta"]
    assert json.dumps(recompute_document(old)) == json.dumps(old)


def test_schema_refuses_an_unknown_urgency_class() -> None:
    doc = to_document(sample())
    doc["options"][0]["urgency_class"] = "whenever"
    with pytest.raises(DocumentError, match="urgency_class"):
        from_document(doc)


def _summary_of(n: int, reason: str = "") -> str:
    opts = [
        option(
            f"o{k}",
            [arg(f"o{k}-a", "support", 0.9 - k * 0.01)],
            priority="safety",
            urgency_class="urgent" if k == 0 else "routine",
        )
        for k in range(n)
    ]
    if reason:
        first = opts[0]
        opts[0] = replace(first, arguments=(replace(first.arguments[0], text=reason),))
    d = replace(deliberation(opts), meta=Meta(patient="Ann Lee, 78, female."))
    return summary_text(d, evaluate(d))


def test_heading_names_the_patient_and_counts_what_is_shown() -> None:
    text = _summary_of(9)
    head, count = text.splitlines()[:2]
    assert head == "Ann Lee, 78, female."
    # the heading counts the lines as shown; options without a timeframe (a document written
    # before timeframes) say their priority class where the time would stand
    assert count.endswith("9 actions in 8 lines shown. Ranked by when to act.")
    assert sum(line[:2] in {f"{k}." for k in range(1, 9)} for line in text.splitlines()) == 8
    assert "1. title o0 — safety — " in text
    assert "3 actions in 3 lines shown" in _summary_of(3).splitlines()[1]


def test_a_long_reason_is_cut_so_the_line_stays_short() -> None:
    reason = "Naproxen with clopidogrel " + "doubles the risk of a stomach bleed " * 10 + "today."
    d_text = _summary_of(1, reason)
    line = next(x for x in d_text.splitlines() if x.startswith("1. "))
    assert len(line) < LINE_CHARS + 60 and "…" in line
    assert "Naproxen with clopidogrel" in line


def test_the_key_fact_is_not_the_medicine_the_action_changes() -> None:
    o = option(
        "stop-naproxen",
        [
            replace(
                arg("a", "support", 0.8), facts=("MedicationRequest/nap", "MedicationRequest/clo")
            )
        ],
        priority="safety",
        urgency_class="urgent",
        medication_ref="MedicationRequest/nap",
    )
    facts = (
        ("MedicationRequest/nap", "naproxen 500 mg (prescribed 2025-01-02)"),
        ("MedicationRequest/clo", "clopidogrel 75 mg (prescribed 2024-06-01)"),
    )
    d = replace(deliberation([o]), meta=Meta(facts=facts))
    (line,) = summarise(d, evaluate(d)).lines
    assert line.fact.startswith("clopidogrel")


@pytest.mark.parametrize(
    ("as_of", "warned", "words"),
    [
        (date(2026, 11, 1), False, "Record up to 2026-11-01."),
        (date(2026, 6, 1), True, "6 months older than this plan"),
        (date(2019, 3, 2), True, "7 years older than this plan"),
    ],
)
def test_an_old_record_is_said_to_be_old(as_of: date, warned: bool, words: str) -> None:
    p = PatientProfile("Patient/1", "male", date(1950, 1, 1), as_of, name="Bo Chen")
    text = patient_words(p, "2026-11-30T09:00:00+00:00")
    assert text.startswith("Bo Chen, ") and ", male." in text
    assert words in text
    assert ("only as current as the record" in text) is warned
