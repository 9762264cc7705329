"""The rule registry: clinical knowledge that cannot be said as criteria data.

Most knowledge is data (``criteria/*.json``, read by ``criteria.interpret``). What is left needs
code: it reads social facts, counts risk factors, or words a text from several facts at once.
Each such rule is one short function registered with ``@rule(id, source)``; ``run_rules`` calls
them in registration order. A rule reads the typed facts (``Case``) and adds problems and
proposals to the ``Output``. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from inference.protocol import Locale
from service.core.model import Stance
from service.record.profile import Condition, PatientProfile
from service.work import checkpoint

from .analysis import Cited, Output, Point, ProblemCase, refs, rid
from .facts import Facts, MedFact
from .facts import age_phrase as _age_of
from .parameters import param
from .strength import rounded

__all__ = ["RULES", "Case", "Rule", "age_phrase", "names", "point", "prob_ids", "rule", "run_rules"]


class Case(Facts):
    """The typed facts plus what the registered rules look up: the record's own problem
    judgements (``base``) and social facts by keyword."""

    def __init__(self, profile: PatientProfile, locale: Locale = "uk") -> None:
        super().__init__(profile)
        self.locale: Locale = locale  # where the plan is read: "uk" or "us"
        self.older = self.age is not None and self.age >= param("age.older_years")
        self.base: tuple[ProblemCase, ...] = ()

    def has(self, spec: str) -> bool:
        return bool(self.with_spec(spec))

    def social(self, *words: str) -> tuple[str, ...]:
        return tuple(
            s.ref for s in self.p.social if any(w in (s.kind + " " + s.text).lower() for w in words)
        )

    def base_ids(self, facts: Iterable[Cited]) -> tuple[str, ...]:
        """Ids of the record problems that cite any of ``facts``."""
        wanted = {f.ref for f in facts}
        return tuple(b.id for b in self.base if wanted & set(b.refs))


RuleFn = Callable[[Case, Output], None]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    source: str  # the guideline or evidence the rule follows (criterion id, year)
    fn: RuleFn


RULES: list[Rule] = []


def rule(rule_id: str, source: str) -> Callable[[RuleFn], RuleFn]:
    """Register ``fn`` as the rule ``rule_id`` (ids are unique)."""

    def register(fn: RuleFn) -> RuleFn:
        if any(r.id == rule_id for r in RULES):
            raise ValueError(f"rule {rule_id!r} registered twice")
        RULES.append(Rule(rule_id, source, fn))
        return fn

    return register


def run_rules(c: Case, o: Output, skip: frozenset[str] = frozenset()) -> None:
    """Every registered rule in order, less those whose id is in ``skip``."""
    for r in RULES:
        checkpoint()
        if r.id not in skip:
            r.fn(c, o)


# -- small helpers the rules share ------------------------------------------------------------


def point(
    role: str,
    stance: Stance,
    text: str,
    facts: Iterable[str | Cited],
    ev: tuple[str, ...],
    tau: float,
    *,
    recent: bool = False,
) -> Point:
    return Point(role, stance, text, refs(facts), ev, rounded(tau), recent=recent)


def names(meds: Sequence[MedFact]) -> str:
    return ", ".join(m.text for m in meds)


def prob_ids(probs: Iterable[Condition]) -> tuple[str, ...]:
    return tuple(f"prob-{rid(p.ref)}" for p in probs)


def age_phrase(c: Facts) -> str:
    return _age_of(c.age)
