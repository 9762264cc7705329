"""Anticoagulant safety checks, anaemia, diabetes, vaccines and airways: each criterion fires
on the patient it is for and stays quiet on the one it is not; the merged INR/haemoglobin
checks rank as safety; blood pressure is judged in whole mmHg; every vaccine due is named in
one activity."""

from __future__ import annotations

from datetime import date, timedelta

from inference.embedded import _priority
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import PatientProfile

from .criteria_factory import AS_OF, Builder


def _fired(profile: PatientProfile) -> set[str]:
    return {f.criterion.id for f in evaluate(CRITERIA, Facts(profile))}


def _proposal(profile: PatientProfile, pid: str):  # type: ignore[no-untyped-def]
    return next(p for p in analyse(profile).proposals if p.id == pid)


# -- warfarin with no INR ever ----------------------------------------------------------------


def test_warfarin_without_any_inr_is_a_safety_check() -> None:
    b = Builder(age=83)
    b.med("warfarin")
    assert {"monitor-inr", "monitor-inr-never-measured"} <= _fired(b.build())
    assert _priority(_proposal(b.build(), "opt-monitor-inr")) == "safety"


def test_an_old_inr_is_routine_monitoring_not_a_safety_check() -> None:
    b = Builder(age=83)
    b.med("warfarin")
    b.lab("inr", 2.4, AS_OF - timedelta(days=400))
    fired = _fired(b.build())
    assert "monitor-inr" in fired and "monitor-inr-never-measured" not in fired
    assert _priority(_proposal(b.build(), "opt-monitor-inr")) == "monitoring"


# -- anaemia --------------------------------------------------------------------------------


def test_anaemia_on_anticoagulant_and_antiplatelet_without_haemoglobin_is_safety() -> None:
    b = Builder(age=90)
    b.med("warfarin")
    b.med("clopidogrel")
    b.condition("anemia")
    assert "monitor-haemoglobin-anticoagulant-antiplatelet-anaemia" in _fired(b.build())
    p = _proposal(b.build(), "opt-monitor-haemoglobin-antithrombotic-anaemia")
    assert _priority(p) == "safety"


def test_anaemia_on_one_antithrombotic_stays_routine() -> None:
    b = Builder(age=90)
    b.med("clopidogrel")
    b.condition("anemia")
    fired = _fired(b.build())
    assert "monitor-haemoglobin-antithrombotic-anaemia" in fired
    assert "monitor-haemoglobin-anticoagulant-antiplatelet-anaemia" not in fired
    assert "monitor-haemoglobin-anaemia-unmeasured" not in fired  # no second Hb activity


def test_unmeasured_anaemia_is_checked_and_a_recent_result_is_enough() -> None:
    b = Builder(age=63)
    b.condition("anemia")
    b.condition("ckd")
    b.med("naproxen")
    assert "monitor-haemoglobin-anaemia-unmeasured" in _fired(b.build())
    texts = " ".join(
        pt.text for pt in _proposal(b.build(), "opt-monitor-haemoglobin-anaemia").points
    )
    assert "kidney" in texts and "NSAID" in texts
    b.lab("haemoglobin", 11.2, AS_OF - timedelta(days=100))
    assert "monitor-haemoglobin-anaemia-unmeasured" not in _fired(b.build())


def test_chemotherapy_blood_count_covers_the_anaemia() -> None:
    b = Builder(age=68)
    b.condition("anemia")
    b.med("docetaxel")
    assert "monitor-haemoglobin-anaemia-unmeasured" not in _fired(b.build())


# -- potassium on a thiazide ----------------------------------------------------------------


def test_thiazide_without_potassium_asks_for_it_with_digoxin_named() -> None:
    b = Builder(age=90)
    b.med("hydrochlorothiazide")
    b.med("digoxin")
    assert "monitor-potassium-thiazide" in _fired(b.build())
    # Sodium and eGFR are due too: one renal profile activity carries the potassium reason.
    texts = " ".join(pt.text for pt in _proposal(b.build(), "opt-monitor-renal-profile").points)
    assert "digoxin toxicity" in texts


def test_thiazide_with_a_recent_potassium_is_quiet() -> None:
    b = Builder(age=90)
    b.med("hydrochlorothiazide")
    b.lab("potassium", 4.1, AS_OF - timedelta(days=60))
    assert "monitor-potassium-thiazide" not in _fired(b.build())


# -- diabetes eye and foot ------------------------------------------------------------------


