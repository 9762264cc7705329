"""Rule families of the embedded backend on hand-made profiles: fire with the facts, not without."""

from __future__ import annotations

from datetime import date

import pytest

from inference.knowledge import analyse
from service.record.profile import (
    Code,
    Condition,
    Medication,
    Observation,
    PatientProfile,
    SocialFact,
)
from service.record.vocabulary import RXNORM, SNOMED

AS_OF = date(2024, 6, 1)


def cond(i: str, text: str, code: str, onset: date = date(2015, 1, 1)) -> Condition:
    return Condition(
        f"Condition/{i}", text, (Code(SNOMED, code, text),), "active", "confirmed", onset
    )


def med(i: str, text: str, code: str = "", authored: date = date(2010, 1, 1)) -> Medication:
    codes = (Code(RXNORM, code, text),) if code else ()
    return Medication(f"MedicationRequest/{i}", text, codes, "active", "order", authored)


def obs(i: str, loinc: str, value: float, when: date = AS_OF, unit: str = "") -> Observation:
    return Observation(f"Observation/{i}", loinc, loinc, value, unit, when)


def profile(
    problems=(), meds=(), observations=(), social=(), born=date(1940, 1, 1)
) -> PatientProfile:
    return PatientProfile(
        "Patient/p1",
        "female",
        born,
        AS_OF,
        tuple(problems),
        tuple(meds),
        tuple(observations),
        social=tuple(social),
    )


def option_ids(p: PatientProfile) -> set[str]:
    return {o.id for o in analyse(p).proposals}


def problem_ids(p: PatientProfile) -> set[str]:
    return {x.id for x in analyse(p).problems}


def test_benzodiazepine_by_text_fires_in_older_adult_and_not_in_younger() -> None:
    p = profile(meds=[med("m1", "Lorazepam 1 MG Oral Tablet")])
    assert "opt-taper-lorazepam" in option_ids(p)
    young = profile(meds=[med("m1", "Lorazepam 1 MG Oral Tablet")], born=date(1990, 1, 1))
    assert "opt-taper-lorazepam" not in option_ids(young)


def test_benzodiazepine_with_dementia_cites_both_and_has_withdrawal_attack() -> None:
    p = profile(
        problems=[cond("c1", "Alzheimer's disease (disorder)", "26929004")],
        meds=[med("m1", "Diazepam [Valium]", "563026")],
    )
    prop = analyse(p).proposal("opt-taper-diazepam")
    assert prop is not None and prop.medication_ref == "MedicationRequest/m1"
    pharm = [x for x in prop.points if x.role == "pharmacist" and x.stance == "support"]
    assert any({"MedicationRequest/m1", "Condition/c1"} <= set(x.facts) for x in pharm)
    assert any(x.stance == "attack" and "withdrawal" in x.text for x in prop.points)


@pytest.mark.parametrize(
    "text",
    [
        "diphenhydrAMINE Hydrochloride 25 MG Oral Tablet",
        "Chlorpheniramine Maleate 2 MG/ML Oral Solution",
    ],
)
def test_sedating_antihistamine(text: str) -> None:
    ids = option_ids(profile(meds=[med("m1", text)]))
    assert any(i.startswith("opt-stop-") for i in ids)


def test_long_acting_sulfonylurea() -> None:
    assert "opt-switch-glyburide" in option_ids(profile(meds=[med("m1", "glyBURIDE 5 MG")]))
    assert "opt-switch-glipizide" not in option_ids(profile(meds=[med("m1", "glipizide 5 MG")]))


def test_nsaid_with_ckd_fires_even_below_65_and_not_without_a_reason() -> None:
    young = date(1970, 1, 1)
    ckd = cond("c1", "Chronic kidney disease stage 3 (disorder)", "433144002")
    nap = med("m1", "Naproxen sodium 220 MG Oral Tablet", "849574")
    assert "opt-stop-naproxen" in option_ids(profile([ckd], [nap], born=young))
    assert "opt-stop-naproxen" not in option_ids(profile([], [nap], born=young))


def test_nsaid_in_heart_failure_gets_cardiologist_support() -> None:
    p = profile(
        [cond("c1", "Chronic congestive heart failure (disorder)", "88805009")],
        [med("m1", "Ibuprofen 200 MG Oral Tablet")],
        born=date(1970, 1, 1),
    )
    prop = analyse(p).proposal("opt-stop-ibuprofen")
    assert prop is not None
    assert any(x.role == "cardiologist" and x.stance == "support" for x in prop.points)


def test_triple_whammy() -> None:
    p = profile(
        [],
        [
            med("m1", "lisinopril 10 MG Oral Tablet"),
            med("m2", "Hydrochlorothiazide 25 MG Oral Tablet"),
            med("m3", "Naproxen sodium 220 MG Oral Tablet"),
        ],
        born=date(1970, 1, 1),
    )
    assert "opt-stop-naproxen" in option_ids(p)
    # one finding, named by the criterion that makes it (ddi-triple-whammy)
    assert "prob-ddi-triple-whammy" in problem_ids(p)


