"""Counted-feature dose rules (``data/dose_features.yaml``): apixaban for atrial fibrillation
at two of age 80, weight 60 kg and creatinine 133 umol/L (1.5 mg/dL), edoxaban at one of
weight 60 kg or a named P-gp inhibitor, dabigatran at age 80 or with verapamil. Each edge as the
label states it, the dose already reduced (silent), an unstated dose (verify), the reduced dose
with too few features (review), and every stated feature held against the record."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from inference.knowledge.claims import FeatureRead, check
from inference.knowledge.criteria.interpret import Firing, claims_of, evaluate, render
from inference.knowledge.dose_features import load_dose_features
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA
from service.record.profile import MedicationStatement, Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS

from .criteria_factory import AS_OF, Builder

ABOVE, BELOW = "feature-dose-above-reduced", "feature-dose-below-full"


def _record(
    drug: str,
    dose_mg: float | None,
    times: float,
    *,
    age: int = 70,
    kg: float | None = 80.0,
    creatinine: tuple[float, str] | None = (80.0, "umol/L"),
    af: bool = True,
    also: tuple[str, ...] = (),
) -> PatientProfile:
    b = Builder(age=age)
    if af:
        b.condition("af")
    m = b.med(drug, dose_mg=dose_mg)
    if dose_mg is not None:
        b.meds[-1] = replace(m, times_per_day=times)
    for other in also:
        b.med(other)
    if kg is not None:
        b.obs.append(
            Observation("Observation/wt", LOINC_GROUPS["weight"][0], "weight", kg, "kg", AS_OF)
        )
    if creatinine is not None:
        value, unit = creatinine
        loinc = LOINC_GROUPS["creatinine"][0]
        day = AS_OF - timedelta(days=3)
        b.obs.append(Observation("Observation/cr", loinc, "creatinine", value, unit, day))
    return b.build()


def _fired(p: PatientProfile, cid: str) -> list[Firing]:
    return [x for x in evaluate(CRITERIA, Facts(p)) if x.criterion.id == cid]


def _apixaban(**kw: object) -> PatientProfile:
    return _record("apixaban", 5, 2, **kw)  # type: ignore[arg-type]


def test_the_blind_case_two_features_met_on_the_full_dose() -> None:
    """89 years, 57 kg, creatinine 141 umol/L on 5 mg twice daily: reduce to 2.5 mg."""
    p = _apixaban(age=89, kg=57.0, creatinine=(141.0, "umol/L"))
    (x,) = _fired(p, ABOVE)
    assert x.proposal.id == "opt-reduce-apixaban"
    text = " ".join(pt.text for pt in x.proposal.points)
    assert "age 89" in text and "body weight 57 kg on 2024-06-01" in text
    assert "creatinine 141 umol/L on 2024-05-29" in text and "2.5 mg twice daily" in text
    facts = Facts(p)
    claims = claims_of(x.criterion, facts, x.binding)
    assert sum(isinstance(c, FeatureRead) for c in claims) == 3
    assert all(check(c, p, p.plan_day) is None for c in claims)


@pytest.mark.parametrize(
    ("age", "kg", "creatinine", "fires"),
    [
        (80, 60.0, (80.0, "umol/L"), True),  # age and weight at their edges
        (79, 60.0, (80.0, "umol/L"), False),
        (80, 61.0, (80.0, "umol/L"), False),
        (70, 60.0, (133.0, "umol/L"), True),  # creatinine at its edge in umol/L
        (70, 60.0, (132.0, "umol/L"), False),
        (70, 60.0, (1.5, "mg/dL"), True),  # and in mg/dL, at the label's own edge
        (70, 60.0, (1.4, "mg/dL"), False),
        (70, 61.0, (1.5, "mg/dL"), False),
    ],
)
def test_apixaban_edges(age: int, kg: float, creatinine: tuple[float, str], fires: bool) -> None:
    assert bool(_fired(_apixaban(age=age, kg=kg, creatinine=creatinine), ABOVE)) is fires


def test_already_reduced_is_silent_and_unknown_dose_asks_to_verify() -> None:
    features = {"age": 89, "kg": 57.0, "creatinine": (141.0, "umol/L")}
    reduced = _record("apixaban", 2.5, 2, **features)  # type: ignore[arg-type]
    assert not _fired(reduced, ABOVE) and not _fired(reduced, BELOW)
    unknown = _record("apixaban", None, 2, **features)  # type: ignore[arg-type]
    (x,) = _fired(unknown, ABOVE)
    assert x.proposal.id.startswith("opt-verify-") and x.proposal.priority == "review"


def test_no_indication_on_record_is_silent() -> None:
    p = _apixaban(age=89, kg=57.0, creatinine=(141.0, "umol/L"), af=False)
    assert not _fired(p, ABOVE)


def test_reduced_dose_with_too_few_features_is_a_review() -> None:
    p = _record("apixaban", 2.5, 2, age=82)  # one feature, clearance well above 30
    (x,) = _fired(p, BELOW)
    assert x.proposal.priority == "review"
    text = render("{features.read}", Facts(p), x.binding, x.criterion.params)
    assert text == "age 82, body weight 80 kg on 2024-06-01, creatinine 80 umol/L on 2024-05-29"
    claims = claims_of(x.criterion, Facts(p), x.binding)
    assert all(check(c, p, p.plan_day) is None for c in claims)
    # a feature unknown (no weight): fewer than two cannot be asserted, so nothing is said
    assert not _fired(_record("apixaban", 2.5, 2, age=82, kg=None), BELOW)
    # two features met: the reduced dose is the label's
    assert not _fired(_record("apixaban", 2.5, 2, age=82, kg=58.0), BELOW)


@pytest.mark.parametrize(
    ("kg", "also", "fires"),
    [
        (60.0, (), True),
        (61.0, (), False),
        (80.0, ("dronedarone",), True),
        (80.0, ("amiodarone",), False),
    ],
)
def test_edoxaban(kg: float, also: tuple[str, ...], fires: bool) -> None:
    p = _record("edoxaban", 60, 1, kg=kg, also=also)
    assert bool(_fired(p, ABOVE)) is fires
    assert not _fired(_record("edoxaban", 30, 1, kg=kg, also=also), ABOVE)


@pytest.mark.parametrize(
    ("age", "also", "fires"),
    [(80, (), True), (79, (), False), (70, ("verapamil",), True), (70, ("diltiazem",), False)],
)
def test_dabigatran(age: int, also: tuple[str, ...], fires: bool) -> None:
    p = _record("dabigatran", 150, 2, age=age, also=also)
    assert bool(_fired(p, ABOVE)) is fires
    assert not _fired(_record("dabigatran", 110, 2, age=age, also=also), ABOVE)


def test_a_stated_feature_the_record_contradicts_is_refused() -> None:
    p = _apixaban(age=89, kg=57.0, creatinine=(141.0, "umol/L"))
    (x,) = _fired(p, ABOVE)
    wrong = FeatureRead("creatinine", "Observation/cr", 150.0, ">=", 133.0, True)
    assert check(wrong, p, p.plan_day) is not None
    missing = FeatureRead("weight", "Observation/none", 57.0, "<=", 60.0, True)
    assert check(missing, p, p.plan_day) is not None
    assert x.binding.features is not None


def test_table_shape() -> None:
    table = load_dose_features()
    assert table.version == "2026.12-4"
    assert {r.drug for r in table.reductions} == {"apixaban", "edoxaban", "dabigatran"}


def _isoniazid(*, request: str = "", statement: str = "") -> PatientProfile:
    b = Builder(age=40)
    b.med("isoniazid", dose_mg=300)
    if request:
        b.med(request)
    p = b.build()
    if statement:
        st = MedicationStatement("MedicationStatement/s1", statement, (), "active", AS_OF)
        p = replace(p, statements=(st,))
    return p


def test_isoniazid_without_pyridoxine_is_an_omission() -> None:
    (x,) = _fired(_isoniazid(), "start-pyridoxine-isoniazid")
    assert x.proposal.id == "opt-start-pyridoxine"
    assert not _fired(_isoniazid(request="pyridoxine"), "start-pyridoxine-isoniazid")
    # a statement that the patient takes vitamin B6 answers it as a request does
    assert not _fired(_isoniazid(statement="Vitamin B6 50 mg"), "start-pyridoxine-isoniazid")
    # a statement that is not current does not
    p = _isoniazid(statement="Vitamin B6 50 mg")
    p = replace(p, statements=(replace(p.statements[0], status="stopped"),))
    assert _fired(p, "start-pyridoxine-isoniazid")


def test_folic_acid_stated_answers_the_methotrexate_companion() -> None:
    b = Builder(age=60)
    b.med("methotrexate", dose_mg=15)
    p = b.build()
    assert _fired(p, "start-folic-acid-methotrexate")
    st = MedicationStatement("MedicationStatement/s1", "folic acid 5 mg", (), "active", AS_OF)
    assert not _fired(replace(p, statements=(st,)), "start-folic-acid-methotrexate")


def test_a_kidney_band_that_changes_the_drug_stands_the_label_dose_down() -> None:
    """Dabigatran at 83 with a clearance under 30 (creatinine 160 umol/L, 55 kg): the kidney
    band switches it (contraindicated); a "reduce to 110 mg" beside it would compete with the
    switch and, scored higher, once replaced it. At a clearance the band allows, it speaks."""
    low = _record("dabigatran", 150, 2, age=83, kg=55.0, creatinine=(160.0, "umol/L"))
    fired = {x.criterion.id for x in evaluate(CRITERIA, Facts(low))}
    assert "renal-dose-table" in fired and ABOVE not in fired
    ok = _record("dabigatran", 150, 2, age=83, kg=80.0, creatinine=(70.0, "umol/L"))
    assert _fired(ok, ABOVE)
