"""Clinician text worded for where the plan is read (CANOE_LOCALE): units and spellings.

The wordings are the shipped ones (``data/locale.yaml`` and the unit factors of
``inference/knowledge/units.py``); the plans are planned end to end on the embedded backend."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.locale import clinician_wording
from inference.knowledge.units import CREATININE_UMOL_L_PER_MG_DL, GLUCOSE_MG_DL_PER_MMOL_L
from service.app import request_time
from service.backends import build_planner
from service.pipeline import new_plan_id
from service.record.profile import Condition, Observation, PatientProfile
from service.settings import load_settings
from service.text.summary import fact_words, summarise, summary_text

DAY = date(2026, 11, 20)
CREATED = "2026-11-30T09:00:00+00:00"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _profile() -> PatientProfile:
    return PatientProfile(
        "Patient/p",
        "female",
        date(1940, 1, 1),
        DAY,
        observations=(
            Observation("Observation/c", "14682-9", "Creatinine", 133.0, "umol/L", DAY),
            Observation("Observation/g", "15074-8", "Glucose", 5.5, "mmol/L", DAY),
        ),
        problems=(Condition("Condition/a", "Anaemia", (), "active", "confirmed", DAY),),
    )


def test_us_shows_creatinine_and_glucose_in_mg_per_dl() -> None:
    facts = dict(
        fact_words(_profile(), ["Observation/c", "Observation/g"], clinician_wording("us"))
    )
    creatinine = 133.0 / CREATININE_UMOL_L_PER_MG_DL
    glucose = 5.5 * GLUCOSE_MG_DL_PER_MMOL_L
    assert facts["Observation/c"] == f"Creatinine {creatinine:.1f} mg/dL on 2026-11-20"
    assert facts["Observation/g"] == f"Glucose {glucose:.1f} mg/dL on 2026-11-20"
    assert (creatinine, glucose) == (pytest.approx(1.5, abs=0.01), pytest.approx(99, abs=0.2))


def test_uk_keeps_the_recorded_units_and_spellings() -> None:
    facts = dict(fact_words(_profile(), ["Observation/c", "Condition/a"], clinician_wording("uk")))
    assert facts["Observation/c"] == "Creatinine 133 umol/L on 2026-11-20"
    assert facts["Condition/a"] == "Anaemia (since 2026-11-20)"


def test_us_spells_the_words_the_us_way() -> None:
    us = clinician_wording("us")
    assert us.spell("Anaemia with low haemoglobin and gastro-oesophageal reflux") == (
        "Anemia with low hemoglobin and gastroesophageal reflux"
    )
    assert dict(fact_words(_profile(), ["Condition/a"], us)) == {
        "Condition/a": "Anemia (since 2026-11-20)"
    }


def _summary(locale: str) -> str:
    settings = load_settings(environ={"CANOE_LOCALE": locale})
    path = EXAMPLES / "fixtures/fhir/adalberto_hartmann_ba18818d.json"
    bundle = path.read_bytes()
    profile = ingest(bundle, received=request_time(CREATED), clock_skew=settings.fhir.clock_skew)
    plan = asyncio.run(
        build_planner(settings).plan(profile, plan_id=new_plan_id(bundle), created=CREATED)
    )
    d, ev = plan.deliberation, plan.evaluation
    return summary_text(d, ev, summarise(d, ev))


def test_a_us_plan_reads_hemoglobin_a_uk_plan_haemoglobin() -> None:
    us, uk = _summary("us"), _summary("uk")
    assert "Check hemoglobin" in us and "haemoglobin" not in us.lower()
    assert "Check haemoglobin" in uk
