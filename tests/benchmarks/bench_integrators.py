"""What the integrator features cost, per fixture plan: moving a plan Bundle to a deployment's
canonical base (``rebase``, paid on every served plan when CANOE_FHIR_BASE is set) and the
auditor's comparison behind ``recompute --check``.

    .venv/bin/python -m tests.benchmarks.bench_integrators
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from fhir_mapping.definitions import rebase
from service.audit import differences
from service.core import recompute_document
from tests.examples.make_tasks import fixture_plan

BASE = "https://fhir.hospital.test/canoe"


def _ms(fn: Callable[[], object], repeat: int = 50) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times), max(times)


def main() -> None:
    bundle, doc = fixture_plan()
    size = len(json.dumps(bundle))
    recomputed = recompute_document(doc)
    for name, fn in (
        ("rebase(plan Bundle)", lambda: rebase(bundle, BASE)),
        ("differences(document)", lambda: differences(doc, recomputed)),
        ("recompute_document", lambda: recompute_document(doc)),
    ):
        median, worst = _ms(fn)
        print(f"{name:<24} median {median:7.3f} ms   max {worst:7.3f} ms")
    print(f"plan Bundle: {size} bytes of JSON, {len(bundle['entry'])} entries")


if __name__ == "__main__":
    main()
