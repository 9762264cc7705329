"""Gaps found on three fixtures (eura, trey, ali): kidney function that is not settled is repeated
before dosing; response monitoring of a drug the plan proposes to stop is not proposed; advance
care planning is an omission that frames the plan at 90 or over; fracture risk on androgen
deprivation; COVID-19 vaccination by age; arterial thromboembolism in CHA2DS2-VASc."""

from __future__ import annotations

from datetime import date, timedelta

from inference.embedded import _priority
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import Code, Condition, PatientProfile
from service.record.vocabulary import SNOMED

from .criteria_factory import AS_OF, Builder


def _fired(profile: PatientProfile) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(profile))}


# -- kidney function not in a steady state -----------------------------------------------------


def _eura_like() -> Builder:
    """Creatinine 3.19 beside a reported eGFR of 87 on one day, 0.48 a month later."""
    b = Builder(age=85, sex="female")
    day = AS_OF - timedelta(days=33)
    b.lab("creatinine", 3.19, day)
    b.lab("egfr", 87.0, day)
    b.lab("creatinine", 0.48)
    return b


def test_creatinine_contradicting_its_day_and_then_falling_is_not_settled() -> None:
    f = Facts(_eura_like().build())
    k = f.kidney
    assert k is not None
    # The latest estimates agree (reported 87, CKD-EPI from 0.48 above 90): not "discordant"...
    assert not k.discordant
    # ...but the kidney function is not settled, for both reasons.
    assert len(k.unsteady) == 2
    same_day, swing = k.unsteady
    assert same_day.later is None and same_day.implied_egfr < 15
    assert swing.later is not None and swing.days == 33
    assert not k.settled
    fired = _fired(_eura_like().build())
    assert "kidney-function-unsteady" in fired
    assert "kidney-estimates-disagree" not in fired


def test_the_repeat_names_every_value_it_rests_on() -> None:
    f = Facts(_eura_like().build())
    firing = next(x for x in evaluate(CRITERIA, f) if x.criterion.id == "kidney-function-unsteady")
    text = firing.proposal.description
    assert "creatinine 3.19 mg/dL" in text and "87" in text and "33 days later" in text
    assert set(f.kidney.refs) >= {o.ref for o in _eura_like().build().readings}  # type: ignore[union-attr]


def test_a_stable_creatinine_is_settled() -> None:
    b = Builder(age=85, sex="female")
    b.lab("creatinine", 1.0, AS_OF - timedelta(days=30))
    b.lab("creatinine", 1.2)
    b.lab("egfr", 42.0)
    f = Facts(b.build())
    assert f.kidney is not None and f.kidney.settled
    assert "kidney-function-unsteady" not in _fired(b.build())


def test_a_large_swing_within_normal_function_does_not_matter_for_dosing() -> None:
    # 0.5 -> 0.8 mg/dL is a 1.6-fold change, but both imply an eGFR above 60.
    b = Builder(age=60, sex="female")
    b.lab("creatinine", 0.5, AS_OF - timedelta(days=20))
    b.lab("creatinine", 0.8)
    assert Facts(b.build()).kidney.settled  # type: ignore[union-attr]


def test_a_swing_older_than_the_window_does_not_count() -> None:
    b = Builder(age=80, sex="male")
    b.lab("creatinine", 3.0, AS_OF - timedelta(days=200))
    b.lab("creatinine", 1.0)
    assert not Facts(b.build()).kidney.unsteady  # type: ignore[union-attr]


def test_renal_dose_bands_read_unsettled_kidney_function_at_lower_certainty() -> None:
    b = Builder(age=85, sex="female")
    b.lab("creatinine", 1.0, AS_OF - timedelta(days=20))
    b.lab("creatinine", 2.0)  # doubled in three weeks: the band holds, but nothing is settled
    b.med("metformin")
    f = Facts(b.build())
    band = [x for x in evaluate(CRITERIA, f) if x.binding.limit is not None]
    assert band and all(x.binding.probable for x in band)


# -- monitoring of a drug the plan proposes to stop ------------------------------------------


def test_no_lipid_check_on_a_statin_the_plan_proposes_to_stop() -> None:
    b = Builder(age=86)
    b.med("simvastatin")
    fired = _fired(b.build())
    assert "deprescribe-statin-primary-very-old" in fired
    assert "monitor-lipids-on-statin" not in fired


