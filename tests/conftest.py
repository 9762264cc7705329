"""Shared test fixtures: where the read-only shared fixtures live, and bundle loading."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CANOE_SHARED_DIR", REPO_ROOT.parent / "shared")).resolve()
FHIR_FIXTURES = SHARED / "fixtures" / "fhir"
CDS_FIXTURES = SHARED / "fixtures" / "cds-hooks"
FHIR_SCHEMA = SHARED / "fixtures" / "schema" / "fhir.schema.json"

REALISTIC_BUNDLES = sorted(p for p in FHIR_FIXTURES.glob("*.json") if not p.name.startswith("bad_"))
BAD_BUNDLES = sorted(FHIR_FIXTURES.glob("bad_*.json"))


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared fixtures not found at {SHARED}; set CANOE_SHARED_DIR")
    return SHARED


def fixture_bundle(name: str) -> Path:
    """Path of a realistic bundle by the start of its file name, e.g. 'adalberto'."""
    matches = [p for p in REALISTIC_BUNDLES + BAD_BUNDLES if p.name.startswith(name)]
    if len(matches) != 1:
        raise LookupError(f"{name!r} matches {len(matches)} fixture bundles")
    return matches[0]
