"""Third blind vignette set (issue 13, helper 13u): levothyroxine with a suppressed TSH is
over-replacement, proposed as a dose reduction with a TSH recheck (NICE NG145, 2019), and the
article of an age phrase follows how the number is spoken ("an 85-year-old")."""

from __future__ import annotations

from datetime import timedelta

from inference.embedded import _priority
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts, age_phrase
from inference.knowledge.rules import CRITERIA, analyse
from service.core.profile import PatientProfile

from .criteria_factory import AS_OF, Builder

_RULE = "dl-levothyroxine-tsh-suppressed"


def _fired(profile: PatientProfile) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(profile))}


def test_suppressed_tsh_on_levothyroxine_proposes_a_lower_dose_and_a_recheck() -> None:
    b = Builder(age=76)
    b.med("levothyroxine")
    b.condition("af")
    b.lab("tsh", 0.05, AS_OF - timedelta(days=10))
    assert _RULE in _fired(b.build())
    p = next(p for p in analyse(b.build()).proposals if p.id == "opt-reduce-levothyroxine")
    assert _priority(p) == "safety"
    assert "recheck TSH" in p.title
    assert any("atrial fibrillation" in pt.text for pt in p.points)


def test_tsh_in_range_or_not_on_levothyroxine_stays_quiet() -> None:
    b = Builder(age=76)
    b.med("levothyroxine")
    b.lab("tsh", 1.8, AS_OF - timedelta(days=10))
    assert _RULE not in _fired(b.build())
    c = Builder(age=76)
    c.lab("tsh", 0.05, AS_OF - timedelta(days=10))  # low TSH without replacement: not this rule
    assert _RULE not in _fired(c.build())


def test_age_phrase_article_follows_the_spoken_number() -> None:
    assert age_phrase(85) == "an 85-year-old"
    assert age_phrase(18) == "an 18-year-old"
    assert age_phrase(76) == "a 76-year-old"
    assert age_phrase(90) == "a person aged 90 or over"
