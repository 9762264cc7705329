"""What a CDS patient-view hook no longer pays per plan, on a fixture plan: the Bundle's trip
through bytes and back, and re-reading, re-evaluating and re-summarising the document the plan
just wrote (the summary card now renders from the plan's own typed result).

    .venv/bin/python -m tests.benchmarks.bench_cds_hook
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from service.core import evaluate, from_document
from service.jsonio import dump_json, load_json_object
from service.text.summary import summarise
from tests.examples.make_tasks import fixture_plan


def _ms(fn: Callable[[], object], repeat: int = 30) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def main() -> None:
    bundle, doc = fixture_plan()

    def reread() -> object:
        d = from_document(doc)
        return summarise(d, evaluate(d))

    trip = _ms(lambda: load_json_object(dump_json(bundle), what="Bundle"))
    again = _ms(reread)
    print(f"bytes round trip of a plan-sized Bundle: {trip:.2f} ms (median)")
    print(f"from_document + evaluate + summarise:     {again:.2f} ms (median)")
    print(f"saved per patient-view hook:              {trip + again:.2f} ms")


if __name__ == "__main__":
    main()
