"""Shared test fixtures: where the committed public fixtures live, and bundle loading.

The public FHIR bundles, CDS Hooks examples and the FHIR R4 JSON Schema the tests use are
committed under ``examples/fixtures`` (sources and licences in its SOURCES.md), so a fresh clone
runs the suite on its own. Only the two external FHIR validators live outside the repository
(``CANOE_SHARED_DIR``, by default ``../shared``); tests that run them skip, naming the path, when
they are not there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CANOE_SHARED_DIR", REPO_ROOT.parent / "shared")).resolve()
FIXTURES = REPO_ROOT / "examples" / "fixtures"
FHIR_FIXTURES = FIXTURES / "fhir"
CDS_FIXTURES = FIXTURES / "cds-hooks"
FHIR_SCHEMA = FIXTURES / "schema" / "fhir.schema.json"

REALISTIC_BUNDLES = sorted(p for p in FHIR_FIXTURES.glob("*.json") if not p.name.startswith("bad_"))
BAD_BUNDLES = sorted(FHIR_FIXTURES.glob("bad_*.json"))


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def shared_tool(name: str) -> Path:
    """An external FHIR validator from the shared tools folder, or a skip that names the path."""
    tool = SHARED / "tools" / name
    if not tool.is_file():
        pytest.skip(f"{name} not found at {tool} (the shared tools folder; set CANOE_SHARED_DIR)")
    return tool


def fixture_bundle(name: str) -> Path:
    """Path of a realistic bundle by the start of its file name, e.g. 'adalberto'."""
    matches = [p for p in REALISTIC_BUNDLES + BAD_BUNDLES if p.name.startswith(name)]
    if len(matches) != 1:
        raise LookupError(f"{name!r} matches {len(matches)} fixture bundles")
    return matches[0]


# The slow tier (`python3.11 dev.py test` runs both tiers; `--fast` only the other one): tests
# that build the image, render the chart, start real external servers, a browser or several
# `canoe serve` processes, use PostgreSQL, or write long histories. Chosen from the durations
# of a full run (`pytest --durations=60`).
SLOW_MARKERS = frozenset({"image", "helm", "integration", "llm", "benchmark"})
SLOW_FILES = frozenset(
    {
        "tests/review/test_browser.py",
        "tests/review/test_smart_launcher.py",
        "tests/review/test_review_workers.py",
        "tests/service/test_workers.py",
        "tests/service/test_store_history.py",
        "tests/service/test_lifecycle.py",
        "tests/service/test_cds_sandbox.py",
        "tests/service/test_serve_defaults.py",
        "tests/cds_hooks/test_replicas.py",
        "tests/test_dev_browser.py",
        "tests/test_compose.py",
        "tests/test_extras.py",
        "tests/test_lock.py",
    }
)


# The sweep tier: a bundle sweep holds a property of every example record. It is a test
# parametrised over the example bundles (a bundle file or a folder of them under examples/: every
# fixture, every vignette), or one marked `bundle_sweep` whose cases name the bundles otherwise
# or each run over every bundle. The fast tier keeps the first SWEEP_KEPT cases of each sweep, in
# its own order, as the representatives (the same few records for every sweep over bundles, so
# their plans are made once); the rest are marked `sweep` and run with the whole suite or
# `pytest -m sweep`.
EXAMPLES = REPO_ROOT / "examples"
SWEEP_KEPT = 2


def _swept(item: pytest.Item) -> object | None:
    """What this case of a bundle sweep sweeps over (an example bundle or folder, or the
    case's id in a declared sweep), or None when the case belongs to no sweep."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    for value in callspec.params.values():
        if isinstance(value, Path) and value.resolve().is_relative_to(EXAMPLES):
            return value
    return callspec.id if item.get_closest_marker("bundle_sweep") else None


def _mark_sweeps(items: list[pytest.Item]) -> None:
    kept: dict[tuple[Path, str], list[object]] = {}
    for item in items:
        swept = _swept(item)
        if swept is None:
            continue
        seen = kept.setdefault((item.path, getattr(item, "originalname", item.name)), [])
        if swept not in seen and len(seen) < SWEEP_KEPT:
            seen.append(swept)
        if swept not in seen:
            item.add_marker(pytest.mark.sweep)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.relative_to(REPO_ROOT).as_posix()
        marks = {mark.name for mark in item.iter_markers()}
        if path in SLOW_FILES or marks & SLOW_MARKERS or "postgres" in item.nodeid.lower():
            item.add_marker(pytest.mark.slow)
    _mark_sweeps(items)
