"""The reasoning core stays pure and holds only the reasoning: walks the imports of every module
under service/core (and of the patient record and the plan's text above it), and lists the core's
modules, so a record type, a vocabulary or English text cannot move back in unnoticed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import service.core
import service.record
import service.text

CORE = Path(service.core.__file__).parent
# The reasoning and nothing else: A-QBAF (qbaf, _vector), arena calibration, the CAMP router,
# contestation, plan evaluation, its results and selection, the deliberation model and its
# exported document with the document's JSON Schema, and the memo that writes a plan's shared
# contestation records once (memo). The patient record is service.record; the plan's text is
# service.text.
REASONING = {
    "__init__.py",
    "_vector.py",
    "arbitration.py",
    "arena.py",
    "contest.py",
    "document.py",
    "evaluation.py",
    "memo.py",
    "model.py",
    "qbaf.py",
    "results.py",
    "router.py",
    "selection.py",
    "deliberation.schema.json",
}
BANNED = {
    "grpc",
    "fhir",
    "fhir_mapping",
    "tritonclient",
    "structlog",
    "opentelemetry",
    "logging",
    "time",
    "random",
    "socket",
    "os",
    "subprocess",
    "inference",
    "proto",
}
ALLOWED_PROJECT = ("service.core", "service.errors")


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append("service.core." + (node.module or ""))
            else:
                found.append(node.module or "")
                found += [f"{node.module}.{a.name}" for a in node.names]
    return found


def test_core_holds_only_the_reasoning() -> None:
    held = {p.name for p in CORE.iterdir() if p.name != "__pycache__"}
    assert held == REASONING


def impure(folder: Path, allowed: tuple[str, ...]) -> list[str]:
    """Every import under ``folder`` of a banned library or of a project module outside
    ``allowed``."""
    bad = []
    for path in sorted(folder.glob("*.py")):
        for name in imports(path):
            root = name.split(".")[0]
            if root in BANNED:
                bad.append(f"{path.name}: {name}")
            if root == "service" and not name.startswith(allowed) and name != "service":
                bad.append(f"{path.name}: {name}")
    return bad


def test_core_imports_nothing_impure_or_outside_itself() -> None:
    assert not (bad := impure(CORE, ALLOWED_PROJECT)), bad


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        (service.record, ("service.record", *ALLOWED_PROJECT)),
        (service.text, ("service.text", "service.record", *ALLOWED_PROJECT)),
    ],
    ids=["record", "text"],
)
def test_record_and_text_are_pure_and_import_only_downwards(
    package: ModuleType, allowed: tuple[str, ...]
) -> None:
    folder = Path(str(package.__file__)).parent
    assert not (bad := impure(folder, allowed)), bad


def test_core_reads_its_schema_only_when_a_document_is_checked() -> None:
    """The one file the core opens is its packaged JSON Schema, and only on first use: importing
    the core reads nothing."""
    code = (
        "import service.core, service.core.document as d; "
        "before = d._schema_text.cache_info().currsize; d.deliberation_schema(); "
        "print(before, d._schema_text.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "1"]
    readers = [p.name for p in sorted(CORE.glob("*.py")) if "importlib" in p.read_text("utf-8")]
    assert readers == ["document.py"]


@pytest.mark.parametrize("package", [service.core, service.record, service.text])
def test_reads_no_clock(package: ModuleType) -> None:
    for path in sorted(Path(str(package.__file__)).parent.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for needle in (".now(", "utcnow", ".today(", "perf_counter", "time()"):
            assert needle not in text, f"{path.name} uses {needle}"


def test_the_walker_would_catch_a_violation(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("import logging\nfrom service.pipeline import run\nfrom os import path\n")
    names = imports(f)
    assert "logging" in names and "service.pipeline" in names and "os" in names


def test_the_walker_would_catch_the_record_in_the_core(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("from service.record.profile import PatientProfile\n")
    assert "x.py: service.record.profile" in impure(tmp_path, ALLOWED_PROJECT)
