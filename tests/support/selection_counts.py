"""Counts of the plan selection over every example bundle (the plan-hash set:
examples/fixtures/fhir, which examples/eval plans as well, and examples/vignettes*/), planned
in-process on the embedded backend:

- incompatible included pairs (two included options acting on one medicine with incompatible
  action kinds), among the options the score or a human included ("before": without the
  selection) and in the plan as evaluated ("after");
- options excluded since they treat only rejected problems, and options carrying an accepted
  problem's decision path.

    .venv/bin/python -m tests.support.selection_counts
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from service.app import request_time
from service.core import evaluate_option
from service.core.selection import incompatible_pairs
from service.errors import CanoeError
from service.pipeline import Planner
from tests.support.plan_hashes import CREATED, ROOT, bundles


@dataclass(slots=True)
class Counts:
    plans: int = 0
    refused: int = 0  # bundles the ingest refuses (the bad fixtures)
    pairs_before: int = 0
    plans_before: list[str] = field(default_factory=list)
    pairs_after: int = 0
    plans_after: list[str] = field(default_factory=list)
    gated: int = 0
    plans_gated: list[str] = field(default_factory=list)
    with_paths: int = 0


async def count() -> Counts:
    planner = Planner(EmbeddedExperts(), EvidenceBase.load())
    c = Counts()
    for path in bundles():
        name = str(path.relative_to(ROOT))
        try:
            profile = ingest(path.read_bytes(), received=request_time(CREATED))
        except CanoeError:
            c.refused += 1
            continue
        result = await planner.plan(profile, plan_id="count", created=CREATED)
        d, ev = result.deliberation, result.evaluation
        c.plans += 1
        scored = [evaluate_option(o, d.parameters) for o in d.options]
        before, after = (
            incompatible_pairs(d.options, scored),
            incompatible_pairs(d.options, ev.options),
        )
        c.pairs_before += len(before)
        c.pairs_after += len(after)
        c.plans_before += [name] if before else []
        c.plans_after += [name] if after else []
        gated = sum(1 for r in ev.options if r.decided_by == "problems")
        c.gated += gated
        c.plans_gated += [name] if gated else []
        c.with_paths += sum(1 for r in ev.options if r.problems)
    return c


def main() -> int:
    c = asyncio.run(count())
    print(f"{c.plans} plans ({c.refused} bundles refused at ingest)")
    print(f"incompatible included pairs before selection: {c.pairs_before}", end="")
    print(f" in {len(c.plans_before)} plans")
    for name in c.plans_before:
        print(f"  {name}")
    print(f"incompatible included pairs after selection: {c.pairs_after}", end="")
    print(f" in {len(c.plans_after)} plans")
    print(f"options excluded as treating only rejected problems: {c.gated}", end="")
    print(f" in {len(c.plans_gated)} plans")
    print(f"options carrying an accepted problem's decision path: {c.with_paths}")
    return 1 if c.pairs_after else 0


if __name__ == "__main__":
    sys.exit(main())
