"""Results that call for action today or within 72 hours, as cited data: the values at which a
monitored DMARD is withheld (BSR 2017), an INR of 5 or more on warfarin (BSH 2011), a profound
low sodium (ESE 2014). Each edge is tested on both sides, on records built here."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from inference.embedded import known_options
from inference.knowledge import analyse
from inference.knowledge.result_net import critical_result
from service.record.profile import Code, Medication, Observation, PatientProfile
from service.record.vocabulary import RXNORM

AS_OF = date(2026, 11, 20)
WITHHOLD = "opt-withhold-result-"


def _med(name: str, rxcui: str) -> Medication:
    return Medication(
        f"MedicationRequest/{rxcui}", name, (Code(RXNORM, rxcui, name),), "active", "order",
        date(2020, 1, 1),
    )  # fmt: skip


AZATHIOPRINE = _med("azathioprine 50 MG Oral Tablet", "1256")
WARFARIN = _med("warfarin sodium 3 MG Oral Tablet", "11289")
AMLODIPINE = _med("amlodipine 5 MG Oral Tablet", "17767")


def _profile(
    loinc: str, value: float, unit: str, *meds: Medication, days: int = 1
) -> PatientProfile:
    o = Observation("Observation/r", loinc, loinc, value, unit, AS_OF - timedelta(days=days))
    return PatientProfile(
        "Patient/p1", "female", date(1950, 1, 1), AS_OF, medications=meds,
        observations=(o,), readings=(o,),
    )  # fmt: skip


def _lines(p: PatientProfile) -> dict[str, str]:
    return {x.id: x.title for x in analyse(p).proposals}


# -- a monitored DMARD withheld until the specialist team is consulted (BSR 2017) ------------


@pytest.mark.parametrize(
    ("test", "loinc", "unit", "past", "at"),
    [
        ("neutrophils", "751-8", "10*9/L", 1.5, 1.6),
        ("wcc", "6690-2", "10*9/L", 3.4, 3.5),
        ("platelets", "777-3", "10*9/L", 139.0, 140.0),
        ("alt", "1742-6", "U/L", 101.0, 100.0),
        ("ast", "1920-8", "U/L", 101.0, 100.0),
    ],
)
def test_a_dmard_is_withheld_past_the_bsr_value_and_not_at_it(
    test: str, loinc: str, unit: str, past: float, at: float
) -> None:
    fired = _profile(loinc, past, unit, AZATHIOPRINE)
    title = _lines(fired)[f"{WITHHOLD}{test}"]
    assert title.startswith("Withhold azathioprine and discuss with the specialist team: ")
    assert known_options(fired)[f"{WITHHOLD}{test}"].timeframe == "now"
    assert f"{WITHHOLD}{test}" not in _lines(_profile(loinc, at, unit, AZATHIOPRINE))


def test_the_withhold_line_names_the_result_and_the_threshold() -> None:
    p = _profile("751-8", 0.8, "10*9/L", AZATHIOPRINE)
    title = _lines(p)[f"{WITHHOLD}neutrophils"]
    assert title.endswith(": Neutrophils 0.8 10*9/L (under 1.6 10*9/L) on 2026-11-19")
    # the withhold line cites the result: the plain net line does not repeat it
    assert "opt-review-result-neutrophils" not in _lines(p)


def test_no_withhold_without_a_monitored_medicine_or_for_an_old_result() -> None:
    assert f"{WITHHOLD}neutrophils" not in _lines(_profile("751-8", 0.8, "10*9/L", AMLODIPINE))
    old = _profile("751-8", 0.8, "10*9/L", AZATHIOPRINE, days=30)
    assert f"{WITHHOLD}neutrophils" not in _lines(old)


# -- an INR of 5 or more on warfarin: withhold doses today (BSH 2011) -------------------------


@pytest.mark.parametrize(("inr", "timeframe"), [(4.9, "7d"), (5.0, "now"), (6.4, "now")])
def test_an_inr_of_five_or_more_on_warfarin_is_for_today(inr: float, timeframe: str) -> None:
    p = _profile("6301-6", inr, "{INR}", WARFARIN)
    assert known_options(p)["opt-recheck-inr-high"].timeframe == timeframe
    step = critical_result(p, p.observations[0])
    assert (step is not None and "withhold one or two doses" in step[1]) is (timeframe == "now")


def test_an_old_inr_of_six_is_not_made_today_again() -> None:
    p = _profile("6301-6", 6.4, "{INR}", WARFARIN, days=20)
    assert known_options(p)["opt-recheck-inr-high"].timeframe != "now"


# -- a profound low sodium within 72 hours (ESE 2014) -------------------------------------------


@pytest.mark.parametrize(("sodium", "timeframe"), [(125.0, "7d"), (124.0, "72h")])
def test_a_sodium_under_125_is_reviewed_within_72_hours(sodium: float, timeframe: str) -> None:
    p = _profile("2951-2", sodium, "mmol/L", AMLODIPINE)
    assert known_options(p)["opt-review-result-sodium"].timeframe == timeframe
