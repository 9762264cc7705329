"""Typed facts are true of the patient: doses, durations, kidney function, blood pressure,
conflicts, implausible values, stale and historical conditions."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from datetime import date, timedelta

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts, ckd_epi_2021, cockcroft_gault
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import Code, Condition, Medication
from service.record.vocabulary import RXNORM, SNOMED
from tests.conftest import fixture_bundle

from .criteria_factory import AS_OF, Builder


def test_ckd_epi_2021_matches_published_values() -> None:
    # Inker 2021 race-free equation; the first two are the NKF calculator values.
    assert round(ckd_epi_2021(1.0, 50, female=False)) == 92
    assert round(ckd_epi_2021(1.0, 60, female=True)) == 64
    assert round(ckd_epi_2021(3.0, 80, female=False)) == 20  # 142 x 3.333^-1.2 x 0.9938^80


def test_cockcroft_gault() -> None:
    assert round(cockcroft_gault(1.0, 80, 70.0, female=False)) == round(60 * 70 / 72)
    assert cockcroft_gault(1.0, 80, 70.0, female=True) < cockcroft_gault(1.0, 80, 70.0, False)


def test_lower_kidney_estimate_governs_and_disagreement_is_flagged() -> None:
    b = Builder(age=80, sex="male")
    b.lab("egfr", 85.0)  # reported as near normal
    b.lab("creatinine", 2.8)  # but creatinine says otherwise
    f = Facts(b.build())
    assert f.kidney is not None
    assert f.kidney.value < 25 and f.kidney.basis == "eGFR from creatinine"
    assert f.kidney.discordant
    fired = {x.criterion.id for x in evaluate(CRITERIA, f)}
    assert "kidney-estimates-disagree" in fired


def test_agreeing_estimates_are_not_discordant() -> None:
    b = Builder(age=70, sex="female")
    b.lab("egfr", 64.0)
    b.lab("creatinine", 0.9)
    f = Facts(b.build())
    assert f.kidney is not None and not f.kidney.discordant


def test_same_day_conflict_is_not_a_fact() -> None:
    b = Builder()
    b.lab("potassium", 4.1)
    b.lab("potassium", 6.3)
    f = Facts(b.build())
    assert f.latest("potassium") is None
    assert "potassium" in f.conflicts
    fired = {x.criterion.id for x in evaluate(CRITERIA, f)}
    assert "same-day-conflict" in fired


def test_lab_defined_ckd_needs_two_low_results_ninety_days_apart() -> None:
    b = Builder()
    b.lab("egfr", 52.0, AS_OF - timedelta(days=120))
    b.lab("egfr", 50.0)
    assert Facts(b.build()).lab_ckd
    b2 = Builder()
    b2.lab("egfr", 52.0, AS_OF - timedelta(days=30))
    b2.lab("egfr", 50.0)
    assert not Facts(b2.build()).lab_ckd


def test_duration_runs_from_the_first_order_of_the_ingredient() -> None:
    b = Builder()
    b.meds.append(
        Medication(
            "MedicationRequest/old",
            "alendronate 70 MG",
            (Code(RXNORM, "", "alendronate"),),
            "stopped",
            "order",
            date(2008, 3, 1),
        )
    )
    b.med("alendronate 70 MG", authored=date(2021, 3, 1))
    f = Facts(b.build())
    (m,) = f.meds
    assert m.first_authored == date(2008, 3, 1)
    assert f.years_on(m) == 16


def test_dose_from_dosage_instruction_and_from_strength() -> None:
    b = Builder()
    b.med("metformin", dose_mg=500.0)  # 500 mg once a day, stated
    b.med("Simvastatin 40 MG Oral Tablet")  # strength only
    f = Facts(b.build())
    by = {m.drugs[0]: m for m in f.meds}
    assert by["metformin"].daily_mg == 500.0 and by["metformin"].dose_stated
    assert by["simvastatin"].unit_mg == 40.0 and by["simvastatin"].daily_mg is None


def test_metformin_within_the_ceiling_is_not_reduced() -> None:
    b = Builder(age=78)
    b.med("metformin", dose_mg=500.0)
    b.lab("egfr", 38.0)
    fired = {x.criterion.id for x in evaluate(CRITERIA, Facts(b.build()))}
    assert "renal-dose-table" not in fired


def test_metformin_dose_not_stated_asks_to_verify_at_lower_strength() -> None:
    b = Builder(age=78)
    b.med("Metformin 500 MG Oral Tablet")
    b.lab("egfr", 38.0)
    facts = Facts(b.build())
    (firing,) = [x for x in evaluate(CRITERIA, facts) if x.criterion.id == "renal-dose-table"]
    assert firing.proposal.title.startswith("Verify")
    assert "dose not stated" in firing.proposal.points[0].text
    known = Builder(age=78)
    known.med("metformin", dose_mg=1500.0)
    known.lab("egfr", 38.0)
    (sure,) = [
        x for x in evaluate(CRITERIA, Facts(known.build())) if x.criterion.id == "renal-dose-table"
    ]
    assert firing.proposal.points[0].tau < sure.proposal.points[0].tau


def test_blood_pressure_counts_every_reading() -> None:
    b = Builder()
    for days, sbp in ((300, 185.0), (200, 189.0), (100, 182.0), (0, 189.0)):
        b.lab("systolic_bp", sbp, AS_OF - timedelta(days=days))
    f = Facts(b.build())
    assert f.bp is not None and f.bp.readings == 4 and f.bp.raised == 4 and f.bp.severe


def test_history_and_long_past_acute_conditions_are_not_active() -> None:
    b = Builder()
    b.problems.append(
        Condition(
            "Condition/h",
            "History of myocardial infarction (situation)",
            (Code(SNOMED, "399211009", "History of myocardial infarction"),),
            "active",
            "confirmed",
            date(1990, 1, 1),
        )
    )
    f = Facts(b.build())
    assert not any(f.is_current(p, g) for p, g in f.problems)


# -- ingest: implausible values are refused ---------------------------------------------------


def _with_values(egfr: float, mmse: float) -> bytes:
    bundle = json.loads(fixture_bundle("adalberto").read_bytes())
    patient = next(e for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient")
    subject = {"reference": patient["fullUrl"]}
    extra = []
    for i, (loinc, value, unit) in enumerate(
        (("33914-3", egfr, "mL/min/{1.73_m2}"), ("72106-8", mmse, "{score}"))
    ):
        rid = f"3f1c1d9e-0000-4000-8000-00000000000{i}"
        extra.append(
            {
                "fullUrl": f"urn:uuid:{rid}",
                "resource": {
                    "resourceType": "Observation",
                    "id": rid,
                    "status": "final",
                    "code": {"coding": [{"system": "http://loinc.org", "code": loinc}]},
                    "subject": subject,
                    "effectiveDateTime": "2030-01-01T00:00:00Z",
                    "valueQuantity": {"value": value, "unit": unit},
                },
            }
        )
    out = copy.deepcopy(bundle)
    out["entry"] += extra
    return json.dumps(out).encode()


@pytest.mark.parametrize("value", [-250.0, 100_000.0])
def test_implausible_values_are_refused_as_facts_and_listed(value: float) -> None:
    profile = ingest(_with_values(value, value))
    refused = [u for u in profile.unused if "implausible" in u.reason]
    assert len(refused) == 2, profile.unused
    assert all(o.value != value for o in profile.observations)
    assert all(o.value != value for o in profile.readings)
    a = analyse(profile)
    texts = " ".join(pt.text for p in a.proposals for pt in p.points)
    assert "-250" not in texts and "100000" not in texts


def test_plausible_extremes_are_kept() -> None:
    profile = ingest(_with_values(6.0, 0.0))
    assert any(o.loinc == "33914-3" and o.value == 6.0 for o in profile.observations)
    assert any(o.loinc == "72106-8" and o.value == 0.0 for o in profile.observations)


# -- rule functions read the typed facts ------------------------------------------------------


def test_blood_pressure_line_counts_readings_names_every_drug_and_does_not_defer_severe() -> None:
    b = Builder(age=72)
    b.condition("hypertension")
    b.med("Amlodipine 5 MG Oral Tablet")
    b.med("Verapamil Hydrochloride 40 MG")
    b.med("Hydrochlorothiazide 25 MG")
    for days in (270, 180, 90, 0):
        b.lab("systolic_bp", 189.0, AS_OF - timedelta(days=days))
        b.obs[-1] = replace(b.obs[-1], ref=f"Observation/bp{days}")
        b.obs.append(replace(b.obs[-1], loinc="8462-4", value=102.0, display="diastolic_bp"))
    a = analyse(b.build())
    p = a.proposal("opt-review-bp")
    assert p is not None and p.category == "immediate-safety"
    text = " ".join(pt.text for pt in p.points)
    assert "4 of 4 readings" in text
    assert "single reading" not in text and "confirm with home" not in text
    for name in ("Amlodipine", "Verapamil", "Hydrochlorothiazide"):
        assert name in text


def test_raised_blood_pressure_with_no_medicine_reviews_no_treatment() -> None:
    """A blind review found "Review blood pressure treatment" for a man taking none: with no
    blood-pressure medicine the title says so and the action is to consider starting one."""
    b = Builder(age=52)
    b.condition("hypertension")
    for days in (90, 0):
        b.lab("systolic_bp", 152.0, AS_OF - timedelta(days=days))
        b.obs[-1] = replace(b.obs[-1], ref=f"Observation/bp{days}")
        b.obs.append(replace(b.obs[-1], loinc="8462-4", value=96.0, display="diastolic_bp"))
    p = analyse(b.build()).proposal("opt-review-bp")
    assert p is not None
    assert p.title.endswith("no antihypertensive taken") and "treatment" not in p.title
    assert "consider starting treatment" in p.description
    b.med("Amlodipine 5 MG Oral Tablet")
    on = analyse(b.build()).proposal("opt-review-bp")
    assert on is not None and on.title.startswith("Review blood pressure treatment")


def test_no_inhaler_technique_claim_without_an_inhaler() -> None:
    b = Builder()
    b.condition("copd")
    a = analyse(b.build())
    texts = " ".join(pt.text for p in a.proposals for pt in p.points)
    assert "inhaler technique" not in texts.lower()
    assert a.proposal("opt-start-copd-inhaler") is not None


def test_bisphosphonate_duration_counts_from_the_first_order() -> None:
    b = Builder()
    for year in (2008, 2012, 2016, 2021):
        b.meds.append(
            Medication(
                f"MedicationRequest/aln{year}",
                "alendronic acid 70 MG",
                (Code(RXNORM, "", "alendronate"),),
                "active" if year == 2021 else "completed",
                "order",
                date(year, 3, 1),
            )
        )
    a = analyse(b.build())
    p = a.proposal("opt-review-duration-alendronate")
    assert p is not None
    assert "16 years" in p.points[0].text
