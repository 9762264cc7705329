"""Every kind of resource the service writes passes both external FHIR R4 validators: FHIR.js
(``fhir-validate``) with no structural error, and Medplum (``fhir-validate-medplum --strict``)
with no error and no warning. Written through the CLI as an integrator would get them: the plan
of every realistic fixture (one also with its record at a source base; DetectedIssues and
the patient version, a Communication, included), that patient version alone as ``plan --for
patient --format fhir`` writes it, each contested version (one per example Task and the
transaction Bundle, and one whose Task was authored ahead of the service's clock), the refusal
Bundle of a bad Task, the OperationOutcome of every malformed bundle, the Task examples
themselves and the definitions package. Each validator runs once over all of them (one node
process); both skip, saying why, where node or the shared tools are missing."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service.cli import main
from tests.conftest import BAD_BUNDLES, REALISTIC_BUNDLES, shared_tool
from tests.examples.make_tasks import TASKS_DIR

CREATED = "2026-11-30T09:00:00+00:00"
RECORDED = "2026-11-30T11:00:00+00:00"
LATER = "2026-12-03T08:00:00+00:00"  # after RECORDED: a sender's clock ahead of ours


def _run(capsys: pytest.CaptureFixture[str], argv: list[str], out: Path) -> int:
    code = main(argv)
    out.write_text(capsys.readouterr().out, encoding="utf-8")
    return code


def _assert_one_patient_version(plan: Path) -> None:
    """The plan Bundle holds one Communication to the patient, based on its CarePlan."""
    resources = [e["resource"] for e in json.loads(plan.read_text())["entry"]]
    careplan = next(r for r in resources if r["resourceType"] == "CarePlan")
    comms = [r for r in resources if r["resourceType"] == "Communication"]
    assert len(comms) == 1, plan.name
    assert comms[0]["basedOn"] == [{"reference": f"CarePlan/{careplan['id']}"}]
    assert comms[0]["recipient"] == [careplan["subject"]]


def _write_contested(
    folder: Path, capsys: pytest.CaptureFixture[str], adalberto: Path, plan: Path
) -> list[Path]:
    """Contested versions of one plan: each example Task, a decision on a finding, a Task from
    a clock ahead of ours, and a refused Task's OperationOutcome."""
    files: list[Path] = []
    for task in sorted(TASKS_DIR.glob("*.json")):
        out = folder / f"contested-{task.stem}.json"
        code = _run(capsys, ["contest", str(adalberto), str(task), "--recorded", RECORDED], out)
        assert code == 0, out.read_text()[:2000]
        if json.loads(out.read_text())["resourceType"] == "Bundle":
            _assert_one_patient_version(out)
        files.append(out)
    # A clinician's decision on an option with a safety finding: its DetectedIssue's mitigation.
    mitigated = folder / "task-decide-finding.json"
    mitigated.write_text(json.dumps(_decide_a_finding(adalberto)))
    out = folder / "contested-decide-finding.json"
    code = _run(capsys, ["contest", str(adalberto), str(mitigated), "--recorded", RECORDED], out)
    assert code == 0, out.read_text()[:2000]
    assert '"mitigation"' in out.read_text()
    files.append(out)
    # A Task sent with a clock ahead of ours: written with authoredOn clamped to the time of
    # writing and the time sent in the project's extension.
    ahead = folder / "task-authored-ahead.json"
    ahead.write_text(
        json.dumps({**json.loads((TASKS_DIR / "accept.json").read_text()), "authoredOn": LATER})
    )
    out = folder / "contested-authored-ahead.json"
    code = _run(capsys, ["contest", str(adalberto), str(ahead), "--recorded", RECORDED], out)
    assert code == 0, out.read_text()[:2000]
    assert "original-authored-on" in out.read_text()
    files.append(out)
    bad_task = folder / "task-bad.json"
    bad_task.write_text(
        json.dumps({**json.loads((TASKS_DIR / "reject.json").read_text()), "status": "bogus"})
    )
    out = folder / "contest-refused.json"
    assert _run(capsys, ["contest", str(plan), str(bad_task), "--recorded", RECORDED], out) == 2
    files.append(out)
    return files


