"""A medicine recorded as taken but not prescribed here (an active MedicationStatement: over the
counter, another prescriber's): every check reads it like a prescription, every line about it
says it is not prescribed here, and the plan's FHIR names its MedicationStatement. Each case
beside the neighbour where it does not fire. Synthetic records built for these tests."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inference.knowledge import analyse
from inference.knowledge.analysis import Proposal
from inference.knowledge.patient import patient_wordings
from inference.knowledge.taken import with_taken
from service.cli import main
from service.core.model import Option
from service.record.profile import PatientProfile
from tests.conftest import SHARED
from tests.inference.reports_orders_bundles import PATIENT, bundle, condition, profile

RX = "http://www.nlm.nih.gov/research/umls/rxnorm"
IBUPROFEN = ("310965", "Ibuprofen 200 MG Oral Tablet")
WARFARIN = ("855332", "Warfarin Sodium 5 MG Oral Tablet")
OTC = "Bought over the counter for knee pain"


def _concept(drug: tuple[str, str]) -> dict[str, Any]:
    return {"text": drug[1], "coding": [{"system": RX, "code": drug[0], "display": drug[1]}]}


def request(rid: str, drug: tuple[str, str]) -> dict[str, Any]:
    return {
        "resourceType": "MedicationRequest",
        "id": rid,
        "status": "active",
        "intent": "order",
        "subject": PATIENT,
        "authoredOn": "2026-01-10",
        "medicationCodeableConcept": _concept(drug),
    }


def statement(
    sid: str, drug: tuple[str, str], *, status: str = "active", note: str = OTC, source: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resourceType": "MedicationStatement",
        "id": sid,
        "status": status,
        "subject": PATIENT,
        "effectiveDateTime": "2026-11-20",
        "medicationCodeableConcept": _concept(drug),
    }
    if note:
        out["note"] = [{"text": note}]
    if source:
        out["informationSource"] = {"reference": source}
    return out


def inr(value: float) -> dict[str, Any]:
    return {
        "resourceType": "Observation",
        "id": "inr",
        "status": "final",
        "subject": PATIENT,
        "code": {"coding": [{"system": "http://loinc.org", "code": "6301-6", "display": "INR"}]},
        "effectiveDateTime": "2026-11-25",
        "valueQuantity": {"value": value, "unit": "{INR}"},
    }


HFREF = condition("hf", "Heart failure with reduced ejection fraction", "703272007", "2024-03-01")


def _taken(*resources: dict[str, Any]) -> PatientProfile:
    return with_taken(profile(*resources))


def _about(p: PatientProfile, ref: str) -> list[Proposal]:
    return [x for x in analyse(p).proposals if x.medication_ref == ref or ref in x.refs]


def test_an_otc_nsaid_with_warfarin_and_a_high_inr_fires_the_bleeding_interaction() -> None:
    p = _taken(request("warf", WARFARIN), statement("ibu", IBUPROFEN), inr(6.4))
    (med,) = [m for m in p.medications if m.ref == "MedicationStatement/ibu"]
    assert med.taken == "over-the-counter"
    (stop,) = [x for x in analyse(p).proposals if x.medication_ref == med.ref]
    assert (
        stop.title
        == "Advise the patient to stop ibuprofen (bought over the counter, not prescribed here)"
    )
    assert stop.urgency_class in ("urgent", "resolve-first")
    assert {"MedicationRequest/warf", med.ref} <= set(stop.refs)
    inr_line = [x for x in analyse(p).proposals if "Observation/inr" in x.refs]
    assert any(med.ref in x.refs for x in inr_line)  # what raised the INR names it
    # neighbour: the same record without the statement says nothing of ibuprofen
    bare = profile(request("warf", WARFARIN), inr(6.4))
    assert with_taken(bare) is bare
    assert not [x for x in analyse(bare).proposals if "ibuprofen" in x.title.lower()]


def test_an_otc_nsaid_in_heart_failure_with_reduced_ejection_fraction_is_a_drug_disease_line() -> (
    None
):
    p = _taken(HFREF, statement("ibu", IBUPROFEN))
    lines = _about(p, "MedicationStatement/ibu")
    assert lines and all("not prescribed here" in x.title for x in lines)
    assert any("Condition/hf" in x.refs for x in lines)
    # neighbour: the statement records it as not taken: nothing is said of it
    not_taken = _taken(HFREF, statement("ibu", IBUPROFEN, status="not-taken"))
    assert not _about(not_taken, "MedicationStatement/ibu")
    assert not [m for m in not_taken.medications if m.taken]


@pytest.mark.parametrize("status", ["stopped", "completed", "not-taken", "on-hold"])
def test_a_statement_that_it_is_not_taken_adds_no_medicine(status: str) -> None:
    p = profile(request("warf", WARFARIN), statement("ibu", IBUPROFEN, status=status))
    assert with_taken(p) is p


def test_a_statement_of_a_prescribed_ingredient_adds_nothing() -> None:
    p = profile(request("ibu-rx", IBUPROFEN), statement("ibu", IBUPROFEN, note=""))
    assert with_taken(p) is p
    assert [m.ref for m in p.active_medications] == ["MedicationRequest/ibu-rx"]


def test_an_intended_statement_is_taken_and_the_fold_is_idempotent() -> None:
    p = _taken(statement("ibu", IBUPROFEN, status="intended", note=""))
    assert [m.ref for m in p.medications] == ["MedicationStatement/ibu"]
    assert with_taken(p) is p


def test_another_prescribers_medicine_is_recorded_as_taken_not_bought() -> None:
    p = _taken(
        request("warf", WARFARIN),
        statement("ibu", IBUPROFEN, note="", source="Practitioner/elsewhere"),
        inr(6.4),
    )
    (stop,) = [x for x in analyse(p).proposals if x.medication_ref == "MedicationStatement/ibu"]
    assert stop.title.endswith("(recorded as taken, not prescribed here)")
    said = _patient_lines(p, stop)
    assert said and not any("bought" in w for w in said)
    assert not any("prescription" in w.lower() for w in said)


def test_the_patient_reported_medicine_says_so() -> None:
    p = _taken(HFREF, statement("ibu", IBUPROFEN, note="", source="Patient/p"))
    assert [m.taken for m in p.medications] == ["patient"]
    assert all(
        "reported as taken by the patient" in x.title for x in _about(p, "MedicationStatement/ibu")
    )


def _patient_lines(p: PatientProfile, x: Proposal) -> list[str]:
    option = Option(
        x.id,
        x.title,
        x.category,
        x.description,
        medication_ref=x.medication_ref,
        urgency_class=x.urgency_class,
        action=x.action or None,
    )
    return [w.text for w in patient_wordings(p, (option,)) if w.option_id == x.id]


def test_the_patient_is_told_to_stop_what_they_bought_only_where_the_record_says_bought() -> None:
    p = _taken(request("warf", WARFARIN), statement("ibu", IBUPROFEN), inr(6.4))
    (stop,) = [x for x in analyse(p).proposals if x.medication_ref == "MedicationStatement/ibu"]
    (said,) = _patient_lines(p, stop)
    assert said.startswith("Stop taking the ibuprofen you bought, from today.")


def _plan(tmp_path: Path) -> dict[str, Any]:
    source = tmp_path / "in.json"
    record = bundle(request("warf", WARFARIN), statement("ibu", IBUPROFEN), inr(6.4))
    source.write_text(json.dumps(record), encoding="utf-8")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        args = ["plan", "--format", "fhir", "--created", "2026-11-30T10:00:00Z", str(source)]
        assert main([*args, "--no-progress"]) == 0
    plan: dict[str, Any] = json.loads(buf.getvalue())
    return plan


def test_the_plan_names_the_statement_in_the_careplan_and_the_detected_issue(
    tmp_path: Path,
) -> None:
    plan = _plan(tmp_path)
    res = [e["resource"] for e in plan["entry"]]
    (cp,) = [r for r in res if r["resourceType"] == "CarePlan"]
    (act,) = [
        a["detail"]
        for a in cp["activity"]
        if "detail" in a and "ibuprofen" in a["detail"]["code"]["text"]
    ]
    assert act["kind"] == "CommunicationRequest"
    assert act["extension"][0]["valueReference"]["reference"] == "MedicationStatement/ibu"
    issues = [r for r in res if r["resourceType"] == "DetectedIssue"]
    implicated = {i["reference"] for r in issues for i in r.get("implicated", ())}
    assert {"MedicationStatement/ibu", "MedicationRequest/warf"} <= implicated
    (note,) = [r for r in res if r["resourceType"] == "Communication"]
    assert "ibuprofen you bought" in note["payload"][0]["contentString"]


@pytest.mark.parametrize("tool", ["fhir-validate", "fhir-validate-medplum"])
def test_the_plan_passes_the_shared_validators(tool: str, tmp_path: Path) -> None:
    path = SHARED / "tools" / tool
    if shutil.which("node") is None or not path.exists():
        pytest.skip(f"{tool} cannot run here")
    file = tmp_path / "plan.json"
    file.write_text(json.dumps(_plan(tmp_path)), encoding="utf-8")
    args = [str(path), *(["--strict"] if tool.endswith("medplum") else []), str(file)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if out.returncode == 2 and "npm" in out.stderr:
        pytest.skip(f"{tool} could not install its validator")
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_taken_medicine_the_table_does_not_know_is_named_as_not_checked() -> None:
    """A blind review found an over-the-counter nasal decongestant nowhere in the plan: not in
    a line, the medicines or the coverage statement, as if nothing were taken. One the drug
    table does not know is still a medicine taken, which the coverage names as not checked."""
    from inference.knowledge.concepts import items
    from inference.knowledge.facts import Facts

    spray = ("999999999", "Zorbamazoline 0.05% nasal spray")  # a code the table does not hold
    p = _taken(statement("s1", spray, note="Bought over the counter"))
    meds = [i for i in items(Facts(p)) if i.kind == "medicine"]
    assert [(i.ref, i.covered, i.known) for i in meds] == [("MedicationStatement/s1", False, False)]
    twice = _taken(request("r1", spray), statement("s1", spray))  # named like a prescription
    assert [m.ref for m in twice.medications] == ["MedicationRequest/r1"]
