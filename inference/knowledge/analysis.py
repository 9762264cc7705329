"""The analysis vocabulary shared by the criteria interpreter and the rule functions.

``Point`` (one argument a role would make), ``Proposal`` (a candidate activity with its points),
``ProblemCase`` and ``Analysis``; ``Output`` accumulates them for one profile and merges
proposals that several criteria make about the same activity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from inference.protocol import Complexity, Judgement, Priority, Severity
from service.core.evaluation import CATEGORY_ORDER, PRIORITY_ORDER, URGENCY_ORDER
from service.core.model import Stance

from .parameters import param
from .strength import Factors

__all__ = [
    "PRIORITY_ORDER",
    "Analysis",
    "Output",
    "Point",
    "ProblemCase",
    "Proposal",
    "add_or_merge",
    "most_urgent",
    "refs",
    "rid",
    "slug",
]


@dataclass(frozen=True, slots=True)
class Point:
    """One argument a role would make about one option."""

    role: str
    stance: Stance
    text: str
    facts: tuple[str, ...]
    evidence: tuple[str, ...]  # preferred evidence ids, best first
    tau: float
    # The severity of the harm the point is about, read by the clash comparator
    # (inference/adjudication.py); None leaves it to the evidence statements' own ``harm``.
    harm: Severity | None = None
    # The point rests on a recent high-stakes event of this patient (a thrombolysis, an
    # admission): read with the clash comparator's recent abnormal facts when a role's several
    # points must be shown as one (``inference.embedded._argue``).
    recent: bool = False
    # What the point is about, stated by the knowledge (not read from its words): points on one
    # option relate through the theme pairs of ``data/themes.yaml`` (``embedded._relate``).
    # None or empty: no themes, so the point relates to no other.
    themes: tuple[str, ...] | None = None
    # The objection's concern (e.g. "abrupt-withdrawal"); answered when the option's ``answers``
    # names it. None: not stated.
    concern: str | None = None
    # What its strength is read from (``strength.Factors``): the scoring step reads them for
    # the argument the point speaks for. None: the point states none, and its argument goes
    # unscored on the embedded backend.
    factors: Factors | None = None


@dataclass(frozen=True, slots=True)
class Proposal:
    id: str
    title: str
    category: str
    description: str
    refs: tuple[str, ...]
    problem_ids: tuple[str, ...]
    points: tuple[Point, ...]
    code: tuple[str, str, str] | None = None
    medication_ref: str | None = None
    urgency: int = 0
    priority: Priority = "review"  # safety | omission | monitoring | review
    criteria: tuple[str, ...] = ()  # ids of the data criteria that proposed it
    # Retrieval terms in place of the title, where the title lists items (every vaccine due)
    # whose rare words would crowd the documents on the rest of the record out of the search.
    query: str = ""
    # How soon to act, where the knowledge says it (a criterion's ``urgency_class``, or a rule
    # function that knows it from the facts); "" leaves it to the priority class.
    urgency_class: str = ""
    # Concerns the option's own design answers (a gradual taper answers abrupt stopping).
    answers: tuple[str, ...] = ()
    # What the activity does, where the knowledge states it (a criterion's or a kidney band's
    # ``action``): "" leaves it to the option's id (``inference.knowledge.actions``).
    action: str = ""


def most_urgent(*classes: str) -> str:
    """The most urgent of ``classes`` ("" when none is stated)."""
    stated = [c for c in classes if c in URGENCY_ORDER]
    return min(stated, key=URGENCY_ORDER.index) if stated else ""


@dataclass(frozen=True, slots=True)
class ProblemCase:
    id: str
    display: str
    refs: tuple[str, ...]
    initial: Judgement
    rationale: str
    kind: str  # chronic | derived | stale | noise | history | sdoh-need | sdoh-context | ...
    domains: tuple[str, ...]
    quote: str
    confidence: float
    keepers: tuple[tuple[str, str], ...] = ()  # (role, reason): roles that keep it regardless


@dataclass(frozen=True, slots=True)
class Analysis:
    age: int | None
    complexity: Complexity
    score: int
    breakdown: tuple[tuple[str, int], ...]
    dimensions: tuple[str, ...]
    problems: tuple[ProblemCase, ...]
    proposals: tuple[Proposal, ...]
    role_weights: tuple[tuple[str, float], ...]
    query_terms: tuple[str, ...]
    fact_texts: tuple[tuple[str, str], ...] = field(default=())  # (ref, quotable text)
    fired: tuple[str, ...] = ()  # ids of the data criteria that fired
    # The claims checked against the record, and the withheld ("<criterion id>:<claim kind>").
    claims_checked: int = 0
    withheld: tuple[str, ...] = ()

    def proposal(self, option_id: str) -> Proposal | None:
        for p in self.proposals:
            if p.id == option_id:
                return p
        return None

    def problem(self, problem_id: str) -> ProblemCase | None:
        for p in self.problems:
            if p.id == problem_id:
                return p
        return None


class Cited(Protocol):
    """Any profile fact or derived fact: all carry the FHIR ref they came from."""

    @property
    def ref(self) -> str: ...


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def rid(ref: str) -> str:
    return slug(ref.rsplit("/", 1)[-1].replace("urn:uuid:", ""))


def refs(*groups: Iterable[str | Cited]) -> tuple[str, ...]:
    # A dict keeps first-seen order and finds a repeat in constant time.
    out: dict[str, None] = {}
    for g in groups:
        for x in g:
            out[x if isinstance(x, str) else x.ref] = None
    return tuple(out)


@dataclass
class Output:
    problems: list[ProblemCase] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    high_risk: int = 0
    # Claims the checker held against the record, and those it withheld ("<criterion id>:
    # <claim kind>", no patient data): a firing with a withheld claim is not said.
    claims_checked: int = 0
    withheld: list[str] = field(default_factory=list)

    def problem(
        self,
        pid: str,
        display: str,
        cited: Iterable[str | Cited],
        why: str,
        domains: tuple[str, ...],
        quote: str,
        conf: float | None = None,
    ) -> str:
        """Add a problem the rules derived (once per id), at ``conf``, by default the
        ``problem.derived_confidence`` parameter."""
        if conf is None:
            conf = param("problem.derived_confidence")
        if not any(p.id == pid for p in self.problems):
            self.problems.append(
                ProblemCase(
                    pid, display, refs(cited), "accept", why, "derived", domains, quote, conf
                )
            )
        return pid


def add_or_merge(o: Output, new: Proposal) -> None:
    """Add ``new``, or fold it into the proposal with the same id: the more urgent category,
    priority and urgency win, refs, problems, points and criteria are united."""
    for i, p in enumerate(o.proposals):
        if p.id == new.id:
            o.proposals[i] = Proposal(
                p.id,
                p.title,
                min(p.category, new.category, key=CATEGORY_ORDER.index),
                p.description,
                refs(p.refs, new.refs),
                refs(p.problem_ids, new.problem_ids),
                (*p.points, *new.points),
                p.code,
                p.medication_ref or new.medication_ref,
                max(p.urgency, new.urgency),
                min(p.priority, new.priority, key=PRIORITY_ORDER.index),
                tuple(dict.fromkeys((*p.criteria, *new.criteria))),
                p.query,
                most_urgent(p.urgency_class, new.urgency_class),
                tuple(dict.fromkeys((*p.answers, *new.answers))),
                p.action or new.action,
            )
            return
    o.proposals.append(new)