def _write_all(folder: Path, capsys: pytest.CaptureFixture[str]) -> list[Path]:
    files: list[Path] = []
    for bundle in REALISTIC_BUNDLES:
        out = folder / f"plan-{bundle.stem}.json"
        assert (
            _run(capsys, ["plan", str(bundle), "--format", "fhir", "--created", CREATED], out) == 0
        )
        files.append(out)
        _assert_one_patient_version(out)
        patient = folder / f"patient-{bundle.stem}.json"
        argv = ["plan", str(bundle), "--for", "patient", "--format", "fhir", "--created", CREATED]
        assert _run(capsys, argv, patient) == 0
        assert json.loads(patient.read_text())["resourceType"] == "Communication"
        files.append(patient)
    plan = folder / f"plan-{REALISTIC_BUNDLES[0].stem}.json"
    # References to the record as absolute URLs at the EHR (a source base given).
    out = folder / f"plan-at-source-{REALISTIC_BUNDLES[0].stem}.json"
    argv = ["plan", str(REALISTIC_BUNDLES[0]), "--format", "fhir", "--created", CREATED]
    assert _run(capsys, [*argv, "--source-base", "https://ehr.example.net/fhir"], out) == 0
    files.append(out)
    adalberto = next(p for p in files if "adalberto" in p.name)
    files += _write_contested(folder, capsys, adalberto, plan)
    for bundle in BAD_BUNDLES:
        out = folder / f"outcome-{bundle.stem}.json"
        code = _run(capsys, ["plan", str(bundle), "--format", "fhir", "--created", CREATED], out)
        if code == 0:  # a bad bundle the service plans anyway (e.g. unknown codes): its plan
            out = out.rename(folder / f"plan-{bundle.stem}.json")
        else:
            assert json.loads(out.read_text())["resourceType"] == "OperationOutcome"
        files.append(out)
    files += sorted(TASKS_DIR.glob("*.json"))
    package = folder / "definitions"
    assert main(["definitions", str(package)]) == 0
    capsys.readouterr()
    files += sorted((package / "package").glob("[A-Z]*.json"))
    return files


def _decide_a_finding(plan_file: Path) -> dict[str, object]:
    """The example decide Task, aimed at the first option of the plan with a safety finding."""
    plan = json.loads(plan_file.read_text())
    binary = next(e["resource"] for e in plan["entry"] if e["resource"]["resourceType"] == "Binary")
    doc = json.loads(base64.b64decode(binary["data"]))
    option = next(o for o in doc["options"] if o.get("findings"))
    task = json.loads((TASKS_DIR / "decide.json").read_text())
    task["id"] = "example-decide-finding"
    for i in task["input"]:
        if "valueString" in i:
            i["valueString"] = option["id"]
        if "valueCode" in i:
            i["valueCode"] = "exclude" if option["decision"] == "include" else "include"
    return dict(task)


def _validator(name: str) -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"node/npm not installed: {name} cannot run")
    return shared_tool(name)


def _validate(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    if out.returncode == 2 and "npm" in out.stderr:
        pytest.skip(f"{Path(cmd[0]).name} could not install its npm packages: {out.stderr[:300]}")
    return out


def test_everything_written_passes_fhir_js(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _validator("fhir-validate")
    files = _write_all(tmp_path, capsys)
    out = _validate([str(tool), *map(str, files)])
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert f"# {len(files)} file(s), 0 with structural ERRORs" in out.stdout


def test_everything_written_passes_medplum_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _validator("fhir-validate-medplum")
    files = _write_all(tmp_path, capsys)
    out = _validate([str(tool), "--strict", *map(str, files)])
    lines = out.stdout.strip().splitlines()
    last = lines[-1]
    m = re.fullmatch(rf"{len(files)} files, \d+ resources: (\d+) errors, (\d+) warnings", last)
    assert m is not None, last
    # Medplum reads a reference's type as the text before its first "/", so every absolute
    # reference (the record at the EHR, which R4 allows in any Reference) warns "got "https:"";
    # the same naive check its maintainers track for contained and conditional references.
    # Exactly those are let through, and only for references that are absolute URLs.
    absolute = [x for x in lines[:-1] if re.search(r'Invalid reference: got "https?:"', x)]
    others = [x for x in lines[:-1] if x not in absolute]
    assert m.group(1) == "0" and int(m.group(2)) == len(absolute), "\n".join(others[:40])
    assert not others, "\n".join(others[:40])
    assert all("plan-at-source-" in x or "yvone889" in x for x in absolute), absolute[:5]
