"""Whether a contested version's synthesis still tells the truth, over every example bundle.

For each plan (embedded backend, in-process), the strongest live supporting argument of the top
activity is rejected, one contestation at a time, until another activity tops the plan (or none
is left to reject). The version where the top flipped is then read two ways: with the synthesis
of version 1 carried over unchanged ("before": what a contest stored when it never re-ran the
synthesis) and with the synthesis the contest writes now ("after"). A text is stale when
``stale_reasons`` finds anything in it untrue of that version.

    .venv/bin/python -m tests.support.contest_synthesis
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass, field, replace

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.protocol import CallContext
from service.app import request_time
from service.core import Evaluation, RejectArgument, apply, evaluate
from service.core.model import Deliberation
from service.errors import CanoeError
from service.pipeline import Planner, UsageLog
from tests.support.plan_hashes import CREATED, ROOT, bundles

WHO = {"actor": "Practitioner/planner-1", "at": "2026-11-30T10:00:00+00:00"}
MAX_REJECTIONS = 12
_SECTIONS = re.compile(r"(Highest priority|Also included|Not included after deliberation): ")


def stale_reasons(text: str, d: Deliberation, ev: Evaluation) -> list[str]:
    """What ``text`` (a synthesis) says that is not true of ``d`` as evaluated in ``ev``: the
    first activity named as highest priority is not the plan's first, an activity is named in
    the wrong section (included / not included), or a score it states is not the option's."""
    found: list[str] = []
    parts = _SECTIONS.split(text)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    titles = sorted(((o.title, o.id) for o in d.options), key=lambda t: -len(t[0]))
    if ev.plan:
        first = next(o for o in d.options if o.id == ev.plan[0])
        if not sections.get("Highest priority", "").startswith(first.title):
            found.append(f"highest priority is not {ev.plan[0]}")
    for section, body in sections.items():
        included = section != "Not included after deliberation"
        for title, oid in titles:
            if title in body and (ev.option(oid).decision == "include") != included:
                found.append(f"{oid} named under {section!r}")
    for title, oid in titles:
        for m in re.finditer(re.escape(title) + r" \((?:score )?(\d\.\d\d)", text):
            if m.group(1) != f"{ev.option(oid).score:.2f}":
                found.append(f"{oid} stated at {m.group(1)}, scored {ev.option(oid).score:.2f}")
    return found


@dataclass(slots=True)
class Counts:
    plans: int = 0
    stale_first: list[str] = field(default_factory=list)  # version 1 itself
    stale_first_model: list[str] = field(default_factory=list)  # the backend step's version 1
    flipped: list[str] = field(default_factory=list)
    stale_before: list[str] = field(default_factory=list)
    stale_after: list[str] = field(default_factory=list)


async def flip_top(
    planner: Planner, d: Deliberation, ev: Evaluation
) -> tuple[Deliberation, Evaluation] | None:
    """``d`` contested until its top activity changes: the version and its evaluation (with its
    synthesis re-run), or None when rejecting every support of the top never flipped it."""
    if not ev.plan:
        return None
    top = ev.plan[0]
    for n in range(MAX_REJECTIONS):
        if not ev.plan or ev.plan[0] != top:
            return d, ev
        option = next(o for o in d.options if o.id == ev.plan[0])
        result = ev.option(option.id)
        live = [a for a in option.arguments if a.stance == "support" and a.status != "rejected"]
        if not live:
            return None
        strongest = max(live, key=lambda a: (result.nodes[a.id].sigma or 0.0, a.id))
        before = ev
        d = apply(d, RejectArgument(strongest.id), task_id=f"flip-{n}", **WHO)
        ev = evaluate(d, previous=before)
        d, _ = await planner.resynthesise(before, d, ev)
    return (d, ev) if not ev.plan or ev.plan[0] != top else None


async def count() -> Counts:
    planner = Planner(EmbeddedExperts(), EvidenceBase.load())
    c = Counts()
    for path in bundles():
        name = str(path.relative_to(ROOT))
        try:
            profile = ingest(path.read_bytes(), received=request_time(CREATED))
        except CanoeError:
            continue
        result = await planner.plan(profile, plan_id="contest", created=CREATED)
        c.plans += 1
        # version 1's text as the backend's own synthesis step writes it (what a contest
        # carried over before it re-ran the synthesis)
        first = await planner._synthesize(
            profile, result.deliberation, result.evaluation, CallContext(UsageLog())
        )
        if stale_reasons(first, result.deliberation, result.evaluation):
            c.stale_first_model.append(name)
        if stale_reasons(
            result.deliberation.meta.synthesis, result.deliberation, result.evaluation
        ):
            c.stale_first.append(name)
        flipped = await flip_top(planner, result.deliberation, result.evaluation)
        if flipped is None:
            continue
        d, ev = flipped
        c.flipped.append(name)
        carried = replace(d, meta=replace(d.meta, synthesis=first))
        if stale_reasons(carried.meta.synthesis, carried, ev):
            c.stale_before.append(name)
        if stale_reasons(d.meta.synthesis, d, ev):
            c.stale_after.append(name)
    return c


def main() -> int:
    c = asyncio.run(count())
    print(f"{c.plans} plans, top activity flipped by contestation in {len(c.flipped)}")
    print(f"stale synthesis of version 1 itself: {len(c.stale_first)}", end="")
    print(f" (the backend's synthesis step's text: {len(c.stale_first_model)})")
    print(f"stale synthesis after the flip, carried over from version 1: {len(c.stale_before)}")
    print(f"stale synthesis after the flip, re-run by the contest: {len(c.stale_after)}")
    for name in c.stale_after:
        print(f"  {name}")
    return 1 if c.stale_after or c.stale_first else 0


if __name__ == "__main__":
    sys.exit(main())
