"""Positive and negative cases for the criteria the ten new vignettes (examples/vignettes) found
missing:

- a typical antipsychotic in Parkinson's disease is a safety item to stop, with the Parkinson's
  specialist asked about the psychotic symptoms (Beers 2023 table 3; NICE NG71, 2017); quetiapine
  and clozapine are excused;
- verapamil or diltiazem with a reduced ejection fraction is stopped (ESC 2021 HF, class III),
  from a coded HFrEF or from heart failure with LVEF at most 40%; with heart failure and a
  preserved ejection fraction it stays a review;
- bone protection after a fragility fracture at 65 or over (START v3 section E; NOGG 2022);
- naloxone with an opioid and a benzodiazepine (CDC 2022 recommendation 8);
- a laxative with an opioid taken for weeks (START v3);
- no gastroprotection proposed for an NSAID that must itself stop (heart failure, clearance
  below 30: Beers 2023 tables 3 and 6).
"""

from __future__ import annotations

from datetime import timedelta

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from service.record.profile import PatientProfile

from .criteria_factory import AS_OF, Builder


def _proposals(profile: PatientProfile) -> dict[str, Proposal]:
    return {p.id: p for p in analyse(profile).proposals}


# -- antipsychotics in Parkinson's disease ------------------------------------------------------


def _parkinson(drug: str) -> dict[str, Proposal]:
    b = Builder(age=78)
    b.condition("parkinsonism")
    b.med("levodopa")
    b.med(drug)
    return _proposals(b.build())


def test_haloperidol_in_parkinsons_is_a_safety_item_with_the_specialist() -> None:
    stop = _parkinson("haloperidol")["opt-stop-haloperidol"]
    assert stop.priority == "safety"
    assert "dd-typical-antipsychotic-parkinson-stop" in stop.criteria
    assert "Parkinson's specialist" in stop.title
    # the weaker review of the same drug is absorbed into this one activity
    assert "opt-review-haloperidol" not in _parkinson("haloperidol")


def test_quetiapine_in_parkinsons_is_not_asked_to_stop() -> None:
    fired = {c for p in _parkinson("quetiapine").values() for c in p.criteria}
    assert "dd-typical-antipsychotic-parkinson-stop" not in fired
    assert "dd-typical-antipsychotic-parkinson-stop" in {
        c for p in _parkinson("haloperidol").values() for c in p.criteria
    }


# -- rate-limiting calcium-channel blocker with a reduced ejection fraction ---------------------


def test_diltiazem_with_coded_hfref_is_stopped() -> None:
    b = Builder(age=75)
    b.condition("hf-reduced-ef")
    b.med("diltiazem")
    got = _proposals(b.build())
    assert got["opt-stop-diltiazem"].priority == "safety"
    assert "opt-review-diltiazem" not in got


def test_diltiazem_with_heart_failure_and_a_low_measured_ejection_fraction_is_stopped() -> None:
    b = Builder(age=75)
    b.condition("heart-failure")
    b.lab("lvef", 30)
    b.med("diltiazem")
    assert "opt-stop-diltiazem" in _proposals(b.build())


def test_diltiazem_with_a_preserved_ejection_fraction_stays_a_review() -> None:
    b = Builder(age=75)
    b.condition("heart-failure")
    b.lab("lvef", 60)
    b.med("diltiazem")
    got = _proposals(b.build())
    assert "opt-stop-diltiazem" not in got
    assert "opt-review-diltiazem" in got


# -- bone protection after a fragility fracture -------------------------------------------------


def _fracture(*meds: str, age: int = 81) -> dict[str, Proposal]:
    b = Builder(age=age)
    b.condition("fragility-fracture")
    for m in meds:
        b.med(m)
    return _proposals(b.build())


def test_fragility_fracture_without_bone_protection_proposes_it() -> None:
    got = _fracture()["opt-start-bone-protection"]
    assert "start-bone-protection-fragility-fracture" in got.criteria


def test_no_bone_protection_proposed_when_a_bisphosphonate_is_taken() -> None:
    assert "opt-start-bone-protection" not in _fracture("alendronate")


def test_no_bone_protection_proposed_below_the_age_threshold() -> None:
    assert "opt-start-bone-protection" not in _fracture(age=50)


# -- opioids: naloxone and a laxative -----------------------------------------------------------


def _opioid(*meds: str, days_on: int = 400) -> dict[str, Proposal]:
    b = Builder(age=72)
    b.med("oxycodone", authored=AS_OF - timedelta(days=days_on))
    for m in meds:
        b.med(m)
    return _proposals(b.build())


def test_naloxone_offered_with_an_opioid_and_a_benzodiazepine() -> None:
    assert "start-naloxone-opioid-sedative" in _opioid("diazepam")["opt-start-naloxone"].criteria


def test_no_naloxone_proposal_without_a_benzodiazepine_or_with_naloxone_at_home() -> None:
    assert "opt-start-naloxone" not in _opioid()
    assert "opt-start-naloxone" not in _opioid("diazepam", "naloxone")


def test_laxative_proposed_with_a_regular_opioid() -> None:
    assert "start-laxative-regular-opioid" in _opioid()["opt-start-laxative"].criteria


def test_no_laxative_proposal_when_one_is_taken_or_the_opioid_is_new() -> None:
    assert "opt-start-laxative" not in _opioid("senna")
    assert "opt-start-laxative" not in _opioid(days_on=5)


# -- gastroprotection only for an NSAID that may continue ---------------------------------------


def _nsaid(condition: str | None = None, egfr: float | None = None) -> dict[str, Proposal]:
    b = Builder(age=82)
    if condition:
        b.condition(condition)
    if egfr is not None:
        b.lab("egfr", egfr)
    b.med("ibuprofen")
    return _proposals(b.build())


def test_gastroprotection_still_proposed_for_an_nsaid_without_a_contraindication() -> None:
    assert "opt-start-gastroprotection" in _nsaid(egfr=70)


def test_no_gastroprotection_for_an_nsaid_in_heart_failure_or_at_low_clearance() -> None:
    assert "opt-start-gastroprotection" not in _nsaid("heart-failure")
    assert "opt-start-gastroprotection" not in _nsaid(egfr=22)
