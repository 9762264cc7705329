"""Benchmark: the cyclic garbage collector's pauses while planning, with and without freezing
what start-up loaded (``gc.freeze()``, as ``canoe serve`` does once it is ready).

A full (generation 2) collection walks every object the process holds, the knowledge tables
included; the pause lands on whichever plan is in flight and shows as the served p99. Each mode
runs in a fresh process so that neither inherits the other's heap:

    .venv/bin/python -m tests.benchmarks.bench_gc_pause [--rounds 6]

Prints, per mode and generation, the number of collections, the longest pause and their total.
Not a test: numbers go in the closing note.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any


def _measure(freeze: bool, rounds: int) -> Mapping[int, list[float]]:
    from inference.embedded import EmbeddedExperts
    from inference.evidence import EvidenceBase
    from service.pipeline import Planner
    from tests.benchmarks.bench_plan import one
    from tests.conftest import REALISTIC_BUNDLES

    evidence = EvidenceBase.load()
    planner = Planner(EmbeddedExperts(evidence.version), evidence)
    one(REALISTIC_BUNDLES[0], planner)  # warm: what a served process has loaded when ready
    if freeze:
        gc.collect()
        gc.freeze()
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started = [0.0]

    def timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[info["generation"]].append(time.perf_counter() - started[0])

    gc.callbacks.append(timed)
    for _ in range(rounds):
        for path in REALISTIC_BUNDLES:
            one(path, planner)
    gc.callbacks.remove(timed)
    return pauses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="times over the fixtures")
    parser.add_argument("--mode", choices=("freeze", "plain"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode is None:  # one fresh process per mode
        for mode in ("plain", "freeze"):
            cmd = [
                sys.executable,
                "-m",
                __spec__.name,
                "--mode",
                mode,
                "--rounds",
                str(args.rounds),
            ]
            subprocess.run(cmd, check=True)
        return
    pauses = _measure(args.mode == "freeze", args.rounds)
    for generation, got in pauses.items():
        longest = max(got, default=0.0) * 1000.0
        print(
            f"{args.mode:6s} generation {generation}: {len(got):4d} collections, "
            f"longest {longest:6.1f} ms, total {sum(got) * 1000.0:6.0f} ms"
        )


if __name__ == "__main__":
    main()
