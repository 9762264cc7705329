"""The knowledge tools through the real CLI: the committed JSON Schema is current, `knowledge
check` validates a folder and lists its changes, `knowledge explain` on a matching and a
non-matching patient, and `definitions` writes the value sets and criteria as FHIR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference.knowledge.site import shipped
from service.cli import main
from service.knowledge import criteria_schema
from tests.conftest import FHIR_FIXTURES

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = FHIR_FIXTURES / "adalberto_hartmann_ba18818d.json"
CREATED = "2026-11-30T09:00:00+00:00"


def test_committed_schema_is_current() -> None:
    committed = (ROOT / "docs" / "criteria.schema.json").read_text(encoding="utf-8")
    assert committed == criteria_schema(), "regenerate: canoe knowledge schema > docs/..."
    schema = json.loads(committed)
    assert "Criterion" in schema["$defs"] and "Trigger" in schema["$defs"]


def test_check_lists_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "site.yaml").write_text(
        "version: s1\nretire:\n  - id: review-dementia\n    reason: local pathway\n"
        "params:\n  vaccine-influenza-older:\n    age: 70\n"
    )
    assert main(["knowledge", "check", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "retired  review-dementia: local pathway (site.yaml)" in out
    assert "params   vaccine-influenza-older: age: 65 -> 70 (site.yaml)" in out
    assert f"{len(shipped().criteria) - 1} criteria, 2 change(s)" in err


def test_check_refuses_a_bad_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "site.yaml").write_text("version: s1\nparams:\n  no-such:\n    age: 70\n")
    assert main(["knowledge", "check", str(tmp_path)]) == 2
    assert "site.yaml: params.no-such: unknown criterion 'no-such'" in capsys.readouterr().err


def test_check_full_folder_diffs_against_shipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = ROOT / "inference" / "knowledge" / "criteria"
    for p in src.glob("*.json"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    raw = json.loads((tmp_path / "drug_age.json").read_text())
    raw["criteria"][0]["params"] = {k: v + 1 for k, v in raw["criteria"][0]["params"].items()}
    changed = raw["criteria"][0]["id"]
    (tmp_path / "drug_age.json").write_text(json.dumps(raw))
    assert main(["knowledge", "check", "--full", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"params   {changed}: changed: params"


def test_explain_matching_patient(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["knowledge", "explain", "vaccine-influenza-older", str(BUNDLE), "--created", CREATED]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "age_min: holds: aged at least 65 (age) years" in out
    assert "verdict: FIRES" in out


def test_explain_non_matching_patient(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["knowledge", "explain", "dd-nsaid-heart-failure", str(BUNDLE), "--created", CREATED]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "drugs: does not hold: takes a medicine of the class NSAID" in out
    assert "any_conditions: does not hold: has an active problem: heart failure" in out
    assert out.rstrip().endswith("verdict: does not fire")


def test_explain_names_bound_facts(capsys: pytest.CaptureFixture[str]) -> None:
    fired = "benzodiazepine-seizure-disorder"
    assert main(["knowledge", "explain", fired, str(BUNDLE), "--created", CREATED]) == 0
    out = capsys.readouterr().out
    assert "drugs: holds" in out and "      a = " in out
    assert "verdict: FIRES" in out


def test_explain_unknown_criterion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["knowledge", "explain", "no-such", str(BUNDLE)]) == 2
    assert "unknown criterion 'no-such'" in capsys.readouterr().err


def test_definitions_publish_the_knowledge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = "https://kb.hospital.example/fhir"
    assert main(["definitions", "--base", base, str(tmp_path)]) == 0
    capsys.readouterr()
    pkg = tmp_path / "package"
    plans = sorted(pkg.glob("PlanDefinition-*.json"))
    assert len(plans) == len(shipped().criteria)
    assert len(sorted(pkg.glob("ActivityDefinition-*.json"))) == len(plans)
    pd = json.loads((pkg / "PlanDefinition-dd-nsaid-heart-failure.json").read_text())
    assert pd["url"] == f"{base}/PlanDefinition/dd-nsaid-heart-failure"
    own = next(c for c in shipped().criteria if c.id == "dd-nsaid-heart-failure")
    assert pd["status"] == "active" and pd["version"] == own.version
    assert pd["relatedArtifact"][0]["citation"].startswith("AGS Beers Criteria 2023")
    action = pd["action"][0]
    assert action["priority"] == "urgent"
    assert action["definitionCanonical"] == (
        f"{base}/ActivityDefinition/dd-nsaid-heart-failure-action"
    )
    condition = action["condition"][0]["expression"]
    assert condition["language"] == "text/fhirpath"
    assert "NSAID" in condition["description"] and "heart failure" in condition["description"]
    # the medicines a condition names: prescribed, or recorded as taken (a union of both)
    assert condition["expression"].startswith("(entry.resource.ofType(MedicationRequest)")
    assert "ofType(MedicationStatement)" in condition["expression"]
    vs = json.loads((pkg / "ValueSet-condition-heart-failure.json").read_text())
    systems = {inc["system"] for inc in vs["compose"]["include"]}
    assert systems == {"http://snomed.info/sct", "http://hl7.org/fhir/sid/icd-10-cm"}
    nsaid = json.loads((pkg / "ValueSet-drug-class-nsaid.json").read_text())
    assert nsaid["compose"]["include"][0]["system"] == "http://www.nlm.nih.gov/research/umls/rxnorm"
    index = json.loads((pkg / ".index.json").read_text())
    assert {f["resourceType"] for f in index["files"]} >= {
        "ValueSet",
        "PlanDefinition",
        "ActivityDefinition",
    }
