"""Definitions a hospital can publish: the canonical base is a parameter, ``rebase`` moves every
project URL and nothing else, and ``package_files`` is a FHIR package whose resources validate
(R4B models, the official R4 JSON schema, and the independent FHIR.js validator where node is
installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fhir_mapping.definitions import (
    AI_CONFIDENCE,
    CODE_SYSTEMS,
    DEFAULT_BASE,
    EXTENSIONS,
    IG_DEPENDENCIES,
    check_base,
    definition_files,
    ext_url,
    package_files,
    rebase,
)
from tests.conftest import shared_tool
from tests.fhir_mapping.fhir_checks import assert_valid

BASE = "https://fhir.hospital.test/canoe"


def test_rebase_moves_project_urls_only() -> None:
    value = {
        "url": ext_url("argument"),
        "fullUrl": f"{DEFAULT_BASE}/CarePlan/x-v1",
        "system": "http://snomed.info/sct",
        "text": f"see {DEFAULT_BASE}/CarePlan/x",  # not a URL value: left as written
        "list": [{"reference": f"{DEFAULT_BASE}/Task/t1"}, 0.5, True, None],
        "near": DEFAULT_BASE + "x/y",  # shares the prefix but is not under the base
    }
    out = rebase(value, BASE)
    assert out["url"] == f"{BASE}/StructureDefinition/argument"
    assert out["fullUrl"] == f"{BASE}/CarePlan/x-v1"
    assert out["list"] == [{"reference": f"{BASE}/Task/t1"}, 0.5, True, None]
    assert out["system"] == value["system"] and out["text"] == value["text"]
    assert out["near"] == value["near"]
    assert value["url"] == ext_url("argument"), "the input is not modified"
    assert rebase(out, DEFAULT_BASE, from_base=BASE) == value
    assert rebase(value, DEFAULT_BASE) is value


@pytest.mark.parametrize(
    "bad", ["", "canoe.example.org/fhir", "ftp://x.test/fhir", "https://x.test/f?q=1", "https://"]
)
def test_a_base_must_be_an_absolute_http_url(bad: str) -> None:
    with pytest.raises(ValueError, match="canonical base"):
        check_base(bad)


def test_check_base_drops_the_trailing_slash() -> None:
    assert check_base(BASE + "/") == BASE


def test_the_package_has_a_manifest_an_index_and_every_definition() -> None:
    files = package_files(BASE, name="org.hospital.canoe", version="2.1.0")
    manifest = files["package.json"]
    assert manifest["name"] == "org.hospital.canoe" and manifest["version"] == "2.1.0"
    assert manifest["fhirVersions"] == ["4.0.1"] and manifest["canonical"] == BASE
    assert manifest["dependencies"] == {
        "hl7.fhir.r4.core": "4.0.1",
        "hl7.fhir.uv.aitransparency": "1.0.0-ballot",
    }
    resources = {k: v for k, v in files.items() if not k.endswith("package.json") and k[0] != "."}
    kinds = sorted(r["resourceType"] for r in resources.values())
    assert kinds.count("StructureDefinition") == len(EXTENSIONS)
    assert kinds.count("CodeSystem") == kinds.count("ValueSet") == len(CODE_SYSTEMS)
    index = files[".index.json"]
    assert index["index-version"] == 2
    assert {f["filename"] for f in index["files"]} == set(resources)
    for entry in index["files"]:
        res = resources[entry["filename"]]
        assert (entry["resourceType"], entry["id"], entry["url"]) == (
            res["resourceType"],
            res["id"],
            res["url"],
        )
        assert res["version"] == entry["version"] == "2.1.0"
    text = json.dumps(resources)
    assert DEFAULT_BASE not in text, "no example URL left in a published package"
    for res in resources.values():
        assert str(res["url"]).startswith(f"{BASE}/{res['resourceType']}/")


def test_value_sets_include_their_code_system_under_the_same_base() -> None:
    files = package_files(BASE)
    for cs in CODE_SYSTEMS.values():
        vs, code_system = files[f"ValueSet-{cs.id}.json"], files[f"CodeSystem-{cs.id}.json"]
        assert vs["compose"] == {"include": [{"system": code_system["url"]}]}
        assert code_system["valueSet"] == vs["url"]


@pytest.mark.parametrize("name", sorted(definition_files()))
def test_each_packaged_resource_validates(name: str) -> None:
    assert_valid(package_files(BASE)[name])


def test_the_independent_validator_accepts_the_written_package(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed: the FHIR.js validator cannot run")
    tool = shared_tool("fhir-validate")
    from service.cli import main
    from service.knowledge import knowledge_files

    assert main(["definitions", "--base", BASE, str(tmp_path)]) == 0
    written = sorted((tmp_path / "package").glob("[A-Z]*.json"))
    # The extensions and terminology, plus the knowledge's value sets and criteria.
    assert len(written) == len(definition_files()) + len(knowledge_files(BASE))
    out = subprocess.run(
        [str(tool), *map(str, written)], capture_output=True, text=True, timeout=300
    )
    if out.returncode == 2 and "npm install" in out.stderr:
        pytest.skip(f"fhir-validate could not install FHIR.js: {out.stderr.strip()}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"# {len(written)} file(s), 0 with structural ERRORs" in out.stdout


def _extension_urls(node: object) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for ext in [*node.get("extension", []), *node.get("modifierExtension", [])]:
            if isinstance(ext, dict) and isinstance(ext.get("url"), str):
                found.add(ext["url"])
        for value in node.values():
            found |= _extension_urls(value)
    elif isinstance(node, list):
        for value in node:
            found |= _extension_urls(value)
    return found


def test_every_extension_a_plan_or_definition_uses_is_ours_or_a_declared_package() -> None:
    """A validator loads the package's dependencies: every extension outside our base must
    come from one of them (AIconfidence: the AI Transparency IG)."""
    from service.knowledge import knowledge_files
    from tests.fhir_mapping.test_careplan import _bundle

    _, _, plan = _bundle()
    files = package_files(BASE, extra=knowledge_files(BASE))
    declared = set(files["package.json"]["dependencies"].items())
    urls = _extension_urls(plan) | _extension_urls(list(files.values()))
    assert AI_CONFIDENCE in urls
    for url in urls:
        if "://" not in url or url.startswith((f"{BASE}/", f"{DEFAULT_BASE}/")):
            continue  # a complex extension's part (by name), or one of ours
        canonical = url.split("/StructureDefinition/")[0]
        assert IG_DEPENDENCIES[canonical] in declared, url


def _written_definitions(tmp_path: Path) -> list[Path]:
    from service.cli import main

    assert main(["definitions", "--base", BASE, str(tmp_path)]) == 0
    return sorted((tmp_path / "package").glob("[A-Z]*.json"))


def _schema_errors(written: list[Path]) -> dict[str, object]:
    from tests.fhir_mapping.fhir_checks import schema_errors

    return {
        p.name: found
        for p in written
        if (found := schema_errors(json.loads(p.read_text(encoding="utf-8"))))
    }


def test_the_first_definitions_file_of_each_kind_passes_the_official_r4_schema(
    tmp_path: Path,
) -> None:
    """The fast tier's representative of the check below: one file of each resource type."""
    firsts = {p.name.split("-")[0]: p for p in reversed(_written_definitions(tmp_path))}
    assert {"ActivityDefinition", "PlanDefinition", "ValueSet", "CodeSystem"} <= set(firsts)
    assert _schema_errors(list(firsts.values())) == {}


# Corpus-wide (every file written, about 15 s): the slow tier; the test above stays fast.
@pytest.mark.slow
def test_every_definitions_file_passes_the_official_r4_schema(tmp_path: Path) -> None:
    """What ``canoe definitions`` writes, every file, against HL7's R4 JSON Schema: the
    PlanDefinitions' conditions are ``text/fhirpath`` (``text/plain`` is not an R4
    expression language)."""
    written = _written_definitions(tmp_path)
    assert len(written) > 900
    assert _schema_errors(written) == {}
