"""One action per decision, and arguments that
read as a clinician would write them.

A digoxin dose change absorbs the level that guides it; an anticoagulant-antiplatelet review
absorbs the recent thrombolysis that decides it; a repeat of discordant kidney tests absorbs a
routine eGFR check. A severe reading is not deferred for home readings. Texts print units as
a reader writes them and carry no template placeholders.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

from inference.knowledge.criteria.interpret import Binding, render
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import PatientProfile

from .criteria_factory import AS_OF, Builder
from .test_registry import CLOPIDOGREL, WARFARIN, bp, thrombolysed


def _by_id(profile: PatientProfile) -> dict[str, object]:
    return {p.id: p for p in analyse(profile).proposals}


def test_a_recent_thrombolysis_and_the_clopidogrel_review_are_one_action() -> None:
    got = _by_id(thrombolysed(70, WARFARIN, CLOPIDOGREL))
    assert "opt-review-after-thrombolysis" not in got
    one = got["opt-review-clopidogrel"]
    assert "thrombolysis" in one.title and "clopidogrel" in one.title  # type: ignore[attr-defined]
    # the objection "the date of the last vascular event decides" is what this review settles
    assert not [p for p in one.points if p.role == "cardiologist" and p.stance == "attack"]  # type: ignore[attr-defined]


def test_without_a_recent_thrombolysis_the_clopidogrel_review_stands_alone() -> None:
    got = _by_id(thrombolysed(400, WARFARIN, CLOPIDOGREL))
    assert "opt-review-after-thrombolysis" not in got
    one = got["opt-review-clopidogrel"]
    assert one.title.startswith("Review the need for clopidogrel")  # type: ignore[attr-defined]
    assert [p for p in one.points if p.role == "cardiologist" and p.stance == "attack"]  # type: ignore[attr-defined]


def test_digoxin_with_verapamil_folds_the_digoxin_level_into_the_dose_action() -> None:
    b = Builder(age=80)
    b.med("digoxin", dose_mg=0.125)
    b.med("verapamil", dose_mg=120)
    got = _by_id(b.build())
    assert "opt-monitor-digoxin-level" not in got
    assert "digoxin level" in got["opt-reduce-digoxin"].title  # type: ignore[attr-defined]


def test_digoxin_alone_keeps_its_own_level_check() -> None:
    b = Builder(age=80)
    b.med("digoxin", dose_mg=0.125)
    assert "opt-monitor-digoxin-level" in _by_id(b.build())


def _diabetic_hypertensive(sys: float, dia: float) -> PatientProfile:
    b = Builder(age=63)
    b.condition("diabetes")
    b.condition("hypertension")
    b.med("hydrochlorothiazide", dose_mg=25)
    readings = bp(1, sys, dia)  # one panel: systolic and diastolic share a reference
    return replace(b.build(), observations=readings, readings=readings)


def _nurse_defers(profile: PatientProfile) -> bool:
    opt = _by_id(profile)["opt-start-acei-arb-diabetes-hypertension"]
    return any("home or ambulatory" in p.text for p in opt.points)  # type: ignore[attr-defined]


def test_a_severe_reading_is_not_deferred_for_home_readings() -> None:
    assert not _nurse_defers(_diabetic_hypertensive(175, 111))
    assert not _nurse_defers(_diabetic_hypertensive(181, 95))


def test_a_moderately_raised_reading_may_still_be_confirmed_first() -> None:
    assert _nurse_defers(_diabetic_hypertensive(152, 92))


def test_units_are_printed_as_a_reader_writes_them() -> None:
    f = Facts(_diabetic_hypertensive(175, 111))
    text = render("{lab.systolic_bp}", f, Binding(), {})
    assert text == "175 mmHg"


def test_no_point_is_a_template_placeholder_or_says_outdated_for_a_missing_result() -> None:
    bad = [
        (c.id, p.text)
        for c in CRITERIA
        for p in c.points
        if p.text.startswith("A recognised omission") or "rests on outdated" in p.text
    ]
    assert not bad
    # and a never-measured INR says so, rather than calling it outdated
    b = Builder(age=80)
    b.med("warfarin", dose_mg=5)
    inr = _by_id(b.build())["opt-monitor-inr"]
    texts = json.dumps([p.text for p in inr.points])  # type: ignore[attr-defined]
    assert "no result in the record" in texts
    assert date(2000, 1, 1) < AS_OF
