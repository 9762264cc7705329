"""Goals of care: a recorded palliative or end-of-life status, as data (``goals_of_care.yaml``).

``goals_of_care`` finds the record entry that puts the patient in palliative or end-of-life care
(a coded or worded Condition, a recent contact with such a service, or a problem of limited life
expectancy) and the day it was recorded. ``withdrawn`` names the criteria and rule functions the
plan then leaves out (prevention, screening and targets whose benefit comes after years), and
``review_goals_of_care`` adds the one line that says so and offers to review, with the patient,
the medicines whose benefit lies years away (STOPPFrail). Pure: no I/O after import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Code
from service.record.vocabulary import ICD10, SNOMED

from . import conditions, drugs
from ._datafile import DATA_DIR, load_yaml
from .analysis import Output, Proposal, refs
from .criteria.interpret import day_words
from .criteria.schema import SPEC
from .facts import Facts
from .rule_points import make_point, rule_option

__all__ = [
    "GOALS",
    "GOALS_FILE",
    "GOALS_OF_CARE",
    "GoalsFile",
    "GoalsOfCare",
    "goals_of_care",
    "load_goals",
    "palliative_refs",
    "review_goals_of_care",
    "withdrawn",
]

GOALS_FILE = DATA_DIR / "goals_of_care.yaml"
# The id the line carries as its criterion (timeframes and audits name it).
GOALS_OF_CARE = "goals-of-care-palliative"

_Days = Annotated[int, Field(gt=0, le=3650)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _DaysValue(_Strict):
    value: _Days
    source: str


class Withdrawn(_Strict):
    ids: tuple[str, ...] = Field(min_length=1)
    what: str = Field(min_length=1)
    source: str


class Deprescribe(_Strict):
    specs: tuple[str, ...] = Field(min_length=1)
    source: str


class GoalsFile(_Strict):
    version: str
    sources: dict[str, str] = Field(min_length=1)
    encounter_days: _DaysValue
    snomed: tuple[str, ...] = ()
    icd10: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    withdrawn: tuple[Withdrawn, ...] = Field(min_length=1)
    deprescribe: Deprescribe

    @model_validator(mode="after")
    def _known(self) -> GoalsFile:
        cited = [self.encounter_days.source, self.deprescribe.source]
        cited += [w.source for w in self.withdrawn]
        bad = sorted({s for s in cited if s not in self.sources})
        if bad:
            raise ValueError(f"sources {bad} are not in 'sources'")
        unknown = [g for g in self.groups if g not in conditions.GROUPS_BY_KEY]
        if unknown:
            raise ValueError(f"unknown condition groups {unknown}")
        specs = [s for s in self.deprescribe.specs if not SPEC.match(s) or not drugs.members(s)]
        if specs:
            raise ValueError(f"deprescribe.specs: {specs} match no drug of the drug table")
        return self


def load_goals(path: Path = GOALS_FILE) -> GoalsFile:
    return load_yaml(path, GoalsFile)


GOALS = load_goals()


@dataclass(frozen=True, slots=True)
class GoalsOfCare:
    """The record entry (``ref``) that says the patient is in palliative or end-of-life care,
    its words (``label``) and the day it was recorded (None when undated)."""

    ref: str
    label: str
    day: date | None


def _said(text: str, data: GoalsFile) -> bool:
    low = text.lower()
    return any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", low) for w in data.words)


def _coded(codes: tuple[Code, ...], data: GoalsFile) -> bool:
    for c in codes:
        if c.system == SNOMED and c.code in data.snomed:
            return True
        flat = c.code.replace(".", "").upper()
        if c.system in (ICD10, conditions.ICD10_WHO) and any(
            flat.startswith(x.replace(".", "")) for x in data.icd10
        ):
            return True
    return False


def goals_of_care(f: Facts, data: GoalsFile = GOALS) -> GoalsOfCare | None:
    """The first record entry, by day, that puts the patient in palliative or end-of-life
    care; None when none does."""
    found = _entries(f, data)
    if not found:
        return None
    return min(found, key=lambda g: (g.day or date.max, g.ref))


def palliative_refs(f: Facts, data: GoalsFile = GOALS) -> frozenset[str]:
    """Every record entry that says so: the plan reads each (the coverage statement's)."""
    return frozenset(g.ref for g in _entries(f, data))


def _entries(f: Facts, data: GoalsFile) -> list[GoalsOfCare]:
    found: list[GoalsOfCare] = []
    for pr, groups in f.problems:
        if not pr.active or pr.abatement is not None:
            continue
        words = " ".join((pr.text, *(c.display for c in pr.codes)))
        if _coded(pr.codes, data) or _said(words, data) or set(groups) & set(data.groups):
            found.append(GoalsOfCare(pr.ref, pr.text, pr.onset or pr.recorded))
    p = f.p
    for e in p.encounters:
        day = e.start
        if day is None or not 0 <= (p.as_of - day).days <= data.encounter_days.value:
            continue
        codes = (*e.types, *e.reasons)
        words = " ".join((e.kind, e.reason_text, *(c.display for c in codes)))
        if _coded(codes, data) or _said(words, data):
            found.append(GoalsOfCare(e.ref, e.kind or e.reason_text, day))
    return found


def withdrawn(g: GoalsOfCare | None, data: GoalsFile = GOALS) -> frozenset[str]:
    """The criteria and rule ids left out of the plan under ``g`` (none without it)."""
    if g is None:
        return frozenset()
    return frozenset(i for w in data.withdrawn for i in w.ids)


def _recorded(g: GoalsOfCare) -> str:
    name = " ".join(g.label.split()) or "palliative care"
    name = re.sub(r"\s*\([a-z /]+\)$", "", name)
    when = f" on {day_words(g.day)}" if g.day is not None else ""
    return f"{name[:1].lower() + name[1:] if name[1:2].islower() else name} recorded{when}"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def review_goals_of_care(
    f: Facts, o: Output, g: GoalsOfCare | None, data: GoalsFile = GOALS
) -> None:
    """Add the line that says what the plan left out under ``g`` and why, and offers to review
    the medicines whose benefit lies years away; nothing without ``g``."""
    if g is None:
        return
    meds = tuple(dict.fromkeys(m for s in data.deprescribe.specs for m in f.distinct_with_spec(s)))
    why = _recorded(g)
    said = why[:1].upper() + why[1:]
    left = _and([w.what for w in data.withdrawn])
    spec = rule_option("goals-of-care-review")
    names = _and(list(dict.fromkeys(m.text for m in meds))) if meds else ""
    title = f"Review the plan against the goals of care ({why})"
    description = f"{said}: this plan leaves out {left}. Agree with the patient which medicines "
    description += (
        f"still help now, starting with those whose benefit comes after years: {names}."
        if meds
        else "still help now."
    )
    points = [make_point("goals.withdrawn", (g.ref,), why=said)]
    if meds:
        points.append(make_point("goals.deprescribe", refs((g.ref,), meds), why=said, names=names))
    o.proposals.append(
        Proposal(
            spec.id,
            title,
            spec.category,
            description,
            refs((g.ref,), meds),
            (),
            tuple(points),
            urgency=spec.urgency,
            priority=spec.priority,
            criteria=(GOALS_OF_CARE,),
            urgency_class=spec.urgency_class,
            action="review",
        )
    )
