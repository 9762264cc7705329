"""Values the record states are read, so that no line says they are missing or quotes another:
a laboratory's own reference range, a dose in micrograms, a blood pressure taken lying or
standing, a QTc or a cognitive score under another code or name, a pregnancy's weeks or last
menstrual period in its Condition's words, a creatinine under its SI code with the micro sign.
Each on a small synthetic record, beside a neighbour the reading must leave alone."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.claims import NoResult, check
from inference.knowledge.criteria.interpret import Binding, _dose_phrase, _lab_text
from inference.knowledge.facts import Facts
from inference.knowledge.pregnancy import pregnancy_of
from inference.knowledge.result_net import abnormal_results, net_line
from service.record.profile import Code, Condition, Medication, Observation, PatientProfile
from service.record.vocabulary import LOINC, RXNORM, SNOMED

from ..fhir_mapping.test_ingest_errors import bundle, patient

PLAN = date(2026, 12, 1)


def _obs(oid: str, code: str, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": oid,
        "status": "final",
        "code": {"coding": [{"system": LOINC, "code": code, "display": name}], "text": name},
        "subject": {"reference": "Patient/p1"},
        "effectiveDateTime": "2026-11-30",
        **extra,
    }


def _profile(*resources: dict[str, Any], sex: str = "male") -> PatientProfile:
    return ingest(json.dumps(bundle(patient(gender=sex), *resources)))


# -- the laboratory's own reference range ----------------------------------------------------


def _hb(value: float, **extra: Any) -> dict[str, Any]:
    q = {"value": value, "unit": "g/L", "system": "http://unitsofmeasure.org", "code": "g/L"}
    return _obs("hb", "718-7", "Haemoglobin", valueQuantity=q, **extra)


def _range(low: float, high: float, unit: str = "g/L") -> list[dict[str, Any]]:
    return [{"low": {"value": low, "unit": unit}, "high": {"value": high, "unit": unit}}]


def test_the_laboratorys_range_is_stated_and_judged_by() -> None:
    p = _profile(_hb(112, referenceRange=_range(130, 170)))
    (a,) = [x for x in abnormal_results(Facts(p)) if x.test.id == "haemoglobin"]
    assert "(130-170 g/L)" in net_line(a)
    assert "180" not in net_line(a)


def test_a_result_inside_the_laboratorys_range_is_not_abnormal() -> None:
    # 125 g/L is under the file's male interval but inside the range this laboratory sent
    p = _profile(_hb(125, referenceRange=_range(120, 170)))
    assert not [x for x in abnormal_results(Facts(p)) if x.test.id == "haemoglobin"]


def test_without_a_range_of_its_own_the_cited_interval_stays() -> None:
    p = _profile(_hb(112))
    (a,) = [x for x in abnormal_results(Facts(p)) if x.test.id == "haemoglobin"]
    assert not a.from_lab


def test_a_range_in_a_unit_that_cannot_be_read_is_not_used() -> None:
    p = _profile(_hb(112, referenceRange=_range(8, 11, "mmol/L")))
    (a,) = [x for x in abnormal_results(Facts(p)) if x.test.id == "haemoglobin"]
    assert not a.from_lab


# -- a dose in micrograms or grams ------------------------------------------------------------


def _med(value: float, unit: str) -> Medication:
    return Medication(
        "MedicationRequest/d",
        "Digoxin 250 microgram tablets",
        (Code(RXNORM, "197604", "digoxin"),),
        "active",
        "order",
        date(2026, 1, 1),
        dose_value=value,
        dose_unit=unit,
        times_per_day=1.0,
    )


@pytest.mark.parametrize("unit", ["ug", "mcg", "microgram", "micrograms", "µg", "μg", "{mcg}"])
def test_a_dose_in_micrograms_is_read_in_mg(unit: str) -> None:
    p = PatientProfile(
        "Patient/p", "female", date(1940, 1, 1), PLAN, medications=(_med(250, unit),)
    )
    (m,) = Facts(p).meds
    assert m.daily_mg == pytest.approx(0.25)
    assert _dose_phrase(m) == "0.25 mg a day"


def test_a_dose_in_an_unknown_unit_stays_unstated() -> None:
    p = PatientProfile(
        "Patient/p", "female", date(1940, 1, 1), PLAN, medications=(_med(2, "puff"),)
    )
    (m,) = Facts(p).meds
    assert m.daily_mg is None or not m.dose_stated


# -- blood pressure lying and standing ------------------------------------------------------------


def _comp(code: str, value: float, name: str) -> dict[str, Any]:
    return {
        "code": {"coding": [{"system": LOINC, "code": code, "display": name}]},
        "valueQuantity": {"value": value, "unit": "mm[Hg]"},
    }


def test_a_standing_blood_pressure_is_a_blood_pressure() -> None:
    standing = _obs(
        "bp",
        "85354-9",
        "Blood pressure standing",
        component=[
            _comp("8460-8", 118, "Systolic blood pressure--standing"),
            _comp("8454-1", 70, "Diastolic blood pressure--standing"),
        ],
    )
    p = _profile(standing)
    assert check(NoResult("blood_pressure"), p, PLAN) is not None


def test_a_pulmonary_pressure_is_no_blood_pressure() -> None:
    q = {"value": 40, "unit": "mm[Hg]"}
    p = _profile(_obs("pa", "8440-0", "Pulmonary artery systolic pressure", valueQuantity=q))
    assert check(NoResult("blood_pressure"), p, PLAN) is None


# -- a QTc or a cognitive score under another code or name -----------------------------------


def _local(name: str, value: float, unit: str = "") -> Observation:
    return Observation("Observation/x", "", name, value, unit, date(2026, 11, 20), recognised=False)


def test_a_qtc_under_a_local_code_is_quoted() -> None:
    p = PatientProfile(
        "Patient/p",
        "female",
        date(1950, 1, 1),
        PLAN,
        observations=(_local("QTc (Bazett)", 472, "ms"),),
    )
    assert _lab_text("qtc", Facts(p), Binding(), {}) == "472 ms"


def test_a_qtc_stated_in_words_is_quoted_not_called_missing() -> None:
    """A blind record held its QTc only as text ("QTc 486 ms, sinus rhythm 64/min"): the line
    said "latest QTc not recorded". It now quotes what the record says."""
    worded = Observation(
        "Observation/q",
        "",
        "QTc interval (ECG)",
        None,
        "",
        date(2026, 11, 26),
        recognised=False,
        value_text="QTc 486 ms, sinus rhythm 64/min",
    )
    p = PatientProfile("Patient/p", "female", date(1950, 1, 1), PLAN, observations=(worded,))
    said = _lab_text("qtc", Facts(p), Binding(), {})
    assert said == 'recorded in words as "QTc 486 ms, sinus rhythm 64/min" on 2026-11-26'
    none = PatientProfile("Patient/p", "female", date(1950, 1, 1), PLAN)
    assert _lab_text("qtc", Facts(none), Binding(), {}) == "not recorded"


def test_a_qt_interval_uncorrected_is_no_qtc() -> None:
    p = PatientProfile(
        "Patient/p",
        "female",
        date(1950, 1, 1),
        PLAN,
        observations=(_local("QT interval", 420, "ms"),),
    )
    assert _lab_text("qtc", Facts(p), Binding(), {}) == "not recorded"


@pytest.mark.parametrize(
    "name", ["AMTS", "Abbreviated Mental Test Score", "6CIT score", "Mini-Cog", "ACE-III total"]
)
def test_a_brief_cognitive_test_is_a_cognitive_assessment(name: str) -> None:
    p = PatientProfile(
        "Patient/p", "female", date(1940, 1, 1), PLAN, observations=(_local(name, 7),)
    )
    assert check(NoResult("cognition"), p, PLAN) is not None


def test_a_cognitive_neighbour_is_not_a_cognitive_assessment() -> None:
    p = PatientProfile(
        "Patient/p", "female", date(1940, 1, 1), PLAN, observations=(_local("Amylase", 70),)
    )
    assert check(NoResult("cognition"), p, PLAN) is None


# -- a pregnancy's weeks in words, its last menstrual period in its text ----------------------


def _pregnant(text: str, onset: date | None = None) -> PatientProfile:
    c = Condition(
        "Condition/preg",
        text,
        (Code(SNOMED, "77386006", "Pregnant"),),
        "active",
        "confirmed",
        onset,
    )
    return PatientProfile("Patient/p", "female", date(1994, 3, 1), PLAN, problems=(c,))


def test_weeks_said_to_be_about_are_quoted_as_about() -> None:
    preg = pregnancy_of(_pregnant("Pregnancy, about 5 weeks"))
    assert preg is not None
    assert preg.phrase == "pregnant (the record says about 5 weeks, undated)"


def test_a_stated_last_menstrual_period_dates_the_pregnancy() -> None:
    preg = pregnancy_of(_pregnant("Early pregnancy, last menstrual period 2026-10-24"))
    assert preg is not None
    assert preg.weeks == (PLAN - date(2026, 10, 24)).days // 7 == 5
    assert preg.phrase == "pregnant, 5 weeks (first trimester)"


def test_an_uncertain_period_is_not_read() -> None:
    for text in ("Pregnancy, LMP unsure", "Pregnancy, period about 6 weeks late"):
        preg = pregnancy_of(_pregnant(text))
        assert preg is not None
        assert preg.phrase == "pregnant (gestational age not recorded)"


# -- creatinine under its SI code, with the micro sign -----------------------------------------


def _creatinine(
    oid: str, code: str, value: float, day: str, unit: str = "µmol/L"
) -> dict[str, Any]:
    q = {"value": value, "unit": unit}
    return _obs(oid, code, "Creatinine", valueQuantity=q, effectiveDateTime=day)


@pytest.mark.parametrize("code", ["14682-9", "59826-8"])
def test_a_creatinine_in_umol_l_under_its_si_code_gives_kidney_function(code: str) -> None:
    p = _profile(
        _creatinine("c1", code, 88, "2026-06-01"),
        _creatinine("c2", code, 142, "2026-11-30"),
    )
    k = Facts(p).kidney
    assert k is not None and k.creatinine is not None
    assert k.creatinine.ref == "Observation/c2"


def test_a_urine_creatinine_gives_no_kidney_function() -> None:
    urine = _obs(
        "u",
        "14683-7",
        "Creatinine [Moles/volume] in Urine",
        valueQuantity={"value": 9000, "unit": "umol/L"},
    )
    assert Facts(_profile(urine)).kidney is None
