"""A criterion's trigger and exceptions written in FHIRPath, where FHIRPath can say them.

Published with each PlanDefinition (``action.condition.expression``, ``text/fhirpath``) so
another engine can run the rule. Each expression is evaluated with the patient's record Bundle
as its focus and ``%asOf`` (a FHIR date) as the day the record is read on: the plan day, or
``today()`` for a live engine. It is true exactly when the interpreter's part holds.

Written: active medicines of a class, flag or ingredient (RxNorm code, or a name in the text,
as ``drugs.identify`` reads them; two distinct medicines for two specs), present and absent
current problems of chronic condition groups (codes, ICD-10 prefixes and text as
``conditions.classify`` reads them, "history" and artefact records left out), age bounds (whole
years, the comparison the data states) and sex, and ``any_of``/``none_of`` of those. Everything
else (laboratory values, durations, doses, stays, events, the kidney tables...) is not written:
``to_fhirpath`` returns None, and the definition marks the condition as not executable. Reads
the knowledge tables; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cache
from typing import Final

from inference.knowledge.conditions import CONDITION_GROUPS, GROUPS_BY_KEY, ICD10_WHO
from inference.knowledge.criteria.schema import Trigger
from inference.knowledge.drugs import DRUGS, members
from inference.knowledge.facts import SUSPECTED
from service.record.vocabulary import ICD10, RXNORM, SNOMED

__all__ = ["to_fhirpath"]

_WRITTEN: Final = frozenset(
    {
        "drugs",
        "any_conditions",
        "absent_drugs",
        "absent_conditions",
        "age_min",
        "age_max",
        "sex",
        "ops",
        "any_of",
        "none_of",
    }
)
_REGEX_SPECIAL: Final = frozenset(".^$*+?()[]{}|\\/")
_ACTIVE_MED: Final = "('active' | 'on-hold' | 'draft')"
_TAKEN_STATEMENT: Final = "('active' | 'intended')"
# Conditions whose group the interpreter reads beyond the record's problems (CKD is also
# proven by laboratory results): their presence is not a matter of Condition resources alone.
_BEYOND_PROBLEMS: Final = frozenset({"ckd"})


def _string(text: str) -> str:
    """A FHIRPath string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _regex(text: str) -> str:
    return "".join(f"\\{c}" if c in _REGEX_SPECIAL else c for c in text)


def _one_of(values: Iterable[str]) -> str:
    """``code`` is one of ``values``: a search in one delimited string (a union of hundreds of
    literals nests too deep for some engines' parsers)."""
    listed = "|" + "|".join(sorted(set(values))) + "|"
    return f"{_string(listed)}.contains('|' + code + '|')"


# ----------------------------------------------------------------------------- medicines


@cache
def _medicines(spec: str) -> str | None:
    """The active MedicationRequests a ``drug:``/``class:``/``flag:`` spec matches."""
    names = members(spec)
    if not names:
        return None
    drugs = [d for d in DRUGS if d.name in names]
    codes = [c for d in drugs for c in d.rxnorm]
    words = sorted({n for d in drugs for n in d.names}, key=len, reverse=True)
    concept = "medicationCodeableConcept"
    # names are matched without apostrophes, as the drug table reads them ("St John's wort")
    bare = ".replace('\\'', '').replace('\u2019', '').lower()"
    tests = [f"{concept}.text{bare}.matches({_string(_word_pattern(words))})"]
    tests.append(f"{concept}.coding.display{bare}.matches({_string(_word_pattern(words))})")
    if codes:
        tests.insert(
            0,
            f"{concept}.coding.where((system.empty() or system = {_string(RXNORM)}) "
            f"and code.exists() and {_one_of(codes)}).exists()",
        )
    # No text: the interpreter reads the first display instead, which the display test covers.
    # A medicine the patient is recorded as taking (a MedicationStatement, active or intended)
    # counts as the interpreter counts it (inference.knowledge.taken).
    return (
        f"(entry.resource.ofType(MedicationRequest).where(status in {_ACTIVE_MED} and "
        f"({' or '.join(tests)})) | entry.resource.ofType(MedicationStatement).where("
        f"status in {_TAKEN_STATEMENT} and ({' or '.join(tests)})))"
    )


def _word_pattern(words: list[str]) -> str:
    return r"\b(" + "|".join(_regex(w) for w in words) + r")\b"


def _drugs(specs: tuple[str, ...]) -> str | None:
    if len(specs) == 1:
        one = _medicines(specs[0])
        return None if one is None else f"{one}.exists()"
    if len(specs) == 2 and specs[0] != specs[1]:
        # Two distinct medicine orders: both exist and, together, they are at least two.
        first, second = _medicines(specs[0]), _medicines(specs[1])
        if first is None or second is None:
            return None
        return f"({first}.exists() and {second}.exists() and ({first} | {second}).count() >= 2)"
    return None


# ------------------------------------------------------------------------------ problems


@cache
def _implying(group: str) -> frozenset[str]:
    """The groups whose problems count in ``group``: itself and every group implying it."""
    out = {group}
    grew = True
    while grew:
        grew = False
        for g in CONDITION_GROUPS:
            if g.key not in out and out & set(g.implies):
                out.add(g.key)
                grew = True
    return frozenset(out)


