"""Benchmark: plan time with the shipped knowledge, and with it multiplied by synthetic criteria.

The synthetic criteria are copies of the shipped ones (same parts, points, exceptions and
params, new ids) whose concepts no fixture holds: each copy's drug specs are replaced by
ingredients no fixture takes, and a copy without drugs also asks for a condition group no
fixture has on record (``ever_conditions``). They go in a site overlay folder generated in a
temporary directory (``inference.knowledge.site.load_site``), installed like a site's. With the
trigger index (``inference.knowledge.triggers``) a plan evaluates none of them, so plan time
should barely move. Run:

    .venv/bin/python -m tests.benchmarks.bench_knowledge_scale [--factor 10] [--repeat 5] [--every]

``--every`` evaluates every criterion for every plan (the index bypassed), to compare.

Prints, per knowledge, the criteria count and the median (over the fixtures) of each fixture's
median in-process plan time (parse to output, CPU time, the case-analysis cache cleared before
each plan so the criteria are evaluated every time; the two knowledges take turns plan by
plan), and the growth: the median over the fixtures of each one's ratio of the two.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fhir_mapping.careplan import plan_bundle
from fhir_mapping.ingest import build_profile, parse_bundle
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.knowledge import conditions, drugs, rules
from inference.knowledge.criteria import CRITERIA_DIR
from inference.knowledge.registry import Case
from inference.knowledge.rules import _analyse
from inference.knowledge.site import Knowledge, firing, install, load_site, shipped
from inference.knowledge.triggers import record_concepts
from service.pipeline import Planner
from service.record.profile import PatientProfile
from service.render import render_plan
from tests.conftest import FHIR_FIXTURES, REALISTIC_BUNDLES


def _profiles() -> list[PatientProfile]:
    out = []
    for path in sorted(FHIR_FIXTURES.glob("*.json")):
        try:
            out.append(build_profile(parse_bundle(path.read_bytes(), max_resources=100_000)))
        except Exception:
            continue
    return out


def _unused() -> tuple[list[str], list[str]]:
    """Ingredient names no fixture takes and condition groups none has on record."""
    held: set[str] = set()
    for p in _profiles():
        held |= record_concepts(Case(p))
    names = [d.name for d in drugs.DRUGS if f"drug:{d.name}" not in held]
    groups = [g for g in conditions.GROUPS_BY_KEY if f"ever:{g}" not in held]
    return names, groups


def _synthetic(raw: dict[str, Any], k: int, names: Iterator[str], groups: Iterator[str]) -> Any:
    c = json.loads(json.dumps(raw))
    c["id"] = f"{c['id']}-synthetic-{k}"
    t = c["trigger"]
    if t.get("drugs"):
        t["drugs"] = [f"drug:{next(names)}" for _ in t["drugs"]]
    if not t.get("drugs") or t.get("renal_table") or t.get("pk_table") or t.get("level"):
        t["ever_conditions"] = [next(groups)]
    return c


def write_overlay(folder: Path, factor: int) -> int:
    """Criteria files holding ``factor - 1`` synthetic copies of every shipped criterion."""
    names, groups = _unused()
    name_cycle, group_cycle = itertools.cycle(names), itertools.cycle(groups)
    count = 0
    for path in sorted(CRITERIA_DIR.glob("*.json")):
        doc = json.loads(path.read_text())
        for k in range(1, factor):
            copies = [_synthetic(c, k, name_cycle, group_cycle) for c in doc["criteria"]]
            count += len(copies)
            body = {"description": f"synthetic copies {k} of {path.name}", "criteria": copies}
            (folder / f"synthetic_{k}_{path.name}").write_text(json.dumps(body))
    return count


def plan_time(path: Path, planner: Planner) -> float:
    _analyse.cache_clear()
    t0 = time.process_time()
    profile = build_profile(parse_bundle(path.read_bytes(), max_resources=100_000))
    result = asyncio.run(planner.plan(profile, plan_id="bench", created="2026-01-01T00:00:00Z"))
    plan_bundle(result.deliberation, result.evaluation, recorded="2026-01-01T00:00:00Z")
    render_plan(result.deliberation, result.evaluation)
    return time.process_time() - t0


def measure(
    knowledges: tuple[Knowledge, Knowledge], planner: Planner, repeat: int
) -> list[tuple[float, float]]:
    """Each fixture's median plan time under each knowledge, the two taking turns plan by plan
    so that a change in the machine's load reaches both alike."""
    for k in knowledges:
        install(k)
        plan_time(REALISTIC_BUNDLES[0], planner)  # warm-up: the index, caches
    out = []
    for path in REALISTIC_BUNDLES:
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(repeat):
            for k, got in zip(knowledges, times, strict=True):
                install(k)
                got.append(plan_time(path, planner))
        out.append((statistics.median(times[0]), statistics.median(times[1])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--every", action="store_true", help="evaluate every criterion (no index), to compare"
    )
    args = ap.parse_args()
    if args.every:
        rules.candidates = lambda index, f: index.criteria
    evidence = EvidenceBase.load()
    planner = Planner(EmbeddedExperts(evidence.version), evidence)
    base = shipped()
    with tempfile.TemporaryDirectory() as tmp:
        added = write_overlay(Path(tmp), args.factor)
        grown = load_site(Path(tmp), base)
    try:
        pairs = measure((base, grown), planner, args.repeat)
    finally:
        install(base)
    small = statistics.median(a for a, _ in pairs)
    big = statistics.median(b for _, b in pairs)
    growth = statistics.median(b / a for a, b in pairs) - 1
    print(f"synthetic criteria added: {added}")
    print(f"{'knowledge':10s} {'criteria':>9s} {'median plan (CPU)':>18s}")
    print(f"{'shipped':10s} {len(firing(base)):9d} {small * 1000:16.1f}ms")
    print(f"{f'x{args.factor}':10s} {len(firing(grown)):9d} {big * 1000:16.1f}ms")
    print(f"growth (median over the fixtures of each one's ratio): {growth * 100:+.1f} %")


if __name__ == "__main__":
    main()
