"""Drug levels: the target ranges of narrow-therapeutic-index drugs and what moves them.

The table is data (``data/drug_levels.yaml``), validated when this module is imported: every
drug and every cause spec must name an entry of the drug table, every range a known source and
condition group. This module answers one question for the criteria interpreter: for a medicine,
its latest level in the entry's unit (other units converted by the entry's factors, unknown
units left unjudged), the one before, and the range that applies to this patient, if any.
No rules, no patient logic beyond that, no I/O after import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Observation, PatientProfile

from ._datafile import DATA_DIR, load_file
from .conditions import GROUPS_BY_KEY
from .drugs import CLASS_LABELS, DRUGS

__all__ = [
    "LEVELS",
    "LEVELS_FILE",
    "Level",
    "LevelEntry",
    "LevelRange",
    "Reading",
    "is_level",
    "level_entry",
    "level_of",
    "load_levels",
    "reading",
    "readings",
]

LEVELS_FILE = DATA_DIR / "drug_levels.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LevelRange(_Strict):
    """A target range and whom it is for; ``conditions``: only with one of these on record."""

    low: float = Field(ge=0)
    high: float = Field(gt=0)
    population: str
    conditions: tuple[str, ...] = ()
    source: str
    ref: str

    @model_validator(mode="after")
    def _ordered(self) -> LevelRange:
        if self.low >= self.high:
            raise ValueError(f"low {self.low} is not below high {self.high}")
        return self


class LevelEntry(_Strict):
    drug: str
    loinc: tuple[str, ...] = Field(min_length=1)
    # Words of a result's name that make it this level whatever its code (a level a site sends
    # with a local code or only a text): the drug's name unless stated.
    names: tuple[str, ...] = ()
    unit: str
    units: dict[str, float] = Field(min_length=1)
    ranges: tuple[LevelRange, ...] = ()
    # Why no range applies when none does (said in the texts instead of a guessed range).
    target: str = ""
    raised_by: tuple[str, ...] = ()
    lowered_by: tuple[str, ...] = ()
    kidney_cleared: bool = False
    # The criterion that already asks for this level when it is overdue or missing.
    due_elsewhere: str = ""
    # False: a level is taken for a reason (response, toxicity, a new interacting drug), not as
    # a routine, so a record without one is not asked for one.
    routine: bool = True
    source: str

    @model_validator(mode="after")
    def _target_said(self) -> LevelEntry:
        always = any(not r.conditions for r in self.ranges)
        if not always and not self.target:
            raise ValueError("a drug whose range does not always apply needs a 'target' text")
        if self.unit.lower().replace("µ", "u") not in self.units:
            raise ValueError(f"units must include the entry's own unit {self.unit!r}")
        return self


class LevelsFile(_Strict):
    version: str
    last_reviewed: str = ""
    sources: dict[str, str]
    levels: tuple[LevelEntry, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> LevelsFile:
        names = {d.name for d in DRUGS}
        known = {"drug": names, "class": set(CLASS_LABELS), "flag": set(CLASS_LABELS)}
        problems: list[str] = []
        seen: set[str] = set()
        for e in self.levels:
            where = f"levels[{e.drug}]"
            if e.drug in seen:
                problems.append(f"{where}: listed twice")
            seen.add(e.drug)
            if e.drug not in names:
                problems.append(f"{where}: {e.drug!r} is not in the drug table")
            for src in (e.source, *(r.source for r in e.ranges)):
                if src not in self.sources:
                    problems.append(f"{where}: unknown source {src!r}")
            for g in (c for r in e.ranges for c in r.conditions):
                if g not in GROUPS_BY_KEY:
                    problems.append(f"{where}: unknown condition group {g!r}")
            for spec in (*e.raised_by, *e.lowered_by):
                kind, _, name = spec.partition(":")
                if name not in known.get(kind, set()):
                    problems.append(f"{where}: unknown drug spec {spec!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def load_levels(path: Path = LEVELS_FILE) -> LevelsFile:
    """Read and validate the levels table (``KnowledgeFileError`` names what is wrong)."""
    return load_file(path, LevelsFile)


_FILE = load_levels()
LEVELS: tuple[LevelEntry, ...] = _FILE.levels
_BY_DRUG = {e.drug: e for e in LEVELS}


def level_entry(drug: str) -> LevelEntry | None:
    return _BY_DRUG.get(drug)


@dataclass(frozen=True, slots=True)
class Reading:
    """One level in the entry's unit (``value``), with the Observation it was read from."""

    obs: Observation
    value: float


@dataclass(frozen=True, slots=True)
class Level:
    """What the criteria compare: the latest reading, the one before, the applicable range."""

    entry: LevelEntry
    latest: Reading | None
    previous: Reading | None
    range: LevelRange | None


def reading(entry: LevelEntry, o: Observation) -> Reading | None:
    """``o`` in the entry's unit, or None when its unit is not one the entry can convert."""
    if o.value is None:
        return None
    factor = entry.units.get(o.unit.strip().lower().replace("µ", "u"))
    return None if factor is None else Reading(o, o.value * factor)


def is_level(entry: LevelEntry, o: Observation) -> bool:
    """``o`` reports the entry's level: by one of its LOINC codes, or by a word of its name
    (``names``, else the drug's name). A level is judged only in a unit the entry converts."""
    if o.loinc in entry.loinc:
        return True
    name = o.display.lower()
    return any(
        re.search(rf"(?<![a-z]){re.escape(w.lower())}(?![a-z])", name)
        for w in entry.names or (entry.drug,)
    )


def readings(entry: LevelEntry, p: PatientProfile) -> tuple[Reading, ...]:
    """Every judgeable reading of the entry's level, oldest first: coded ones from the
    readings, and those with no usable code (kept one per resource) found by name."""
    seen = (*p.readings, *(o for o in p.observations if not o.recognised))
    out = [
        r
        for o in seen
        if o.value is not None and is_level(entry, o)
        for r in (reading(entry, o),)
        if r is not None
    ]
    return tuple(sorted(out, key=lambda r: r.obs.effective or date.min))


def level_of(entry: LevelEntry, p: PatientProfile, groups: frozenset[str]) -> Level:
    """The entry's level for this patient; ``groups``: the condition groups on record."""
    rs = readings(entry, p)
    latest = rs[-1] if rs else None
    previous = rs[-2] if len(rs) > 1 else None
    rng = next((r for r in entry.ranges if not r.conditions or groups & set(r.conditions)), None)
    return Level(entry, latest, previous, rng)
