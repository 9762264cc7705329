"""What evaluating a deliberation gives per node, option and problem: the values the plan, the
document and the selection read (a module of their own, so that the evaluation and the
selection it calls do not import each other)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from service.core.model import Judgement, OptionDecision
from service.core.router import Path

__all__ = ["NodeScore", "OptionDecider", "OptionResult", "ProblemResult"]


@dataclass(frozen=True, slots=True)
class NodeScore:
    """``sigma`` None for a rejected argument (out of the graph)."""

    id: str
    tau: float
    tau_calibrated: float
    sigma: float | None


# A frozen dataclass's __init__ sets every field through object.__setattr__, which makes building
# the hundreds of NodeScores of a plan a third of its evaluation. _node_score makes the very same
# object by calling the slots' own setters; tests check it stays equal to NodeScore(...).
_NODE_SETTERS = tuple(NodeScore.__dict__[f].__set__ for f in NodeScore.__slots__)


def node_setters() -> tuple[Any, ...]:
    """The slot setters of ``NodeScore`` (id, tau, tau_calibrated, sigma), for a loop that
    builds many (``evaluation.evaluate_option``)."""
    return _NODE_SETTERS


def _node_score(id: str, tau: float, tau_calibrated: float, sigma: float | None) -> NodeScore:
    node: NodeScore = object.__new__(NodeScore)
    set_id, set_tau, set_tau_calibrated, set_sigma = _NODE_SETTERS
    set_id(node, id)
    set_tau(node, tau)
    set_tau_calibrated(node, tau_calibrated)
    set_sigma(node, sigma)
    return node


OptionDecider = Literal["score", "human", "problems", "incompatibility"]


@dataclass(frozen=True, slots=True)
class OptionResult:
    option_id: str
    score: float  # F(o) = sigma(o); the last iterate when not converged
    decision: OptionDecision
    # "problems": excluded since it treats only rejected problems; "incompatibility": excluded
    # since an incompatible action on the same medicine scored higher (``service.core.selection``)
    decided_by: OptionDecider
    borderline: bool
    nodes: Mapping[str, NodeScore]  # option node first, then arguments in option order
    converged: bool
    iterations: int
    reason: str = ""  # why the selection excluded it ("" when the score or a human decided)
    # (problem id, how its acceptance was decided) for each accepted problem it treats
    problems: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ProblemResult:
    problem_id: str
    path: Path
    decision: Judgement | None
    decided_by: Literal["consensus", "fallback", "arbitration", "human", "pending"]
