"""The reasoning core stays pure: walks the imports of every module under service/core."""

from __future__ import annotations

import ast
from pathlib import Path

import service.core

CORE = Path(service.core.__file__).parent
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


def test_core_modules_exist() -> None:
    assert len(list(CORE.glob("*.py"))) >= 7


def test_core_imports_nothing_impure_or_outside_itself() -> None:
    bad = []
    for path in sorted(CORE.glob("*.py")):
        for name in imports(path):
            root = name.split(".")[0]
            if root in BANNED:
                bad.append(f"{path.name}: {name}")
            if root == "service" and not name.startswith(ALLOWED_PROJECT) and name != "service":
                bad.append(f"{path.name}: {name}")
    assert not bad, bad


def test_core_reads_no_clock() -> None:
    for path in sorted(CORE.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for needle in (".now(", "utcnow", ".today(", "perf_counter", "time()"):
            assert needle not in text, f"{path.name} uses {needle}"


def test_the_walker_would_catch_a_violation(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("import logging\nfrom service.pipeline import run\nfrom os import path\n")
    names = imports(f)
    assert "logging" in names and "service.pipeline" in names and "os" in names
