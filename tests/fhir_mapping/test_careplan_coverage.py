"""The coverage statement on the way out: the deliberation document (round trip, ``canoe
recompute --check`` on documents with and without it), the CarePlan (note, narrative and
description, valid R4 for both shared validators) and the clinician summary."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from fhir_mapping.careplan import plan_bundle
from inference.knowledge.coverage import assess
from service.cli import main
from service.core import evaluate, from_document, to_document
from service.core.model import Deliberation
from service.record.profile import Code, Medication, PatientProfile
from service.record.vocabulary import RXNORM
from service.text.summary import summary_text
from tests.conftest import SHARED
from tests.fhir_mapping.factories import small_deliberation
from tests.fhir_mapping.fhir_checks import assert_valid

RECORDED = "2026-11-30T10:00:00Z"


def _child_on_an_unknown_medicine() -> PatientProfile:
    med = Medication(
        "MedicationRequest/m-unknown",
        "Zorbitaxumab 40 MG Injection",
        (Code(RXNORM, "", "Zorbitaxumab 40 MG Injection"),),
        "active",
        "order",
        date(2026, 5, 1),
    )
    return PatientProfile(
        "Patient/p1", "female", date(2019, 3, 1), date(2026, 6, 1), medications=(med,)
    )


def _with_coverage() -> Deliberation:
    d = small_deliberation()
    return replace(d, meta=replace(d.meta, coverage=assess(_child_on_an_unknown_medicine())))


def test_document_carries_the_coverage_and_reads_it_back() -> None:
    d = _with_coverage()
    doc = json.loads(json.dumps(to_document(d)))
    cov = doc["meta"]["coverage"]
    assert cov["high_risk"] is True
    assert {g["key"] for g in cov["gaps"]} >= {"child", "unrecognised-medicine", "no-weight"}
    assert from_document(doc) == d
    # high_risk is derived: a tampered value is ignored on the way in
    cov["high_risk"] = False
    assert from_document(doc).meta.coverage == d.meta.coverage
    # a document written before coverage existed has none and stays valid
    old = to_document(small_deliberation())
    assert "coverage" not in old["meta"] and from_document(old).meta.coverage is None


def test_recompute_check_passes_old_and_new_documents(tmp_path: Path, capsys: Any) -> None:
    for name, d in (("old", small_deliberation()), ("new", _with_coverage())):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(to_document(d)), encoding="utf-8")
        assert main(["recompute", "--check", str(path)]) == 0, capsys.readouterr()


def test_a_malformed_coverage_is_refused_naming_the_field() -> None:
    doc = to_document(_with_coverage())
    doc["meta"]["coverage"]["gaps"][0]["kind"] = "maybe"
    from service.errors import DocumentError

    with pytest.raises(DocumentError, match=r"meta\.coverage\.gaps\[0\]\.kind"):
        from_document(doc)


def _careplan(d: Deliberation) -> tuple[dict[str, Any], dict[str, Any]]:
    ev = evaluate(d)
    bundle = plan_bundle(d, ev, recorded=RECORDED, service_version="1.2.3")
    (cp,) = [e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "CarePlan"]
    return bundle, cp


def test_careplan_states_the_coverage_in_note_narrative_and_description() -> None:
    bundle, cp = _careplan(_with_coverage())
    assert_valid(bundle)
    note = next(n["text"] for n in cp["note"] if n["text"].startswith("Coverage"))
    assert "[high risk] a child or adolescent (under 18)" in note
    assert "No check covers Zorbitaxumab 40 MG Injection (not in the drug knowledge)" in note
    assert "NOT CHECKED, needs a human" in cp["description"]
    assert "Coverage:" in cp["text"]["div"]
    # the description is the clinician summary: coverage in three lines at its end (what
    # ran, what could not be checked, and the record items no check covers)
    assert cp["description"] == summary_text(_with_coverage(), evaluate(_with_coverage()))
    assert cp["description"].splitlines()[-3].startswith("Checked: ")
    assert cp["description"].splitlines()[-1].startswith("No check covers: Zorbitaxumab")


@pytest.mark.parametrize("tool", ["fhir-validate", "fhir-validate-medplum"])
def test_careplan_with_coverage_passes_the_shared_validators(tool: str, tmp_path: Path) -> None:
    path = SHARED / "tools" / tool
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node/npm not installed: {tool} cannot run")
    if not path.exists():
        pytest.skip(f"{path} not found")
    _, cp = _careplan(_with_coverage())
    file = tmp_path / "careplan.json"
    file.write_text(json.dumps(cp), encoding="utf-8")
    args = [str(path), *(["--strict"] if tool.endswith("medplum") else []), str(file)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if out.returncode == 2 and "npm" in out.stderr:
        pytest.skip(f"{tool} could not install its validator: {out.stderr.strip()}")
    assert out.returncode == 0, out.stdout + out.stderr
