"""Goals of care: palliative or end-of-life care recorded leaves prevention, screening and
long-horizon targets out of the plan, says why, and offers a STOPPFrail review of the medicines
whose benefit lies years away. Each case beside a neighbour without the palliative record."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from inference.knowledge import analyse
from inference.knowledge._datafile import KnowledgeFileError
from inference.knowledge.facts import Facts
from inference.knowledge.goals import GOALS, GOALS_FILE, goals_of_care, load_goals, withdrawn
from inference.knowledge.registry import RULES
from inference.knowledge.site import shipped
from service.record.profile import (
    Code,
    Condition,
    Encounter,
    Medication,
    Observation,
    PatientProfile,
)
from service.record.vocabulary import SNOMED

AS_OF = date(2026, 6, 1)
DIABETES = Code(SNOMED, "44054006", "Diabetes mellitus type 2")
PALLIATIVE = Code(SNOMED, "103735009", "Palliative care (regime/therapy)")


def _problem(ref: str, code: Code, onset: date = date(2015, 1, 1)) -> Condition:
    return Condition(f"Condition/{ref}", code.display, (code,), "active", "confirmed", onset)


def _med(ref: str, text: str) -> Medication:
    return Medication(f"MedicationRequest/{ref}", text, (), "active", "order", date(2020, 1, 1))


def _older_diabetic(*extra: Condition, meds: tuple[Medication, ...] = ()) -> PatientProfile:
    """A 70-year-old with type 2 diabetes on metformin, no statin, an eGFR on record and no
    recorded vaccinations: a statin, an HbA1c and pneumococcal vaccination are due."""
    egfr = Observation("Observation/o1", "33914-3", "eGFR", 70.0, "mL/min", AS_OF)
    return PatientProfile(
        "Patient/p1",
        "female",
        date(1956, 1, 1),
        AS_OF,
        problems=(_problem("c1", DIABETES), *extra),
        medications=(_med("m1", "Metformin 500 MG Oral Tablet"), *meds),
        observations=(egfr,),
        readings=(egfr,),
    )


def _ids(p: PatientProfile) -> set[str]:
    return {c for x in analyse(p).proposals for c in x.criteria}


def test_palliative_care_withdraws_prevention_and_says_why() -> None:
    without = _older_diabetic()
    assert {"start-statin-diabetes", "vaccine-pneumococcal-older"} <= _ids(without)
    palliative = _older_diabetic(_problem("c2", PALLIATIVE, date(2026, 5, 2)))
    got = analyse(palliative)
    ids = {c for x in got.proposals for c in x.criteria}
    assert not ids & withdrawn(goals_of_care(Facts(palliative)))
    assert "start-statin-diabetes" not in ids and "vaccine-pneumococcal-older" not in ids
    (line,) = [x for x in got.proposals if x.id == "opt-goals-of-care-review"]
    assert line.title == (
        "Review the plan against the goals of care (palliative care recorded on 2 May 2026)"
    )
    assert "statins started or raised for prevention" in line.description
    assert "Condition/c2" in line.refs
    assert not [x for x in analyse(without).proposals if x.id == "opt-goals-of-care-review"]


def test_influenza_and_covid_vaccines_stay_in_palliative_care() -> None:
    palliative = _older_diabetic(_problem("c2", PALLIATIVE, date(2026, 5, 2)))
    ids = _ids(palliative)
    assert "vaccine-influenza-older" in ids or "vaccine-covid-older" in ids
    kept = {"vaccine-influenza-older", "vaccine-covid-older"}
    assert not kept & withdrawn(goals_of_care(Facts(palliative)))


def test_a_statin_and_alendronate_are_offered_for_review_and_metformin_is_not() -> None:
    meds = (
        _med("m2", "Atorvastatin 20 MG Oral Tablet"),
        _med("m3", "Alendronic acid 70 MG Oral Tablet"),
    )
    p = _older_diabetic(_problem("c2", PALLIATIVE, date(2026, 5, 2)), meds=meds)
    (line,) = [x for x in analyse(p).proposals if x.id == "opt-goals-of-care-review"]
    assert "Atorvastatin" in line.description and "Alendronic" in line.description
    assert "Metformin" not in line.description
    assert {"MedicationRequest/m2", "MedicationRequest/m3"} <= set(line.refs)


@pytest.mark.parametrize(
    "encounter",
    [
        Encounter("Encounter/e1", "Hospice care", AS_OF - timedelta(days=20)),
        Encounter(
            "Encounter/e1",
            "Home visit",
            AS_OF - timedelta(days=20),
            types=(Code(SNOMED, "385763009", "Hospice care (regime/therapy)"),),
        ),
        Encounter("Encounter/e1", "Office visit", AS_OF, reason_text="End of life planning"),
    ],
)
def test_a_recent_hospice_or_end_of_life_contact_counts(encounter: Encounter) -> None:
    p = replace(_older_diabetic(), encounters=(encounter,))
    g = goals_of_care(Facts(p))
    assert g is not None and g.ref == "Encounter/e1"


def test_an_old_hospice_contact_or_a_resolved_palliative_record_does_not_count() -> None:
    old = Encounter("Encounter/e1", "Hospice care", AS_OF - timedelta(days=400))
    ended = replace(_problem("c2", PALLIATIVE), clinical_status="resolved")
    for p in (replace(_older_diabetic(), encounters=(old,)), _older_diabetic(ended)):
        assert goals_of_care(Facts(p)) is None
        assert "start-statin-diabetes" in _ids(p)


def test_terminal_illness_counts_and_a_word_inside_another_does_not() -> None:
    terminal = Code(SNOMED, "300936002", "Terminal illness (finding)")
    assert goals_of_care(Facts(_older_diabetic(_problem("c2", terminal)))) is not None
    hospital = Encounter("Encounter/e1", "Hospital admission", AS_OF, reason_text="Hospiceless")
    assert goals_of_care(Facts(replace(_older_diabetic(), encounters=(hospital,)))) is None


def test_every_withdrawn_id_is_a_criterion_or_rule_of_the_knowledge() -> None:
    known = {c.id for c in shipped().criteria} | {r.id for r in RULES}
    named = {i for w in GOALS.withdrawn for i in w.ids}
    assert named <= known, sorted(named - known)
    assert not named & {"vaccine-influenza-older", "vaccine-covid-older", "acp-serious-illness"}


def test_a_goals_file_citing_an_unknown_source_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "goals_of_care.yaml"
    text = GOALS_FILE.read_text(encoding="utf-8")
    bad.write_text(text.replace("source: diabetes-uk-eol-2021", "source: nowhere"), "utf-8")
    with pytest.raises(KnowledgeFileError, match="nowhere"):
        load_goals(bad)


def test_the_palliative_record_is_read_so_coverage_does_not_name_it() -> None:
    from inference.knowledge.concepts import items

    worded = Condition("Condition/c2", "Palliative care", (), "active", "confirmed", AS_OF)
    found = {i.ref: i.covered for i in items(Facts(_older_diabetic(worded)))}
    assert found["Condition/c2"] is True
    other = Condition("Condition/c2", "Gribbleflux palsy", (), "active", "confirmed", AS_OF)
    assert {i.ref: i.covered for i in items(Facts(_older_diabetic(other)))}["Condition/c2"] is False
