"""The plan's selection after scoring (CANOE 4.5's Pi; CAMP eq. 8): which scored options stay in.

Two rules, applied to the options the score (or a human) included, in this order:

1. **The accepted problems gate the options** (CAMP eq. 8 builds the output from the accepted
   set Y^ only). An option that names the problems it treats, all of which the panel (or a
   human) rejected, is excluded with that reason. An option treating an accepted problem
   carries that problem's decision path (consensus, fallback, arbitration, human) in its
   result, so the trace says on whose judgement the problem stands. An option that names no
   problem, or one still pending, is not gated.
2. **Incompatible actions on one medicine** (CANOE 4.5: the synthesis removes incompatible
   options and sequences the rest). Two included options acting on the same medicine
   (``medication_ref``) with incompatible action kinds (``INCOMPATIBLE_FATES``: ending it,
   lowering it, raising it and switching it cannot be done together) are resolved by the final
   score: the higher keeps its place, the lower is excluded and names the one it gave way to. A
   human's inclusion outranks any score. Kinds that sequence (hold then restart, a check, a
   review) are compatible with every other.

Pure: results in, results out; a human's own exclusion or inclusion of an option is never
undone by rule 1, and rule 2 never excludes an option a human included when it competes with
one the score included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from service.core.model import Option
from service.core.results import OptionResult, ProblemResult

__all__ = [
    "INCOMPATIBLE_FATES",
    "Incompatibility",
    "fate",
    "incompatible",
    "incompatible_pairs",
    "select",
]

# What an action kind does to the medicine it acts on, for the kinds that decide its fate: the
# medicine ends (stopped now or at the review, a course ended, a taper to off), its dose goes
# down, its dose goes up, or another medicine takes its place. Two different fates of one
# medicine cannot both be carried out. Every other kind (start, hold, restart, check, refer,
# teach, review) leaves its fate to these or sequences with them (hold now, restart later).
INCOMPATIBLE_FATES: Mapping[str, str] = MappingProxyType(
    {
        "stop-now": "end",
        "stop-at-review": "end",
        "end-course": "end",
        "taper": "end",
        "lower": "lower",
        "raise": "raise",
        "switch": "switch",
    }
)


def fate(action: str | None) -> str | None:
    """The fate an action kind gives its medicine, None for a kind that decides none.

    >>> fate("taper"), fate("stop-now"), fate("hold"), fate(None)
    ('end', 'end', None, None)
    """
    return INCOMPATIBLE_FATES.get(action or "")


def incompatible(a: Option, b: Option) -> bool:
    """True when ``a`` and ``b`` act on the same medicine with fates that exclude each other.

    >>> stop = Option("s", "Stop", "medication", "", medication_ref="M/1", action="stop-now")
    >>> lower = Option("l", "Lower", "medication", "", medication_ref="M/1", action="lower")
    >>> hold = Option("h", "Hold", "medication", "", medication_ref="M/1", action="hold")
    >>> incompatible(stop, lower), incompatible(stop, hold), incompatible(lower, lower)
    (True, False, False)
    """
    if a.medication_ref is None or a.medication_ref != b.medication_ref:
        return False
    fa, fb = fate(a.action), fate(b.action)
    return fa is not None and fb is not None and fa != fb


@dataclass(frozen=True, slots=True)
class Incompatibility:
    """Two included options that cannot both be done (ids in plan-input order)."""

    first: str
    second: str
    medication_ref: str


def incompatible_pairs(
    options: Sequence[Option], results: Sequence[OptionResult]
) -> tuple[Incompatibility, ...]:
    """The pairs of included options with incompatible actions on one medicine."""
    included = [o for o, r in zip(options, results, strict=True) if r.decision == "include"]
    return tuple(
        Incompatibility(a.id, b.id, a.medication_ref or "")
        for i, a in enumerate(included)
        for b in included[i + 1 :]
        if incompatible(a, b)
    )


def select(
    options: Sequence[Option],
    results: Sequence[OptionResult],
    problems: Iterable[ProblemResult],
) -> tuple[OptionResult, ...]:
    """``results`` with rule 1 (the accepted problems gate) and rule 2 (incompatible actions)
    applied; an option neither rule touches keeps its very result object."""
    decided = {p.problem_id: p for p in problems}
    gated = [_gate(o, r, decided) for o, r in zip(options, results, strict=True)]
    return _resolve(options, gated)


def _gate(
    option: Option, result: OptionResult, problems: Mapping[str, ProblemResult]
) -> OptionResult:
    treated = [problems[p] for p in option.problem_ids if p in problems]
    if not treated:
        return result
    accepted = tuple((p.problem_id, p.decided_by) for p in treated if p.decision == "accept")
    if accepted:
        return replace(result, problems=accepted)
    rejected = [p.problem_id for p in treated if p.decision == "reject"]
    if len(rejected) < len(treated) or result.decided_by == "human":
        return result  # a problem still pending, or a human decided the option itself
    return replace(
        result,
        decision="exclude",
        decided_by="problems",
        reason="treats only problems the panel rejected: " + ", ".join(rejected),
    )


def _resolve(options: Sequence[Option], results: list[OptionResult]) -> tuple[OptionResult, ...]:
    """Rule 2: included options taken from the strongest claim down (a human's inclusion, then
    the score, then the id), each kept unless incompatible with one kept before it."""
    order = sorted(
        (i for i, r in enumerate(results) if r.decision == "include"),
        key=lambda i: (results[i].decided_by != "human", -results[i].score, options[i].id),
    )
    kept: list[int] = []
    for i in order:
        winner = next((k for k in kept if incompatible(options[i], options[k])), None)
        if winner is None:
            kept.append(i)
            continue
        if results[i].decided_by == "human":
            continue  # two human inclusions: the humans' call, left as they made it
        results[i] = replace(
            results[i],
            decision="exclude",
            decided_by="incompatibility",
            reason=(
                f"cannot be done together with {options[winner].id} on the same medicine "
                f"({options[i].action} vs {options[winner].action}); that option scored "
                f"{results[winner].score:.3f}, this one {results[i].score:.3f}"
            ),
        )
    return tuple(results)
