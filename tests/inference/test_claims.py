"""The claim checker: each kind of claim held against a record, with the false statements a
blind review found built again as new synthetic records (a stop blamed on a stay it did not
happen in, "no result" beside a result, a ceiling exceeded by an unstated dose, an urgent
interaction with a held medicine, stop-smoking advice to a never-smoker, an old event called
new), and the interpreter withholding a firing whose claim fails."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from inference.knowledge import analyse
from inference.knowledge.claims import (
    AboveLimit,
    CurrentSmoker,
    NoResult,
    Recent,
    StoppedInStay,
    TakenTogether,
    check,
    latest_named,
)
from service.record.profile import Code, Encounter, Medication, Observation, PatientProfile
from service.record.vocabulary import RXNORM, SNOMED

PLAN = date(2026, 11, 30)


def _days(n: int) -> date:
    return PLAN - timedelta(days=n)


STAY = Encounter("Encounter/s", "Hospital admission", _days(10), _days(5), class_code="IMP")


def _med(ref: str, text: str, code: str = "", **extra: object) -> Medication:
    fields: dict[str, object] = {"status": "active", "authored": date(2020, 1, 1), **extra}
    return Medication(
        f"MedicationRequest/{ref}",
        text,
        (Code(RXNORM, code, text),),
        str(fields.pop("status")),
        "order",
        fields.pop("authored"),  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


def _obs(
    ref: str, loinc: str, display: str, value: float, day: date, **extra: object
) -> Observation:
    return Observation(f"Observation/{ref}", loinc, display, value, "", day, **extra)  # type: ignore[arg-type]


def _profile(
    *, meds=(), obs=(), encounters=(STAY,), received: date | None = PLAN, as_of=PLAN
) -> PatientProfile:  # type: ignore[no-untyped-def]
    return PatientProfile(
        "Patient/p",
        "female",
        date(1950, 1, 1),
        as_of,
        medications=tuple(meds),
        observations=tuple(obs),
        readings=tuple(obs),
        encounters=tuple(encounters),
        received=received,
    )


# ------------------------------------------------------------------- stopped in a stay


def test_a_stop_with_a_reason_naming_the_stay_is_the_stays() -> None:
    m = _med("n", "naproxen 500 MG", status="stopped", status_reason="stopped in hospital: AKI")
    assert check(StoppedInStay(m.ref, STAY.ref), _profile(meds=[m]), PLAN) is None


def test_a_stop_dated_inside_the_stay_or_in_its_encounter_is_the_stays() -> None:
    dated = _med("a", "naproxen 500 MG", status="stopped", authored=_days(7))
    linked = _med("b", "ibuprofen 200 MG", status="stopped", encounter=STAY.ref)
    p = _profile(meds=[dated, linked])
    assert check(StoppedInStay(dated.ref, STAY.ref), p, PLAN) is None
    assert check(StoppedInStay(linked.ref, STAY.ref), p, PLAN) is None


def test_an_old_stop_for_a_dose_change_is_not_the_stays() -> None:
    m = _med("g", "gliclazide 80 MG", status="stopped", status_reason="dose change")
    why = check(StoppedInStay(m.ref, STAY.ref), _profile(meds=[m]), PLAN)
    assert why == "nothing dates the stop inside the stay"


@pytest.mark.parametrize(
    "new",
    [
        _med("m2", "methadone 10 MG/ML Oral Solution", dose_value=80.0),  # same first word
        _med("m2", "Methadose oral concentrate", "864706"),  # same code
        _med("m2", "opioid agonist treatment", prior="MedicationRequest/m1"),  # its prior order
    ],
)
def test_an_order_replaced_by_a_current_one_of_the_same_medicine_is_a_dose_change(
    new: Medication,
) -> None:
    old = _med(
        "m1",
        "methadone 10 MG/ML Oral Solution",
        "864706",
        status="stopped",
        status_reason="dose increased in hospital after an overdose",
    )
    why = check(StoppedInStay(old.ref, STAY.ref), _profile(meds=[old, new]), PLAN)
    assert why is not None and "dose change" in why


def test_an_active_medicine_was_not_stopped() -> None:
    m = _med("a", "lisinopril 10 MG")
    assert (
        check(StoppedInStay(m.ref, STAY.ref), _profile(meds=[m]), PLAN) == "the request is active"
    )


# -------------------------------------------------------------------------- no result


def test_no_result_fails_when_a_result_is_coded_another_way_or_only_named() -> None:
    """A creatinine in umol/L under a code outside the group, and a cognitive score under a
    local code: both are results, so "no result" is false."""
    creat = _obs("c", "14682-9", "Creatinine [Moles/volume] in Serum or Plasma", 133, _days(5))
    moca = _obs("m", "local-1", "Montreal Cognitive Assessment total", 24, _days(450))
    p = _profile(obs=[creat, moca])
    assert check(NoResult("creatinine"), p, PLAN) == "a result is recorded (Observation/c)"
    assert check(NoResult("cognition"), p, PLAN) == "a result is recorded (Observation/m)"
    assert check(NoResult("vitamin_b12"), p, PLAN) is None


def test_a_name_of_another_test_is_not_a_result() -> None:
    hba1c = _obs("h", "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", 6.2, _days(5))
    uacr = _obs("u", "14959-1", "Microalbumin/Creatinine [Mass Ratio] in Urine", 40, _days(5))
    p = _profile(obs=[hba1c, uacr])
    assert check(NoResult("haemoglobin"), p, PLAN) is None
    assert check(NoResult("creatinine"), p, PLAN) is None
    assert latest_named(p, "haemoglobin") is None


def test_the_monitoring_line_states_the_last_result_found_by_name_and_its_age() -> None:
    """A cognitive score 15 months before the plan under another code: the line says when the
    last result was, counted to the plan day, never "no result in the record"."""
    dementia = Code(SNOMED, "52448006", "Dementia (disorder)")
    from service.record.profile import Condition

    p = replace(
        _profile(obs=[_obs("m", "local-1", "MoCA total score", 21, _days(456))], encounters=()),
        problems=(Condition("Condition/d", "Dementia", (dementia,), "active", "confirmed", None),),
    )
    texts = " ".join(f"{x.title} {x.description}" for x in analyse(p).proposals)
    assert "no result in the record" not in texts


# ------------------------------------------------------------------------ above a limit


def test_a_limit_is_exceeded_only_by_a_stated_dose_above_it() -> None:
    p = _profile()
    assert check(AboveLimit("m", None, ">", 20.0), p, PLAN) == "the daily dose is not stated"
    assert check(AboveLimit("m", 20.0, ">", 20.0), p, PLAN) == "the dose is within the limit"
    assert check(AboveLimit("m", 20.0, ">=", 20.0), p, PLAN) is None
    assert check(AboveLimit("m", 40.0, ">", 20.0), p, PLAN) is None


def test_an_unstated_simvastatin_dose_is_a_request_to_verify_not_a_ceiling_exceeded() -> None:
    """No dose and no strength: the ceiling cannot be said to be exceeded. The pair is raised
    as a routine request to verify the dose, and no text of it says "exceeds"."""
    simva = _med("s", "simvastatin Oral Tablet", "36567")
    amlo = _med("a", "amlodipine 5 MG Oral Tablet", "197361")
    props = analyse(_profile(meds=[simva, amlo], encounters=())).proposals
    verify = next(p for p in props if p.id == "opt-verify-reduce-simvastatin")
    assert verify.title == "Verify the daily dose of simvastatin (dose not stated)"
    assert "exceeds" not in verify.description and verify.urgency_class == "routine"
    assert "opt-reduce-simvastatin" not in {p.id for p in props}


# ---------------------------------------------------------------------- taken together


def test_a_held_medicine_is_not_taken_now() -> None:
    a = _med("a", "naproxen 500 MG")
    b = _med("b", "lisinopril 20 MG", status="on-hold")
    why = check(TakenTogether((a.ref, b.ref)), _profile(meds=[a, b]), PLAN)
    assert why == "a medicine is on-hold"
    assert check(TakenTogether((a.ref,)), _profile(meds=[a, b]), PLAN) is None


def test_an_interaction_with_a_held_medicine_is_for_its_restart_and_not_urgent() -> None:
    """Naproxen with warfarin is urgent while both are taken; with warfarin on hold the same
    finding is acted on soon, before warfarin is restarted, not as a combination being taken."""
    naproxen = _med("n", "naproxen 500 MG Oral Tablet", "198013", dose_value=500.0)
    taken = _med("w", "warfarin 5 MG Oral Tablet", "855332")
    held = replace(taken, status="on-hold")

    def stop_naproxen(warfarin: Medication) -> str:
        got = analyse(_profile(meds=[warfarin, naproxen], encounters=())).proposals
        p = next(x for x in got if x.id == "opt-stop-naproxen")
        assert "ddi-anticoagulant-nsaid" in p.criteria
        return p.urgency_class

    assert stop_naproxen(taken) == "urgent"
    assert stop_naproxen(held) == "soon"


def test_a_finding_on_a_held_medicine_says_it_is_on_hold() -> None:
    """A thiazide on hold for a low sodium, with gout: the drug-disease line says the thiazide
    is on hold, never that it is taken, and suggests no restart."""
    from service.record.profile import Condition

    gout = Code(SNOMED, "90560007", "Gout (disorder)")
    thiazide = _med(
        "t", "bendroflumethiazide 2.5 MG Oral Tablet", "", status="on-hold", dose_value=2.5
    )
    p = replace(
        _profile(meds=[thiazide], encounters=()),
        problems=(Condition("Condition/g", "Gout", (gout,), "active", "confirmed", None),),
    )
    said = [x for x in analyse(p).proposals if "dd-thiazide-gout" in x.criteria]
    assert said, "the finding is still raised for when it is given again"
    for x in said:
        assert x.title.startswith("While bendroflumethiazide is on hold: ")
        assert "restart" not in x.title.lower()
        assert x.urgency_class not in ("urgent", "resolve-first")


# ---------------------------------------------------------------------- smoking, time


def _smoking(ref: str, code: str, display: str, day: date) -> Observation:
    return Observation(
        f"Observation/{ref}",
        "72166-2",
        "Tobacco smoking status",
        None,
        "",
        day,
        value_text=display,
        value_codes=(Code(SNOMED, code, display),),
    )


def test_a_never_smoker_is_not_told_to_stop() -> None:
    never = _profile(obs=[_smoking("n", "266919005", "Never smoked tobacco", _days(30))])
    assert check(CurrentSmoker(), never, PLAN) == "the latest smoking status is never"
    smokes = _profile(obs=[_smoking("s", "449868002", "Smokes tobacco daily", _days(30))])
    assert check(CurrentSmoker(), smokes, PLAN) is None
    ids = {p.id for p in analyse(replace(never, encounters=())).proposals}
    assert "opt-smoking-cessation" not in ids
    texts = " ".join(p.description for p in analyse(replace(never, encounters=())).proposals)
    assert "stop smoking" not in texts.lower()


def test_a_local_current_status_is_read_by_its_words() -> None:
    text_only = Observation(
        "Observation/x",
        "72166-2",
        "Tobacco smoking status",
        None,
        "",
        _days(3),
        value_text="Current some days smoker",
    )
    assert check(CurrentSmoker(), _profile(obs=[text_only]), PLAN) is None


def test_an_event_is_recent_only_counted_to_the_plan_day() -> None:
    p = _profile()
    assert check(Recent(_days(3), 30), p, PLAN) is None
    five_years = PLAN - timedelta(days=5 * 365)
    why = check(Recent(five_years, 30), p, PLAN)
    assert why == f"{(PLAN - five_years).days} days before the plan day"


def test_an_event_the_day_before_an_old_records_last_date_is_not_new() -> None:
    """A record that ends five years before the plan: an asthma emergency visit the day before
    its last date is not a recent event, so no line treats it as new or urgent."""
    asthma = Code(SNOMED, "195967001", "Asthma (disorder)")
    from service.record.profile import Condition

    end = PLAN - timedelta(days=5 * 365)
    visit = Encounter(
        "Encounter/e",
        "Emergency room admission",
        end - timedelta(days=1),
        end - timedelta(days=1),
        class_code="EMER",
        reasons=(asthma,),
        reason_text="Asthma",
    )
    cond = Condition("Condition/a", "Asthma", (asthma,), "active", "confirmed", date(2000, 1, 1))
    inhaler = _med("f", "fluticasone propionate 0.11 MG/ACTUAT Metered Dose Inhaler", "896209")
    old = replace(
        _profile(meds=[inhaler], encounters=[visit], as_of=end),
        problems=(cond,),
    )
    fresh = replace(old, received=end)  # planned on the record's own date: recent
    review = next(p for p in analyse(fresh).proposals if p.id == "opt-asthma-review")
    later = next(p for p in analyse(old).proposals if p.id == "opt-asthma-review")
    # the visit still happened as the line says; it is no longer new, so not urgent on its own
    assert later.urgency_class not in ("urgent", "resolve-first")
    assert review.urgency_class == "soon" or later.urgency_class == review.urgency_class


def test_the_age_is_the_age_on_the_plan_day() -> None:
    old = _profile(as_of=date(2021, 3, 31))
    assert old.age == 76  # born 1950-01-01, planned 2026-11-30; 71 on the record's last date
    assert replace(old, received=None).age == 71


def test_a_seasonal_vaccine_given_this_season_under_another_code_is_not_due() -> None:
    """An adjuvanted quadrivalent influenza dose six weeks ago under a CVX code the criterion
    does not list: the vaccine is not due, whatever its code."""
    from inference.knowledge.claims import NotGiven
    from service.record.profile import Immunization

    flu = Immunization(
        "Immunization/f",
        "influenza, seasonal vaccine, quadrivalent, adjuvanted",
        (Code("http://hl7.org/fhir/sid/cvx", "205", "influenza, quadrivalent, adjuvanted"),),
        "completed",
        _days(45),
    )
    p = replace(_profile(encounters=()), immunizations=(flu,))
    assert check(NotGiven("influenza vaccine", 300), p, PLAN) == f"a dose was given on {_days(45)}"
    assert check(NotGiven("influenza vaccine", 30), p, PLAN) is None
    assert check(NotGiven("COVID-19 vaccine", 300), p, PLAN) is None
    due = " ".join(x.title for x in analyse(p).proposals if x.id == "opt-vaccinations-due")
    assert due and "influenza" not in due


def test_a_hypoglycaemia_on_an_old_records_last_day_is_acted_on_but_not_urgent() -> None:
    """A sulfonylurea and a hypoglycaemia the day before the record's last date: urgent when
    the plan is made that day, acted on soon (not urgent on its own) five years later."""
    from service.record.profile import Condition

    hypo = Code(SNOMED, "302866003", "Hypoglycemia (disorder)")
    dm = Code(SNOMED, "44054006", "Diabetes mellitus type 2 (disorder)")
    end = PLAN - timedelta(days=5 * 365)
    problems = (
        Condition(
            "Condition/h", "Hypoglycemia", (hypo,), "active", "confirmed", end - timedelta(days=1)
        ),
        Condition("Condition/d", "Diabetes", (dm,), "active", "confirmed", date(2000, 1, 1)),
    )
    sulfonylurea = _med(
        "g",
        "glimepiride 4 MG Oral Tablet",
        "199246",
        dose_value=4.0,
        dose_unit="mg",
        times_per_day=1.0,
    )
    old = replace(_profile(meds=[sulfonylurea], encounters=(), as_of=end), problems=problems)

    def urgency(p: PatientProfile) -> str:
        got = analyse(p).proposals
        return next(x.urgency_class for x in got if x.id == "opt-reduce-glimepiride-hypoglycaemia")

    assert urgency(replace(old, received=end)) == "urgent"
    assert urgency(old) == "soon"


def test_a_weekly_dose_is_said_as_taken_not_as_a_daily_average() -> None:
    """Alendronate 70 mg once a week is never "10 mg a day"."""
    from inference.knowledge.criteria.interpret import _dose_phrase
    from inference.knowledge.facts import MedFact

    weekly = MedFact(
        "r", "alendronate 70 MG", ("alendronate",), (), (), 0, None, None, 70.0, 10.0, True
    )
    assert _dose_phrase(weekly) == "70 mg once a week"
    daily = replace(weekly, daily_mg=140.0)
    assert _dose_phrase(daily) == "140 mg a day"
    odd = replace(weekly, daily_mg=70.0 / 3)
    assert _dose_phrase(odd) == "70 mg less often than daily"


def test_no_placeholder_the_renderer_cannot_fill_is_accepted() -> None:
    from pydantic import ValidationError

    from inference.knowledge.criteria.schema import PointTemplate

    with pytest.raises(ValidationError, match="cannot fill"):
        PointTemplate(role="gp", stance="support", text="Kidney function {lab:kidney}.")
