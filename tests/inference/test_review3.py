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


# -- one action per medicine: a switch settles the dose ceiling --------------------------------


def _by_id(profile: PatientProfile) -> dict[str, object]:
    return {p.id: p for p in analyse(profile).proposals}


def _statin_case(age: int, statin: str = "simvastatin", dose: float = 20) -> PatientProfile:
    b = Builder(age=age)
    b.med(statin, dose_mg=dose)
    b.med("verapamil", dose_mg=120)
    b.condition("chd")
    return b.build()


def test_simvastatin_over_the_verapamil_ceiling_and_below_intensity_is_one_switch() -> None:
    got = _by_id(_statin_case(66))
    assert "opt-reduce-simvastatin" not in got
    switch = got["opt-intensify-statin-simvastatin"]
    assert switch.title.startswith("Switch simvastatin to high-intensity atorvastatin")  # type: ignore[attr-defined]
    # Both reasons stay: the intensity criterion and the dose ceiling, with their points.
    assert {"statin-intensity-secondary-prevention", "ceiling-simvastatin-ratelimiting-ccb"} <= set(
        switch.criteria  # type: ignore[attr-defined]
    )
    assert "verapamil" in switch.description.lower()  # type: ignore[attr-defined]
    assert any("muscle damage" in pt.text for pt in switch.points)  # type: ignore[attr-defined]
    assert switch.priority == "safety"  # type: ignore[attr-defined]


def test_without_an_intensity_change_the_dose_ceiling_keeps_its_own_action() -> None:
    """At 80 the secondary-prevention intensity criterion does not apply (up to 75): the
    ceiling's own 'reduce or switch' action stands, titled as before."""
    got = _by_id(_statin_case(80))
    assert "opt-reduce-simvastatin" in got
    assert "opt-intensify-statin-simvastatin" not in got


def test_an_action_on_another_medicine_is_not_absorbed() -> None:
    """Only an action on the same medicine is folded in: on pravastatin the intensity action
    absorbs nothing, and no simvastatin action exists to absorb."""
    got = _by_id(_statin_case(66, "pravastatin", 40))
    switch = got["opt-intensify-statin-pravastatin"]
    assert switch.title.startswith("Offer a high-intensity statin")  # type: ignore[attr-defined]
    assert switch.criteria == ("statin-intensity-secondary-prevention",)  # type: ignore[attr-defined]
