"""How soon to act: each criterion's urgency class (stated on its option or by kind), the
embedded backend's classes for what rule functions propose, no referral on a disputed eGFR,
and the locale's cardiovascular risk tool."""

from __future__ import annotations

import pytest

from inference.embedded import _assess
from inference.knowledge.criteria.schema import KIND_URGENCY, KINDS, urgency_class_of
from inference.knowledge.rules import CRITERIA, analyse

from .criteria_factory import Builder


def _by_id(cid: str):  # type: ignore[no-untyped-def]
    return next(c for c in CRITERIA if c.id == cid)


def test_every_kind_has_a_default_class() -> None:
    assert set(KIND_URGENCY) == set(KINDS)


@pytest.mark.parametrize(
    ("criterion", "expected"),
    [
        ("vaccine-influenza-older", "routine"),  # stated on the option
        ("paed-vaccine-mmr-second", "routine"),
        ("kidney-estimates-disagree", "resolve-first"),  # by kind
        ("same-day-conflict", "soon"),  # stated: a conflict outside the kidney gates nothing
        ("event-overdose-recent", "urgent"),  # safety at the highest urgency
        ("refer-nephrology-low-egfr", "soon"),
    ],
)
def test_criterion_classes(criterion: str, expected: str) -> None:
    assert urgency_class_of(_by_id(criterion)) == expected


def test_no_vaccination_criterion_ranks_above_routine() -> None:
    vaccines = [c for c in CRITERIA if c.trigger.vaccine is not None]
    assert vaccines and all(urgency_class_of(c) == "routine" for c in vaccines)


def _options(b: Builder) -> dict[str, str | None]:
    profile = b.build()
    return {o.id: o.urgency_class for o in _assess(analyse(profile), profile).options}


def _kidney(reported: float, creatinine: float) -> Builder:
    b = Builder(age=70)
    b.lab("egfr", reported)
    b.lab("creatinine", creatinine)  # the same day
    return b


def test_a_disputed_low_egfr_asks_for_a_repeat_first_and_refers_on_nothing() -> None:
    # reported eGFR 22, while that day's creatinine of 0.9 mg/dL gives a normal eGFR
    opts = _options(_kidney(22, 0.9))
    assert opts.get("opt-recheck-kidney-function") == "resolve-first"
    assert "opt-refer-nephrology" not in opts


def test_estimates_that_disagree_but_are_both_low_still_refer() -> None:
    # reported 12 against about 24 from creatinine 2.5: both below 30
    opts = _options(_kidney(12, 2.5))
    assert opts.get("opt-recheck-kidney-function") == "resolve-first"
    assert "opt-refer-nephrology" in opts


def test_a_concordant_low_egfr_refers_and_raises_no_repeat() -> None:
    # reported 22 with a creatinine of 2.3 mg/dL (CKD-EPI about 22 at 70): they agree
    opts = _options(_kidney(22, 2.3))
    assert "opt-recheck-kidney-function" not in opts
    assert opts.get("opt-refer-nephrology") == "soon"


def test_vaccinations_alone_are_the_plan() -> None:
    b = Builder(age=80)
    opts = _options(b)
    assert opts.get("opt-vaccinations-due") == "routine"


def _cv_risk(locale: str) -> str:
    b = Builder(age=55)
    b.condition("hypertension")
    b.smoking("current")
    a = analyse(b.build(), locale)  # type: ignore[arg-type]
    p = next(p for p in a.proposals if p.id == "opt-assess-cv-risk")
    return p.title + " " + p.description


def test_the_risk_tool_follows_the_locale() -> None:
    uk, us = _cv_risk("uk"), _cv_risk("us")
    assert "QRISK3" in uk and "Pooled Cohort" not in uk
    assert "Pooled Cohort Equations" in us and "ASCVD" in us and "QRISK" not in us


def test_the_locale_setting_reaches_the_embedded_backend() -> None:
    from inference.embedded import EmbeddedExperts
    from service.backends import build_experts
    from service.settings import Settings

    experts = build_experts(Settings(locale="us"))
    assert isinstance(experts, EmbeddedExperts) and experts.locale == "us"
    assert build_experts(Settings()).locale == "uk"  # type: ignore[attr-defined]


def test_a_dose_change_on_a_disputed_kidney_function_is_not_urgent() -> None:
    # metformin with a reported eGFR of 45 while that day's creatinine gives about 20: the stop
    # rests on the lower estimate and waits for the repeat, which ranks first
    b = _kidney(45, 2.6)
    b.med("metformin", dose_mg=1000)
    opts = _options(b)
    assert opts.get("opt-recheck-kidney-function") == "resolve-first"
    stop = [k for k in opts if "metformin" in k and k.startswith(("opt-stop", "opt-avoid"))]
    assert stop and all(opts[k] == "soon" for k in stop), opts
    # the same stop on settled values is urgent
    settled = _kidney(20, 2.6)
    settled.med("metformin", dose_mg=1000)
    opts = _options(settled)
    assert "opt-recheck-kidney-function" not in opts
    assert any(opts[k] == "urgent" for k in opts if "metformin" in k), opts


def _title(b: Builder, option_id: str) -> str:
    return next(p.title for p in analyse(b.build()).proposals if p.id == option_id)


def test_a_caveat_that_changes_what_to_do_is_in_the_title() -> None:
    stroke = Builder(age=75)
    stroke.condition("stroke")
    assert "confirm the stroke was not a bleed" in _title(stroke, "opt-start-antiplatelet")
    heart = Builder(age=75)
    heart.condition("chd")
    assert _title(heart, "opt-start-antiplatelet") == "Start an antiplatelet"


def test_calcium_at_a_low_kidney_function_asks_for_calcium_and_phosphate_first() -> None:
    def title(egfr: float) -> str:
        b = Builder(age=80)
        b.condition("osteoporosis")
        b.lab("egfr", egfr)
        return _title(b, "opt-start-calcium-vitamin-d")

    low = title(12)
    assert "check calcium, phosphate and PTH first" in low and "12" in low
    assert title(60) == "Start vitamin D and calcium"
