"""Cost of the drug and condition tables (pytest-benchmark; disabled by default, so the normal
suite runs each once as a smoke check). Measure with:

    .venv/bin/pytest tests/benchmarks/test_vocab_bench.py --benchmark-enable -s

What is measured: validating and building both YAML tables (paid once at start-up), and
recognising every MedicationRequest and Condition of the fixtures with the lookup caches cleared
(a first sight of each record, as for a new patient).
"""

from __future__ import annotations

from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference.knowledge import conditions, drugs

from ..conftest import FHIR_FIXTURES

pytestmark = pytest.mark.benchmark

PROFILES = [
    ingest(p.read_bytes())
    for p in sorted(FHIR_FIXTURES.glob("*.json"))
    if not p.name.startswith("bad_")
]
MEDS = [m for p in PROFILES for m in p.medications]
PROBLEMS = [pr for p in PROFILES for pr in p.problems]


def test_load_both_tables(benchmark: Any) -> None:
    table = benchmark(lambda: (drugs.load_drugs(), conditions.load_conditions()))
    assert len(table[0].drugs) == len(drugs.DRUGS)


def test_identify_every_fixture_medication_cold(benchmark: Any) -> None:
    def run() -> int:
        drugs._from_text.cache_clear()
        return sum(len(drugs.identify(m)) for m in MEDS)

    assert benchmark(run) >= len(MEDS) - 14


def test_classify_every_fixture_condition_cold(benchmark: Any) -> None:
    def run() -> int:
        conditions._classify.cache_clear()
        return sum(1 for pr in PROBLEMS if conditions.classify(pr))

    assert benchmark(run) == len(PROBLEMS)  # every fixture Condition falls in a group
