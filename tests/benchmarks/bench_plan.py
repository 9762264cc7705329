"""Benchmark: wall time and peak memory of planning each fixture bundle on the embedded backend.

Split into FHIR parse, profile, deliberation and output (FHIR CarePlan bundle + text), measured
after import. Run:

    .venv/bin/python -m tests.benchmarks.bench_plan [--repeat 3] [--clock cpu] [--gc server]
        [--cold]

``--clock cpu`` times with the process's CPU time instead of the wall clock: on a machine shared
with other work the wall clock also counts the time other processes held the cores.

Prints one row per bundle (median of the repeats) and the peak traced memory of one full plan.
Not a test: numbers go in the closing note, targets are <1 s typical and <5 s for the 2 MB bundle.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from fhir_mapping.careplan import plan_bundle
from fhir_mapping.ingest import build_profile, parse_bundle
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.knowledge.rules import _analyse
from service.pipeline import Planner
from service.render import render_plan
from service.server import GC_YOUNG_THRESHOLD
from tests.conftest import FHIR_FIXTURES, REALISTIC_BUNDLES

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def one(
    path: Path, planner: Planner, clock: Callable[[], float] = time.perf_counter, cold: bool = False
) -> dict[str, float]:
    if cold:
        _analyse.cache_clear()
    raw = path.read_bytes()
    t0 = clock()
    parsed = parse_bundle(raw, max_resources=100_000)
    t1 = clock()
    profile = build_profile(parsed)
    t2 = clock()
    result = asyncio.run(planner.plan(profile, plan_id="bench", created="2026-01-01T00:00:00Z"))
    t3 = clock()
    plan_bundle(result.deliberation, result.evaluation, recorded="2026-01-01T00:00:00Z")
    render_plan(result.deliberation, result.evaluation)
    t4 = clock()
    return {
        "parse": t1 - t0,
        "profile": t2 - t1,
        "deliberation": t3 - t2,
        "output": t4 - t3,
        "total": t4 - t0,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    ap.add_argument(
        "--gc",
        choices=("default", "server"),
        default="default",
        help="server: freeze what start-up loaded and collect young objects less often, "
        "as `canoe serve` does once ready (service/server.py)",
    )
    ap.add_argument(
        "--cold",
        action="store_true",
        help="clear the case-analysis cache before each plan, as for a record not seen before "
        "(repeats of one bundle otherwise reuse its analysis)",
    )
    args = ap.parse_args()
    clock = CLOCKS[args.clock]
    evidence = EvidenceBase.load()
    planner = Planner(EmbeddedExperts(evidence.version), evidence)
    paths = [*REALISTIC_BUNDLES, FHIR_FIXTURES / "bad_huge_many_conditions_2mb.json"]
    one(paths[0], planner)  # warm-up: imports, caches
    if args.gc == "server":
        gc.collect()
        gc.freeze()
        gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    print(
        f"{'bundle':40s} {'KiB':>6s} {'parse':>8s} {'profile':>8s} {'deliber.':>8s} "
        f"{'output':>8s} {'total':>8s} {'peak MiB':>9s}"
    )
    for path in paths:
        runs = [one(path, planner, clock, args.cold) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        tracemalloc.start()
        one(path, planner)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(
            f"{path.name[:40]:40s} {path.stat().st_size // 1024:6d} "
            + " ".join(
                f"{med[k] * 1000:7.1f}ms"
                for k in ("parse", "profile", "deliberation", "output", "total")
            )
            + f" {peak:9.1f}"
        )


if __name__ == "__main__":
    main()
