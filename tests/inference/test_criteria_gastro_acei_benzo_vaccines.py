"""Positive and negative cases for corrections on gastroprotection, ACE inhibitors, benzodiazepines
and vaccines.

- Gastroprotection on an anticoagulant plus an antiplatelet is a bleeding-prevention safety item
  (ESC 2017 DAPT focused update; ESC 2020 AF; ACCF/ACG/AHA 2010), not a routine omission, and
  no 'benefit you will not live to see' objection is raised against it. It needs a vascular
  indication for the antiplatelet; without one the antiplatelet is stopped instead.
- The kidney-protection ACE inhibitor/ARB proposal needs albuminuria (KDIGO 2022 Diabetes in CKD
  1.2.1); without it, diabetes with raised blood pressure gets the blood-pressure proposal
  (NICE NG136), which no longer claims kidney protection.
- Two benzodiazepines with a seizure disorder on record are reviewed with neurology (Beers 2023
  table 2; NICE NG217 section 4), not as a plain duplicate.
- The vaccination activity's title names every vaccine found due.
"""

from __future__ import annotations

from datetime import date

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from service.record.profile import PatientProfile

from .criteria_factory import Builder


def _proposals(profile: PatientProfile) -> dict[str, Proposal]:
    return {p.id: p for p in analyse(profile).proposals}


# -- gastroprotection on combined antithrombotics ----------------------------------------------


def _antithrombotics(*extra: str, age: int = 80) -> dict[str, Proposal]:
    b = Builder(age=age)
    b.condition("af")
    b.condition("chd")  # the antiplatelet's indication: without one it is stopped instead
    b.med("warfarin")
    b.med("clopidogrel")
    for m in extra:
        b.med(m)
    return _proposals(b.build())


def test_gastroprotection_on_anticoagulant_plus_antiplatelet_is_a_safety_item() -> None:
    gp = _antithrombotics()["opt-start-gastroprotection"]
    assert gp.priority == "safety"
    assert gp.criteria == ("start-gastroprotection-dual-antithrombotic",)
    assert all("EB-GI-001" in p.evidence for p in gp.points if p.stance == "support")


def test_no_life_expectancy_objection_to_gastroprotection_at_a_very_old_age() -> None:
    gp = _antithrombotics(age=101)["opt-start-gastroprotection"]
    assert gp.priority == "safety"
    assert not [p for p in gp.points if p.stance == "attack"]


def test_no_gastroprotection_proposed_when_a_ppi_is_taken() -> None:
    assert "opt-start-gastroprotection" not in _antithrombotics("pantoprazole")


def test_an_nsaid_alone_keeps_gastroprotection_an_omission() -> None:
    b = Builder(age=80)
    b.med("naproxen")
    gp = _proposals(b.build()).get("opt-start-gastroprotection")
    assert gp is not None and gp.priority == "omission"


# -- ACE inhibitor or ARB: kidney protection needs albuminuria ---------------------------------


def _diabetic_kidney(uacr: float | None, sbp: float = 176, dbp: float = 96) -> dict[str, Proposal]:
    b = Builder(age=65)
    for g in ("diabetes", "diabetic-kidney", "hypertension"):
        b.condition(g)
    b.med("hydrochlorothiazide")
    if uacr is not None:
        b.lab("uacr", uacr)
    b.lab("systolic_bp", sbp)
    b.lab("diastolic_bp", dbp)
    return _proposals(b.build())


def test_albuminuria_gets_the_kidney_protection_proposal() -> None:
    got = _diabetic_kidney(uacr=120)
    kidney = got["opt-start-acei-arb"]
    assert "start-acei-arb-diabetic-kidney" in kidney.criteria
    assert "albuminuria" in kidney.description
    assert "opt-start-acei-arb-diabetes-hypertension" not in got


def test_no_kidney_protection_claim_without_albuminuria() -> None:
    """UACR 18.7 mg/g (josue) is below the albuminuria threshold: the ACE inhibitor is still
    proposed, for blood pressure in diabetes, and nothing claims it protects the kidney."""
    got = _diabetic_kidney(uacr=18.7)
    assert "opt-start-acei-arb" not in got
    bp = got["opt-start-acei-arb-diabetes-hypertension"]
    assert bp.criteria == ("start-acei-arb-diabetes-hypertension",)
    assert not any("kidney decline" in p.text or "Kidney protection" in p.text for p in bp.points)


def test_no_uacr_on_record_gets_the_blood_pressure_proposal_not_the_kidney_one() -> None:
    got = _diabetic_kidney(uacr=None)
    assert "opt-start-acei-arb" not in got
    assert "opt-start-acei-arb-diabetes-hypertension" in got


def test_controlled_pressure_without_albuminuria_proposes_no_ace_inhibitor() -> None:
    got = _diabetic_kidney(uacr=18.7, sbp=128, dbp=78)
    assert "opt-start-acei-arb" not in got
    assert "opt-start-acei-arb-diabetes-hypertension" not in got


# -- two benzodiazepines with a seizure disorder ------------------------------------------------


def _two_benzodiazepines(*groups: str) -> dict[str, Proposal]:
    b = Builder(age=45)
    b.med("clobazam", date(2018, 1, 1))
    b.med("clonazepam", date(2019, 1, 1))
    for g in groups:
        b.condition(g)
    return _proposals(b.build())


def test_two_benzodiazepines_with_epilepsy_go_to_neurology() -> None:
    got = _two_benzodiazepines("epilepsy")
    assert "opt-review-duplicate-benzodiazepine" not in got
    (review,) = [
        p for p in got.values() if "duplicate-benzodiazepine-seizure-disorder" in p.criteria
    ]
    assert review.id.endswith("-with-neurology") and "neurology" in review.title
    objection = [p for p in review.points if p.role == "gp" and p.stance == "attack"]
    assert any("seizure" in p.text and "EB-NEURO-001" in p.evidence for p in objection)


def test_two_benzodiazepines_without_a_seizure_disorder_stay_a_duplicate_review() -> None:
    got = _two_benzodiazepines()
    assert got["opt-review-duplicate-benzodiazepine"].criteria == ("duplicate-benzodiazepine",)
    assert not any(p.id.endswith("-with-neurology") for p in got.values())


# -- the vaccination title names every vaccine due ---------------------------------------------


def test_the_vaccination_title_names_every_vaccine_due() -> None:
    vax = _proposals(Builder(age=72).build())["opt-vaccinations-due"]
    assert len(vax.criteria) > 1
    for name in ("flu", "pneumococcal", "zoster"):  # their short names, with the count
        assert name in vax.title, vax.title
    assert vax.title.startswith(f"Offer vaccinations ({len(vax.criteria)} due: ")


def test_a_single_vaccine_due_is_named_alone() -> None:
    b = Builder(age=55)
    b.immunization("140", date(2024, 1, 10))  # influenza this season
    b.immunization("115", date(2020, 1, 1))  # Tdap within ten years
    vax = _proposals(b.build()).get("opt-vaccinations-due")
    assert vax is not None
    assert vax.title == "Offer vaccinations (1 due: zoster)"
