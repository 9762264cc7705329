"""Measure the clinician summary over every example bundle: line length and routine items on top.

Plans each bundle of examples/fixtures/fhir and examples/vignettes*/ in process on the embedded
backend (at the plan-hash time, so the numbers are repeatable) and prints:

* the length in characters of the summary's ranked lines: median, 90th centile and longest;
* how many plans rank a routine item (an activity whose urgency class is ``routine``: due
  vaccinations, screening, generic reviews) among their first three lines; of those, how many
  have three or more other lines (the routine item crowds out a real problem there), and how
  many rank a routine line above a line that is not routine.

    .venv/bin/python -m tests.benchmarks.summary_lines [--locale us] [--dump DIR]

``--dump DIR`` also writes each plan's summary text to DIR, to compare two versions by eye.
Not a test: the numbers go in the closing note of a change to the summary.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from pathlib import Path

from fhir_mapping.ingest import ingest
from service.app import request_time
from service.backends import build_planner
from service.errors import InputError
from service.pipeline import new_plan_id
from service.settings import load_settings
from service.text.summary import summarise, summary_text
from tests.support.plan_hashes import CREATED, ROOT, bundles

TOP = 3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locale", choices=("uk", "us"), default="uk")
    ap.add_argument("--dump", type=Path, default=None)
    args = ap.parse_args()
    settings = load_settings(environ={"CANOE_LOCALE": args.locale})
    planner = build_planner(settings)
    lengths: list[int] = []
    plans = routine_on_top = crowding = above = 0
    for path in bundles():
        bundle = path.read_bytes()
        try:
            profile = ingest(
                bundle, received=request_time(CREATED), clock_skew=settings.fhir.clock_skew
            )
        except InputError:
            continue  # the bad fixtures: no plan to summarise
        result = asyncio.run(planner.plan(profile, plan_id=new_plan_id(bundle), created=CREATED))
        d, ev = result.deliberation, result.evaluation
        s = summarise(d, ev)
        plans += 1
        lengths += [len(line.text()) for line in s.lines]
        routine = [line.urgency_class == "routine" for line in s.lines]
        routine_on_top += any(routine[:TOP])
        crowding += any(routine[:TOP]) and routine.count(False) >= TOP
        above += any(r and not later for k, r in enumerate(routine) for later in routine[k + 1 :])
        if args.dump is not None:
            args.dump.mkdir(parents=True, exist_ok=True)
            name = str(path.relative_to(ROOT)).replace("/", "__").removesuffix(".json")
            (args.dump / f"{name}.txt").write_text(summary_text(d, ev, s) + "\n")
    cuts = statistics.quantiles(lengths, n=10)
    print(f"plans {plans}, summary lines {len(lengths)} (locale {args.locale})")
    print(
        f"line length: median {statistics.median(lengths):.0f}, p90 {cuts[-1]:.0f}, "
        f"max {max(lengths)} characters"
    )
    print(f"plans with a routine item in the first {TOP} lines: {routine_on_top} of {plans}")
    print(f"  ... though {TOP} or more lines are not routine: {crowding}")
    print(f"plans with a routine line above one that is not: {above}")


if __name__ == "__main__":
    main()
