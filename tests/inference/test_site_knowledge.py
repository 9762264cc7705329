"""A site's knowledge folder: retire a criterion, set a param, add a criterion; each seen in a
plan and recorded (deliberation meta and Provenance); a bad folder refused naming file, path
and problem. Real files, the real embedded planner and the real CLI."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge.criteria import CRITERIA_DIR, KnowledgeError
from inference.knowledge.rules import analyse
from inference.knowledge.site import active, content_hash, install, load_site, shipped
from service.cli import main
from tests.conftest import FHIR_FIXTURES

BUNDLE = FHIR_FIXTURES / "adalberto_hartmann_ba18818d.json"
CREATED = "2026-11-30T09:00:00+00:00"
RETIRED, TUNED, COPIED = "review-dementia", "vaccine-influenza-older", "vaccine-pneumococcal-older"
ADDED = "site-pneumococcal-local"


def _shipped_raw(cid: str) -> dict[str, object]:
    for path in sorted(CRITERIA_DIR.glob("*.json")):
        for c in json.loads(path.read_text())["criteria"]:
            if c["id"] == cid:
                return dict(c)
    raise AssertionError(cid)


def _write_site(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "site.yaml").write_text(
        "version: test-site-1\n"
        f"retire:\n  - id: {RETIRED}\n    reason: reviewed elsewhere\n"
        f"params:\n  {TUNED}:\n    age: 130\n"
    )
    added = {**_shipped_raw(COPIED), "id": ADDED}
    added["option"] = {**added["option"], "id": "opt-site-pneumococcal"}  # type: ignore[dict-item]
    (folder / "local.json").write_text(
        json.dumps({"version": "site-1", "criteria": [added]}), encoding="utf-8"
    )
    return folder


@pytest.fixture
def restore() -> Iterator[None]:
    yield
    install(shipped())


def _fired() -> tuple[str, ...]:
    profile = ingest(BUNDLE.read_bytes(), received=datetime(2026, 11, 30, 9, tzinfo=UTC))
    return analyse(profile).fired


def test_overlay_retires_sets_and_adds(tmp_path: Path, restore: None) -> None:
    before = _fired()
    assert {RETIRED, TUNED, COPIED} <= set(before) and ADDED not in before
    k = load_site(_write_site(tmp_path / "site"))
    install(k)
    after = _fired()
    assert RETIRED not in after
    assert TUNED not in after  # its age threshold is now 130
    assert COPIED in after and ADDED in after
    assert next(c for c in k.criteria if c.id == TUNED).params["age"] == 130
    kinds = {(ch.kind, ch.criterion) for ch in k.changes}
    assert kinds == {("retired", RETIRED), ("params", TUNED), ("added", ADDED)}
    assert k.stamp.site_version == "test-site-1"
    assert k.stamp.content_hash == shipped().stamp.content_hash
    assert k.stamp.site_hash.startswith("sha256:") and len(k.stamp.site_hash) == 71


def test_plan_records_the_knowledge(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    restore: None,
) -> None:
    site = _write_site(tmp_path / "site")
    monkeypatch.setenv("CANOE_KNOWLEDGE_DIR", str(site))
    assert main(["plan", str(BUNDLE), "--format", "fhir", "--created", CREATED]) == 0
    bundle = json.loads(capsys.readouterr().out)
    stamp = active().stamp
    prov = next(
        e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Provenance"
    )
    idents = {
        e["what"]["identifier"]["system"].rsplit("/", 1)[-1]: e["what"]["identifier"]["value"]
        for e in prov["entity"]
        if "identifier" in e["what"]
    }
    # (the record's own entities carry the source's identifiers too: only ours are compared)
    ours = {k: v for k, v in idents.items() if k in ("knowledge", "knowledge-site")}
    assert ours == {"knowledge": stamp.content_hash, "knowledge-site": stamp.site_hash}
    binary = next(
        e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Binary"
    )
    doc = json.loads(base64.b64decode(binary["data"]))
    assert doc["meta"]["knowledge"] == {
        "version": stamp.version,
        "content_hash": stamp.content_hash,
        "site_version": "test-site-1",
        "site_hash": stamp.site_hash,
    }
    ids = {opt["id"] for opt in doc["options"]}
    assert "opt-site-pneumococcal" in ids


def test_plan_without_overlay_records_the_shipped_knowledge(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, restore: None
) -> None:
    monkeypatch.delenv("CANOE_KNOWLEDGE_DIR", raising=False)
    assert main(["plan", str(BUNDLE), "--format", "json", "--created", CREATED]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["knowledge"]["content_hash"] == shipped().stamp.content_hash
    assert doc["meta"]["knowledge"]["site_hash"] == ""


@pytest.mark.parametrize(
    ("files", "file", "path", "problem"),
    [
        (
            {"site.yaml": "version: x\nretire:\n  - id: no-such\n    reason: r\n"},
            "site.yaml",
            "retire[0].id",
            "unknown criterion",
        ),
        (
            {"site.yaml": f"version: x\nparams:\n  {TUNED}:\n    nope: 1\n"},
            "site.yaml",
            f"params.{TUNED}.nope",
            "has no param",
        ),
        ({"site.yaml": "version: x\nretire: 3\n"}, "site.yaml", "retire", "tuple"),
        ({"site.yml": "version: x\n"}, "site.yml", "(file)", "not a site knowledge file"),
        (
            {"local.json": json.dumps({"version": "1", "criteria": [_shipped_raw(COPIED)]})},
            "local.json",
            "criteria[0].id",
            "is a shipped criterion",
        ),
        ({"local.json": "{"}, "local.json", "line 1", "not valid JSON"),
    ],
)
def test_bad_overlay_is_refused_by_name(
    tmp_path: Path, files: dict[str, str], file: str, path: str, problem: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(KnowledgeError) as err:
        load_site(tmp_path)
    assert (err.value.file, err.value.path) == (file, path)
    assert problem in err.value.problem


def test_bad_overlay_stops_start_up(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    restore: None,
) -> None:
    (tmp_path / "site.yaml").write_text("version: x\nretire:\n  - id: no-such\n    reason: r\n")
    monkeypatch.setenv("CANOE_KNOWLEDGE_DIR", str(tmp_path))
    assert main(["plan", str(BUNDLE), "--created", CREATED]) == 2
    err = capsys.readouterr().err
    assert "CANOE_KNOWLEDGE_DIR" in err and "site.yaml: retire[0].id: unknown criterion" in err


def test_content_hash_names_files_and_bytes() -> None:
    a = content_hash([("a.json", b"1"), ("b.json", b"2")])
    assert a == content_hash([("b.json", b"2"), ("a.json", b"1")])
    assert a != content_hash([("a.json", b"1"), ("b.json", b"3")])
    assert a != content_hash([("a.json", b"2"), ("b.json", b"1")])