def test_lipid_check_stays_when_the_statin_is_kept() -> None:
    b = Builder(age=86)
    b.med("simvastatin")
    b.condition("chd")  # secondary prevention: no proposal to stop
    fired = _fired(b.build())
    assert "deprescribe-statin-primary-very-old" not in fired
    assert "monitor-lipids-on-statin" in fired


def test_safety_monitoring_is_not_deferred_by_a_stop_proposal() -> None:
    c = next(x for x in CRITERIA if x.id == "monitor-lipids-on-statin")
    assert c.trigger.monitor is not None and c.trigger.monitor.response
    safety = [
        x.id
        for x in CRITERIA
        if x.trigger.monitor is not None and x.trigger.monitor.quantity in ("inr", "potassium")
    ]
    assert safety
    assert not any(
        next(x for x in CRITERIA if x.id == cid).trigger.monitor.response  # type: ignore[union-attr]
        for cid in safety
    )


# -- advance care planning -------------------------------------------------------------------


def _acp(profile: PatientProfile) -> object:
    return next(p for p in analyse(profile).proposals if p.id == "opt-advance-care-planning")


def test_advance_care_planning_is_an_omission_not_a_routine_review() -> None:
    p = _acp(Builder(age=86).build())
    assert _priority(p) == "omission"  # type: ignore[arg-type]


def test_at_ninety_or_over_the_goals_frame_the_other_proposals() -> None:
    old = _acp(Builder(age=95).build())
    young = _acp(Builder(age=86).build())
    frame = "depends on the goals agreed"
    assert any(frame in pt.text for pt in old.points)  # type: ignore[attr-defined]
    assert not any(frame in pt.text for pt in young.points)  # type: ignore[attr-defined]
    # the framing argument is a major one: stronger than any point made at 86
    assert max(pt.tau for pt in old.points) > max(  # type: ignore[attr-defined]
        pt.tau
        for pt in young.points  # type: ignore[attr-defined]
    )


# -- fracture risk on androgen deprivation ---------------------------------------------------


def test_leuprorelin_without_bone_protection_asks_for_fracture_risk() -> None:
    b = Builder(age=68, sex="male")
    b.med("leuprolide")
    assert "adt-fracture-risk" in _fired(b.build())
    b.med("alendronate")
    assert "adt-fracture-risk" not in _fired(b.build())


# -- COVID-19 vaccination --------------------------------------------------------------------


def test_covid_vaccine_due_at_65_without_a_recent_dose() -> None:
    b = Builder(age=70)
    assert "vaccine-covid-older" in _fired(b.build())
    b.immunization("208", AS_OF - timedelta(days=300))  # too old: a dose is due again
    assert "vaccine-covid-older" in _fired(b.build())
    b.immunization("207", AS_OF - timedelta(days=60))
    assert "vaccine-covid-older" not in _fired(b.build())


def test_covid_vaccine_not_asked_of_a_record_dated_before_it_existed() -> None:
    p = Builder(age=70).build()
    early = PatientProfile(p.ref, p.sex, p.birth_date, date(2020, 10, 20))
    assert "vaccine-covid-older" not in _fired(early)
    assert "vaccine-covid-older" not in _fired(Builder(age=60).build())


# -- CHA2DS2-VASc: arterial thromboembolism, not venous ----------------------------------------


def _with(code: str, text: str) -> PatientProfile:
    b = Builder(age=50, sex="male")
    b.condition("af")
    b.problems.append(
        Condition(
            "Condition/te",
            text,
            (Code(SNOMED, code, text),),
            "active",
            "confirmed",
            AS_OF - timedelta(days=400),
        )
    )
    return b.build()


def test_arterial_embolism_scores_two_points() -> None:
    s = Facts(_with("54687002", "Arterial embolism (disorder)")).stroke
    assert s.score == 2
    assert [label for label, _, _ in s.parts] == ["stroke, TIA or thromboembolism"]


def test_venous_thromboembolism_does_not_score() -> None:
    assert Facts(_with("59282003", "Pulmonary embolism (disorder)")).stroke.score == 0
    assert Facts(_with("128053003", "Deep venous thrombosis (disorder)")).stroke.score == 0