@pytest.mark.parametrize(
    ("a", "b", "option", "problem"),
    [
        (
            "Warfarin Sodium 5 MG Oral Tablet",
            "Naproxen sodium 220 MG Oral Tablet",
            "opt-stop-naproxen",
            "prob-ddi-warfarin-naproxen",
        ),
        (
            "Warfarin Sodium 5 MG Oral Tablet",
            "clopidogrel 75 MG Oral Tablet",
            "opt-review-clopidogrel",
            "prob-ddi-warfarin-clopidogrel",
        ),
        (
            "Digoxin 0.125 MG Oral Tablet",
            "verapamil hydrochloride 80 MG Oral Tablet",
            "opt-reduce-digoxin",
            "prob-ddi-digoxin-verapamil",
        ),
        (
            "Digoxin 0.125 MG Oral Tablet",
            "Amiodarone 200 MG Oral Tablet",
            "opt-reduce-digoxin",
            "prob-ddi-digoxin-amiodarone",
        ),
        (
            "lisinopril 10 MG Oral Tablet",
            "Spironolactone 25 MG Oral Tablet",
            "opt-review-spironolactone",
            "prob-ddi-lisinopril-spironolactone",
        ),
        (
            "Oxycodone 5 MG Oral Tablet",
            "Alprazolam 0.5 MG Oral Tablet",
            "opt-taper-alprazolam",
            "prob-ddi-oxycodone-alprazolam",
        ),
        (
            "Warfarin Sodium 5 MG Oral Tablet",
            "Sertraline 50 MG Oral Tablet",
            "opt-review-sertraline",
            "prob-ddi-warfarin-sertraline",
        ),
    ],
)
def test_interactions_fire_for_the_pair_only(a: str, b: str, option: str, problem: str) -> None:
    both = profile([], [med("m1", a), med("m2", b)], born=date(1970, 1, 1))
    assert option in option_ids(both)
    assert problem in problem_ids(both)
    only_a = profile([], [med("m1", a)], born=date(1970, 1, 1))
    assert problem not in problem_ids(only_a)


def test_metformin_renal_dosing_uses_latest_egfr() -> None:
    met = med("m1", "24 HR Metformin hydrochloride 500 MG Extended Release Oral Tablet", "860975")
    dm = cond("c1", "Diabetes", "44054006")
    low = profile([dm], [met], [obs("o1", "33914-3", 37.0)])
    # no dose is stated and one 500 mg tablet is within the ceiling at eGFR 30-45: a routine
    # request to verify the daily dose, never "reduce" (the dose must be read first)
    assert "opt-verify-reduce-metformin" in option_ids(low)
    assert "opt-reduce-metformin" not in option_ids(low)
    very_low = profile([dm], [met], [obs("o1", "33914-3", 25.0)])
    prop = analyse(very_low).proposal("opt-stop-metformin")
    assert prop is not None and prop.category == "immediate-safety"
    ok = profile([dm], [met], [obs("o1", "33914-3", 80.0)])
    assert not {
        "opt-reduce-metformin",
        "opt-verify-reduce-metformin",
        "opt-stop-metformin",
    } & option_ids(ok)


def test_monitoring_gaps_respect_windows() -> None:
    dm = cond("c1", "Diabetes", "44054006")
    stale = profile([dm], [], [obs("o1", "4548-4", 7.0, date(2023, 6, 1))])
    assert "opt-monitor-hba1c" in option_ids(stale)
    fresh = profile([dm], [], [obs("o1", "4548-4", 7.0, date(2024, 3, 1))])
    assert "opt-monitor-hba1c" not in option_ids(fresh)
    warf = profile([], [med("m1", "Warfarin Sodium 5 MG Oral Tablet")])
    assert "opt-monitor-inr" in option_ids(warf)
    inr = profile(
        [],
        [med("m1", "Warfarin Sodium 5 MG Oral Tablet")],
        [obs("o1", "6301-6", 2.5, date(2024, 5, 1))],
    )
    assert "opt-monitor-inr" not in option_ids(inr)
    hf = profile([cond("c1", "Chronic congestive heart failure (disorder)", "88805009")])
    assert "opt-monitor-weight" in option_ids(hf)


def test_undated_result_counts_as_a_monitoring_gap() -> None:
    # FHIR Observations may lack effective[x]; such a result cannot show the window was met.
    dm = cond("c1", "Diabetes", "44054006")
    undated = Observation("Observation/o1", "4548-4", "4548-4", 7.0, "%", None)
    analysis = analyse(profile([dm], [], [undated]))
    gap = analysis.proposal("opt-monitor-hba1c")
    assert gap is not None
    assert "Observation/o1" in gap.refs
    assert any("has no date" in pt.text for pt in gap.points)


