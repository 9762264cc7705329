"""Argument strength on CANOE's five dimensions, each from one table (the ``strength.*``
parameters), each counted once.

CANOE §4.3 (Alg. 1 l. 13) scores an argument's intrinsic strength tau "along several dimensions:
clinical appropriateness, factual consistency with the retrieved evidence, specificity to the
patient's circumstances, transparency of the reasoning chain, and practical feasibility in the
community setting" (``inference.protocol.STRENGTH_DIMENSIONS``). The paper names the dimensions;
which fact of ours measures each one, the levels and values below, and tau as their unweighted
mean are this project's choices (CANOE judgement, ``data/parameters.yaml``):

- appropriateness: the severity of the harm the point avoids or the benefit it gains (the
  criterion's; a point may override): critical 1.0, major 0.75, moderate 0.5, minor 0.25;
- consistency with the retrieved evidence: the best grade among the retrieved statements the
  argument cites: A 1.0, B 0.75, C 0.5, D (expert consensus) 0.25, none cited 0;
- specificity to the patient: how directly the patient fact bears on the option (the
  criterion's; a point may override): direct 1.0, indirect 0.5, contextual 0.15;
- transparency of the reasoning chain: how plainly the record states the fact the reasoning
  starts from (read from the facts): certain 1.0 (coded, current, stated), probable 0.65 (read
  indirectly, or estimates that disagree), uncertain 0.25 (a dose not stated);
- feasibility in the community: the knowledge states none, so every argument takes 0.5, the
  middle of the scale: the dimension is scored, and moves no argument against another.

An objection that cites no fact of this record (a stock one: "it was started for a reason") is
true of every patient: it is specific to no one and its reasoning starts from nothing stated,
so both of those dimensions are 0 for it ("none"); it then starts below any point that cites a
fact. (A support without facts is about the person as a whole, an age, and keeps its levels.)

The embedded backend's scoring step (``inference.embedded``) reads these per argument; a point
carries its own tau from the same table (``tau``), with its criterion's grade standing in for
the retrieved evidence, to pick which of a role's points speaks for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from inference.protocol import STRENGTH_DIMENSIONS

from .parameters import param, param_int

__all__ = [
    "CERTAINTY",
    "DIRECTNESS",
    "GRADE",
    "SEVERITY",
    "Certainty",
    "Factors",
    "best_grade",
    "dimensions",
    "mean",
    "rounded",
    "tau",
]

Certainty = Literal["certain", "probable", "uncertain"]

# Each dimension's levels, to the parameter that values it.
SEVERITY: dict[str, str] = {
    "critical": "strength.appropriateness_critical",
    "major": "strength.appropriateness_major",
    "moderate": "strength.appropriateness_moderate",
    "minor": "strength.appropriateness_minor",
}
GRADE: dict[str, str] = {
    "A": "strength.consistency_a",
    "B": "strength.consistency_b",
    "C": "strength.consistency_c",
    "D": "strength.consistency_d",
    "expert consensus": "strength.consistency_d",  # the evidence base's name for grade D
    "none": "strength.consistency_none",
}
DIRECTNESS: dict[str, str] = {
    "direct": "strength.specificity_direct",
    "indirect": "strength.specificity_indirect",
    "contextual": "strength.specificity_contextual",
    "none": "strength.specificity_none",
}
CERTAINTY: dict[str, str] = {
    "certain": "strength.transparency_certain",
    "probable": "strength.transparency_probable",
    "uncertain": "strength.transparency_uncertain",
    "none": "strength.transparency_none",
}
_FEASIBILITY = "strength.feasibility_unstated"
_NONE = "none"


@dataclass(frozen=True, slots=True)
class Factors:
    """What the knowledge states about a point that its strength is read from: the severity of
    the harm or benefit, how plainly the record states its fact, how directly that fact bears
    on the option."""

    severity: str
    certainty: str
    directness: str

    def __post_init__(self) -> None:
        if (
            self.severity not in SEVERITY
            or self.certainty not in CERTAINTY
            or self.directness not in DIRECTNESS
        ):
            raise ValueError(f"unknown strength level in {self}")


def best_grade(grades: Iterable[str]) -> str:
    """The best of the grades of the evidence an argument cites ("none" when it cites none)."""
    known = [g for g in grades if g in GRADE and g != _NONE]
    return min(known, key=lambda g: -param(GRADE[g]), default=_NONE)


def dimensions(factors: Factors, grade: str, *, about_patient: bool) -> tuple[float, ...]:
    """The five dimensions in ``STRENGTH_DIMENSIONS`` order; ``grade``: the best grade of the
    cited evidence ("none" for none); ``about_patient``: False for an objection that cites no
    fact of this record (specificity and transparency then "none")."""
    values = {
        "appropriateness": param(SEVERITY[factors.severity]),
        "consistency": param(GRADE[grade]),
        "specificity": param(DIRECTNESS[factors.directness if about_patient else _NONE]),
        "transparency": param(CERTAINTY[factors.certainty if about_patient else _NONE]),
        "feasibility": param(_FEASIBILITY),
    }
    return tuple(values[d] for d in STRENGTH_DIMENSIONS)


def rounded(value: float) -> float:
    """A strength as points carry it: to ``strength.decimals`` places, half up."""
    step = Decimal(1).scaleb(-param_int("strength.decimals"))
    return float(Decimal(repr(value)).quantize(step, rounding=ROUND_HALF_UP))


def mean(values: Iterable[float]) -> float:
    """The unweighted mean of the dimensions, in decimal, rounded (``rounded``)."""
    xs = [Decimal(repr(v)) for v in values]
    return rounded(float(sum(xs, Decimal(0)) / len(xs)))


def tau(
    severity: str, certainty: str, grade: str, directness: str, *, about_patient: bool = True
) -> float:
    """The intrinsic strength of one point: the mean of its five dimensions (table above)."""
    factors = Factors(severity, certainty, directness)
    return mean(dimensions(factors, grade, about_patient=about_patient))
