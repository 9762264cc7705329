"""Benchmark: time to analyse one profile with the knowledge base (typed facts, every criterion,
the rule functions), per realistic fixture, after ingest. Target < 50 ms for the largest.

    .venv/bin/python -m tests.benchmarks.bench_analyse [--repeat 20]

``analyse`` is cached per profile value elsewhere; here the cache is bypassed by calling the
uncached function on a fresh profile each round. Not a test: numbers go in the closing note.
Also prints, per fixture, the criteria that fired (for the note).
"""

from __future__ import annotations

import argparse
import statistics
import time

from fhir_mapping.ingest import ingest
from inference.knowledge import rules
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.facts import Facts
from tests.conftest import REALISTIC_BUNDLES


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    analyse = getattr(rules.analyse, "__wrapped__", rules.analyse)
    print(f"{len(rules.CRITERIA)} criteria")
    print(f"{'fixture':40} {'KB':>6} {'median ms':>10} {'criteria ms':>12}  fired")
    for path in sorted(REALISTIC_BUNDLES, key=lambda p: p.stat().st_size):
        data = path.read_bytes()
        profile = ingest(data)
        times, crit_times = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            analyse(profile)
            times.append((time.perf_counter() - t0) * 1000)
            t1 = time.perf_counter()
            firings = evaluate(rules.CRITERIA, Facts(profile))
            crit_times.append((time.perf_counter() - t1) * 1000)
        fired = sorted({f.criterion.id for f in firings})
        print(
            f"{path.stem:40} {len(data) // 1024:>6} {statistics.median(times):>10.1f} "
            f"{statistics.median(crit_times):>12.1f}  {', '.join(fired)}"
        )


if __name__ == "__main__":
    main()
