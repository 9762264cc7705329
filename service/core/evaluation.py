"""Every derived value of a deliberation, computed from its inputs: ``evaluate(d) -> Evaluation``.

Per option: arena calibration over the stored clashes, the A-QBAF (option node at 0.5, live
arguments at tau~, their edges), quadratic-energy propagation, the score F, the decision by score
or by a human, and the borderline flag. Per problem: the CAMP route and the decision (consensus,
fallback to y0, arbitration, human, or pending). Then the plan: included options ordered by
urgency class, priority class, score, id
(documents without urgency classes: priority class, score, id; without priorities: category,
score, id).

Then the plan's selection (``service.core.selection``): an option treating only rejected
problems is excluded, one treating an accepted problem carries how that problem was decided, and
of two included options with incompatible actions on one medicine the lower score is excluded.

Rules the papers leave open, fixed here:
- rejected arguments are out of the graph: their edges and their clashes are ignored;
- arguments whose strength a human set (``origin == "human"`` or ``tau_source == "human"``) take
  part in no clash: clashes involving them count for nobody, so they keep their tau;
- a non-converged option (cyclic graph, step limit hit) is never included by score: it is
  excluded and flagged borderline so a human adjudicates it.

Pure and deterministic: same deliberation in, bit-identical evaluation out; no model calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from service.core.arena import calibrate
from service.core.model import (
    TIMEFRAMES,
    Deliberation,
    Judgement,
    Option,
    OptionDecision,
    Parameters,
)
from service.core.qbaf import propagate_indexed
from service.core.results import (
    NodeScore,
    OptionDecider,
    OptionResult,
    ProblemResult,
    _node_score,
    node_setters,
)
from service.core.router import count_votes, route_counts
from service.core.selection import select

__all__ = [
    "CATEGORY_ORDER",
    "OPTION_PRIOR",
    "PRIORITY_ORDER",
    "URGENCY_LABELS",
    "URGENCY_ORDER",
    "Evaluation",
    "NodeScore",
    "OptionDecider",
    "OptionResult",
    "ProblemResult",
    "evaluate",
    "evaluate_option",
    "plan_order",
]

OPTION_PRIOR = 0.5  # tau~(o_i), CANOE 4.3.2: the option's score must come from the arguments
CATEGORY_ORDER: tuple[str, ...] = (
    "immediate-safety",
    "medication",
    "monitoring",
    "mental-health",
    "rehabilitation",
    "caregiver-support",
    "referral",
    "follow-up",
)
_CATEGORY_RANK = {c: i for i, c in enumerate(CATEGORY_ORDER)}
# Clinical priority classes, most urgent first: immediate safety, high-value omissions,
# monitoring, routine review. The plan is ordered by class, then by score.
PRIORITY_ORDER: tuple[str, ...] = ("safety", "omission", "monitoring", "review")
_PRIORITY_RANK = {c: i for i, c in enumerate(PRIORITY_ORDER)}
# How soon to act, first to last: contradicting data to settle before anything acts on them,
# then expected harm and time-criticality (a severe reading, an abnormal result on the drug that
# causes it, a recent high-stakes event, a dangerous combination), then what to act on soon
# (other safety items, omissions, monitoring), then routine prevention and review. The class
# orders the plan before the priority class: a vaccination never ranks above a specific harm.
URGENCY_ORDER: tuple[str, ...] = ("resolve-first", "urgent", "soon", "routine")
# What the clinician reads for each class.
URGENCY_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "resolve-first": "urgent, resolve first",
        "urgent": "urgent",
        "soon": "act soon",
        "routine": "routine",
    }
)
# An option without a class (documents written before classes existed) ranks as "soon", so a
# document whose options all lack one keeps the very order it was issued with.
_URGENCY_RANK = {c: i for i, c in enumerate(URGENCY_ORDER)}
_NO_URGENCY = _URGENCY_RANK["soon"]
# An option without a timeframe (documents written before timeframes existed) ranks after every
# timed one; a document whose options all lack one keeps the order it was issued with.
_TIMEFRAME_RANK = {t: i for i, t in enumerate(TIMEFRAMES)}
_NO_TIMEFRAME = len(TIMEFRAMES)


@dataclass(frozen=True, slots=True)
class Evaluation:
    options: tuple[OptionResult, ...]
    problems: tuple[ProblemResult, ...]
    plan: tuple[str, ...]  # included option ids in care-plan order
    # What this was computed from, so a later evaluate(..., previous=self) can reuse the results
    # of options that are the very same objects. Not part of the value.
    # The third item: each option's result before the plan's selection (``select``), which is
    # what an option alone decides and so what a later evaluation may reuse.
    inputs: tuple[Parameters, tuple[Option, ...], tuple[OptionResult, ...]] | None = field(
        default=None, repr=False, compare=False
    )

    def option(self, option_id: str) -> OptionResult:
        for o in self.options:
            if o.option_id == option_id:
                return o
        raise KeyError(option_id)

    def problem(self, problem_id: str) -> ProblemResult:
        for p in self.problems:
            if p.problem_id == problem_id:
                return p
        raise KeyError(problem_id)


def evaluate_option(option: Option, parameters: Parameters) -> OptionResult:
    """Calibrate, build the A-QBAF and propagate for one option."""
    live = [a for a in option.arguments if a.status != "rejected"]
    tau_cal: Mapping[str, float] = {}
    if option.clashes:
        arena = [a for a in live if a.origin == "agent" and a.tau_source == "model"]
        tau_cal = calibrate(arena, option.clashes, parameters.beta)

    index = {option.id: 0}
    index.update({a.id: i for i, a in enumerate(live, 1)})
    base = [OPTION_PRIOR, *[tau_cal.get(a.id, a.tau) for a in live]]
    sup: list[list[int]] = [[] for _ in base]
    att: list[list[int]] = [[] for _ in base]
    node = index.get
    for e in option.edges:
        s, t = node(e.source), node(e.target)
        if s is None or t is None:  # an end is rejected (or unknown: documents refuse those)
            continue
        (sup if e.relation == "support" else att)[t].append(s)
    # Relations are sets: a repeated edge counts once. Repeats are rare, so they are looked for
    # after the fact, only where a node has several sources.
    for lists in (sup, att):
        for t, sources in enumerate(lists):
            if len(sources) > 1 and len(set(sources)) < len(sources):
                lists[t] = list(dict.fromkeys(sources))

    sigma, converged, iterations, _ = propagate_indexed(
        base,
        sup,
        att,
        tolerance=parameters.tolerance,
        max_iterations=parameters.max_iterations,
    )
    score = sigma[0]
    nodes = {option.id: _node_score(option.id, OPTION_PRIOR, OPTION_PRIOR, score)}
    # _node_score written out: one Python call less per argument is a tenth of the whole loop.
    set_id, set_tau, set_tau_calibrated, set_sigma = node_setters()
    for a in option.arguments:
        i = node(a.id)
        ns: NodeScore = object.__new__(NodeScore)
        set_id(ns, a.id)
        set_tau(ns, a.tau)
        if i is None:
            set_tau_calibrated(ns, a.tau)
            set_sigma(ns, None)
        else:
            set_tau_calibrated(ns, base[i])
            set_sigma(ns, sigma[i])
        nodes[a.id] = ns

    borderline = abs(score - OPTION_PRIOR) <= parameters.band or not converged
    decision: OptionDecision
    decided_by: Literal["score", "human"]
    if option.human_decision is not None:
        decision, decided_by = option.human_decision, "human"
    else:
        decision = "include" if converged and score > parameters.threshold else "exclude"
        decided_by = "score"
    return OptionResult(
        option.id,
        score,
        decision,
        decided_by,
        borderline,
        MappingProxyType(nodes),
        converged,
        iterations,
    )


def plan_order(options: tuple[Option, ...], results: tuple[OptionResult, ...]) -> tuple[str, ...]:
    """Included option ids in care-plan order (``_rank_key``).

    An option without a priority (documents written before priorities existed) comes after
    every prioritised one, ordered by category (CATEGORY_ORDER, unknown last) first, so such a
    document recomputes to the very order it was issued with.
    """
    rows = [
        (_rank_key(o, r.score), o.id)
        for o, r in zip(options, results, strict=True)
        if r.decision == "include"
    ]
    return tuple(oid for _, oid in sorted(rows))


def _rank_key(o: Option, score: float) -> tuple[object, ...]:
    """When to act, then how much harm: today's actions first, then the transition actions
    after a hospital stay (before any review of a standing medicine not due today), then the
    other timeframes soonest first; within one, contradicting data to settle first, then the
    harm score down, the urgency class, the priority class, the score down.

    >>> a = Option("a", "A", "medication", "", priority="review", timeframe="next-review")
    >>> b = Option("b", "B", "follow-up", "", priority="review", timeframe="7d", transition=True)
    >>> c = Option("c", "C", "medication", "", priority="safety", timeframe="now", harm=1.0)
    >>> [o.id for o in sorted((a, b, c), key=lambda o: _rank_key(o, 0.6))]
    ['c', 'b', 'a']
    """
    unranked = len(PRIORITY_ORDER)
    timeframe = _TIMEFRAME_RANK.get(o.timeframe or "", _NO_TIMEFRAME)
    today = timeframe == _TIMEFRAME_RANK["now"]
    return (
        o.priority is None,
        not today,
        not (o.transition and not today),
        timeframe,
        o.urgency_class != "resolve-first",
        -(o.harm or 0.0),
        _URGENCY_RANK.get(o.urgency_class or "", _NO_URGENCY),
        _PRIORITY_RANK.get(o.priority, unranked) if o.priority is not None else unranked + 1,
        0 if o.priority is not None else _CATEGORY_RANK.get(o.category, len(CATEGORY_ORDER)),
        -score,
    )


def evaluate(deliberation: Deliberation, *, previous: Evaluation | None = None) -> Evaluation:
    """All derived values of ``deliberation``.

    ``previous``: the evaluation of an earlier version. Results of options that are the very same
    objects (``apply`` shares every option it did not touch) under equal parameters are reused,
    so a recompute after one contestation propagates only the option it changed. Since an
    option's result depends on nothing but the option and the parameters, the outcome is
    identical with or without ``previous``.
    """
    reuse: dict[int, tuple[Option, OptionResult]] = {}
    if previous is not None and previous.inputs is not None:
        params, options, scored = previous.inputs
        if params == deliberation.parameters:
            reuse = {id(o): (o, r) for o, r in zip(options, scored, strict=True)}
    results: list[OptionResult] = []
    for o in deliberation.options:
        hit = reuse.get(id(o))
        results.append(
            hit[1]
            if hit is not None and hit[0] is o
            else evaluate_option(o, deliberation.parameters)
        )

    problems: list[ProblemResult] = []
    for p in deliberation.problems:
        r = route_counts(*count_votes(p.votes), p.initial)
        decided_by: Literal["consensus", "fallback", "arbitration", "human", "pending"]
        decision: Judgement | None
        if p.human_decision is not None:
            decision, decided_by = p.human_decision, "human"
        elif r.path == "strong_consensus":
            decision, decided_by = r.decision, "consensus"
        elif r.path == "weak_consensus":
            decision, decided_by = r.decision, "fallback"
        elif p.arbitration is not None:
            decision, decided_by = p.arbitration, "arbitration"
        else:
            decision, decided_by = None, "pending"
        problems.append(ProblemResult(p.id, r.path, decision, decided_by))

    done = select(deliberation.options, results, problems)
    return Evaluation(
        done,
        tuple(problems),
        plan_order(deliberation.options, done),
        (deliberation.parameters, deliberation.options, tuple(results)),
    )
