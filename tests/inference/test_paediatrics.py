"""Children and adolescents (criteria/paediatrics.json): medicines restricted by age, doses by
weight, paracetamol in two products and the childhood vaccination schedule, each with a case
that fires and one that must not."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from inference.knowledge.criteria.interpret import Firing, evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA
from inference.knowledge.weight_dosing import ingredient_mg, per_kg
from service.record.profile import (
    Code,
    Condition,
    Immunization,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import CVX, LOINC_GROUPS, RXNORM, SNOMED

AS_OF = date(2026, 11, 30)
COUGH_MIXTURE = (
    "Acetaminophen 21.7 MG/ML / Dextromethorphan Hydrobromide 1 MG/ML / "
    "doxylamine succinate 0.417 MG/ML Oral Solution"
)


def _med(
    name: str, dose: float | None = None, unit: str = "mg", times: float | None = None, k: int = 0
) -> Medication:
    return Medication(
        f"MedicationRequest/m{k}-{abs(hash(name)) % 10_000}",
        name,
        (Code(RXNORM, "", name),),
        "active",
        "order",
        AS_OF - timedelta(days=3),
        dose_value=dose,
        dose_unit=unit if dose is not None else "",
        times_per_day=times,
    )


def _problem(code: str, text: str) -> Condition:
    return Condition(
        f"Condition/{code}",
        text,
        (Code(SNOMED, code, text),),
        "active",
        "confirmed",
        AS_OF - timedelta(days=5),
    )


def _weight(kg: float, days_ago: int = 1) -> Observation:
    when = AS_OF - timedelta(days=days_ago)
    return Observation("Observation/w", LOINC_GROUPS["weight"][0], "Body weight", kg, "kg", when)


def _dose(cvx: str, when: date, k: int) -> Immunization:
    return Immunization(f"Immunization/i{k}", "vaccine", (Code(CVX, cvx),), "completed", when)


def _child(
    age_years: float,
    meds: tuple[Medication, ...] = (),
    problems: tuple[Condition, ...] = (),
    obs: tuple[Observation, ...] = (),
    imms: tuple[Immunization, ...] = (),
) -> PatientProfile:
    born = AS_OF - timedelta(days=int(age_years * 365.25) + 10)
    return PatientProfile(
        "Patient/c",
        "female",
        born,
        AS_OF,
        problems=problems,
        medications=meds,
        observations=obs,
        readings=obs,
        immunizations=imms,
    )


def _firings(profile: PatientProfile) -> list[Firing]:
    return list(evaluate(CRITERIA, Facts(profile)))


def _fired(profile: PatientProfile) -> set[str]:
    return {f.criterion.id for f in _firings(profile)}


def _one(profile: PatientProfile, cid: str) -> Firing:
    found = [f for f in _firings(profile) if f.criterion.id == cid]
    assert len(found) == 1, sorted(_fired(profile))
    return found[0]


# -- medicines restricted by age ------------------------------------------------------------


def test_codeine_at_seven_is_stopped_with_simple_analgesia_named() -> None:
    osa = _problem("78275009", "Obstructive sleep apnea syndrome (disorder)")
    f = _one(_child(7, (_med("codeine", 15, times=4),), (osa,)), "paed-codeine-under-twelve")
    p = f.proposal
    assert p.id == "opt-stop-codeine" and p.priority == "safety"
    assert "paracetamol" in p.title and "ibuprofen" in p.title
    assert "tramadol" not in p.title.lower()
    # The sleep apnoea point is made, citing the condition.
    assert any("sleep apnoea" in pt.text and "Condition/78275009" in pt.facts for pt in p.points)


def test_codeine_at_fourteen_without_surgery_or_risk_gives_no_line() -> None:
    fired = _fired(_child(14, (_med("codeine", 30, times=4),)))
    assert not {"paed-codeine-under-twelve", "paed-opioid-adolescent-breathing-risk"} & fired


def test_tramadol_under_twelve_and_not_at_twelve() -> None:
    assert "paed-tramadol-under-twelve" in _fired(_child(10, (_med("tramadol"),)))
    assert "paed-tramadol-under-twelve" not in _fired(_child(12.5, (_med("tramadol"),)))


def test_an_adolescent_with_sleep_apnoea_on_codeine() -> None:
    osa = _problem("78275009", "Obstructive sleep apnea syndrome (disorder)")
    f = _one(_child(14, (_med("codeine"),), (osa,)), "paed-opioid-adolescent-breathing-risk")
    assert "Obstructive sleep apnea" in f.proposal.title


def test_aspirin_in_chickenpox_is_stopped_for_paracetamol() -> None:
    pox = _problem("38907003", "Varicella (disorder)")
    f = _one(_child(6, (_med("aspirin", 162, times=4),), (pox,)), "paed-aspirin-under-sixteen")
    assert "Reye" in f.proposal.title and "paracetamol" in f.proposal.title
    assert "ibuprofen" not in (f.proposal.title + f.proposal.description)
    assert any(
        "chickenpox" in pt.text and "Condition/38907003" in pt.facts for pt in f.proposal.points
    )


@pytest.mark.parametrize(
    ("age", "problems"),
    [
        (6, (_problem("75053002", "Kawasaki disease"),)),  # the specialist's indication
        (16, ()),
    ],
)
def test_aspirin_in_kawasaki_disease_or_from_sixteen_is_not_flagged(
    age: int, problems: tuple[Condition, ...]
) -> None:
    assert "paed-aspirin-under-sixteen" not in _fired(_child(age, (_med("aspirin"),), problems))


def test_doxycycline_at_six_names_a_macrolide_and_the_aap_exception() -> None:
    myco = _problem("46970008", "Pneumonia due to Mycoplasma pneumoniae (disorder)")
    f = _one(
        _child(6, (_med("doxycycline", 45, times=2),), (myco,)), "paed-tetracycline-under-eight"
    )
    texts = " ".join(pt.text for pt in f.proposal.points)
    assert "azithromycin" in texts and "short course" in texts
    assert f.proposal.title.startswith("Switch doxycycline to another antibiotic in a child")
    assert "under 8" in f.proposal.title


def test_doxycycline_for_acne_at_fifteen_raises_no_tooth_warning() -> None:
    assert "paed-tetracycline-under-eight" not in _fired(_child(15, (_med("doxycycline", 100),)))


def test_ciprofloxacin_for_a_childs_cystitis_names_the_first_line_choices() -> None:
    cyst = _problem("38822007", "Cystitis (disorder)")
    f = _one(
        _child(9, (_med("ciprofloxacin", 250, times=2),), (cyst,)),
        "paed-fluoroquinolone-first-line",
    )
    assert any("nitrofurantoin" in pt.text for pt in f.proposal.points)
    assert "levofloxacin" not in f.proposal.description


@pytest.mark.parametrize(
    ("age", "problems"),
    [(9, (_problem("190905008", "Cystic fibrosis"),)), (18, ())],
)
def test_ciprofloxacin_in_cystic_fibrosis_or_an_adult_is_not_flagged(
    age: int, problems: tuple[Condition, ...]
) -> None:
    fired = _fired(_child(age, (_med("ciprofloxacin"),), problems))
    assert "paed-fluoroquinolone-first-line" not in fired


def test_a_cough_and_cold_mixture_under_six_and_not_at_seven() -> None:
    mixture = _med(COUGH_MIXTURE, 10, "mL", 1)
    f = _one(_child(3, (mixture,)), "paed-cough-cold-under-six")
    assert (
        f.proposal.title == "Stop the cough and cold medicine (dextromethorphan) in a child under 6"
    )
    assert "paed-cough-cold-under-six" not in _fired(_child(7, (mixture,)))


# -- paracetamol in two products ------------------------------------------------------------


def test_paracetamol_in_a_mixture_and_a_suspension_is_a_duplicate() -> None:
    meds = (_med(COUGH_MIXTURE, 10, "mL", 1), _med("acetaminophen", 160, times=4, k=1))
    f = _one(_child(3, meds, obs=(_weight(15),)), "paed-paracetamol-two-products")
    assert "Duplicate paracetamol" in f.proposal.title


def test_one_paracetamol_product_is_no_duplicate() -> None:
    meds = (_med("acetaminophen", 160, times=4),)
    assert "paed-paracetamol-two-products" not in _fired(_child(3, meds, obs=(_weight(15),)))


# -- doses by weight ------------------------------------------------------------------------


def test_paracetamol_above_the_ceiling_is_reduced_and_toxicity_assessed() -> None:
    profile = _child(2.5, (_med("acetaminophen", 240, times=6),), obs=(_weight(12),))
    reduce = _one(profile, "paed-paracetamol-dose-by-weight").proposal
    assert reduce.id == "opt-reduce-acetaminophen" and reduce.priority == "safety"
    assert "20 mg/kg a dose" in reduce.description and "120 mg/kg a day" in reduce.description
    toxic = _one(profile, "paed-paracetamol-supratherapeutic").proposal
    assert "liver" in toxic.description and "poisons" in toxic.description
    assert "Observation/w" in reduce.refs


def test_a_correct_paracetamol_dose_raises_no_ceiling_line() -> None:
    # 320 mg at 21 kg is 15.2 mg/kg a dose (rounded to a measurable volume), 61 mg/kg a day.
    profile = _child(6, (_med("acetaminophen", 320, times=4),), obs=(_weight(21),))
    fired = _fired(profile)
    assert not {"paed-paracetamol-dose-by-weight", "paed-paracetamol-supratherapeutic"} & fired


@pytest.mark.parametrize("obs", [(), (_weight(15, days_ago=200),)])
def test_no_recent_weight_asks_to_weigh_the_child(obs: tuple[Observation, ...]) -> None:
    profile = _child(4, (_med("amoxicillin", 250, times=3),), obs=obs)
    p = _one(profile, "paed-amoxicillin-dose-by-weight").proposal
    assert p.title.startswith("Weigh the child and verify the dose of amoxicillin")
    assert p.id.startswith("opt-verify-") and p.priority == "review"
    # A toxicity check needs a known excess: no weight, no claim.
    assert "paed-paracetamol-supratherapeutic" not in _fired(
        _child(4, (_med("acetaminophen", 160, times=4),), obs=obs)
    )


def test_amoxicillin_within_ninety_mg_per_kg_a_day_is_not_flagged() -> None:
    profile = _child(4, (_med("amoxicillin", 250, times=3),), obs=(_weight(16),))
    assert "paed-amoxicillin-dose-by-weight" not in _fired(profile)


def test_ibuprofen_per_dose_ceiling() -> None:
    over = _child(5, (_med("ibuprofen", 300, times=3),), obs=(_weight(18),))  # 16.7 mg/kg
    within = _child(5, (_med("ibuprofen", 180, times=3),), obs=(_weight(18),))  # 10 mg/kg
    assert "paed-ibuprofen-dose-by-weight" in _fired(over)
    assert "paed-ibuprofen-dose-by-weight" not in _fired(within)


def test_weight_ceilings_stop_at_eleven() -> None:
    teen = _child(14, (_med("acetaminophen", 1000, times=4),), obs=(_weight(40),))
    assert "paed-paracetamol-dose-by-weight" not in _fired(teen)


def test_paracetamol_in_a_mixture_counts_toward_the_daily_total() -> None:
    # 160 mg four times (64 mg/kg a day at 10 kg) is within the ceiling alone; the mixture's
    # 10 mL of 21.7 mg/mL at night adds 217 mg, making 85.7 mg/kg a day.
    mixture = _med(COUGH_MIXTURE, 10, "mL", 1)
    suspension = _med("acetaminophen", 160, times=4, k=1)
    alone = _child(3, (suspension,), obs=(_weight(10),))
    both = _child(3, (mixture, suspension), obs=(_weight(10),))
    assert "paed-paracetamol-dose-by-weight" not in _fired(alone)
    facts = Facts(both)
    m = next(x for x in facts.meds if len(x.drugs) > 1)
    assert ingredient_mg(facts, m, "acetaminophen") == pytest.approx(217.0)
    dosed = per_kg(facts, m, "acetaminophen", 90)
    assert dosed.complete and dosed.per_kg_day == pytest.approx(85.7)
    assert "paed-paracetamol-dose-by-weight" in _fired(both)


# -- the childhood vaccination schedule -----------------------------------------------------


def _infant_series(born: date) -> tuple[Immunization, ...]:
    """DTaP and IPV at 2, 4 and 6 months and DTaP at 15 months; MMR and varicella at 1 year."""
    out = []
    k = 0
    for months in (2, 4, 6):
        for cvx in ("20", "10"):
            k += 1
            out.append(_dose(cvx, born + timedelta(days=30 * months), k))
    for cvx, days in (("20", 460), ("03", 370), ("21", 370)):
        k += 1
        out.append(_dose(cvx, born + timedelta(days=days), k))
    return tuple(out)


def _vaccines(profile: PatientProfile) -> str:
    return " ".join(
        f.proposal.title for f in _firings(profile) if f.proposal.id.endswith("vaccinations-due")
    )


def test_the_pre_school_doses_are_due_at_five() -> None:
    born = AS_OF - timedelta(days=int(5.4 * 365.25))
    flu = _dose("150", AS_OF - timedelta(days=40), 99)
    profile = _child(5.4, imms=(*_infant_series(born), flu))
    said = _vaccines(profile)
    for word in ("DTaP", "IPV", "MMR", "varicella"):
        assert word in said
    for word in ("influenza", "zoster", "Tdap", "HPV", "pneumococcal", "Td or Tdap"):
        assert word not in said


def test_the_pre_school_doses_given_at_four_end_the_series() -> None:
    born = AS_OF - timedelta(days=int(5.4 * 365.25))
    at_four = born + timedelta(days=int(4.1 * 365.25))
    late = tuple(_dose(cvx, at_four, 50 + i) for i, cvx in enumerate(("20", "10", "03", "21")))
    flu = _dose("150", AS_OF - timedelta(days=40), 99)
    assert _vaccines(_child(5.4, imms=(*_infant_series(born), *late, flu))) == ""


def test_a_child_with_no_immunization_record_is_not_offered_the_schedule() -> None:
    assert _vaccines(_child(5)) == ""


def test_an_adult_gets_no_paediatric_vaccine() -> None:
    adult = _child(30, imms=(_dose("03", AS_OF - timedelta(days=9000), 1),))
    fired = _fired(adult)
    assert not {c for c in fired if c.startswith("paed-vaccine-")}


def test_a_child_gets_no_adult_vaccine() -> None:
    born = AS_OF - timedelta(days=int(7.5 * 365.25))
    fired = _fired(_child(7.5, imms=_infant_series(born)))
    adult = {"vaccine-tetanus-booster", "vaccine-zoster-recombinant", "vaccine-pneumococcal-older"}
    assert not adult & fired
    assert "paed-vaccine-influenza" in fired
