"""COPD exacerbations on a LABA and a LAMA with blood eosinophils of 100 per microlitre or more:
an inhaled corticosteroid is added (GOLD 2024 follow-up treatment). Exacerbations are counted
from coded Encounters and Conditions of the past year, one per day; the eosinophil count is
read in cells per microlitre from its unit, and a percentage is never read as a count."""

from __future__ import annotations

from datetime import date, timedelta

from inference.knowledge.facts import Facts
from inference.knowledge.rules import analyse
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import RXNORM, SNOMED

AS_OF = date(2026, 10, 6)
COPD = Condition(
    "Condition/copd",
    "Chronic obstructive lung disease (disorder)",
    (Code(SNOMED, "13645005", "Chronic obstructive lung disease (disorder)"),),
    "active",
    "confirmed",
    date(2016, 3, 15),
)
EXACERBATION = Code(SNOMED, "195951007", "Acute exacerbation of COPD")


def med(i: str, text: str) -> Medication:
    return Medication(
        f"MedicationRequest/{i}",
        text,
        (Code(RXNORM, "", text),),
        "active",
        "order",
        date(2024, 1, 1),
    )


TIOTROPIUM, SALMETEROL = med("lama", "tiotropium"), med("laba", "salmeterol")
FLUTICASONE = med("ics", "fluticasone propionate 0.25 MG/ACTUAT inhaler")
UMEC_VILANTEROL = med("combo", "umeclidinium 0.0625 MG / vilanterol 0.025 MG inhaler")


def visit(i: str, days_ago: int, cls: str = "EMER") -> Encounter:
    day = AS_OF - timedelta(days=days_ago)
    return Encounter(
        f"Encounter/{i}", "Emergency room admission", day, day, cls, reasons=(EXACERBATION,)
    )


def flare(i: str, days_ago: int) -> Condition:
    day = AS_OF - timedelta(days=days_ago)
    return Condition(
        f"Condition/{i}",
        "Acute exacerbation of COPD",
        (EXACERBATION,),
        "resolved",
        "confirmed",
        day,
        day + timedelta(days=10),
    )


def eos(value: float, unit: str = "10*3/uL", loinc: str = "711-2") -> Observation:
    return Observation(
        "Observation/eos", loinc, "Eosinophils", value, unit, AS_OF - timedelta(days=37)
    )


TWO_VISITS = (visit("e1", 37), visit("e2", 237))
EOS_400 = (eos(0.4),)


def profile(
    meds: tuple[Medication, ...] = (TIOTROPIUM, SALMETEROL),
    encounters: tuple[Encounter, ...] = TWO_VISITS,
    extra: tuple[Condition, ...] = (),
    obs: tuple[Observation, ...] = EOS_400,
) -> PatientProfile:
    return PatientProfile(
        "Patient/p",
        "male",
        date(1955, 1, 1),
        AS_OF,
        (COPD, *extra),
        meds,
        obs,
        encounters=encounters,
        readings=obs,
    )


def escalates(p: PatientProfile) -> bool:
    return any(x.id == "opt-start-ics-copd" for x in analyse(p).proposals)


def test_two_emergency_exacerbations_with_eosinophils_escalate() -> None:
    (o,) = [x for x in analyse(profile()).proposals if x.id == "opt-start-ics-copd"]
    assert "add-ics-copd-exacerbations" in o.criteria and o.priority == "omission"
    assert "2 exacerbation(s)" in o.description and "0.4 10*3/uL" in o.description
    assert {"Encounter/e1", "Observation/eos", "MedicationRequest/laba"} <= set(o.refs)
    # one visit needing emergency care is enough; so is one combination inhaler
    assert escalates(profile(encounters=(visit("e1", 37),)))
    assert escalates(profile(meds=(UMEC_VILANTEROL,)))
    # two exacerbations managed outside hospital (Conditions only), on different days
    assert escalates(profile(encounters=(), extra=(flare("f1", 40), flare("f2", 200))))


def test_no_escalation_in_the_near_misses() -> None:
    assert not escalates(profile(meds=(TIOTROPIUM, SALMETEROL, FLUTICASONE)))  # ICS taken
    assert not escalates(profile(meds=(TIOTROPIUM,)))  # no LABA
    assert not escalates(profile(obs=(eos(0.05),)))  # 50 per microlitre
    assert not escalates(profile(obs=(eos(4.0, "%", "713-8"),)))  # a percentage, not a count
    assert not escalates(profile(obs=(eos(0.4, ""),)))  # a count with no unit is not read
    assert not escalates(profile(obs=()))  # no count at all
    # one exacerbation managed outside hospital, or both longer than a year ago
    assert not escalates(profile(encounters=(), extra=(flare("f1", 40),)))
    assert not escalates(profile(encounters=(visit("e1", 400), visit("e2", 500))))
    # a Condition and its emergency visit on the same day are one exacerbation, still enough
    # here only because the visit was emergency care
    same_day = profile(encounters=(visit("e1", 40, "AMB"),), extra=(flare("f1", 40),))
    assert not escalates(same_day)


def test_eosinophil_units() -> None:
    from inference.knowledge.criteria.interpret import _value

    for value, unit, per_ul in (
        (0.4, "10*3/uL", 400.0),
        (0.3, "10*9/L", 300.0),
        (250.0, "/uL", 250.0),
        (250.0, "cells/uL", 250.0),
    ):
        got = _value(Facts(profile(obs=(eos(value, unit),))), "eosinophils")
        assert got is not None and abs(got[0] - per_ul) < 1e-9, unit
