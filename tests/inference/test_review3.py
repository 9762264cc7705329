"""Third clinical review (issue 13, helper 13f): one action per drug and per blood test.

A burden that one medicine makes up alone is that medicine's own action; every drug that is
strongly anticholinergic on its own has such an action (the invariant the burden rule rests on).
"""

from __future__ import annotations

from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.drugs import DRUGS, matches
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA, analyse
from service.core.profile import PatientProfile

from .criteria_factory import Builder


def _fired(profile: PatientProfile) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(profile))}


def _ids(profile: PatientProfile) -> set[str]:
    return {p.id for p in analyse(profile).proposals}


# -- anticholinergic burden: two or more contributing medicines ----------------------------------


def test_one_strong_anticholinergic_is_its_own_action_not_a_burden_action() -> None:
    b = Builder(age=68)
    b.med("chlorpheniramine")
    fired = _fired(b.build())
    assert "age-strong-anticholinergic" in fired
    assert "burden-anticholinergic-score" not in fired
    assert "opt-reduce-anticholinergic-burden" not in _ids(b.build())


def test_two_contributing_medicines_make_a_burden_action() -> None:
    b = Builder(age=68)
    b.med("chlorpheniramine")
    b.med("diazepam")  # ACB 1: 3 + 1 from two medicines
    assert "burden-anticholinergic-score" in _fired(b.build())
    assert "opt-reduce-anticholinergic-burden" in _ids(b.build())


def test_every_acb_three_drug_has_its_own_strong_anticholinergic_action() -> None:
    """One medicine reaches a burden of three only with an ACB score of three; each such drug
    is strongly anticholinergic, so AGS Beers 2023 table 2 (or table 3 with dementia) proposes
    its own action and the burden rule may ask for two medicines."""
    lone = [
        d.name for d in DRUGS if d.acb >= 3 and not matches(d.name, "class:strong-anticholinergic")
    ]
    assert not lone
