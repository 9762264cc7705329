"""Results a record holds in another unit, under another code or only by name are results: a
creatinine answers a kidney-function check, any member of a blood count answers a blood-count
check, an HbA1c in IFCC mmol/mol is neither refused as implausible nor compared as if it were
NGSP %, and a drug level sent as text is the level. Each case is a new synthetic record; the
plan is made by the real knowledge (``analyse``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from fhir_mapping._plausible import implausible
from inference.knowledge import analyse
from inference.knowledge.facts import Facts, hba1c_percent
from inference.knowledge.levels import level_entry, readings
from service.record.profile import Code, Medication, Observation, PatientProfile
from service.record.vocabulary import RXNORM

PLAN = date(2026, 11, 30)


def _days(n: int) -> date:
    return PLAN - timedelta(days=n)


def _med(ref: str, text: str, started: date = date(2022, 3, 1)) -> Medication:
    return Medication(f"MedicationRequest/{ref}", text, (Code(RXNORM, "", text),), "active",
                      "order", started)  # fmt: skip


def _obs(ref: str, loinc: str, name: str, value: float, unit: str, day: date) -> Observation:
    return Observation(f"Observation/{ref}", loinc, name, value, unit, day, recognised=bool(loinc))


def _profile(meds: tuple[Medication, ...], obs: tuple[Observation, ...]) -> PatientProfile:
    return PatientProfile(
        "Patient/p",
        "male",
        date(1961, 5, 2),
        PLAN,
        medications=meds,
        observations=obs,
        readings=tuple(o for o in obs if o.recognised),
    )


def _texts(p: PatientProfile, option: str) -> str:
    return " ".join(f"{x.title} {x.description}" for x in analyse(p).proposals if x.id == option)


# -------------------------------------------------------------------- kidney function


def test_a_creatinine_in_mg_dl_answers_a_kidney_function_check() -> None:
    """An anticoagulant needs kidney function yearly; a serum creatinine of last month (no eGFR
    reported) is that result, so no line may say there is none."""
    doac = _med("a", "apixaban 5 MG Oral Tablet")
    creat = _obs("c", "2160-0", "Creatinine", 0.8, "mg/dL", _days(30))
    assert "no result in the record" not in _texts(_profile((doac,), (creat,)), "opt-monitor-egfr")
    assert "no result in the record" in _texts(_profile((doac,), ()), "opt-monitor-egfr")


def test_an_old_creatinine_is_stated_as_the_last_result_not_as_none() -> None:
    doac = _med("a", "apixaban 5 MG Oral Tablet")
    creat = _obs("c", "2160-0", "Creatinine", 88.0, "umol/L", _days(500))
    said = _texts(_profile((doac,), (creat,)), "opt-monitor-egfr")
    assert "last result 88" in said and "no result" not in said


# ------------------------------------------------------------------------- blood count


@pytest.mark.parametrize(
    ("loinc", "name", "value", "unit"),
    [
        ("751-8", "Neutrophils [#/volume] in Blood", 3.2, "10*9/L"),
        ("6690-2", "Leukocytes [#/volume] in Blood", 6.4, "10*9/L"),
        ("", "White cell count", 6.4, "10*9/L"),
        ("718-7", "Hemoglobin [Mass/volume] in Blood", 13.1, "g/dL"),
    ],
)
def test_any_member_of_a_blood_count_answers_a_blood_count_check(
    loinc: str, name: str, value: float, unit: str
) -> None:
    mtx = _med("m", "methotrexate 2.5 MG Oral Tablet")
    member = _obs("b", loinc, name, value, unit, _days(20))
    with_count = _profile((mtx,), (member,))
    assert "Check blood count" not in " ".join(x.title for x in analyse(with_count).proposals)
    assert "Check blood count" in " ".join(x.title for x in analyse(_profile((mtx,), ())).proposals)


def test_an_hba1c_is_not_a_blood_count() -> None:
    mtx = _med("m", "methotrexate 2.5 MG Oral Tablet")
    a1c = _obs("h", "", "Haemoglobin A1c", 6.1, "%", _days(20))
    titles = " ".join(x.title for x in analyse(_profile((mtx,), (a1c,))).proposals)
    assert "Check blood count on methotrexate (no result in the record)" in titles


# ------------------------------------------------------------------------------- HbA1c


def test_an_hba1c_in_mmol_mol_is_plausible_and_one_in_percent_keeps_its_range() -> None:
    assert implausible("4548-4", 61.0, "mmol/mol") is None
    assert implausible("4548-4", 7.8, "%") is None
    assert implausible("4548-4", 61.0, "%") is not None
    assert implausible("4548-4", 400.0, "mmol/mol") is not None


@pytest.mark.parametrize(
    ("mmol_mol", "percent"),
    [(20.0, 4.0), (42.0, 6.0), (48.0, 6.5), (53.0, 7.0), (64.0, 8.0), (75.0, 9.0)],
)
def test_mmol_mol_is_restated_in_ngsp_percent_by_the_master_equation(
    mmol_mol: float, percent: float
) -> None:
    """The pairs of the NGSP/IFCC conversion table, to one decimal."""
    got = hba1c_percent(_obs("h", "4548-4", "HbA1c", mmol_mol, "mmol/mol", _days(3)))
    assert (got.value, got.unit) == (percent, "%")


def test_the_knowledge_compares_an_ifcc_hba1c_in_percent() -> None:
    a1c = _obs("h", "4548-4", "HbA1c", 64.0, "mmol/mol", _days(3))
    latest = Facts(_profile((), (a1c,))).latest("hba1c")
    assert latest is not None and latest.value == 8.0 and latest.unit == "%"


def test_a_low_ifcc_hba1c_on_a_hypoglycaemic_in_old_age_is_read_as_low() -> None:
    """42 mmol/mol is 6.0 %: below the usual goal the criterion states in %, so the check that
    reads it fires; read raw (42 against 7.0) it never could. 64 mmol/mol (8.0 %) is not low."""
    gliclazide = _med("g", "gliclazide 80 MG Oral Tablet")
    old = replace(_profile((gliclazide,), ()), birth_date=date(1942, 3, 1))

    def fired(mmol_mol: float) -> bool:
        a1c = _obs("h", "4548-4", "HbA1c", mmol_mol, "mmol/mol", _days(20))
        p = replace(old, observations=(a1c,), readings=(a1c,))
        return any("lab-hypoglycaemic-low-hba1c" in x.criteria for x in analyse(p).proposals)

    assert fired(42.0)
    assert not fired(64.0)


# -------------------------------------------------------------------------- drug levels


def test_a_level_sent_with_only_its_name_is_the_level() -> None:
    """A tacrolimus trough sent as text (no LOINC): the level is read, and no line asks for a
    level 'not measured' or says there is none."""
    entry = level_entry("tacrolimus")
    assert entry is not None
    trough = _obs("t", "", "Tacrolimus trough level", 16.4, "ug/L", _days(2))
    tac = _med("t", "tacrolimus 1 MG Oral Capsule", date(2015, 1, 1))
    clari = _med("c", "clarithromycin 500 MG Oral Tablet", _days(7))
    p = _profile((tac, clari), (trough,))
    assert [r.value for r in readings(entry, p)] == [16.4]
    texts = " ".join(f"{x.title} {x.description}" for x in analyse(p).proposals)
    assert "no level in the record" not in texts
    bare = replace(p, observations=())
    assert "no level in the record" in " ".join(
        f"{x.title} {x.description}" for x in analyse(bare).proposals
    )


def test_a_named_result_in_a_unit_the_level_cannot_take_is_not_judged() -> None:
    entry = level_entry("tacrolimus")
    assert entry is not None
    dose = _obs("d", "", "Tacrolimus dose", 4.0, "mg", _days(2))
    assert readings(entry, _profile((), (dose,))) == ()
