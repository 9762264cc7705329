"""One FHIR release, pinned in one place (STYLE item 4).

Only ``fhir_mapping/r4.py`` may import ``fhir.resources``, and only its ``R4B`` models:
fhir.resources 7+ defaults to R5, and a stray ``from fhir.resources.patient import Patient``
would silently speak R5 to R4 EHRs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fhir_mapping import r4
from tests.conftest import REPO_ROOT

PACKAGES = ("service", "fhir_mapping", "inference")
PINNED = Path("fhir_mapping/r4.py")


def _fhir_imports(source: str) -> list[str]:
    """Every module name under ``fhir`` that ``source`` imports, statically or by name."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "fhir"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "fhir":
                if node.module == "fhir":  # "from fhir import resources"
                    found += [f"fhir.{a.name}" for a in node.names]
                else:
                    found.append(node.module)
        elif isinstance(node, ast.Call) and node.args:
            # importlib.import_module("fhir.resources.x") / __import__("fhir.resources")
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            arg = node.args[0]
            if (
                name in ("import_module", "__import__")
                and isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
                and arg.value.split(".")[0] == "fhir"
            ):
                found.append(arg.value)
    return found


def violations(rel_path: Path, source: str) -> list[str]:
    out = []
    for mod in _fhir_imports(source):
        if rel_path != PINNED:
            out.append(f"{rel_path}: imports {mod}; import FHIR models from fhir_mapping.r4")
        elif mod != "fhir.resources.R4B" and not mod.startswith("fhir.resources.R4B."):
            out.append(f"{rel_path}: imports {mod}; only fhir.resources.R4B is allowed")
    return out


def _sources() -> list[Path]:
    files = []
    for pkg in PACKAGES:
        files += sorted((REPO_ROOT / pkg).rglob("*.py"))
    return files


def test_only_r4_module_imports_fhir_resources() -> None:
    files = _sources()
    assert any(f.relative_to(REPO_ROOT) == PINNED for f in files)
    problems: list[str] = []
    for f in files:
        problems += violations(f.relative_to(REPO_ROOT), f.read_text(encoding="utf-8"))
    assert problems == []


def test_pinned_module_really_imports_r4b() -> None:
    mods = _fhir_imports((REPO_ROOT / PINNED).read_text(encoding="utf-8"))
    assert mods and all(m.startswith("fhir.resources.R4B") for m in mods)
    assert r4.Patient.__module__.startswith("fhir.resources.R4B.")
    assert r4.FHIR_VERSION.startswith("4.")


@pytest.mark.parametrize(
    ("path", "source", "bad"),
    [
        ("service/x.py", "import fhir.resources.R4B.patient", True),
        ("service/x.py", "from fhir.resources.R4B.patient import Patient", True),
        ("inference/x.py", "from fhir.resources import construct_fhir_element", True),
        ("inference/x.py", "from fhir import resources", True),
        ("service/x.py", "import importlib\nimportlib.import_module('fhir.resources.R4B')", True),
        ("service/x.py", "__import__('fhir.resources')", True),
        ("fhir_mapping/r4.py", "from fhir.resources.patient import Patient", True),
        ("fhir_mapping/r4.py", "from fhir.resources.R5.patient import Patient", True),
        ("fhir_mapping/r4.py", "import fhir.resources", True),
        ("fhir_mapping/r4.py", "from fhir.resources.R4B.patient import Patient", False),
        ("service/x.py", "from fhir_mapping.r4 import Patient", False),
        ("service/x.py", "from .fhir import resources", False),
    ],
)
def test_checker_catches_stray_imports(path: str, source: str, bad: bool) -> None:
    assert bool(violations(Path(path), source)) is bad


@pytest.mark.parametrize(
    "name", ["Patient", "Bundle", "MedicationRequest", "CarePlan", "Task", "OperationOutcome"]
)
def test_get_model_maps_resource_types(name: str) -> None:
    klass = r4.get_model(name)
    assert klass.__name__ == name
    assert klass.__module__.startswith("fhir.resources.R4B.")
    assert r4.is_resource_type(name)


@pytest.mark.parametrize(
    "name", ["MedicationOrder", "Coding", "Resource", "DomainResource", "patient", "", "Patient "]
)
def test_get_model_refuses_non_resources_with_keyerror(name: str) -> None:
    with pytest.raises(KeyError):
        r4.get_model(name)
    assert not r4.is_resource_type(name)


def test_get_model_refuses_non_strings() -> None:
    with pytest.raises(KeyError):
        r4.get_model(42)  # type: ignore[arg-type]


def _names_used_from_r4() -> set[str]:
    """Every name the packages or the tests take from ``fhir_mapping.r4`` by name: ``r4.X`` or
    imported."""
    used: set[str] = set()
    for f in [*_sources(), *sorted((REPO_ROOT / "tests").rglob("*.py"))]:
        if f.relative_to(REPO_ROOT) == PINNED:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "r4":
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and node.module == "fhir_mapping.r4":
                used |= {a.name for a in node.names}
    return used


def test_every_exported_resource_type_is_used() -> None:
    """Resource types are re-exported only when a module or test names them; datatypes and backbone
    elements stay for ``fhir_mapping.ingest``, which looks them up here by name."""
    used = _names_used_from_r4()
    resources = {
        name
        for name in r4.__all__
        if isinstance(getattr(r4, name), type) and issubclass(getattr(r4, name), r4.Resource)
    }
    assert {"Patient", "Bundle", "Task"} <= resources
    assert resources <= used, sorted(resources - used)
    assert {n for n in used if n[0].isupper()} <= set(r4.__all__)
