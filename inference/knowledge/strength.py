"""Argument strength from explicit factors: one documented table.

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
"""

from __future__ import annotations

from typing import Literal

__all__ = ["CERTAINTY", "DIRECTNESS", "GRADE", "SEVERITY", "Certainty", "tau"]

Certainty = Literal["certain", "probable", "uncertain"]

BASE = 0.05
SEVERITY: dict[str, float] = {"critical": 0.32, "major": 0.24, "moderate": 0.16, "minor": 0.08}
CERTAINTY: dict[str, float] = {"certain": 0.18, "probable": 0.12, "uncertain": 0.04}
GRADE: dict[str, float] = {"A": 0.20, "B": 0.15, "C": 0.10, "D": 0.05}
DIRECTNESS: dict[str, float] = {"direct": 0.15, "indirect": 0.08, "contextual": 0.02}


def tau(severity: str, certainty: str, grade: str, directness: str) -> float:
    """The intrinsic strength of one point from its four factors (table above)."""
    value = BASE + SEVERITY[severity] + CERTAINTY[certainty] + GRADE[grade] + DIRECTNESS[directness]
    return round(value, 3)
