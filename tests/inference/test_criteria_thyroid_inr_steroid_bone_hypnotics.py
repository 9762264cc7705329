"""Levothyroxine with a suppressed TSH is
over-replacement, proposed as a dose reduction with a TSH recheck (NICE NG145, 2019), and the
article of an age phrase follows how the number is spoken ("an 85-year-old")."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from inference.embedded import _priority
from inference.knowledge.analysis import Proposal
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts, age_phrase
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import PatientProfile

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


# -- warfarin with an INR above range (BSH 2011; NICE NG196 2021) ----------------------------

_INR = ("monitor-inr-above-range", "monitor-inr-above-range-interacting")


def _inr_case(inr: float, *others: str, inr_days: int = 10) -> PatientProfile:
    b = Builder(age=74)
    b.med("warfarin")
    for name in others:
        b.med(name)
    b.lab("inr", inr, AS_OF - timedelta(days=inr_days))
    return b.build()


@pytest.mark.parametrize(("inr", "fires"), [(3.4, False), (3.5, False), (3.6, True)])
def test_the_records_own_target_range_decides(inr: float, fires: bool) -> None:
    """A mechanical valve's INR target is 2.5-3.5: where the result states that range, it is
    the bound (a blind review found "above the usual target range (up to 3)" for such a
    patient); with no range stated, the usual upper bound of 3 stands."""
    b = Builder(age=60)
    b.med("warfarin")
    b.lab("inr", inr, AS_OF - timedelta(days=2))
    b.obs[-1] = replace(b.obs[-1], range_low=2.5, range_high=3.5, range_unit=b.obs[-1].unit)
    assert bool(_fired(b.build()) & set(_INR)) is fires
    assert _fired(_inr_case(3.4)) & set(_INR)  # no range stated: above 3


def test_high_inr_with_interacting_drugs_names_them_in_one_safety_recheck() -> None:
    profile = _inr_case(3.4, "naproxen", "sertraline")
    assert _fired(profile) & set(_INR) == {"monitor-inr-above-range-interacting"}
    p = next(p for p in analyse(profile).proposals if p.id == "opt-recheck-inr-high")
    assert _priority(p) == "safety"
    assert p.title == "Recheck INR and review what raised it"
    assert "naproxen" in p.description and "sertraline" in p.description
    assert "INR at 3.4, above" in p.description
    assert "{INR}" not in p.description  # the UCUM annotation prints as no unit


def test_high_inr_alone_asks_for_the_cause_without_naming_drugs() -> None:
    profile = _inr_case(3.6)
    assert _fired(profile) & set(_INR) == {"monitor-inr-above-range"}
    p = next(p for p in analyse(profile).proposals if p.id == "opt-recheck-inr-high")
    assert "new or changed medicine" in p.description


def test_old_high_inr_folds_the_routine_inr_check_into_the_recheck() -> None:
    ids = [p.id for p in analyse(_inr_case(3.5, inr_days=200)).proposals]
    assert "opt-recheck-inr-high" in ids
    assert "opt-monitor-inr" not in ids


def test_inr_in_range_or_no_warfarin_stays_quiet() -> None:
    assert not _fired(_inr_case(2.6, "naproxen")) & set(_INR)
    b = Builder(age=74)
    b.med("naproxen")
    b.lab("inr", 3.4, AS_OF - timedelta(days=10))
    assert not _fired(b.build()) & set(_INR)


# -- long-term glucocorticoid: calcium and vitamin D with the bone protection (NOGG 2022) ------


def test_long_term_prednisolone_bone_protection_names_calcium_and_vitamin_d() -> None:
    b = Builder(age=72)
    b.med("prednisolone", AS_OF - timedelta(days=180), dose_mg=10)
    p = next(p for p in analyse(b.build()).proposals if p.id == "opt-start-bone-protection")
    assert "calcium and vitamin D" in p.description
    assert any("calcium and vitamin D" in pt.text for pt in p.points)


def test_short_prednisolone_course_does_not_ask_for_bone_protection() -> None:
    b = Builder(age=72)
    b.med("prednisolone", AS_OF - timedelta(days=20))
    assert "start-bone-protection-steroid" not in _fired(b.build())


# The NOGG 2022 bounds, each at its edge: prednisolone 7.5 mg a day (or its BNF equivalent) for
# 90 days or more. Hydrocortisone 20 mg is prednisolone 5 mg; dexamethasone 0.75 mg is too.
_STEROID = "start-bone-protection-steroid"


@pytest.mark.parametrize(
    ("name", "mg", "days", "fires"),
    [
        ("prednisolone", 7.5, 90, True),  # both bounds met exactly
        ("prednisolone", 7.4, 90, False),  # just under the dose
        ("prednisolone", 7.5, 89, False),  # a day short of three months
        ("hydrocortisone", 30.0, 90, True),  # 30 mg = prednisolone 7.5 mg
        ("hydrocortisone", 29.0, 365, False),  # = prednisolone 7.25 mg
        ("dexamethasone", 1.125, 90, True),  # = prednisolone 7.5 mg
        ("dexamethasone", 1.0, 90, False),  # = prednisolone 6.7 mg
        ("methylprednisolone", 6.0, 90, True),  # = prednisolone 7.5 mg
    ],
)
def test_bone_protection_fires_from_the_equivalent_dose_and_duration(
    name: str, mg: float, days: int, fires: bool
) -> None:
    b = Builder(age=60)
    b.med(name, AS_OF - timedelta(days=days), dose_mg=mg)
    assert (_STEROID in _fired(b.build())) is fires


def test_bone_protection_line_states_the_prednisolone_equivalent() -> None:
    b = Builder(age=60)
    b.med("hydrocortisone", AS_OF - timedelta(days=200), dose_mg=40)
    p = next(p for p in analyse(b.build()).proposals if p.id == "opt-start-bone-protection")
    assert "40 mg a day, equal to prednisolone 10 mg a day" in p.description


def test_replacement_hydrocortisone_with_adrenal_insufficiency_asks_no_bone_protection() -> None:
    b = Builder(age=27)
    b.condition("adrenal-insufficiency")
    b.med("hydrocortisone", AS_OF - timedelta(days=2000), dose_mg=20)
    assert _STEROID not in _fired(b.build())
    b = Builder(age=27)  # the same dose without the condition is below the threshold too
    b.med("hydrocortisone", AS_OF - timedelta(days=2000), dose_mg=20)
    assert _STEROID not in _fired(b.build())


# -- named alternatives and the bone check after a fall ---------------------------------------


def _proposal(profile: PatientProfile, option_id: str) -> Proposal:
    return next(p for p in analyse(profile).proposals if p.id == option_id)


def test_bladder_antimuscarinic_in_dementia_names_bladder_training_and_mirabegron() -> None:
    b = Builder(age=77)
    b.med("oxybutynin")
    b.condition("dementia")
    p = _proposal(b.build(), "opt-stop-oxybutynin")
    texts = " ".join(pt.text for pt in p.points if pt.stance == "support")
    assert "bladder training" in texts and "mirabegron" in texts


def test_other_strong_anticholinergic_does_not_name_bladder_alternatives() -> None:
    b = Builder(age=77)
    b.med("diphenhydramine")
    b.condition("dementia")
    p = _proposal(b.build(), "opt-stop-diphenhydramine")
    assert not any("mirabegron" in pt.text for pt in p.points)


def test_z_drug_taper_offers_cbt_for_insomnia() -> None:
    b = Builder(age=85)
    b.med("zolpidem")
    p = _proposal(b.build(), "opt-taper-zolpidem")
    assert "cognitive behavioural therapy for insomnia" in p.description
    assert any("sleep hygiene" in pt.text for pt in p.points if pt.stance == "support")


def test_cbt_for_insomnia_is_not_offered_without_a_hypnotic() -> None:
    b = Builder(age=85)
    b.med("oxybutynin")
    assert not any("cognitive behavioural" in p.description for p in analyse(b.build()).proposals)


_FRACTURE = "fall-fracture-risk-assessment"


def test_fall_without_bone_assessment_proposes_fracture_risk_assessment() -> None:
    b = Builder(age=85)
    b.condition("fall")
    assert _FRACTURE in _fired(b.build())
    p = _proposal(b.build(), "opt-fracture-risk-after-fall")
    assert "FRAX" in p.description and "bone density" in p.description
    c = Builder(age=85)  # a fall known only from an emergency visit counts too
    c.encounter("fall", "EMER", AS_OF - timedelta(days=30))
    assert _FRACTURE in _fired(c.build())


def test_fracture_risk_is_not_asked_when_bones_are_already_assessed_or_treated() -> None:
    b = Builder(age=85)
    b.condition("fall")
    b.condition("osteoporosis")  # known osteoporosis: its own bone-protection criterion acts
    assert _FRACTURE not in _fired(b.build())
    c = Builder(age=85)
    c.condition("fall")
    c.med("alendronate")
    assert _FRACTURE not in _fired(c.build())
    d = Builder(age=85)  # no fall: not this rule
    assert _FRACTURE not in _fired(d.build())
    e = Builder(age=50)  # younger than the threshold
    e.condition("fall")
    assert _FRACTURE not in _fired(e.build())
