"""Medicines the patient does not take, by one rule (``data/adherence.yaml``).

``not_taken`` says whether an active MedicationRequest is recorded as not taken: a
MedicationStatement for the same medicine (``_same_medicine``), no older than the request, whose
status says so (not-taken, stopped, on-hold) or whose words do (not taking, cannot afford...),
or the request's own notes saying so. The claim checker reads it (two medicines are not "taken
together" when one is not taken: ``claims.TakenTogether``), and ``adherence_net`` adds the plan
line that says "recorded as not taken". Pure: no I/O after import, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Medication, MedicationStatement, PatientProfile

from . import drugs
from ._datafile import DATA_DIR, load_yaml

__all__ = [
    "ADHERENCE",
    "ADHERENCE_FILE",
    "AdherenceFile",
    "NotTaken",
    "load_adherence",
    "not_taken",
    "not_taken_refs",
]

ADHERENCE_FILE = DATA_DIR / "adherence.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Values(_Strict):
    values: tuple[str, ...] = Field(min_length=1)
    source: str


class _Phrases(_Strict):
    phrases: tuple[str, ...] = Field(min_length=1)
    source: str


class _Taken(_Strict):
    """When a statement records a medicine as taken, and how (``taken.with_taken``)."""

    statuses: _Values
    informants: _Values
    over_the_counter: _Phrases


class AdherenceFile(_Strict):
    version: str
    last_reviewed: str
    sources: dict[str, str] = Field(min_length=1)
    statuses: _Values
    words: _Phrases
    taken: _Taken

    @model_validator(mode="after")
    def _known(self) -> AdherenceFile:
        t = self.taken
        cited = (
            self.statuses.source,
            self.words.source,
            t.statuses.source,
            t.informants.source,
            t.over_the_counter.source,
        )
        bad = sorted({s for s in cited if s not in self.sources})
        if bad:
            raise ValueError(f"sources {bad} are not in 'sources'")
        return self


def load_adherence(path: Path = ADHERENCE_FILE) -> AdherenceFile:
    return load_yaml(path, AdherenceFile)


ADHERENCE = load_adherence()
_FIRST_WORD = re.compile(r"[a-z][a-z0-9]+")


@dataclass(frozen=True, slots=True)
class NotTaken:
    """What records ``medicine`` (a MedicationRequest reference) as not taken: ``source`` (the
    statement, or the request itself), its ``day`` (None when undated) and its ``words`` as
    written (its status when it has none)."""

    medicine: str
    source: str
    day: date | None
    words: str


def _says(text: str, data: AdherenceFile) -> bool:
    low = " ".join(text.lower().split())
    return any(
        re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", low) for w in data.words.phrases
    )


def _same_medicine(s: MedicationStatement, m: Medication) -> bool:
    """The statement speaks of the request's medicine: a shared code, else the same
    ingredients by the drug table (a brand or another product of the same medicine), else, for
    a medicine the table does not know, the same first word of its name."""
    if {(c.system, c.code) for c in s.codes if c.code} & {
        (c.system, c.code) for c in m.codes if c.code
    }:
        return True
    said = drugs.identify(Medication(s.ref, s.text, s.codes, s.status, "", s.day))
    ordered = drugs.identify(m)
    if said or ordered:
        return said == ordered
    first = _FIRST_WORD.findall(s.text.lower())[:1]
    return bool(first) and first == _FIRST_WORD.findall(m.text.lower())[:1]


def not_taken(m: Medication, p: PatientProfile, data: AdherenceFile = ADHERENCE) -> NotTaken | None:
    """Why the active request ``m`` is recorded as not taken; None when nothing says so (or
    when ``m`` is itself a statement's medicine taken: ``taken.with_taken``)."""
    if not m.active or m.taken:
        return None
    for s in reversed(p.statements):  # the latest statement speaks first
        if not _same_medicine(s, m):
            continue
        if s.day is not None and m.authored is not None and s.day < m.authored:
            continue  # prescribed again after the patient said it
        if s.status in data.statuses.values or _says(s.reason, data):
            return NotTaken(m.ref, s.ref, s.day, s.reason or f"status {s.status}")
        return None  # the latest statement says it is taken
    said = "; ".join(x for x in (m.status_reason, m.note) if x)
    if said and _says(said, data):
        return NotTaken(m.ref, m.ref, m.authored, said)
    return None


@lru_cache(maxsize=64)
def not_taken_refs(p: PatientProfile) -> frozenset[str]:
    """The active requests of ``p`` recorded as not taken (cached per profile: every counting
    criterion asks)."""
    return frozenset(m.ref for m in p.medications if not_taken(m, p) is not None)
