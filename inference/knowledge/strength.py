"""Argument strength from explicit factors: one documented scale, the ``strength.*`` parameters.

The intrinsic strength ``tau`` of a point is not typed in by hand; it is the sum of four factors,
so a strong safety case and a weak generic remark no longer start equal:

- severity of the harm avoided or benefit gained (from the criterion; a point may override):
  critical 0.32, major 0.24, moderate 0.16, minor 0.08;
- certainty of the patient fact (read from the facts): certain 0.18 (coded, current, stated),
  probable 0.12 (estimates disagree, or read indirectly), uncertain 0.04 (dose not stated);
- evidence grade (from the criterion): A 0.20, B 0.15, C 0.10, D (expert opinion) 0.05;
- directness of the fact to the option (from the criterion; a point may override):
  direct 0.15, indirect 0.08, contextual 0.02.

``tau = 0.05 + sum`` lies in [0.24, 0.90]: the strongest case (critical harm, certain fact,
grade A, direct) reaches 0.90; a minor, uncertain, expert-opinion, contextual remark 0.24.
The values above are the shipped ones (``data/parameters.yaml``); a site may set its own.

An objection that cites no fact of this record (a stock one: "it was started for a reason")
is true of every patient, so whatever its factors it starts no higher than
``strength.uncited_max`` (0.20, below the weakest point that cites a fact): it cannot pull an
action that rests on a finding of this patient down to borderline (``uncited``).
"""

from __future__ import annotations

from typing import Literal

from .parameters import param, param_int

__all__ = [
    "CERTAINTY",
    "DIRECTNESS",
    "GRADE",
    "SEVERITY",
    "Certainty",
    "rounded",
    "tau",
    "uncited",
]

Certainty = Literal["certain", "probable", "uncertain"]

# Each factor's levels, to the parameter that weighs it.
SEVERITY: dict[str, str] = {
    "critical": "strength.severity_critical",
    "major": "strength.severity_major",
    "moderate": "strength.severity_moderate",
    "minor": "strength.severity_minor",
}
CERTAINTY: dict[str, str] = {
    "certain": "strength.certainty_certain",
    "probable": "strength.certainty_probable",
    "uncertain": "strength.certainty_uncertain",
}
GRADE: dict[str, str] = {
    "A": "strength.grade_a",
    "B": "strength.grade_b",
    "C": "strength.grade_c",
    "D": "strength.grade_d",
}
DIRECTNESS: dict[str, str] = {
    "direct": "strength.directness_direct",
    "indirect": "strength.directness_indirect",
    "contextual": "strength.directness_contextual",
}


def rounded(value: float) -> float:
    """A strength as points carry it: to ``strength.decimals`` places."""
    return round(value, param_int("strength.decimals"))


def tau(severity: str, certainty: str, grade: str, directness: str) -> float:
    """The intrinsic strength of one point from its four factors (table above)."""
    value = (
        param("strength.base")
        + param(SEVERITY[severity])
        + param(CERTAINTY[certainty])
        + param(GRADE[grade])
        + param(DIRECTNESS[directness])
    )
    return rounded(value)


def uncited(value: float) -> float:
    """The strength of a point or argument that cites no fact of this record: at most
    ``strength.uncited_max``, whatever its factors (a weaker one keeps its own)."""
    return min(value, param("strength.uncited_max"))
