"""Every StructureDefinition in the package carries a snapshot built over the R4 core Extension
that covers its differential, and both independent validators accept the package as shipped."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fhir_mapping.definitions import EXTENSIONS, package_files
from fhir_mapping.definitions._snapshot import extension_snapshot
from tests.conftest import shared_tool

BASE = "https://fhir.hospital.test/canoe"
STRUCTURES = sorted(
    name for name, res in package_files(BASE).items() if name.startswith("StructureDefinition-")
)


def test_the_package_holds_every_extension() -> None:
    assert len(STRUCTURES) == len(EXTENSIONS) > 0


@pytest.mark.parametrize("name", STRUCTURES)
def test_the_snapshot_covers_the_differential(name: str) -> None:
    sd = package_files(BASE)[name]
    snapshot = sd["snapshot"]["element"]  # type: ignore[index]
    by_id = {e["id"]: e for e in snapshot}
    assert len(by_id) == len(snapshot), "snapshot element ids are unique"
    assert snapshot[0]["id"] == snapshot[0]["path"] == "Extension"
    for d in sd["differential"]["element"]:  # type: ignore[index]
        got = by_id[d["id"]]
        assert got["path"] == d["path"]
        for key, value in d.items():
            assert got[key] == value, (d["id"], key)
    # every element is the core definition's, constrained: each states its base and cardinality
    for e in snapshot:
        assert {"base", "min", "max", "definition"} <= set(e), e["id"]
    assert by_id["Extension.url"]["fixedUri"] == sd["url"]
    assert by_id["Extension.url"]["base"] == {"path": "Extension.url", "min": 1, "max": "1"}


def test_each_slice_carries_the_extension_elements_beneath_it() -> None:
    sd = package_files(BASE)["StructureDefinition-argument.json"]
    ids = [e["id"] for e in sd["snapshot"]["element"]]  # type: ignore[index]
    stance = ids.index("Extension.extension:stance")
    assert ids[stance + 1 : stance + 5] == [
        "Extension.extension:stance.id",
        "Extension.extension:stance.extension",
        "Extension.extension:stance.url",
        "Extension.extension:stance.value[x]",
    ]
    assert ids.index("Extension.extension") < stance < ids.index("Extension.url")


def test_a_differential_element_with_no_place_is_an_error() -> None:
    with pytest.raises(ValueError, match="no place"):
        extension_snapshot([{"id": "Extension.nowhere", "path": "Extension.nowhere"}])


def _written(tmp_path: Path) -> list[str]:
    from service.cli import main

    assert main(["definitions", "--base", BASE, str(tmp_path)]) == 0
    files = sorted((tmp_path / "package").glob("StructureDefinition-*.json"))
    assert len(files) == len(EXTENSIONS)
    return [str(p) for p in files]


@pytest.mark.parametrize(
    ("tool", "args", "summary"),
    [
        ("fhir-validate", (), "0 with structural ERRORs"),
        ("fhir-validate-medplum", ("--strict",), "0 errors, 0 warnings"),
    ],
)
def test_both_validators_accept_the_structure_definitions(
    tmp_path: Path, tool: str, args: tuple[str, ...], summary: str
) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed: the shared FHIR validators cannot run")
    path = shared_tool(tool)
    out = subprocess.run(
        [str(path), *args, *_written(tmp_path)], capture_output=True, text=True, timeout=300
    )
    if out.returncode == 2 and "npm" in out.stderr:
        pytest.skip(f"{tool} could not install its packages: {out.stderr.strip()}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert summary in out.stdout
