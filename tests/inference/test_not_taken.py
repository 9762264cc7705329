"""A medicine the patient does not take: recorded by a MedicationStatement (not-taken, stopped,
on-hold, or words such as "cannot afford") or by the request's own notes, it is not treated as
taken by the interaction and duplicate checks, and the plan says "recorded as not taken". Each
case beside the neighbour where nothing says so, and the line is said."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge import analyse
from inference.knowledge.adherence import ADHERENCE_FILE, load_adherence, not_taken
from inference.knowledge.analysis import Proposal
from service.record.profile import Code, Medication, MedicationStatement, PatientProfile
from service.record.vocabulary import RXNORM

AS_OF = date(2026, 6, 1)
WARFARIN = "Warfarin 5 MG Oral Tablet"
CLARITHROMYCIN = "Clarithromycin 500 MG Oral Tablet"


def _med(ref: str, text: str, **kw: object) -> Medication:
    return Medication(
        f"MedicationRequest/{ref}", text, (), "active", "order", date(2026, 1, 1), **kw
    )  # type: ignore[arg-type]


def _said(
    status: str, text: str = CLARITHROMYCIN, day: date = date(2026, 5, 1), **kw: object
) -> MedicationStatement:
    return MedicationStatement("MedicationStatement/s1", text, (), status, day, **kw)  # type: ignore[arg-type]


def _patient(*statements: MedicationStatement, second: Medication | None = None) -> PatientProfile:
    return PatientProfile(
        "Patient/p1",
        "male",
        date(1960, 1, 1),
        AS_OF,
        medications=(_med("m1", WARFARIN), second or _med("m2", CLARITHROMYCIN)),
        statements=statements,
    )


def _lines(p: PatientProfile) -> dict[str, Proposal]:
    return {x.id: x for x in analyse(p).proposals}


def test_an_interaction_with_a_medicine_recorded_as_not_taken_is_not_said() -> None:
    taken = _lines(_patient())
    assert "opt-review-clarithromycin" in taken
    assert not [k for k in taken if k.startswith("opt-discuss-not-taken")]
    got = analyse(_patient(_said("not-taken")))
    lines = {x.id: x for x in got.proposals}
    assert "opt-review-clarithromycin" not in lines
    (line,) = [x for k, x in lines.items() if k.startswith("opt-discuss-not-taken")]
    assert line.title == f"Discuss {CLARITHROMYCIN}: recorded as not taken on 1 May 2026"
    assert line.medication_ref == "MedicationRequest/m2"
    assert set(line.refs) == {"MedicationRequest/m2", "MedicationStatement/s1"}
    assert any(w.endswith(":taken-together") for w in got.withheld)


@pytest.mark.parametrize(
    "statement",
    [
        _said("stopped"),
        _said("active", reason="Patient says she cannot afford it"),
        _said("active", reason="Not   taking since the rash"),
    ],
    ids=["stopped", "cost", "words"],
)
def test_a_stopped_statement_or_its_words_record_it_as_not_taken(
    statement: MedicationStatement,
) -> None:
    assert not_taken(_patient(statement).medications[1], _patient(statement)) is not None


@pytest.mark.parametrize(
    "statement",
    [
        _said("active"),  # says it is taken
        _said("not-taken", day=date(2025, 12, 1)),  # prescribed again since
        _said("not-taken", text="Amoxicillin 500 MG Oral Capsule"),  # another medicine
        _said("active", reason="Taking it; cost discussed"),  # no phrase says not taken
    ],
    ids=["taken", "older than the request", "another medicine", "cost alone"],
)
def test_neighbours_that_do_not_record_it_as_not_taken(statement: MedicationStatement) -> None:
    p = _patient(statement)
    assert not_taken(p.medications[1], p) is None
    lines = _lines(p)
    assert "opt-review-clarithromycin" in lines
    assert not [k for k in lines if k.startswith("opt-discuss-not-taken")]


def test_the_request_notes_record_it_and_a_shared_code_matches_the_statement() -> None:
    noted = _med("m2", CLARITHROMYCIN, note="Patient not taking: too expensive")
    assert not_taken(noted, _patient(second=noted)) is not None
    code = (Code(RXNORM, "197517", "clarithromycin 500 MG Oral Tablet"),)
    coded = replace(_med("m2", CLARITHROMYCIN), codes=code)
    other_name = replace(_said("not-taken", text="Klaricid 500"), codes=code)
    p = _patient(other_name, second=coded)
    assert not_taken(p.medications[1], p) is not None


def test_a_duplicate_with_one_statin_not_taken_is_not_said() -> None:
    simva = _med("m1", "Simvastatin 40 MG Oral Tablet")
    atorva = _med("m2", "Atorvastatin 20 MG Oral Tablet")
    both = replace(_patient(), medications=(simva, atorva))
    assert "opt-review-duplicate-statin" in _lines(both)
    one = replace(both, statements=(_said("not-taken", text="Simvastatin 40 MG Oral Tablet"),))
    lines = _lines(one)
    assert "opt-review-duplicate-statin" not in lines
    assert "opt-discuss-not-taken-m1" in lines


def test_a_bundle_statement_reaches_the_profile(tmp_path: Path) -> None:
    def entry(resource: dict[str, object]) -> dict[str, object]:
        return {"fullUrl": f"urn:uuid:{resource['id']}", "resource": resource}

    subject = {"reference": "urn:uuid:p1"}
    drug = {"text": CLARITHROMYCIN}
    bundle = {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": [
            entry(
                {"resourceType": "Patient", "id": "p1", "gender": "male", "birthDate": "1960-01-01"}
            ),
            entry(
                {
                    "resourceType": "MedicationRequest",
                    "id": "m2",
                    "status": "active",
                    "intent": "order",
                    "subject": subject,
                    "authoredOn": "2026-01-01",
                    "medicationCodeableConcept": drug,
                }
            ),
            entry(
                {
                    "resourceType": "MedicationStatement",
                    "id": "s1",
                    "status": "not-taken",
                    "subject": subject,
                    "effectiveDateTime": "2026-05-01",
                    "medicationCodeableConcept": drug,
                    "statusReason": [{"text": "Cannot afford the prescription charge"}],
                }
            ),
        ],
    }
    received = datetime(2026, 6, 1, tzinfo=UTC)
    p = ingest(json.dumps(bundle).encode(), received=received)
    (s,) = p.statements
    assert (s.status, s.day, s.reason) == (
        "not-taken",
        date(2026, 5, 1),
        "Cannot afford the prescription charge",
    )
    assert not_taken(p.medications[0], p) is not None


def test_an_adherence_file_citing_an_unknown_source_is_refused(tmp_path: Path) -> None:
    from inference.knowledge._datafile import KnowledgeFileError

    bad = tmp_path / "adherence.yaml"
    text = ADHERENCE_FILE.read_text(encoding="utf-8")
    bad.write_text(text.replace("source: nice-cg76", "source: nowhere"), encoding="utf-8")
    with pytest.raises(KnowledgeFileError, match="nowhere"):
        load_adherence(bad)


def test_a_line_that_acts_on_the_medicine_says_it_instead_of_a_second_line() -> None:
    """The interaction line acts on clarithromycin; warfarin, recorded as not taken, is the
    partner. With clarithromycin itself recorded, the switch of it is withheld (the claim
    fails) and its own line says it; a line that acts on a medicine recorded as not taken
    states the record and asks to confirm before acting."""
    from inference.knowledge.adherence_net import note_not_taken
    from inference.knowledge.analysis import Output
    from inference.knowledge.facts import Facts

    p = _patient(_said("not-taken"))
    acting = Proposal(
        "opt-stop-clarithromycin",
        "Stop clarithromycin",
        "medication",
        "Stop it.",
        ("MedicationRequest/m2",),
        (),
        (),
        medication_ref="MedicationRequest/m2",
    )
    o = Output(proposals=[acting])
    note_not_taken(Facts(p), o)
    (line,) = o.proposals
    assert line.id == "opt-stop-clarithromycin"
    assert "recorded as not taken on 1 May 2026" in line.description
    assert line.description.endswith("confirm what is taken before acting.")
    assert "MedicationStatement/s1" in line.refs


def test_a_medicine_not_taken_adds_no_load_to_a_count() -> None:
    """Two strong anticholinergics make a load; with one recorded as not taken there is one,
    and the line that stops it says it is not taken."""
    meds = (
        _med("m1", "Amitriptyline 25 MG Oral Tablet"),
        _med("m2", "Oxybutynin 5 MG Oral Tablet"),
    )
    both = replace(_patient(), birth_date=date(1940, 1, 1), medications=meds)
    assert "opt-reduce-anticholinergic-burden" in _lines(both)
    one = replace(both, statements=(_said("not-taken", text="Oxybutynin 5 MG Oral Tablet"),))
    lines = _lines(one)
    assert "opt-reduce-anticholinergic-burden" not in lines
    assert "recorded as not taken" in lines["opt-stop-oxybutynin"].description
    assert "recorded as not taken" not in lines["opt-stop-amitriptyline"].description
