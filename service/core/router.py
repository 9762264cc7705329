"""CAMP's hybrid router (eq. 4-8): per problem, strong consensus, weak consensus or conflict.

With k, r, n the counts of KEEP, REFUSE and NEUTRAL votes:

- strong consensus: accept if ``r = 0 and k > n``; reject if ``k = 0 and r > n``;
- weak consensus: if ``k * r = 0 and max(k, r) <= n``, the attending's initial judgement y0;
- conflict (``k > 0 and r > 0``): decision None, the attending must arbitrate (a model call the
  pipeline makes; this module never does).

The three cases are exhaustive and disjoint for any panel size, including an empty panel (weak).
Pure: counts in, route out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

from service.core.model import Judgement, Vote

__all__ = ["Path", "Route", "count_votes", "route", "route_counts"]

Path = Literal["strong_consensus", "weak_consensus", "conflict"]


@dataclass(frozen=True, slots=True)
class Route:
    """``decision`` None only on the conflict path: arbitration needed."""

    path: Path
    decision: Judgement | None


def count_votes(votes: Sequence[Vote]) -> tuple[int, int, int]:
    """(KEEP, REFUSE, NEUTRAL) counts; raises ValueError on any other vote value."""
    k = r = n = 0
    for i, v in enumerate(votes):
        if v.vote == "KEEP":
            k += 1
        elif v.vote == "REFUSE":
            r += 1
        elif v.vote == "NEUTRAL":
            n += 1
        else:
            raise ValueError(f"votes[{i}].vote is {v.vote!r}, not KEEP/REFUSE/NEUTRAL")
    return k, r, n


def route_counts(k: int, r: int, n: int, initial: Judgement) -> Route:
    """The router on counts.

    >>> route_counts(2, 0, 1, "reject")
    Route(path='strong_consensus', decision='accept')
    >>> route_counts(1, 0, 1, "reject")
    Route(path='weak_consensus', decision='reject')
    >>> route_counts(1, 1, 0, "accept")
    Route(path='conflict', decision=None)
    """
    if min(k, r, n) < 0:
        raise ValueError("vote counts must be >= 0")
    if initial not in ("accept", "reject"):
        raise ValueError(f"initial judgement {initial!r} is not accept/reject")
    if r == 0 and k > n:
        return Route("strong_consensus", "accept")
    if k == 0 and r > n:
        return Route("strong_consensus", "reject")
    if k * r == 0 and max(k, r) <= n:
        return Route("weak_consensus", initial)
    return Route("conflict", None)


def route(votes: Sequence[Vote] | tuple[int, int, int], initial: Judgement) -> Route:
    """The router on a panel's votes, or on ``(k, r, n)`` counts."""
    if len(votes) == 3 and all(isinstance(x, int) for x in votes):
        k, r, n = cast("tuple[int, int, int]", votes)
        return route_counts(k, r, n, initial)
    return route_counts(*count_votes(cast("Sequence[Vote]", votes)), initial)
