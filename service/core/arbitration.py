"""CAMP's arbitration on a conflict (eq. 7) as a rule: the built-in attending weighs arguments.

On the conflict path (KEEP and REFUSE both cast) CAMP's attending reads every specialist's
``(r_i, v_ij, q_ij, c_ij, s_ij)`` (role, vote, evidence quote, confidence, rationale) and decides
"by weighing argument quality rather than simply counting votes" (CAMP 4.4); its worked case
(6.4) accepts on one specialist's direct positive finding against two who argued from what was
absent. The model arbiter is asked exactly that. This module is the same judgement without a
model:

- each vote is an argument whose **strength** is its confidence times the weight of its
  evidence (``GROUNDING_WEIGHT``): a quote that is in the record and names a confirmed, coded
  condition (a direct positive finding) weighs most, a quote found in the record less, a quote
  the record does not hold little, and no quote (an argument from absence) least;
- each side is as strong as its **strongest** argument: more votes of the same weight add
  nothing, so the count never decides;
- the stronger side wins; sides within ``NEAR_TIE`` of each other (compared with a stated
  tolerance, so that equal differences decide equally whatever the float rounding) leave the
  decision to the attending's initial judgement y0, as CAMP's fallback path does.

Neutral votes carry no argument either way and are not weighed. Pure: arguments in, verdict out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from service.core.model import Judgement, VoteValue

__all__ = [
    "GROUNDING_WEIGHT",
    "NEAR_TIE",
    "TOLERANCE",
    "Grounding",
    "Verdict",
    "VoteArgument",
    "arbitrate",
]

# Where a vote's evidence quote stands against the record.
Grounding = Literal["confirmed", "recorded", "unverified", "none"]

# The weight of a vote's evidence, by where its quote stands. The order is CAMP's (a direct
# positive finding outweighs an argument from absence, 6.4); the values are this project's
# (a documented default, not from either paper): an unverifiable quote counts for less than half
# of one the record holds, and an argument without a quote for a quarter of a confirmed finding.
GROUNDING_WEIGHT: Mapping[str, float] = MappingProxyType(
    {"confirmed": 1.0, "recorded": 0.8, "unverified": 0.4, "none": 0.25}
)
# Strongest arguments of the two sides this close are a tie; this project's default.
NEAR_TIE = 0.05
# Differences are compared to NEAR_TIE within this tolerance (0.85 - 0.8 is 0.04999..., and it is
# a tie exactly as 0.55 - 0.5 is).
TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class VoteArgument:
    """One specialist's vote as an argument: role, vote, confidence in [0, 1] and where its
    evidence quote stands against the record."""

    role: str
    vote: VoteValue
    confidence: float
    grounding: Grounding

    @property
    def strength(self) -> float:
        """Confidence (clamped to [0, 1]) times the weight of the evidence.

        >>> VoteArgument("gp", "KEEP", 0.5, "recorded").strength
        0.4
        """
        return max(0.0, min(1.0, self.confidence)) * GROUNDING_WEIGHT[self.grounding]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision, each side's strength (its strongest argument; 0 with none) and the role
    of that argument ("" with none), and whether y0 decided a near tie."""

    decision: Judgement
    keep: float
    refuse: float
    keep_by: str
    refuse_by: str
    tie: bool

    def rationale(self) -> str:
        """The verdict in words, naming the deciding arguments."""
        sides = (
            f"strongest KEEP {self.keep:.2f} ({self.keep_by or 'none'}), "
            f"strongest REFUSE {self.refuse:.2f} ({self.refuse_by or 'none'})"
        )
        if self.tie:
            return (
                f"{sides}: within {NEAR_TIE} of each other, the attending's initial judgement "
                f"decides ({self.decision})"
            )
        return f"{sides}: {self.decision} on the stronger argument"


def arbitrate(arguments: Iterable[VoteArgument], initial: Judgement) -> Verdict:
    """CAMP eq. 7 on ``arguments`` (the votes on one problem), with ``initial`` the attending's
    y0 for a near tie.

    >>> args = [
    ...     VoteArgument("infectious-disease", "KEEP", 0.8, "confirmed"),
    ...     VoteArgument("surgeon", "REFUSE", 0.9, "none"),
    ...     VoteArgument("radiologist", "REFUSE", 0.9, "none"),
    ... ]
    >>> arbitrate(args, "reject").decision  # one direct finding outweighs two absences
    'accept'
    """
    best: dict[str, tuple[float, str]] = {"KEEP": (0.0, ""), "REFUSE": (0.0, "")}
    for a in sorted(arguments, key=lambda a: a.role):
        if a.vote in best and a.strength > best[a.vote][0]:
            best[a.vote] = (a.strength, a.role)
    (keep, keep_by), (refuse, refuse_by) = best["KEEP"], best["REFUSE"]
    tie = abs(keep - refuse) <= NEAR_TIE + TOLERANCE
    decision: Judgement = initial if tie else ("accept" if keep > refuse else "reject")
    return Verdict(decision, keep, refuse, keep_by, refuse_by, tie)
