"""Measure time and wording in the plans of every example bundle (issue 36's numbers).

Plans each bundle of examples/fixtures/fhir and examples/vignettes*/ in process on the embedded
backend, at the plan-hash time so the numbers repeat, and prints:

* the summary's line length in characters: median, 90th centile, longest, and lines longer
  than ``LINE_MAX``;
* lines whose deciding fact is not whole in the line as shown (cut before the fact);
* plans whose heading counts another number of lines than it shows;
* actions whose title still asks to "review", and the share of those the knowledge states as a
  review (action kind ``review``);
* the share of the included actions per timeframe (``TIMEFRAMES``);
* for every plan with a transition action (a recent hospital stay) and every bundle of
  examples/vignettes6 (the post-discharge set): the summary rank of the first transition
  action and of the first routine monitoring line (category ``monitoring``, not a transition).

    .venv/bin/python -m tests.benchmarks.plan_time [--locale us]

Not a test: the numbers go in the closing note of a change to ranking or wording.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
from collections import Counter
from pathlib import Path

from fhir_mapping.ingest import ingest
from service.app import request_time
from service.backends import build_planner
from service.core.model import TIMEFRAMES, Deliberation, Option
from service.errors import InputError
from service.pipeline import new_plan_id
from service.settings import load_settings
from service.text.summary import LINE_MAX, MAX_LINES, _by_problem, summarise, summary_text
from tests.support.plan_hashes import CREATED, ROOT, bundles

_SHOWN = re.compile(r"in (\d+) lines? shown")
_NUMBERED = re.compile(r"^\d+\. ", re.MULTILINE)


def _line_of(options: list[Option], pick: str) -> int | None:
    """The summary line (1-based) that holds the first option with id ``pick``."""
    for k, group in enumerate(_by_problem(options, MAX_LINES), 1):
        if any(o.id == pick for o in group):
            return k
    return None


def _discharge(d: Deliberation, plan: list[Option], path: Path) -> str | None:
    transition = next((o for o in plan if o.transition), None)
    if transition is None and path.parent.name != "vignettes6":
        return None
    monitoring = next((o for o in plan if o.category == "monitoring" and not o.transition), None)

    def where(o: Option | None) -> str:
        if o is None:
            return "none"
        line = _line_of(plan, o.id)
        shown = f"line {line}" if line is not None else "not shown"
        return f"{shown} ({o.timeframe}: {o.title[:60]})"

    name = path.relative_to(ROOT / "examples")
    return f"  {name}: transition {where(transition)}; routine monitoring {where(monitoring)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locale", choices=("uk", "us"), default="uk")
    args = ap.parse_args()
    settings = load_settings(environ={"CANOE_LOCALE": args.locale})
    planner = build_planner(settings)
    lengths: list[int] = []
    cut = header = plans = review_titles = review_kind = 0
    frames: Counter[str] = Counter()
    discharge: list[str] = []
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
        texts = [line.text() for line in s.lines]
        lengths += [len(t) for t in texts]
        pairs = zip(s.lines, texts, strict=True)
        cut += sum(bool(line.fact) and line.fact not in t for line, t in pairs)
        text = summary_text(d, ev, s)
        said = _SHOWN.search(text)
        header += said is not None and int(said[1]) != len(_NUMBERED.findall(text))
        options = {o.id: o for o in d.options}
        plan = [options[i] for i in ev.plan]
        frames.update(o.timeframe or "none" for o in plan)
        reviews = [o for o in plan if o.title.startswith("Review")]
        review_titles += len(reviews)
        review_kind += sum(o.action == "review" for o in reviews)
        line = _discharge(d, plan, path)
        if line is not None:
            discharge.append(line)
    cuts = statistics.quantiles(lengths, n=10)
    total = sum(frames.values())
    print(f"plans {plans}, summary lines {len(lengths)}, included actions {total}")
    print(
        f"line length: median {statistics.median(lengths):.0f}, p90 {cuts[-1]:.0f}, "
        f"max {max(lengths)} characters; over {LINE_MAX}: {sum(n > LINE_MAX for n in lengths)}"
    )
    print(f"lines cut before the deciding fact: {cut}")
    print(f"plans whose heading counts other than the lines shown: {header}")
    print(f"included actions titled 'Review...': {review_titles} ({review_kind} of kind review)")
    shares = ", ".join(
        f"{tf} {frames[tf]} ({100 * frames[tf] / total:.1f}%)"
        for tf in (*TIMEFRAMES, "none")
        if frames[tf] or tf != "none"
    )
    print(f"actions per timeframe: {shares}")
    print(f"post-discharge plans ({len(discharge)}): rank of the first transition action and")
    print("of the first routine monitoring line in the summary")
    print("\n".join(discharge))


if __name__ == "__main__":
    main()