def test_acei_arb_for_diabetic_kidney_disease_and_not_when_prescribed() -> None:
    probs = [
        cond("c1", "Diabetes", "44054006"),
        cond("c2", "Diabetic renal disease (disorder)", "127013003"),
        cond("c3", "Hypertension", "38341003"),
    ]
    labs = [obs("o1", "6298-4", 4.9), obs("o2", "33914-3", 70.0)]
    p = profile(probs, [], [*labs, obs("o3", "14959-1", 120.0)])
    prop = analyse(p).proposal("opt-start-acei-arb")
    assert prop is not None
    assert any(x.stance == "attack" and "potassium" in x.text for x in prop.points)
    treated = profile(probs, [med("m1", "lisinopril 10 MG Oral Tablet", "314076")])
    assert "opt-start-acei-arb" not in option_ids(treated)
    # no albuminuria (KDIGO 2022 1.2.1 needs it), or none measured: no kidney-protection claim
    assert "opt-start-acei-arb" not in option_ids(
        profile(probs, [], [*labs, obs("o3", "14959-1", 18.7)])
    )
    assert "opt-start-acei-arb" not in option_ids(profile(probs, [], labs))


def test_statin_after_stroke_recognises_misspelt_simvastatin() -> None:
    stroke = cond("c1", "Stroke", "230690007")
    assert "opt-start-statin" in option_ids(profile([stroke]))
    assert "opt-start-statin" not in option_ids(profile([stroke], [med("m1", "Simvistatin 10 MG")]))


def test_falls_cognition_and_social() -> None:
    p = profile(
        [
            cond("c1", "Alzheimer's disease (disorder)", "26929004"),
            cond("c2", "Osteoporosis (disorder)", "64859006"),
        ],
        social=[SocialFact("Observation/s1", "lives_alone", "Lives alone")],
    )
    ids = option_ids(p)
    assert {
        "opt-falls-prevention",
        "opt-home-safety",
        "opt-dementia-review",
        "opt-carer-support",
        "opt-social-work",
    } <= ids
    assert "prob-fall-risk" in problem_ids(p)
    young = profile([], born=date(1990, 1, 1))
    assert not {"opt-falls-prevention", "opt-dementia-review"} & option_ids(young)


def test_depression_and_abuse() -> None:
    p = profile(
        [cond("c1", "Major depressive disorder", "370143000")],
        social=[
            SocialFact(
                "Condition/s1",
                "intimate_partner_abuse",
                "Victim of intimate partner abuse (finding)",
            )
        ],
        born=date(1970, 1, 1),
    )
    ids = option_ids(p)
    assert {"opt-depression-followup", "opt-safety-assessment"} <= ids


def test_stale_and_noise_problems_rejected_with_a_specialist_keeper() -> None:
    p = profile(
        [
            cond("c1", "Miscarriage in first trimester", "19169002", date(1970, 1, 1)),
            cond("c2", "Cardiac Arrest", "410429000", date(1980, 1, 1)),
            cond("c3", "Hypertension", "38341003"),
        ]
    )
    a = analyse(p)
    by = {x.display: x for x in a.problems}
    assert by["Miscarriage in first trimester"].initial == "reject"
    assert by["Cardiac Arrest"].initial == "reject"
    assert dict(by["Cardiac Arrest"].keepers).get("cardiologist")
    assert by["Hypertension"].initial == "accept"


def test_complexity_levels() -> None:
    assert analyse(profile([], [], born=date(1990, 1, 1))).complexity == "low"
    many = [
        cond(f"c{i}", t, c)
        for i, (t, c) in enumerate(
            [
                ("Alzheimer's disease (disorder)", "26929004"),
                ("Diabetes", "44054006"),
                ("Hypertension", "38341003"),
                ("Atrial Fibrillation", "49436004"),
                ("Stroke", "230690007"),
                ("Osteoporosis (disorder)", "64859006"),
                ("Chronic congestive heart failure (disorder)", "88805009"),
                ("Chronic obstructive bronchitis (disorder)", "185086009"),
                ("Coronary Heart Disease", "53741008"),
            ]
        )
    ]
    meds = [
        med(f"m{i}", t)
        for i, t in enumerate(
            [
                "Warfarin Sodium 5 MG Oral Tablet",
                "Naproxen sodium 220 MG Oral Tablet",
                "Diazepam [Valium]",
                "Digoxin 0.125 MG Oral Tablet",
                "verapamil 80 MG",
                "Metformin 500 MG",
                "Furosemide 40 MG",
                "lisinopril 10 MG Oral Tablet",
                "Amlodipine 5 MG Oral Tablet",
                "Donepezil 10 MG",
            ]
        )
    ]
    a = analyse(profile(many, meds, born=date(1935, 1, 1)))
    assert a.complexity == "very high"


def test_the_case_analysis_is_computed_once_per_profile() -> None:
    # every step of a plan asks for it (assess, panel, each vote and argument call): a second
    # call with an equal profile must be the cached value, not a recomputation
    p = profile(meds=[med("m1", "Diazepam 5 MG Oral Tablet")])
    again = profile(meds=[med("m1", "Diazepam 5 MG Oral Tablet")])
    assert p == again and p is not again
    assert analyse(p) is analyse(again)