@cache
def _excluding() -> frozenset[str]:
    """Groups that make a problem not current (history, artefacts), directly or implied."""
    base = {g.key for g in CONDITION_GROUPS if g.kind in ("history", "family", "noise")}
    return frozenset(k for b in base for k in _implying(b))


def _matching(groups: Iterable[str]) -> str | None:
    keys = [GROUPS_BY_KEY[k] for k in sorted(set(groups))]
    snomed = [c for g in keys for c in g.snomed]
    prefixes = sorted({p.replace(".", "").upper() for g in keys for p in g.icd10})
    texts = [t for g in keys for t in g.text]
    tests = []
    if snomed:
        tests.append(
            f"code.coding.where(system = {_string(SNOMED)} and code.exists() and "
            f"{_one_of(snomed)}).exists()"
        )
    if prefixes:
        starts = "^(" + "|".join(_regex(p) for p in prefixes) + ")"
        tests.append(
            f"code.coding.where(system = {_string(ICD10)} or system = {_string(ICD10_WHO)})"
            f".code.replace('.', '').upper().where($this.matches({_string(starts)})).exists()"
        )
    if texts:
        pattern = "|".join(f"(?:{t})" for t in texts)
        tests.append(
            f"(code.text | code.coding.display).first().lower().matches({_string(pattern)})"
        )
    return " or ".join(tests) if tests else None


@cache
def _current(group: str) -> str | None:
    """The Conditions the interpreter counts as a current problem of ``group``."""
    g = GROUPS_BY_KEY.get(group)
    if g is None or g.kind != "chronic" or group in _BEYOND_PROBLEMS:
        return None
    inside = _matching(_implying(group))
    outside = _matching(_excluding())
    if inside is None:
        return None
    return (
        "entry.resource.ofType(Condition).where("
        "clinicalStatus.coding.code.intersect('active' | 'recurrence' | 'relapse').exists() "
        f"and (verificationStatus.coding.code.intersect({_NOT_CURRENT})).empty() "
        "and abatement.empty() "
        f"and ({inside})" + (f" and ({outside}).not()" if outside else "") + ")"
    )


# Verification statuses of a Condition the interpreter never counts as a current problem: one
# ruled out or recorded in error, and a diagnosis not yet made (``facts.SUSPECTED``).
_NOT_CURRENT = " | ".join(
    f"'{code}'" for code in ("refuted", "entered-in-error", *sorted(SUSPECTED))
)


def _any_current(groups: tuple[str, ...]) -> str | None:
    found = [_current(g) for g in groups]
    if any(f is None for f in found):
        return None
    return "(" + " or ".join(f"{f}.exists()" for f in found) + ")"


# ------------------------------------------------------------------------------- patient


def _years_reached(years: int) -> str:
    return f"entry.resource.ofType(Patient).where((birthDate + {years} years) <= %asOf).exists()"


def _age(op: str, value: float) -> str | None:
    """Whole years of age compared with ``value`` as ``op`` says, as "has reached N years"."""
    reached = {">=": math.ceil(value), ">": math.floor(value) + 1}
    below = {"<": math.ceil(value), "<=": math.floor(value) + 1}
    if op in reached:
        return _years_reached(int(reached[op]))
    if op in below:
        return f"{_years_reached(int(below[op]))}.not()"
    return None


# ------------------------------------------------------------------------------- trigger


def to_fhirpath(t: Trigger, params: dict[str, float], *, top: bool = True) -> str | None:
    """The trigger (or exception) as one boolean FHIRPath expression, or None when a part of
    it cannot be written (see the module docstring). ``top``: medicines may be bound (nested
    alternatives that bind medicines extend a binding FHIRPath does not carry)."""
    given = set(t.model_dump(exclude_defaults=True))
    if not given <= _WRITTEN or (not top and (t.drugs or t.absent_drugs)):
        return None
    parts: list[str | None] = []
    if t.drugs:
        parts.append(_drugs(t.drugs))
    for spec in t.absent_drugs:
        found = _medicines(spec)
        parts.append(None if found is None else f"{found}.empty()")
    if t.any_conditions:
        parts.append(_any_current(t.any_conditions))
    for group in t.absent_conditions:
        found = _current(group)
        parts.append(None if found is None else f"{found}.empty()")
    for name in ("age_min", "age_max"):
        key = getattr(t, name)
        if key is not None:
            parts.append(_age(t.ops[name], params[key]))
    if t.sex is not None:
        parts.append(f"entry.resource.ofType(Patient).where(gender = {_string(t.sex)}).exists()")
    if t.any_of:
        alts = [to_fhirpath(a, params, top=False) for a in t.any_of]
        parts.append(None if None in alts else "(" + " or ".join(map(str, alts)) + ")")
    for alt in t.none_of:
        one = to_fhirpath(alt, params, top=False)
        parts.append(None if one is None else f"({one}).not()")
    if not parts or any(p is None for p in parts):
        return None
    return " and ".join(str(p) for p in parts)
