"""Benchmark: ingest (JSON decoding + validation, then the profile) of every fixture bundle.

Prints per bundle the median wall time and the fastest CPU time (``time.process_time``; the
steadier figure on a machine shared with other work) of ``parse_bundle`` and ``build_profile``.
Run:

    .venv/bin/python -m tests.benchmarks.bench_ingest [--repeat 5]

Targets: a typical bundle end to end under 20 ms, the 2 MB bundle under 200 ms. Not a
test: the numbers go in the closing note.
"""

from __future__ import annotations

import argparse
import statistics
import time

from fhir_mapping.ingest import build_profile, parse_bundle
from tests.conftest import FHIR_FIXTURES, REALISTIC_BUNDLES


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    paths = [*REALISTIC_BUNDLES, FHIR_FIXTURES / "bad_huge_many_conditions_2mb.json"]
    parse_bundle(paths[0].read_bytes())  # warm-up: imports, model schemas
    print(f"{'bundle':40s} {'KiB':>5s} {'parse cpu':>10s} {'profile cpu':>11s} {'total cpu':>10s}")
    print(f"{'':46s} {'(wall ms, median)':>34s}")
    for path in paths:
        raw = path.read_bytes()
        rows = []
        for _ in range(args.repeat):
            w0, c0 = time.perf_counter(), time.process_time()
            parsed = parse_bundle(raw, max_resources=100_000)
            c1 = time.process_time()
            build_profile(parsed)
            w2, c2 = time.perf_counter(), time.process_time()
            rows.append((c1 - c0, c2 - c1, c2 - c0, w2 - w0))
        cpu = [min(r[k] for r in rows) * 1000 for k in range(3)]
        wall = statistics.median(r[3] for r in rows) * 1000
        print(
            f"{path.name:40s} {len(raw) // 1024:5d} {cpu[0]:8.1f}ms {cpu[1]:9.1f}ms "
            f"{cpu[2]:8.1f}ms ({wall:.1f})"
        )


if __name__ == "__main__":
    main()
