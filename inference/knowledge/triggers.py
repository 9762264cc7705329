"""Criteria indexed by trigger: a plan evaluates only the criteria its record can fire.

Each firing criterion's trigger is read, as data, for the parts without which it cannot fire,
in the vocabulary of the concept index (``concepts``): the drug specs (``drug:``, ``class:``,
``flag:``) its medicines are bound by, the condition groups it binds a current problem of, the
groups it needs on record at any time, the result quantities whose value it compares. Each such
part is one *clause*: a set of record concepts, one of which the record must hold. A trigger's
clauses all hold when it fires (its parts are a conjunction); an ``any_of`` gives one clause,
the union of one clause of each alternative, when every alternative has one. A criterion with
no clause (an age-only check, one that fires on an absence, a table-driven check) is evaluated
for every plan.

``candidates`` then gives, for one record, the criteria whose every clause meets the record's
concepts, in the knowledge's order: the index maps one clause's concepts to criteria, and the
other clauses are checked on the few criteria found. The clauses are necessary conditions read
from the interpreter's own rules (``criteria.interpret._match``), so a criterion left out could
not have fired; ``tests/inference/test_trigger_index.py`` checks this on every fixture and
vignette against evaluating every criterion. A part the reading here does not understand simply
gives no clause: the cost of a new kind of part is a criterion evaluated more often, never a
firing lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .criteria.schema import Criterion, Trigger
from .drugs import DRUGS
from .facts import Facts
from .levels import level_entry
from .site import Knowledge, firing

__all__ = ["TriggerIndex", "candidates", "clauses", "record_concepts", "trigger_index"]

_Clause = frozenset[str]


def _lab(quantity: str) -> str:
    return f"lab:{quantity}"


def _medicine_path(t: Trigger) -> bool:
    """The trigger binds its medicines from ``drugs`` and its problem from ``any_conditions``
    (``_medicine_bindings``); a table-driven trigger binds from its table and reads neither."""
    return not t.renal_table and t.pk_table is None and t.roles is None and t.level is None


# Trigger parts that hold only where the record has a fact (``Facts``) at all, and the concept
# that stands for it: a stay test or a change test needs the index stay, a kidney-table or a
# kidney-function test the kidney function, a conflict test some conflicting results...
_FACT_PARTS: tuple[tuple[str, str], ...] = (
    ("stay", "fact:stay"),
    ("change", "fact:stay"),
    ("renal_table", "fact:kidney"),
    ("kidney_discordant", "fact:kidney"),
    ("kidney_unsteady", "fact:kidney"),
    ("lab_ckd", "fact:lab-ckd"),
    ("bp_severe", "fact:bp"),
    ("conflict", "fact:conflict"),
    ("pregnant", "fact:pregnant"),
    ("lactating", "fact:lactating"),
)
# A level test binds a medicine with a drug-level entry (``levels``).
_LEVEL_DRUGS: _Clause = frozenset(f"drug:{d.name}" for d in DRUGS if level_entry(d.name))


def _given(t: Trigger, part: str) -> bool:
    """The part is asked for: a stay or change test given, a flag set, pregnancy or
    breastfeeding asked to hold (``False``, asked to be absent, needs no fact)."""
    value = getattr(t, part)
    return value is not None and value is not False


def _facts(f: Facts) -> Iterator[str]:
    held = {
        "fact:stay": f.stay is not None,
        "fact:kidney": f.kidney is not None,
        "fact:lab-ckd": bool(f.lab_ckd),
        "fact:bp": f.bp is not None,
        "fact:conflict": bool(f.conflicts),
        "fact:pregnant": f.pregnancy is not None,
        "fact:lactating": f.lactation is not None,
    }
    return (k for k, v in held.items() if v)


def clauses(t: Trigger) -> tuple[_Clause, ...]:
    """The necessary parts of ``t``: each a set of concepts, one of which the record holds
    whenever ``t`` fires (empty: ``t`` may fire on any record)."""
    out: list[_Clause] = []
    if _medicine_path(t):
        out += [frozenset({spec}) for spec in t.drugs]
        if t.any_conditions:
            out.append(frozenset(f"group:{g}" for g in t.any_conditions))
    if t.ever_conditions:
        out.append(frozenset(f"ever:{g}" for g in t.ever_conditions))
    out += [frozenset({_lab(lab.quantity)}) for lab in t.labs]
    out += [frozenset({fact}) for part, fact in _FACT_PARTS if _given(t, part)]
    if t.level is not None:
        out.append(_LEVEL_DRUGS)
    if t.any_of:
        alternatives = [clauses(a) for a in t.any_of]
        if all(alternatives):
            out.append(frozenset().union(*(min(a, key=len) for a in alternatives)))
    return tuple(dict.fromkeys(out))


def _quantities(t: Trigger) -> Iterable[str]:
    yield from (lab.quantity for lab in t.labs)
    for a in t.any_of:
        yield from _quantities(a)


@dataclass(frozen=True, slots=True)
class TriggerIndex:
    """``always``: positions of the criteria evaluated for every record; ``by_concept``: the
    positions of the other criteria by each concept of the clause they are filed under;
    ``rest``: each filed criterion's other clauses; ``quantities``: the result quantities some
    clause names (the record is read for these only)."""

    criteria: tuple[Criterion, ...]
    always: frozenset[int]
    by_concept: dict[str, tuple[int, ...]]
    rest: dict[int, tuple[_Clause, ...]]
    quantities: tuple[str, ...]


def build(criteria: Sequence[Criterion]) -> TriggerIndex:
    """The index of ``criteria`` (in their order)."""
    always: set[int] = set()
    by_concept: dict[str, list[int]] = {}
    rest: dict[int, tuple[_Clause, ...]] = {}
    for i, c in enumerate(criteria):
        found = clauses(c.trigger)
        if not found:
            always.add(i)
            continue
        # Filed under its narrowest clause: the fewest concepts, drugs before groups.
        key = min(found, key=len)
        for concept in key:
            by_concept.setdefault(concept, []).append(i)
        rest[i] = tuple(x for x in found if x is not key)
    quantities = sorted({q for c in criteria for q in _quantities(c.trigger)})
    return TriggerIndex(
        tuple(criteria),
        frozenset(always),
        {k: tuple(v) for k, v in by_concept.items()},
        rest,
        tuple(quantities),
    )


@lru_cache(maxsize=8)  # knowledges: the shipped one, a site's, a test's
def trigger_index(knowledge: Knowledge) -> TriggerIndex:
    """The index of the criteria that may fire under ``knowledge`` (built once per knowledge;
    a knowledge compares by identity)."""
    return build(firing(knowledge))


def _lab_concepts(f: Facts, quantities: Iterable[str]) -> Iterator[str]:
    for q in quantities:
        held = f.kidney is not None if q == "kidney" else f.latest(q) is not None
        if held:
            yield _lab(q)


def record_concepts(f: Facts, quantities: Iterable[str] = ()) -> frozenset[str]:
    """The concepts one record holds, in the clauses' vocabulary: each medicine's ingredients,
    classes and flags as specs, the groups of its current problems (``group:``, chronic kidney
    disease shown by results included) and of every problem on record (``ever:``), and each of
    ``quantities`` with a usable result (``lab:``), and the facts some part needs (``fact:``:
    an index stay, a kidney function, pregnancy...)."""
    out: set[str] = set()
    for m in f.meds:
        out.update(f"drug:{d}" for d in m.drugs)
        out.update(f"class:{c}" for c in m.classes)
        out.update(f"flag:{x}" for x in m.flags)
    for pr, groups in f.problems:
        out.update(f"ever:{g}" for g in groups)
        if groups and f.is_current(pr, groups):
            out.update(f"group:{g}" for g in groups)
    if f.lab_ckd:
        out.add("group:ckd")
    out.update(_facts(f))
    out.update(_lab_concepts(f, quantities))
    return frozenset(out)


def candidates(index: TriggerIndex, f: Facts) -> tuple[Criterion, ...]:
    """The criteria of ``index`` that the record of ``f`` can fire, in the index's order."""
    held = record_concepts(f, index.quantities)
    found = set(index.always)
    for concept in held:
        for i in index.by_concept.get(concept, ()):
            if i not in found and all(held & clause for clause in index.rest[i]):
                found.add(i)
    return tuple(index.criteria[i] for i in sorted(found))
