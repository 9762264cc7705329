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
