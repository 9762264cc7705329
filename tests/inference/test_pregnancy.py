"""Pregnancy and breastfeeding read from the record, and the criteria that read them.

Profiles are built by hand with the facts each case needs; ``pregnancy_of``, ``lactation_of``
and ``analyse`` read the real knowledge (``data/pregnancy.yaml``, the drug table, the criteria).
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from fhir_mapping.codes import snomed_ok
from inference.knowledge import analyse
from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.coverage import assess
from inference.knowledge.pregnancy import (
    PREGNANCY,
    PREGNANCY_FILE,
    lactation_of,
    load_pregnancy,
    pregnancy_of,
    stated_weeks,
)
from inference.knowledge.registry import RULES
from inference.knowledge.rules import CRITERIA
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import ICD10, RXNORM, SNOMED

AS_OF = date(2026, 11, 30)
PREGNANT = Code(SNOMED, "77386006", "Pregnant")
POSITIVE = Code(SNOMED, "10828004", "Positive")
NEGATIVE = Code(SNOMED, "260385009", "Negative")


def _days(n: int) -> date:
    return AS_OF - timedelta(days=n)


def _profile(
    *,
    sex: str = "female",
    age: int = 30,
    problems: tuple[Condition, ...] = (),
    meds: tuple[Medication, ...] = (),
    obs: tuple[Observation, ...] = (),
    encounters: tuple[Encounter, ...] = (),
) -> PatientProfile:
    return PatientProfile(
        "Patient/p",
        sex,
        date(AS_OF.year - age, 1, 1),
        AS_OF,
        problems=problems,
        medications=meds,
        observations=obs,
        encounters=encounters,
        readings=tuple(o for o in obs if o.value is not None),
    )


def _cond(ref: str, code: Code, onset: date, abated: date | None = None) -> Condition:
    status = "resolved" if abated else "active"
    return Condition(f"Condition/{ref}", code.display, (code,), status, "confirmed", onset, abated)


def _med(ref: str, text: str, dose_mg: float | None = None) -> Medication:
    return Medication(
        f"MedicationRequest/{ref}",
        text,
        (Code(RXNORM, "", text),),
        "active",
        "order",
        _days(400),
        dose_value=dose_mg,
        dose_unit="mg" if dose_mg is not None else "",
        times_per_day=1.0 if dose_mg is not None else None,
    )


def _test(ref: str, value: Code, when: date, loinc: str = "2106-3") -> Observation:
    return Observation(
        f"Observation/{ref}", loinc, "pregnancy test", None, "", when, value_codes=(value,)
    )


def _num(ref: str, loinc: str, value: float, unit: str, when: date = AS_OF) -> Observation:
    return Observation(f"Observation/{ref}", loinc, loinc, value, unit, when)


# ----------------------------------------------------------------------------- the facts


def test_a_pregnancy_condition_with_a_gestational_age_gives_weeks_and_trimester() -> None:
    p = pregnancy_of(
        _profile(
            problems=(_cond("c1", PREGNANT, _days(90)),),
            obs=(_num("ga", "49051-6", 14, "wk", _days(14)),),
        )
    )
    assert p is not None
    assert (p.weeks, p.trimester) == (16, 2)
    assert p.phrase == "pregnant, 16 weeks (second trimester)"
    assert set(p.refs) == {"Condition/c1", "Observation/ga"}


def test_a_positive_test_alone_is_a_pregnancy_of_unknown_gestation() -> None:
    p = pregnancy_of(_profile(obs=(_test("t", POSITIVE, _days(10)),)))
    assert p is not None and p.weeks is None and p.trimester is None
    assert "gestational age not recorded" in p.phrase


def test_serum_hcg_counts_from_the_positive_threshold() -> None:
    low = _num("h", "21198-7", PREGNANCY.pregnancy.positive_iu_l - 1, "m[IU]/mL")
    high = _num("h", "21198-7", 5200, "m[IU]/mL")
    assert pregnancy_of(_profile(obs=(low,))) is None
    assert pregnancy_of(_profile(obs=(high,))) is not None


def test_the_last_menstrual_period_gives_the_gestational_age() -> None:
    lmp = Observation(
        "Observation/lmp", "8665-2", "LMP", None, "", AS_OF, value_text=str(_days(70))
    )
    p = pregnancy_of(_profile(obs=(lmp,)))
    assert p is not None and (p.weeks, p.trimester) == (10, 1)


def test_an_antenatal_visit_marks_a_pregnancy() -> None:
    visit = Encounter(
        "Encounter/e",
        "Prenatal visit",
        _days(5),
        class_code="AMB",
        types=(Code(SNOMED, "424619006", "Prenatal visit"),),
    )
    assert pregnancy_of(_profile(encounters=(visit,))) is not None


@pytest.mark.parametrize(
    ("why", "profile"),
    [
        (
            "a resolved pregnancy Condition",
            _profile(problems=(_cond("c1", PREGNANT, _days(300), _days(30)),)),
        ),
        (
            "a delivery recorded after it",
            _profile(
                obs=(_test("t", POSITIVE, _days(200)),),
                problems=(_cond("d", Code(ICD10, "O80", "Delivery"), _days(20)),),
            ),
        ),
        (
            "a negative test after the positive one",
            _profile(
                obs=(_test("t", NEGATIVE, _days(3)), _test("u", POSITIVE, _days(40), "2118-8"))
            ),
        ),
        (
            "a gestational age that would now be past 42 weeks",
            _profile(obs=(_num("ga", "49051-6", 30, "wk", _days(100)),)),
        ),
        (
            "a positive test too old for a pregnancy still to be running",
            _profile(obs=(_test("t", POSITIVE, _days(PREGNANCY.pregnancy.undated_days + 1)),)),
        ),
        (
            "a pregnancy Condition left active for years",
            _profile(problems=(_cond("c1", PREGNANT, _days(3 * 365)),)),
        ),
        ("a man", _profile(sex="male", problems=(_cond("c1", PREGNANT, _days(30)),))),
    ],
)
def test_a_pregnancy_that_ended_or_never_was_is_not_current(
    why: str, profile: PatientProfile
) -> None:
    assert pregnancy_of(profile) is None, why


def test_breastfeeding_is_read_from_a_current_condition_only() -> None:
    feeding = Code(SNOMED, "413712001", "Breastfeeding (mother)")
    assert lactation_of(_profile(problems=(_cond("b", feeding, _days(30)),))) is not None
    ended = _cond("b", feeding, _days(300), _days(10))
    assert lactation_of(_profile(problems=(ended,))) is None
    assert lactation_of(_profile(sex="male", problems=(_cond("b", feeding, _days(30)),))) is None


def test_the_data_file_codes_and_suppressed_ids_are_known() -> None:
    d = PREGNANCY
    codes = (*d.pregnancy.snomed, *d.pregnancy.encounter_snomed, *d.pregnancy.positive_snomed)
    codes += (*d.pregnancy.negative_snomed, *d.ended.snomed, *d.lactation.snomed)
    assert all(snomed_ok(c) for c in codes), [c for c in codes if not snomed_ok(c)]
    known = {r.id for r in RULES} | {c.id for c in CRITERIA}
    assert {x.id for x in d.not_in_pregnancy} <= known


# ----------------------------------------------------------------------- the criteria


def _ids(profile: PatientProfile) -> set[str]:
    return {p.id for p in analyse(profile).proposals}


def _titles(profile: PatientProfile) -> str:
    return " | ".join(p.title for p in analyse(profile).proposals).lower()


def test_an_ace_inhibitor_in_pregnancy_is_stopped_with_a_safer_alternative() -> None:
    pregnant = _profile(
        problems=(_cond("c1", PREGNANT, _days(60)),),
        meds=(_med("m1", "lisinopril 10 MG Oral Tablet", 10),),
        obs=(_num("ga", "49051-6", 16, "wk"),),
    )
    titles = _titles(pregnant)
    assert "stop lisinopril now" in titles and "labetalol" in titles
    not_pregnant = _profile(meds=(_med("m1", "lisinopril 10 MG Oral Tablet", 10),))
    assert "pregnan" not in _titles(not_pregnant)


def test_codeine_is_stopped_while_breastfeeding_and_not_otherwise() -> None:
    feeding = _cond("b", Code(SNOMED, "413712001", "Breastfeeding (mother)"), _days(30))
    codeine = _med("m1", "codeine 30 MG Oral Tablet", 30)
    assert "opt-stop-codeine" in _ids(_profile(problems=(feeding,), meds=(codeine,)))
    assert "opt-stop-codeine" not in _ids(_profile(meds=(codeine,)))


@pytest.mark.parametrize(
    ("why", "sex", "age", "extra", "fires"),
    [
        ("a woman of 25, no contraception", "female", 25, (), True),
        ("a man of 25", "male", 25, (), False),
        ("a woman of 60", "female", 60, (), False),
        ("a woman with a levonorgestrel intrauterine system", "female", 25, ("mirena",), False),
    ],
)
def test_valproate_pregnancy_prevention_only_for_a_woman_who_could_become_pregnant(
    why: str, sex: str, age: int, extra: tuple[str, ...], fires: bool
) -> None:
    meds = (_med("v", "valproate 500 MG", 500), *(_med(f"x{i}", t) for i, t in enumerate(extra)))
    got = "opt-pregnancy-prevention-valproate" in _ids(_profile(sex=sex, age=age, meds=meds))
    assert got is fires, why


def test_an_enzyme_inducer_makes_hormonal_contraception_fail_unless_unaffected() -> None:
    pill = _med("p", "levonorgestrel 0.15 MG / ethinyl estradiol 0.03 MG Oral Tablet")
    inducer = _med("c", "carbamazepine 200 MG Oral Tablet", 400)
    assert any(i.startswith("opt-contraception-") for i in _ids(_profile(meds=(pill, inducer))))
    ius = _med("i", "Mirena levonorgestrel intrauterine system")
    assert not any(i.startswith("opt-contraception-") for i in _ids(_profile(meds=(inducer, ius))))


@pytest.mark.parametrize(("mg", "fires"), [(100, False), (400, True)])
def test_topiramate_affects_contraception_only_at_an_inducing_dose(mg: float, fires: bool) -> None:
    pill = _med("p", "levonorgestrel 0.15 MG / ethinyl estradiol 0.03 MG Oral Tablet")
    topiramate = _med("t", "topiramate 100 MG Oral Tablet", mg)
    got = any(i.startswith("opt-contraception-") for i in _ids(_profile(meds=(pill, topiramate))))
    assert got is fires


def test_adult_cardiovascular_and_blood_pressure_items_are_not_offered_in_pregnancy() -> None:
    htn = _cond("h", Code(SNOMED, "59621000", "Essential hypertension"), _days(900))
    readings = (
        _num("s", "8480-6", 150, "mm[Hg]", _days(1)),
        _num("d", "8462-4", 95, "mm[Hg]", _days(1)),
        _num("ldl", "18262-6", 190, "mg/dL", _days(1)),
    )
    adult = _profile(age=45, problems=(htn,), obs=readings)
    assert {"opt-assess-cv-risk", "opt-review-bp"} <= _ids(adult)
    pregnant = _profile(age=45, problems=(htn, _cond("c1", PREGNANT, _days(60))), obs=readings)
    ids = _ids(pregnant)
    assert not {"opt-assess-cv-risk", "opt-review-bp"} & ids
    assert "opt-review-bp-pregnancy" in ids


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("{second: 14, third: 28}", "{second: 28, third: 14}", "second < third"),
        ("{second: 14, third: 28}", "{second: 14, third: 43}", "third < max_weeks"),
        ("max_weeks: 42", "max_weeks: 39", "term must fall before max_weeks"),
    ],
)
def test_trimesters_and_term_fall_in_order_within_a_pregnancy(
    tmp_path: Path, old: str, new: str, problem: str
) -> None:
    text = PREGNANCY_FILE.read_text()
    assert old in text
    bad = tmp_path / "pregnancy.yaml"
    bad.write_text(text.replace(old, new))
    with pytest.raises(KnowledgeFileError, match=problem):
        load_pregnancy(bad)


# -------------------------------------------------- tests and gestational age said in words


def _named(ref: str, name: str, when: date, text: str = "", value: float | None = None,
           unit: str = "") -> Observation:  # fmt: skip
    """A result a site sends with no LOINC code: only its name says what it is."""
    return Observation(f"Observation/{ref}", "", name, value, unit, when, text, False)


@pytest.mark.parametrize(
    ("name", "text", "value", "unit", "pregnant"),
    [
        ("Beta-hCG, serum (qualitative)", "Positive", None, "", True),
        ("Urine pregnancy test", "negative", None, "", False),
        ("HCG quantitative", "", 1840.0, "mIU/mL", True),
        ("HCG quantitative", "", 3.0, "IU/L", False),
        ("HCG quantitative", "", 1840.0, "mmol/L", False),  # not a unit of hCG: unjudged
        ("Haemoglobin", "Positive", None, "", False),  # not a pregnancy test
    ],
)
def test_a_pregnancy_test_coded_by_name_only_tells_the_status(
    name: str, text: str, value: float | None, unit: str, pregnant: bool
) -> None:
    o = _named("t", name, _days(2), text, value, unit)
    assert (pregnancy_of(_profile(obs=(o,))) is not None) is pregnant


def test_a_negative_test_by_name_ends_an_earlier_positive_one() -> None:
    positive = _named("a", "hCG pregnancy test, serum", _days(40), "Positive")
    negative = _named("b", "hCG pregnancy test, serum", _days(3), "Negative")
    assert pregnancy_of(_profile(obs=(positive, negative))) is None


def test_a_pregnancy_test_by_name_is_a_known_status_for_the_coverage() -> None:
    methotrexate = _med("m", "methotrexate 10 mg tablet", 10.0)
    test = _named("t", "hCG pregnancy test, serum", _days(2), "Positive")
    gaps = {g.key for g in assess(_profile(meds=(methotrexate,), obs=(test,))).gaps}
    assert "pregnancy-status-unknown" not in gaps
    untested = assess(_profile(meds=(methotrexate,))).gaps
    assert "pregnancy-status-unknown" in {g.key for g in untested}


@pytest.mark.parametrize(
    ("text", "weeks"),
    [
        ("Pregnancy, 22 weeks", 22),
        ("Antenatal review, 31+4 weeks pregnant", 31),
        ("Gestational age: 9 weeks", 9),
        ("12 weeks of gestation, dating scan", 12),
        ("Period 6 weeks late", None),
        ("Pregnant", None),
        ("Pregnancy, 70 weeks", None),
    ],
)
def test_gestational_age_said_in_words_is_read_by_the_listed_patterns(
    text: str, weeks: int | None
) -> None:
    assert stated_weeks(text) == weeks


def test_weeks_in_a_conditions_text_are_quoted_not_counted_forward() -> None:
    """The Condition does not say on which day its text was true: the plan quotes the weeks
    and claims no trimester."""
    said = Condition(
        "Condition/c", "Pregnancy, 22 weeks", (PREGNANT,), "active", "confirmed", _days(150)
    )
    p = pregnancy_of(_profile(problems=(said,)))
    assert p is not None and p.weeks is None and p.trimester is None
    assert p.phrase == "pregnant (the record says 22 weeks, undated)"
    assert "not recorded" not in p.phrase


def test_weeks_in_an_antenatal_visits_reason_are_dated_by_the_visit() -> None:
    visit = Encounter(
        "Encounter/e", "Antenatal clinic", _days(21), class_code="AMB",
        reason_text="Dating review, 10 weeks pregnant",
    )  # fmt: skip
    p = pregnancy_of(_profile(encounters=(visit,)))
    assert p is not None and (p.weeks, p.trimester) == (13, 1)