def test_retinopathy_asks_for_a_retinal_examination_plain_diabetes_does_not() -> None:
    b = Builder(age=65)
    b.condition("diabetic-retinopathy")
    fired = _fired(b.build())
    assert "diabetes-retinal-examination" in fired  # the retinopathy group implies diabetes
    assert "diabetes-foot-assessment" in fired
    plain = Builder(age=65)
    plain.condition("diabetes")
    assert "diabetes-retinal-examination" not in _fired(plain.build())


def test_neuropathy_raises_the_foot_check() -> None:
    b = Builder(age=65)
    b.condition("diabetic-neuropathy")
    texts = " ".join(pt.text for pt in _proposal(b.build(), "opt-diabetes-foot-assessment").points)
    assert "foot protection service" in texts
    plain = Builder(age=65)
    plain.condition("diabetes")
    texts = " ".join(
        pt.text for pt in _proposal(plain.build(), "opt-diabetes-foot-assessment").points
    )
    assert "foot protection service" not in texts


# -- vaccines under 65 and the list of vaccines due -----------------------------------------


def test_influenza_and_pneumococcal_due_under_65_with_diabetes_not_without() -> None:
    b = Builder(age=63)
    b.condition("diabetes")
    fired = _fired(b.build())
    assert {"vaccine-influenza-risk-adult", "vaccine-pneumococcal-risk-adult"} <= fired
    healthy = Builder(age=63)
    healthy.condition("hypertension")
    fired = _fired(healthy.build())
    assert not {"vaccine-influenza-risk-adult", "vaccine-pneumococcal-risk-adult"} & fired


def test_one_vaccination_activity_names_every_vaccine_due() -> None:
    b = Builder(age=71)
    desc = _proposal(b.build(), "opt-vaccinations-due").description
    for name in ("influenza", "pneumococcal", "zoster", "tetanus"):
        assert name in desc
    b.immunization("133", AS_OF - timedelta(days=200))  # a conjugate pneumococcal vaccine
    assert "pneumococcal" not in _proposal(b.build(), "opt-vaccinations-due").description


# -- asthma review --------------------------------------------------------------------------


def test_asthma_visit_with_an_inhaled_steroid_asks_for_a_review() -> None:
    b = Builder(age=78)
    b.med("fluticasone")
    b.encounter("asthma", "EMER", AS_OF - timedelta(days=390))
    assert "asthma-review-after-visit" in _fired(b.build())
    texts = " ".join(pt.text for pt in _proposal(b.build(), "opt-asthma-review").points)
    assert "emergency visit" in texts


def test_copd_has_its_own_inhaler_review_and_an_old_visit_does_not_count() -> None:
    b = Builder(age=78)
    b.med("fluticasone")
    b.encounter("asthma", "EMER", AS_OF - timedelta(days=390))
    b.condition("copd")
    assert "asthma-review-after-visit" not in _fired(b.build())
    old = Builder(age=78)
    old.med("fluticasone")
    old.encounter("asthma", "EMER", AS_OF - timedelta(days=800))
    assert "asthma-review-after-visit" not in _fired(old.build())


# -- advance care planning first at 90 or over ----------------------------------------------


def test_advance_care_planning_leads_at_ninety_not_at_eighty_five() -> None:
    old = Builder(age=95)
    assert _priority(_proposal(old.build(), "opt-advance-care-planning")) == "safety"
    younger = Builder(age=86)
    assert "acp-goals-first-oldest" not in _fired(younger.build())
    assert _priority(_proposal(younger.build(), "opt-advance-care-planning")) == "omission"


# -- blood pressure in whole mmHg -----------------------------------------------------------


def _bp(systolic: float, diastolic: float) -> Facts:
    b = Builder(age=65)
    b.condition("hypertension")
    b.lab("systolic_bp", systolic)
    b.lab("diastolic_bp", diastolic)  # (not paired: the builder gives it its own id)
    return Facts(b.build())


def test_a_systolic_that_reads_180_is_severe_and_179_is_not() -> None:
    assert _bp(179.6, 98.0).bp.severe  # type: ignore[union-attr]
    assert not _bp(179.4, 98.0).bp.severe  # type: ignore[union-attr]


def test_the_event_interval_reads_naturally() -> None:
    from inference.knowledge.criteria.interpret import _ago

    assert _ago(0) == "on the record date"
    assert _ago(1) == "1 day before the record date"
    assert _ago(40) == "40 days before the record date"
    assert date(2024, 1, 1) < AS_OF
