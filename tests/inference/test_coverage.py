"""The coverage statement: what a plan checked for a patient and what it could not.

Profiles are built by hand with the facts each case needs; ``assess`` reads the real knowledge
(``inference/knowledge/data/scope.yaml``, the drug table and the loaded criteria).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from fhir_mapping.codes import snomed_ok
from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.coverage import SCOPE, SCOPE_FILE, assess, load_scope
from service.core.model import Coverage
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import ICD10, RXNORM, SNOMED
from service.text.summary import NO_GAP, coverage_detail, coverage_lines

AS_OF = date(2026, 6, 1)


def _born(age: int) -> date:
    return date(AS_OF.year - age, 1, 1)


def _med(ref: str, text: str, rxcui: str = "") -> Medication:
    codes = (Code(RXNORM, rxcui, text),) if rxcui else ()
    return Medication(f"MedicationRequest/{ref}", text, codes, "active", "order", AS_OF)


def _obs(ref: str, loinc: str, value: float | None, days_ago: int, **kw: object) -> Observation:
    return Observation(
        f"Observation/{ref}", loinc, loinc, value, "", AS_OF - timedelta(days=days_ago), **kw
    )  # type: ignore[arg-type]


def _problem(ref: str, text: str, *codes: Code) -> Condition:
    return Condition(f"Condition/{ref}", text, codes, "active", "confirmed", date(2020, 1, 1))


def _recent(p: Condition) -> Condition:
    return replace(p, onset=AS_OF - timedelta(days=30))


def _profile(age: int, sex: str = "male", **kw: object) -> PatientProfile:
    return PatientProfile("Patient/p1", sex, _born(age), AS_OF, **kw)  # type: ignore[arg-type]


def _older_adult_complete() -> PatientProfile:
    return _profile(
        78,
        "male",
        problems=(_problem("c1", "Diabetes mellitus type 2", Code(SNOMED, "44054006")),),
        medications=(_med("m1", "Metformin 500 MG Oral Tablet"),),
        observations=(
            _obs("o1", "33914-3", 62.0, 40),
            _obs("o2", "2160-0", 1.1, 40),
            _obs("o3", "29463-7", 80.0, 40),
        ),
    )


def _keys(c: Coverage) -> set[str]:
    return {g.key for g in c.gaps}


def test_in_scope_older_adult_with_every_fact_present_flags_nothing() -> None:
    c = assess(_older_adult_complete())
    assert c.gaps == () and not c.high_risk
    ran = {f.key for f in c.families if f.ran}
    assert {"interactions", "kidney-dosing", "age-specific", "monitoring", "omissions"} <= ran
    assert all(f.ran for f in c.families)
    # pregnancy checks concern women of 12-55 only: not listed for this man
    assert "pregnancy" not in {f.key for f in c.families}
    (line,) = coverage_lines(c)
    assert line.startswith("Checked: drug interactions, kidney dosing")
    assert line.endswith(NO_GAP) and "Nothing found outside" not in line
    assert c.knowledge_version in line


def test_child_is_out_of_scope_and_a_missing_weight_disables_dose_checks() -> None:
    child = _profile(7, medications=(_med("m1", "Ibuprofen 100 MG/5ML Oral Suspension"),))
    c = assess(child)
    gap = next(g for g in c.gaps if g.key == "child")
    assert gap.kind == "out-of-scope" and gap.high_risk and "paediatric formulary" in gap.check
    assert "no-weight" in _keys(c) and c.high_risk
    summary = coverage_lines(c)
    assert len(summary) == 2
    assert summary[1].startswith("NOT CHECKED, needs a human: outside the validated population")
    assert "under 18" in summary[1] and "no body weight" in summary[1]
    # a recent weight settles the dose check, not the scope
    weighed = assess(
        _profile(7, medications=child.medications, observations=(_obs("w", "29463-7", 23.0, 10),))
    )
    assert "child" in _keys(weighed) and "no-weight" not in _keys(weighed)


@pytest.mark.parametrize(
    "evidence",
    [
        # A pregnancy Condition counts while a pregnancy could still be running (recent onset).
        {"problems": (_recent(_problem("c9", "Normal pregnancy", Code(SNOMED, "72892002"))),)},
        {
            "problems": (
                _recent(
                    _problem("c9", "Supervision of normal first pregnancy", Code(ICD10, "Z34.00"))
                ),
            )
        },
        {
            "observations": (
                _obs("o9", "2106-3", None, 20, value_codes=(Code(SNOMED, "10828004"),)),
            )
        },
        {
            "encounters": (
                Encounter(
                    "Encounter/e9",
                    "Prenatal visit",
                    AS_OF - timedelta(days=30),
                    types=(Code(SNOMED, "424619006", "Prenatal visit"),),
                ),
            )
        },
    ],
    ids=["snomed-condition", "icd10-condition", "positive-hcg", "prenatal-encounter"],
)
def test_pregnant_woman_is_out_of_scope_from_conditions_observations_or_encounters(
    evidence: dict[str, object],
) -> None:
    c = assess(_profile(29, "female", **evidence))
    gap = next(g for g in c.gaps if g.key == "pregnancy")
    assert gap.high_risk and "unborn child" in gap.check and gap.refs
    assert "pregnancy" in coverage_lines(c)[1]


def test_old_or_negative_pregnancy_evidence_does_not_mark_pregnancy() -> None:
    old = Encounter(
        "Encounter/e1",
        "Prenatal visit",
        AS_OF - timedelta(days=900),
        types=(Code(SNOMED, "424619006"),),
    )
    negative = _obs(
        "o1", "2106-3", None, 20, value_codes=(Code(SNOMED, "260385009"),), value_text="Negative"
    )
    c = assess(_profile(29, "female", encounters=(old,), observations=(negative,)))
    assert "pregnancy" not in _keys(c)
    # a man's record never carries the pregnancy marker
    assert "pregnancy" not in _keys(
        assess(
            _profile(
                29, "male", problems=(_problem("c1", "Normal pregnancy", Code(SNOMED, "72892002")),)
            )
        )
    )


def test_unrecognised_medicine_is_named() -> None:
    c = assess(_profile(70, medications=(_med("m1", "Zorbitaxumab 40 MG Injection"),)))
    (gap,) = c.gaps
    assert gap.kind == "uncovered" and gap.key == "unrecognised-medicine" and gap.high_risk
    assert gap.label == "Zorbitaxumab 40 MG Injection (not in the drug knowledge)"
    assert gap.refs == ("MedicationRequest/m1",)
    assert coverage_lines(c)[1] == (
        "No check covers: Zorbitaxumab 40 MG Injection (not in the drug knowledge) [high risk]."
    )


def test_missing_creatinine_on_a_kidney_cleared_drug() -> None:
    on_metformin = (_med("m1", "Metformin 500 MG Oral Tablet"),)
    c = assess(_profile(70, medications=on_metformin))
    gap = next(g for g in c.gaps if g.key == "no-kidney-function")
    assert gap.high_risk and "within 12 months" in gap.label and "Metformin" in gap.label
    assert next(f for f in c.families if f.key == "kidney-dosing").ran is False
    # a creatinine two years old does not count either; one this year does
    stale = assess(
        _profile(70, medications=on_metformin, observations=(_obs("o1", "2160-0", 1.0, 730),))
    )
    assert "no-kidney-function" in _keys(stale)
    fresh = assess(
        _profile(70, medications=on_metformin, observations=(_obs("o1", "2160-0", 1.0, 100),))
    )
    assert "no-kidney-function" not in _keys(fresh)
    # no kidney-cleared medicine: nothing is missing
    assert assess(_profile(70, medications=(_med("m2", "Amlodipine 5 MG Oral Tablet"),))).gaps == ()


def test_pregnancy_status_unknown_on_a_teratogen() -> None:
    valproate = (_med("m1", "Sodium valproate 500 MG Oral Tablet"),)
    c = assess(_profile(30, "female", medications=valproate))
    gap = next(g for g in c.gaps if g.key == "pregnancy-status-unknown")
    assert gap.high_risk and "woman of 30" in gap.label
    # a negative test this year settles the status; a man or an older woman is not asked
    tested = _obs("o1", "2106-3", None, 60, value_text="Negative")
    assert "pregnancy-status-unknown" not in _keys(
        assess(_profile(30, "female", medications=valproate, observations=(tested,)))
    )
    assert "pregnancy-status-unknown" not in _keys(assess(_profile(30, medications=valproate)))
    assert "pregnancy-status-unknown" not in _keys(
        assess(_profile(70, "female", medications=valproate))
    )


def test_no_level_for_a_narrow_therapeutic_index_drug() -> None:
    lithium = (_med("m1", "Lithium carbonate 400 MG Oral Tablet"),)
    kidney = (_obs("o1", "33914-3", 80.0, 30), _obs("o2", "2160-0", 0.9, 30))
    c = assess(_profile(50, medications=lithium, observations=kidney))
    assert "no-level-lithium" in _keys(c)
    levelled = assess(
        _profile(
            50,
            medications=lithium,
            observations=(
                *kidney,
                _obs("o3", "14334-7", 0.6, 30),
            ),
        )
    )
    assert "no-level-lithium" not in _keys(levelled)


@pytest.mark.parametrize(
    ("marker", "problem"),
    [
        ("transplant", _problem("c1", "Kidney transplant status", Code(ICD10, "Z94.0"))),
        ("hiv", _problem("c1", "Human immunodeficiency virus infection", Code(SNOMED, "86406008"))),
        ("dialysis", _problem("c1", "Dependence on renal dialysis", Code(ICD10, "Z99.2"))),
    ],
)
def test_other_out_of_scope_populations(marker: str, problem: Condition) -> None:
    c = assess(_profile(45, problems=(problem,)))
    assert marker in _keys(c) and c.high_risk


def test_antiretroviral_or_immunosuppressant_medicines_mark_the_population() -> None:
    c = assess(
        _profile(
            45,
            medications=(
                _med("m1", "Dolutegravir 50 MG Oral Tablet"),
                _med("m2", "Tacrolimus 1 MG Oral Capsule"),
            ),
        )
    )
    assert {"hiv", "immunosuppression"} <= _keys(c)
    # Both are in the knowledge now (the transplant and HIV criteria): recognised, not unknown.
    assert "unrecognised-medicine" not in _keys(c)


def test_detail_lists_every_family_and_gap_with_what_to_check() -> None:
    c = assess(_profile(7, medications=(_med("m1", "Zorbitaxumab 40 MG Injection"),)))
    detail = coverage_detail(c)
    assert detail[0].startswith(f"Knowledge: {c.knowledge_version}; built and validated for adults")
    assert sum(": ran" in x or "not run" in x for x in detail) == len(c.families)
    assert any(x.startswith("[high risk] No check covers Zorbitaxumab") for x in detail)


def test_scope_file_codes_are_well_formed() -> None:
    for m in SCOPE.markers:
        for code in (*m.snomed, *m.encounter_snomed):
            assert snomed_ok(code), (m.id, code)
    for code in SCOPE.positive_values.snomed:
        assert snomed_ok(code), code


def test_a_bad_scope_file_is_refused_naming_the_problem(tmp_path: Path) -> None:
    text = SCOPE_FILE.read_text(encoding="utf-8")
    bad = tmp_path / "scope.yaml"
    bad.write_text(text.replace("{drug: lithium,", "{drug: unobtainium,"), encoding="utf-8")
    with pytest.raises(KnowledgeFileError, match="unknown drug 'unobtainium'"):
        load_scope(bad)
    bad.write_text(text.replace("kinds: [drug-age]", "kinds: [drug-astrology]"), encoding="utf-8")
    with pytest.raises(KnowledgeFileError, match="families"):
        load_scope(bad)
