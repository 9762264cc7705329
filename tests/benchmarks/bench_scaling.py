"""Benchmark: how planning grows with the record (medicine orders, Patient extensions).

Plans synthetic bundles (``tests.support.large_records``: three interacting medicines repeated
to N orders on a realistic patient) in process on the embedded backend, and prints one row per
size: seconds for parse + profile, for the deliberation, for the output (FHIR CarePlan bundle
and text), the total, and the peak traced memory of one full plan. Run:

    .venv/bin/python -m tests.benchmarks.bench_scaling [--orders 100 500 1000 2500 5000]
        [--extensions 100000]

Not a test: numbers go in the closing note; the target is a curve no steeper than n log n,
5,000 orders under 2 s of deliberation, and 100,000 extensions under 150 MB peak.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
import tracemalloc
from typing import Any

from fhir_mapping.careplan import plan_bundle
from fhir_mapping.ingest import build_profile, parse_bundle
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.knowledge.site import active, install
from service.pipeline import Planner
from service.render import render_plan
from tests.support.large_records import many_extensions, repeated_orders, to_bytes


def one(raw: bytes, planner: Planner) -> dict[str, float]:
    t0 = time.perf_counter()
    profile = build_profile(parse_bundle(raw, max_resources=1_000_000))
    t1 = time.perf_counter()
    result = asyncio.run(planner.plan(profile, plan_id="bench", created="2026-01-01T00:00:00Z"))
    t2 = time.perf_counter()
    plan_bundle(result.deliberation, result.evaluation, recorded="2026-01-01T00:00:00Z")
    render_plan(result.deliberation, result.evaluation)
    t3 = time.perf_counter()
    return {"ingest": t1 - t0, "deliberation": t2 - t1, "output": t3 - t2, "total": t3 - t0}


def peak_mib(raw: bytes, planner: Planner) -> float:
    install(active())  # forgets the cached case analysis, so the plan is made again
    gc.collect()
    tracemalloc.start()
    one(raw, planner)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def row(label: str, bundle: dict[str, Any], planner: Planner) -> None:
    raw = to_bytes(bundle)
    times = one(raw, planner)
    print(
        f"{label:>22s} {len(raw) // 1024:8d} "
        + " ".join(f"{times[k]:8.2f}" for k in ("ingest", "deliberation", "output", "total"))
        + f" {peak_mib(raw, planner):9.1f}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--orders", type=int, nargs="*", default=[100, 200, 300, 1000, 2500, 5000])
    ap.add_argument("--extensions", type=int, nargs="*", default=[100_000])
    args = ap.parse_args()
    evidence = EvidenceBase.load()
    planner = Planner(EmbeddedExperts(evidence.version), evidence)
    one(to_bytes(repeated_orders(3)), planner)  # warm-up: imports, caches
    print(
        f"{'record':>22s} {'KiB':>8s} {'ingest':>8s} {'deliber.':>8s} {'output':>8s} "
        f"{'total s':>8s} {'peak MiB':>9s}"
    )
    for n in args.orders:
        row(f"{n} orders", repeated_orders(n), planner)
    for n in args.extensions:
        row(f"{n} extensions", many_extensions(n), planner)


if __name__ == "__main__":
    main()
