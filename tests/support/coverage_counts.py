"""Uncovered items per plan over every example bundle: what the coverage statement names.

For every bundle of examples/fixtures/fhir and examples/vignettes*/ (the eval cases are the
fixtures), ingest it as ``canoe plan`` does (received at ``CREATED``), compute its coverage and
count the items no check covers (the record items the statement names: medicines, conditions,
problems of recent encounters, results, reports, orders). Prints one line per bundle with
``--each``, then the median and maximum per plan, and the items most often uncovered.

    .venv/bin/python -m tests.support.coverage_counts [--each]
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from datetime import datetime

from fhir_mapping.ingest import ingest
from inference.knowledge.coverage import assess
from service.errors import InputError
from tests.support.plan_hashes import CREATED, ROOT, bundles

# The gap keys of record items no check covers (older releases named two of them apart).
ITEM_KEYS = ("unrecognised-medicine", "unread-condition", "suspected-condition")


def _is_item(key: str) -> bool:
    return key in ITEM_KEYS or key.startswith("uncovered-")


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--each", action="store_true", help="one line per bundle")
    args = parser.parse_args(argv)
    received = datetime.fromisoformat(CREATED)
    counts: list[int] = []
    kinds: Counter[str] = Counter()
    names: Counter[str] = Counter()
    high = said_all_read = 0
    for path in bundles():
        try:
            profile = ingest(path.read_bytes(), received=received)
        except InputError:  # the bad fixtures are refused by design
            continue
        coverage = assess(profile)
        said_all_read += not coverage.gaps  # the statement then says every item is read
        gaps = [g for g in coverage.gaps if _is_item(g.key)]
        counts.append(len(gaps))
        high += any(g.high_risk for g in gaps)
        kinds.update(g.key for g in gaps)
        names.update(g.label for g in gaps if g.key != "uncovered-result")
        if args.each:
            print(f"{len(gaps):4d}  {path.relative_to(ROOT)}")
    print(
        f"plans {len(counts)}; uncovered items per plan: median {statistics.median(counts):g}, "
        f"max {max(counts)}, total {sum(counts)}; plans with a high-risk uncovered item {high}; "
        f"plans whose statement says every item is read {said_all_read}"
    )
    print("by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print("most often: " + "; ".join(f"{k} ({n})" for k, n in names.most_common(15)))
    return 0


if __name__ == "__main__":
    raise SystemExit(run())
