"""The plan after a hospital stay: the index stay and the medicine changes around it as facts,
and each transition criterion with a case that fires and a case that must not."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from inference.knowledge import analyse
from inference.knowledge.facts import Facts
from inference.knowledge.transitions import TRANSITIONS, changes_of, index_stay, stay_values
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import LOINC_GROUPS, RXNORM, SNOMED

AS_OF = date(2026, 11, 30)
HF = Code(SNOMED, "84114007", "Heart failure (disorder)")
NSTEMI = Code(SNOMED, "401314000", "Acute non-ST segment elevation myocardial infarction")
STROKE = Code(SNOMED, "422504002", "Ischemic stroke (disorder)")
HIP = Code(SNOMED, "5913000", "Fracture of neck of femur (disorder)")
AKI = Code(SNOMED, "14669001", "Acute renal failure syndrome (disorder)")
PNEUMONIA = Code(SNOMED, "385093006", "Community acquired pneumonia (disorder)")
GI_BLEED = Code(SNOMED, "74474003", "Gastrointestinal hemorrhage (disorder)")
FRAILTY = Code(SNOMED, "248279007", "Frailty (finding)")
CATARACT = Code(SNOMED, "193570009", "Cataract (disorder)")
AF = Code(SNOMED, "49436004", "Atrial fibrillation (disorder)")
FALL = Code(SNOMED, "217082002", "Accidental fall (event)")


def _days(n: int) -> date:
    return AS_OF - timedelta(days=n)


def _cond(ref: str, code: Code, onset: date = date(2020, 1, 1)) -> Condition:
    return Condition(f"Condition/{ref}", code.display, (code,), "active", "confirmed", onset)


def _stay(
    *diagnoses: str, end: int = 5, length: int = 5, cls: str = "IMP", ref: str = "e1"
) -> Encounter:
    return Encounter(
        f"Encounter/{ref}",
        "Hospital admission",
        _days(end + length),
        _days(end),
        class_code=cls,
        diagnoses=tuple(f"Condition/{d}" for d in diagnoses),
        discharge="home",
    )


def _med(
    ref: str,
    text: str,
    *,
    dose: float = 1.0,
    times: float = 1.0,
    status: str = "active",
    authored: date = date(2020, 1, 1),
    **extra: object,
) -> Medication:
    return Medication(
        f"MedicationRequest/{ref}",
        text,
        (Code(RXNORM, "", text),),
        status,
        "order",
        authored,
        dose_value=dose,
        dose_unit="mg",
        times_per_day=times,
        **extra,  # type: ignore[arg-type]
    )


def _num(ref: str, quantity: str, value: float, when: date, unit: str = "") -> Observation:
    return Observation(f"Observation/{ref}", LOINC_GROUPS[quantity][0], quantity, value, unit, when)


def _profile(
    *,
    problems: tuple[Condition, ...] = (),
    meds: tuple[Medication, ...] = (),
    obs: tuple[Observation, ...] = (),
    encounters: tuple[Encounter, ...] = (),
    age: int = 80,
) -> PatientProfile:
    return PatientProfile(
        "Patient/p",
        "female",
        date(AS_OF.year - age, 1, 1),
        AS_OF,
        problems=problems,
        medications=meds,
        observations=tuple(
            {o.loinc: o for o in sorted(obs, key=lambda o: o.effective or AS_OF)}.values()
        ),
        encounters=encounters,
        readings=tuple(sorted(obs, key=lambda o: o.effective or AS_OF)),
    )


def _titles(profile: PatientProfile) -> str:
    return " | ".join(p.title for p in analyse(profile).proposals).lower()


def _ids(profile: PatientProfile) -> set[str]:
    return {p.id for p in analyse(profile).proposals}


# ------------------------------------------------------------------------------ the stay


def test_the_index_stay_is_the_latest_that_ended_within_the_window() -> None:
    old = _stay("c1", end=TRANSITIONS.stay.days + 1, ref="old")
    recent = _stay("c1", end=4, ref="recent")
    p = _profile(problems=(_cond("c1", HF),), encounters=(old, recent))
    stay = index_stay(p)
    assert stay is not None and stay.encounter.ref == "Encounter/recent"
    assert stay.days_since == 4 and "heart-failure" in stay.groups
    assert stay.setting == "hospital stay" and stay.disposition == "home"


def test_an_outpatient_or_an_old_stay_has_no_index_stay() -> None:
    clinic = Encounter("Encounter/v", "Office visit", _days(3), _days(3), class_code="AMB")
    assert index_stay(_profile(encounters=(clinic,))) is None
    old = _stay(end=TRANSITIONS.stay.days + 1)
    assert index_stay(_profile(encounters=(old,))) is None


def test_admission_and_discharge_values_are_the_first_and_last_of_the_stay() -> None:
    stay_enc = _stay(end=5, length=6)
    obs = (
        _num("k0", "creatinine", 1.0, _days(40)),
        _num("k1", "creatinine", 1.1, _days(11)),
        _num("k2", "creatinine", 1.5, _days(5)),
    )
    p = _profile(encounters=(stay_enc,), obs=obs)
    stay = index_stay(p)
    assert stay is not None
    got = stay_values(p, stay, LOINC_GROUPS["creatinine"])
    assert got is not None and (got[0].value, got[1].value) == (1.1, 1.5)


# ---------------------------------------------------------------------- medicine changes


def _changes(*meds: Medication) -> dict[str, tuple[str, ...]]:
    p = _profile(encounters=(_stay(end=5),), meds=meds)
    out: dict[str, tuple[str, ...]] = {}
    for c in changes_of(p, index_stay(p)):
        out[c.med.ref] = (*out.get(c.med.ref, ()), c.kind)
    return out


def test_each_kind_of_medicine_change_is_read() -> None:
    old = _med("old", "furosemide 40 MG Oral Tablet", dose=40, status="stopped")
    got = _changes(
        old,
        _med("up", "furosemide 40 MG Oral Tablet", dose=80, authored=_days(5), prior=old.ref),
        _med("new", "spironolactone 25 MG Oral Tablet", dose=25, authored=_days(5)),
        _med(
            "held",
            "lisinopril 20 MG Oral Tablet",
            dose=20,
            status="on-hold",
            status_reason="held on admission",
        ),
        _med(
            "stop",
            "naproxen 500 MG Oral Tablet",
            dose=500,
            status="stopped",
            status_reason="stopped in hospital: AKI",
        ),
        _med("ends", "enoxaparin 40 MG", dose=40, authored=_days(5), ends=_days(-12)),
        _med("ended", "cephalexin 500 MG", status="completed", authored=_days(7), ends=_days(2)),
    )
    assert got == {
        "MedicationRequest/up": ("dose-changed",),
        "MedicationRequest/new": ("new",),
        "MedicationRequest/held": ("held",),
        "MedicationRequest/stop": ("stopped",),
        "MedicationRequest/ends": ("new", "course-ending"),
        "MedicationRequest/ended": ("course-ended",),
    }


def test_a_dose_change_is_read_from_the_same_ingredient_without_a_link() -> None:
    home = _med("home", "glargine 30 UNT", dose=30)
    got = _changes(home, _med("dc", "glargine 20 UNT", dose=20, authored=_days(5)))
    assert got == {"MedicationRequest/dc": ("dose-changed",)}
    same = _changes(home, _med("dc", "glargine 30 UNT", dose=30, authored=_days(5)))
    assert same == {}  # the same dose written again at discharge is no change


def test_a_stop_without_a_reason_or_tied_to_another_visit_is_not_a_change_of_the_stay() -> None:
    quiet = _med("q", "naproxen 500 MG Oral Tablet", status="stopped")
    elsewhere = _med(
        "e", "naproxen 500 MG", status="stopped", status_reason="GI upset", encounter="Encounter/x"
    )
    assert _changes(quiet, elsewhere) == {}


def test_no_stay_no_changes() -> None:
    p = _profile(meds=(_med("h", "lisinopril 20 MG Oral Tablet", status="on-hold"),))
    assert Facts(p).stay is None and Facts(p).changes == ()


# ------------------------------------------------------------------------ the criteria


def _hf_after_stay(**kw: object) -> PatientProfile:
    old = _med("old", "furosemide 40 MG Oral Tablet", dose=40, status="stopped")
    meds = (
        old,
        _med("up", "furosemide 40 MG Oral Tablet", dose=80, authored=_days(5), prior=old.ref),
    )
    obs = (_num("k", "potassium", 4.9, _days(5), "mmol/L"),)
    return _profile(
        problems=(_cond("c1", HF),),
        encounters=(_stay("c1"),),
        meds=meds,
        obs=obs + tuple(kw.get("extra_obs", ())),  # type: ignore[arg-type]
    )


def test_heart_failure_stay_gets_an_early_review_weighing_and_a_potassium_check() -> None:
    titles = _titles(_hf_after_stay())
    assert "heart failure review within 7 days of discharge" in titles
    assert "daily weighing" in titles
    assert "check potassium and creatinine within 7 days: furosemide (dose changed)" in titles


def test_no_heart_failure_follow_up_without_a_heart_failure_admission() -> None:
    outpatient = _profile(
        problems=(_cond("c1", HF),),
        encounters=(Encounter("Encounter/v", "Office visit", _days(3), _days(3), "AMB"),),
    )
    assert "heart failure review" not in _titles(outpatient)
    cataract = _profile(
        problems=(_cond("c1", HF), _cond("c2", CATARACT)), encounters=(_stay("c2", cls="SS"),)
    )
    titles = _titles(cataract)
    assert "heart failure review" not in titles and "discharge" not in titles


def test_a_potassium_measured_after_discharge_settles_the_check() -> None:
    later = (_num("k2", "potassium", 4.6, _days(1), "mmol/L"),)
    assert "check potassium" not in _titles(_hf_after_stay(extra_obs=later))


def test_inr_is_due_after_warfarin_started_and_not_once_measured() -> None:
    warfarin = _med("w", "warfarin 5 MG Oral Tablet", dose=5, authored=_days(7))
    enox = _med("x", "enoxaparin 80 MG", dose=80, authored=_days(7))
    inr = _num("i", "inr", 1.7, _days(5))
    base = _profile(encounters=(_stay(),), meds=(warfarin, enox), obs=(inr,))
    titles = _titles(base)
    assert "check the inr now: warfarin (new)" in titles
    assert "keep enoxaparin with warfarin until the inr is in range" in titles
    checked = _profile(
        encounters=(_stay(),), meds=(warfarin, enox), obs=(inr, _num("i2", "inr", 2.1, _days(1)))
    )
    assert "check the inr now" not in _titles(checked)


def test_a_held_kidney_medicine_needs_a_decision_with_a_creatinine() -> None:
    held = _med(
        "h",
        "lisinopril 20 MG Oral Tablet",
        dose=20,
        status="on-hold",
        status_reason="held in hospital",
    )
    p = _profile(problems=(_cond("c1", AKI),), encounters=(_stay("c1"),), meds=(held,))
    titles = _titles(p)
    assert "decide when lisinopril goes back on: check creatinine and potassium first" in titles
    assert "sick-day guidance" in titles
    held_bp = _med(
        "h",
        "amlodipine 5 MG Oral Tablet",
        dose=5,
        status="on-hold",
        status_reason="held on the ward",
    )
    other = _titles(_profile(encounters=(_stay(),), meds=(held_bp,)))
    assert "decide when amlodipine goes back on (held" in other and "creatinine" not in other


def test_a_medicine_stopped_in_hospital_stays_off_and_never_says_restart() -> None:
    stopped = _med(
        "s",
        "naproxen 500 MG Oral Tablet",
        status="stopped",
        status_reason="stopped in hospital: AKI",
    )
    p = _profile(encounters=(_stay(),), meds=(stopped,))
    titles = _titles(p)
    assert "keep naproxen off the medicine list" in titles and "start" not in titles
    no_stay = _profile(meds=(stopped,))
    assert "keep naproxen off" not in _titles(no_stay)


def test_a_course_ends_on_its_date_and_an_ended_course_is_not_continued() -> None:
    running = _med("r", "rivaroxaban 10 MG", dose=10, authored=_days(4), starts=_days(4))
    running = _med(
        "r", "rivaroxaban 10 MG", dose=10, authored=_days(4), starts=_days(6), ends=_days(-7)
    )
    titles = _titles(_profile(encounters=(_stay(),), meds=(running,)))
    assert "stop rivaroxaban on 7 december 2026: end of the 14-day course" in titles
    ended = _med("c", "cephalexin 500 MG", status="completed", authored=_days(8), ends=_days(2))
    titles = _titles(_profile(encounters=(_stay(),), meds=(ended,)))
    assert "cephalexin" not in titles and "continue" not in titles


def test_a_duplicate_between_the_home_and_discharge_lists_is_reconciled() -> None:
    home = _med("home", "metoprolol tartrate 50 MG Oral Tablet", dose=50)
    new = _med("new", "bisoprolol fumarate 2.5 MG Oral Tablet", dose=2.5, authored=_days(5))
    titles = _titles(_profile(encounters=(_stay(),), meds=(home, new)))
    assert "reconcile the home and discharge lists: bisoprolol and metoprolol" in titles
    replaced = _med("home", "metoprolol tartrate 50 MG", dose=50, status="stopped")
    assert "reconcile" not in _titles(_profile(encounters=(_stay(),), meds=(replaced, new)))


@pytest.mark.parametrize(
    ("code", "wanted"),
    [
        (NSTEMI, "refer to cardiac rehabilitation"),
        (NSTEMI, "chest pain returns"),
        (STROKE, "stroke service follow-up and give driving advice"),
        (HIP, "physiotherapy and occupational therapy at home"),
        (PNEUMONIA, "recovery after pneumonia and when to seek help"),
        (GI_BLEED, "if the bleeding returns"),
    ],
)
def test_follow_up_and_return_precautions_by_the_condition_of_the_stay(
    code: Code, wanted: str
) -> None:
    assert wanted in _titles(_profile(problems=(_cond("c1", code),), encounters=(_stay("c1"),)))
    outpatient = _profile(problems=(_cond("c1", code, _days(20)),))
    assert wanted not in _titles(outpatient)


def test_home_support_for_a_frail_patient_after_a_stay_only() -> None:
    frail = (_cond("c1", PNEUMONIA), _cond("c2", FRAILTY))
    assert "home care and reablement" in _titles(
        _profile(problems=frail, encounters=(_stay("c1"),))
    )
    assert "home care" not in _titles(_profile(problems=frail))
    fell = (_cond("c1", PNEUMONIA), _cond("c2", FALL, _days(20)))
    assert "home care" in _titles(_profile(problems=fell, encounters=(_stay("c1"),), age=70))
    assert "home care" not in _titles(_profile(problems=fell, encounters=(_stay("c1"),), age=60))


def test_anaemia_at_discharge_gets_a_blood_count_until_one_is_done() -> None:
    low = _num("h", "haemoglobin", 9.1, _days(5), "g/dL")
    assert "check the full blood count" in _titles(_profile(encounters=(_stay(),), obs=(low,)))
    admitted = _num("h0", "haemoglobin", 12.8, _days(9), "g/dL")
    plan = analyse(_profile(encounters=(_stay(),), obs=(admitted, low)))
    (fbc,) = [p for p in plan.proposals if p.id == "opt-full-blood-count-after-stay"]
    assert "12.8 on admission, 9.1 g/dL at discharge" in fbc.description
    repeat = _num("h2", "haemoglobin", 10.2, _days(1), "g/dL")
    assert "full blood count" not in _titles(_profile(encounters=(_stay(),), obs=(low, repeat)))


def test_an_unindicated_antiplatelet_beside_an_anticoagulant_is_stopped_not_protected() -> None:
    meds = (
        _med("a", "apixaban 5 MG Oral Tablet", dose=5, times=2),
        _med("b", "aspirin 81 MG Oral Tablet", dose=81),
    )
    titles = _titles(_profile(problems=(_cond("c1", AF),), meds=meds))
    assert "stop aspirin: no indication beside the anticoagulant" in titles
    assert "gastroprotection" not in titles
    with_mi = _titles(_profile(problems=(_cond("c1", AF), _cond("c2", NSTEMI)), meds=meds))
    assert "gastroprotection" in with_mi and "no indication" not in with_mi


# ------------------------------------------------------- a stop is the stay's only when dated


def test_an_old_stop_whose_reason_names_no_stay_is_not_blamed_on_the_stay() -> None:
    """A sulfonylurea stopped years ago for a dose change, with a stay last week for something
    else: the stop is not "during the hospital stay"."""
    old = _med(
        "g",
        "gliclazide 80 MG Oral Tablet",
        status="stopped",
        status_reason="dose changed",
        authored=date(2019, 3, 1),
    )
    assert _changes(old) == {}
    assert "keep gliclazide off" not in _titles(_profile(encounters=(_stay(),), meds=(old,)))


def test_an_order_replaced_by_a_higher_dose_of_the_same_medicine_is_no_stop() -> None:
    """An opioid-agonist treatment raised after an overdose: the old order is stopped with a
    reason and a new active order of the same ingredient replaces it, without a
    priorPrescription link. That is a dose change, never "keep it off the list"."""
    old = _med(
        "m1",
        "methadone hydrochloride 10 MG/ML Oral Solution",
        dose=60,
        status="stopped",
        status_reason="dose increased in hospital",
        authored=_days(40),
    )
    new = _med("m2", "methadone hydrochloride 10 MG/ML Oral Solution", dose=80, authored=_days(5))
    got = _changes(old, new)
    assert "MedicationRequest/m1" not in got
    titles = _titles(_profile(encounters=(_stay(),), meds=(old, new)))
    assert "keep methadone off" not in titles


def test_a_stop_dated_inside_the_stay_is_the_stays_without_a_reason_word() -> None:
    inside = _med(
        "n",
        "naproxen 500 MG Oral Tablet",
        status="stopped",
        status_reason="gastric bleed",
        authored=_days(7),
    )
    assert _changes(inside) == {"MedicationRequest/n": ("stopped",)}
