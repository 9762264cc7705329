"""The CLI an integrator meets past the quick start: ``recompute --check`` gives a verdict,
``serve --help`` names the settings, ``definitions`` writes a package, one plan-id scheme, and
every FHIR output carries the configured canonical base."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fhir_mapping.careplan import careplan_of
from fhir_mapping.definitions import DEFAULT_BASE
from service.cli import main
from service.pipeline import new_plan_id
from tests.conftest import fixture_bundle
from tests.examples.make_tasks import CREATED, TASKS_DIR, fixture_plan

BASE = "https://fhir.hospital.test/canoe"


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "deliberation.json"
    path.write_text(json.dumps(fixture_plan()[1]))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_recompute_check_passes_an_intact_document(document: Path, capsys: Any) -> None:
    rc, out, err = _run(capsys, "recompute", "--check", str(document))
    assert rc == 0, err
    assert out == "" and "OK" in err


def test_recompute_check_lists_every_tampered_value(
    document: Path, tmp_path: Path, capsys: Any
) -> None:
    doc = json.loads(document.read_text())
    option = doc["options"][0]
    true_score = option["score"]
    option["score"] = 0.999
    node = next(n for n in option["nodes"] if n["kind"] == "argument")
    true_sigma, node["sigma"] = node["sigma"], 0.001
    flipped = "exclude" if doc["options"][1]["decision"] == "include" else "include"
    doc["options"][1]["decision"] = flipped
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(doc))

    rc, out, err = _run(capsys, "recompute", "--check", str(tampered))
    assert rc == 1
    lines = out.splitlines()
    assert len(lines) == 3, out
    k = option["nodes"].index(node)
    assert f"options[0].score: stated 0.999, recomputed {json.dumps(true_score)}" in lines
    sigma = f"options[0].nodes[{k}].sigma: stated 0.001, recomputed {json.dumps(true_sigma)}"
    assert sigma in lines
    assert any(line.startswith(f'options[1].decision: stated "{flipped}"') for line in lines)
    assert "3 derived value(s) differ" in err

    # Without --check: the recomputed document, and how many differed on stderr.
    rc, out, err = _run(capsys, "recompute", str(tampered))
    assert rc == 0
    assert json.loads(out)["options"][0]["score"] == true_score
    assert "3 stated derived value(s) differed" in err
    rc, out, err = _run(capsys, "recompute", str(document))
    assert rc == 0 and "0 stated derived value(s) differed" in err


def test_recompute_of_a_plan_bundle_names_the_deliberation_file_it_needs(
    tmp_path: Path, capsys: Any
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(fixture_plan()[0]))
    rc, out, err = _run(capsys, "recompute", str(plan))
    assert rc == 2 and out == ""
    assert "is a FHIR Bundle, not a deliberation document" in err
    assert "--deliberation deliberation.json" in err
    assert "unknown format" not in err


def test_an_error_is_printed_once(tmp_path: Path, capsys: Any) -> None:
    missing = tmp_path / "missing.json"
    rc, _out, err = _run(capsys, "plan", str(missing))
    assert rc == 2
    assert err.count(f"cannot read {missing}") == 1, err
    assert len(err.splitlines()) == 1, err


def test_recompute_check_refuses_a_document_that_is_not_one(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "canoe.deliberation/1"}')
    rc, _out, err = _run(capsys, "recompute", "--check", str(bad))
    assert rc == 2 and "DocumentError" in err


def test_serve_help_names_the_main_settings_and_their_variables(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for var in (
        "CANOE_GRPC_PORT",
        "CANOE_HTTP_PORT",
        "CANOE_GRPC_HOST",
        "CANOE_STORE_DSN",
        "CANOE_BACKEND",
        "CANOE_AUTH_MODE",
        "CANOE_TLS_CERT_FILE",
        "CANOE_FHIR_BASE",
        "CANOE_CDS_JWKS_FILE",
    ):
        assert var in text, var
    assert "(default: 50051)" in text and "(default: sqlite:///canoe.sqlite3)" in text


def test_one_plan_id_scheme_offline_and_served() -> None:
    raw = fixture_bundle("adalberto").read_bytes()
    offline = new_plan_id(raw)
    assert re.fullmatch(r"[0-9a-f]{32}", offline)
    assert new_plan_id(raw) == offline, "planning one file twice names the plan the same"
    assert re.fullmatch(r"[0-9a-f]{32}", new_plan_id())
    assert new_plan_id() != new_plan_id()
    bundle, doc = fixture_plan()
    assert doc["plan_id"] == offline
    assert careplan_of(bundle)[1]["id"] == f"{offline}-v1"


def test_cli_outputs_carry_the_configured_base(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CANOE_FHIR_BASE", BASE)
    bundle = str(fixture_bundle("adalberto"))
    rc, out, err = _run(capsys, "plan", bundle, "--format", "fhir", "--created", CREATED)
    assert rc == 0, err
    assert DEFAULT_BASE not in out
    plan = json.loads(out)
    assert all(e["fullUrl"].startswith(f"{BASE}/") for e in plan["entry"])
    _, careplan = careplan_of(plan)
    assert {x["url"] for x in careplan["extension"]} <= {
        f"{BASE}/StructureDefinition/{n}"
        for n in ("deliberation", "option-evaluation", "argument", "argument-relation", "clash")
    } | {f"{BASE}/StructureDefinition/{n}" for n in ("problem-reconciliation", "contestation")}
    (tmp_path / "plan.json").write_text(out)

    # Tasks may name our CodeSystems under the configured base (or the default one).
    task = json.loads((TASKS_DIR / "reject.json").read_text())
    (tmp_path / "task.json").write_text(json.dumps(task).replace(DEFAULT_BASE, BASE))
    rc, out, err = _run(capsys, "contest", str(tmp_path / "plan.json"), str(tmp_path / "task.json"))
    assert rc == 0, err
    assert DEFAULT_BASE not in out
    (applied,) = [e for e in json.loads(out)["entry"] if e["resource"]["resourceType"] == "Task"]
    assert applied["fullUrl"] == f"{BASE}/Task/example-reject"
    assert applied["resource"]["status"] == "completed"
    assert applied["resource"]["code"]["coding"][0]["system"].startswith(BASE)

    rc, out, err = _run(capsys, "contest", str(tmp_path / "plan.json"), str(TASKS_DIR / "add.json"))
    assert rc == 0, err
    assert DEFAULT_BASE not in out


def test_a_bad_base_is_refused_at_start_up(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANOE_FHIR_BASE", "canoe.example.org")
    rc, _out, err = _run(capsys, "plan", str(fixture_bundle("adalberto")))
    assert rc == 2
    assert "CANOE_FHIR_BASE" in err


def test_definitions_writes_a_package_under_the_base(tmp_path: Path, capsys: Any) -> None:
    import tarfile

    rc, _out, err = _run(capsys, "definitions", "--base", BASE + "/", str(tmp_path))
    assert rc == 0, err
    manifest = json.loads((tmp_path / "package" / "package.json").read_text())
    assert manifest["canonical"] == BASE
    index = json.loads((tmp_path / "package" / ".index.json").read_text())
    for f in index["files"]:
        res = json.loads((tmp_path / "package" / f["filename"]).read_text())
        assert res["url"] == f["url"] and res["url"].startswith(BASE + "/")
    with tarfile.open(tmp_path / f"{manifest['name']}-{manifest['version']}.tgz") as tar:
        names = set(tar.getnames())
    assert {"package/package.json", "package/.index.json"} <= names
    assert len(names) == len(index["files"]) + 2

    rc, _out, err = _run(capsys, "definitions", "--base", "not a url", str(tmp_path / "x"))
    assert rc == 2 and "canonical base" in err


def test_contest_says_what_changed_and_prints_the_format_asked(tmp_path: Path, capsys: Any) -> None:
    rc, out, err = _run(
        capsys, "plan", str(fixture_bundle("adalberto")), "--format", "fhir", "--created", CREATED
    )
    assert rc == 0, err
    (tmp_path / "plan.json").write_text(out)
    task = json.loads((TASKS_DIR / "reject.json").read_text())
    target = task["input"][0]["valueString"]

    rc, out, err = _run(
        capsys,
        "contest",
        str(tmp_path / "plan.json"),
        str(TASKS_DIR / "reject.json"),
        "--format",
        "text",
    )
    assert rc == 0, err
    assert f"version 2: reject {target};" in err
    assert "activities included (was " in err
    assert out.splitlines()[1].startswith("Care plan proposal, version 2:")
    assert '"resourceType"' not in out

    rc, out, err = _run(
        capsys,
        "contest",
        str(tmp_path / "plan.json"),
        str(TASKS_DIR / "reject.json"),
        "--format",
        "json",
    )
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["version"] == 2
    assert [c["target"] for c in doc["contestations"]] == [target]
