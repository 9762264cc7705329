"""The hospital stay a plan after discharge is about, and the medicine changes around it.

The windows, encounter classes and list categories are data (``data/transitions.yaml``,
validated against ``TransitionsFile`` when this module is imported). ``index_stay`` picks the
latest hospital stay or emergency visit that ended within the window before the record date,
with the condition groups of its reasons and diagnoses; ``changes_of`` reads each medicine
request around it as new, stopped (with its reason), dose changed, held, a course ending on a
date or a course that has ended. Nothing is guessed from free text: a change is read from the
request's status, ``priorPrescription``, ``statusReason``, category, encounter, dates and
``boundsPeriod``. Pure: no I/O after import, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.record.profile import Condition, Encounter, Medication, Observation, PatientProfile

from ._datafile import DATA_DIR, load_yaml
from .conditions import classify
from .drugs import identify

__all__ = [
    "TRANSITIONS",
    "TRANSITIONS_FILE",
    "ChangeKind",
    "MedChange",
    "Stay",
    "TransitionsFile",
    "changes_of",
    "index_stay",
    "load_transitions",
    "stay_values",
]

TRANSITIONS_FILE = DATA_DIR / "transitions.yaml"

_Days = Annotated[int, Field(ge=0, le=3650)]
_Code = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9-]*$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StayDef(_Strict):
    classes: tuple[_Code, ...] = Field(min_length=1)
    days: _Days
    discharge_grace_days: _Days


class ChangesDef(_Strict):
    home_categories: tuple[_Code, ...] = Field(min_length=1)
    stop_reason_words: tuple[str, ...] = Field(min_length=1)
    discharge_categories: tuple[_Code, ...] = Field(min_length=1)
    ending_within_days: _Days


class TransitionsFile(_Strict):
    version: str
    sources: dict[str, str] = Field(min_length=1)
    stay: StayDef
    changes: ChangesDef


def load_transitions(path: Path = TRANSITIONS_FILE) -> TransitionsFile:
    return load_yaml(path, TransitionsFile)


TRANSITIONS = load_transitions()

ChangeKind = Literal["new", "stopped", "dose-changed", "held", "course-ending", "course-ended"]


@dataclass(frozen=True, slots=True)
class Stay:
    """The index stay: ``setting`` "hospital stay" or "emergency visit"; ``groups`` the
    condition groups of its reasons and diagnoses; ``days_since`` whole days from discharge to
    the record date."""

    encounter: Encounter
    setting: str
    admitted: date | None
    discharged: date
    days_since: int
    groups: tuple[str, ...]
    diagnoses: tuple[Condition, ...]
    label: str  # the first diagnosis or reason as the record words it

    @property
    def disposition(self) -> str:
        return self.encounter.discharge

    @property
    def refs(self) -> tuple[str, ...]:
        return (self.encounter.ref, *(p.ref for p in self.diagnoses))

    def during(self, day: date | None, grace_days: int = 0) -> bool:
        """``day`` falls between admission and discharge (plus ``grace_days``)."""
        start = self.admitted or self.discharged
        return day is not None and start <= day <= self.discharged + timedelta(days=grace_days)


@dataclass(frozen=True, slots=True)
class MedChange:
    """One medicine change around the stay. ``reason``: the request's ``statusReason`` (stopped,
    held); ``ends``: the last day of a course; ``previous``: the request a dose change
    replaces."""

    kind: ChangeKind
    med: Medication
    drugs: tuple[str, ...]
    reason: str = ""
    ends: date | None = None
    previous: Medication | None = None

    @property
    def refs(self) -> tuple[str, ...]:
        return (self.med.ref,) if self.previous is None else (self.med.ref, self.previous.ref)


_SETTING = {"EMER": "emergency visit"}


def index_stay(profile: PatientProfile, data: TransitionsFile = TRANSITIONS) -> Stay | None:
    """The latest stay of an inpatient, observation, short-stay or emergency class that ended
    within ``stay.days`` of the record date; None when there is none (an outpatient)."""
    found = [
        e
        for e in profile.encounters
        if e.class_code in data.stay.classes
        and e.end is not None
        and 0 <= (profile.as_of - e.end).days <= data.stay.days
    ]
    if not found:
        return None
    e = max(found, key=lambda x: (x.end or profile.as_of, x.ref))
    assert e.end is not None
    by_ref = {p.ref: p for p in profile.problems}
    diagnoses = tuple(by_ref[r] for r in (*e.diagnoses, *e.reason_refs) if r in by_ref)
    diagnoses = tuple(dict.fromkeys(diagnoses))
    probes = [*diagnoses]
    if e.reasons or e.reason_text:
        probes.append(Condition(e.ref, e.reason_text, e.reasons, "active", "confirmed", e.start))
    groups = tuple(dict.fromkeys(g for p in probes for g in classify(p)))
    label = next((p.text for p in probes if p.text), e.kind)
    return Stay(
        e,
        _SETTING.get(e.class_code, "hospital stay"),
        e.start,
        e.end,
        (profile.as_of - e.end).days,
        groups,
        diagnoses,
        label,
    )


def _daily(m: Medication) -> tuple[float, str] | None:
    if m.dose_value is None:
        return None
    return m.dose_value * (m.times_per_day or 1.0), m.dose_unit.strip("{} ").lower()


def _dose_differs(a: Medication, b: Medication) -> bool:
    da, db = _daily(a), _daily(b)
    if da is not None and db is not None:
        return da != db
    return (a.dose, a.frequency) != (b.dose, b.frequency)


def changes_of(
    profile: PatientProfile,
    stay: Stay | None,
    data: TransitionsFile = TRANSITIONS,
    names: Callable[[Medication], tuple[str, ...]] = identify,
) -> tuple[MedChange, ...]:
    """Each medicine change around ``stay`` (none without one), in record order."""
    if stay is None:
        return ()
    meds = profile.medications
    by_ref = {m.ref: m for m in meds}
    replaced = {m.prior for m in meds if m.prior} | _replaced_by_same(meds, names)
    grace = data.stay.discharge_grace_days
    out: list[MedChange] = []
    for m in meds:
        drugs = names(m)
        if m.status == "on-hold" and _in_stay(m, stay, data):
            out.append(MedChange("held", m, drugs, m.status_reason))
        elif (
            m.status == "stopped"
            and m.ref not in replaced
            and bool(m.status_reason)
            and _in_stay(m, stay, data)
        ):
            out.append(MedChange("stopped", m, drugs, m.status_reason))
        elif m.status == "active":
            change = _started(m, drugs, stay, meds, by_ref, names, grace)
            if change is not None:
                out.append(change)
        out += _course(m, drugs, stay, profile.as_of, data)
    return tuple(out)


def _replaced_by_same(
    meds: tuple[Medication, ...], names: Callable[[Medication], tuple[str, ...]]
) -> set[str]:
    """Stopped requests that a current request of the same ingredient replaces: a dose change
    (or a renewal), never a stop, whether or not the new request names its prior one."""
    current = {d for m in meds if m.status in ("active", "on-hold", "draft") for d in names(m)}
    return {m.ref for m in meds if m.status == "stopped" and set(names(m)) & current}


def _in_stay(m: Medication, stay: Stay, data: TransitionsFile = TRANSITIONS) -> bool:
    """A stop or hold placed in the stay: written in its Encounter, dated inside it (the
    request or the end of its course), or with a reason that names the stay
    (``stop_reason_words``). FHIR R4 gives a MedicationRequest no stop date, so an old stop
    whose reason says nothing of a hospital is not the stay's change (a stop with no reason at
    all is not read as one either)."""
    if m.encounter not in ("", stay.encounter.ref):
        return False
    if m.encounter == stay.encounter.ref:
        return True
    if any(stay.during(d) for d in (m.authored, m.ends)):
        return True
    reason = m.status_reason.lower()
    return any(re.search(rf"\b{re.escape(w)}\b", reason) for w in data.changes.stop_reason_words)


def _started(
    m: Medication,
    drugs: tuple[str, ...],
    stay: Stay,
    meds: tuple[Medication, ...],
    by_ref: dict[str, Medication],
    names: Callable[[Medication], tuple[str, ...]],
    grace: int,
) -> MedChange | None:
    """A request written for the stay: a dose change (of the request it replaces, or of an
    earlier request for the same ingredient at another dose) or a new medicine."""
    previous = by_ref.get(m.prior) if m.prior else None
    if previous is None and not (
        m.encounter == stay.encounter.ref or stay.during(m.authored, grace)
    ):
        return None
    if previous is None:
        before = [
            o
            for o in meds
            if o.ref != m.ref
            and set(names(o)) & set(drugs)
            and (o.authored is None or m.authored is None or o.authored < m.authored)
            and not stay.during(o.authored, grace)
        ]
        before.sort(key=lambda o: (o.authored or date.min, o.ref))
        previous = before[-1] if before else None
    if previous is not None and set(names(previous)) & set(drugs):
        return (
            MedChange("dose-changed", m, drugs, previous=previous)
            if _dose_differs(m, previous)
            else None
        )
    return MedChange("new", m, drugs, previous=previous)


def _course(
    m: Medication, drugs: tuple[str, ...], stay: Stay, as_of: date, data: TransitionsFile
) -> list[MedChange]:
    """A course still running that ends within the window (``course-ending``), or one that
    ended between admission and the record date (``course-ended``)."""
    if m.ends is None or m.status in ("on-hold", "stopped", "draft"):
        return []
    if m.status == "active" and 0 <= (m.ends - as_of).days <= data.changes.ending_within_days:
        return [MedChange("course-ending", m, drugs, ends=m.ends)]
    started = stay.admitted or stay.discharged
    if m.ends < as_of and m.ends >= started and m.status in ("active", "completed"):
        return [MedChange("course-ended", m, drugs, ends=m.ends)]
    return []


def stay_values(
    profile: PatientProfile, stay: Stay, loincs: tuple[str, ...]
) -> tuple[Observation, Observation] | None:
    """The first and the last reading of one quantity taken during the stay (on admission and
    at discharge); None unless there are two on different days."""
    during = [o for o in profile.series(loincs) if stay.during(o.effective)]
    if not during or during[0].effective == during[-1].effective:  # one day, or none
        return None
    return during[0], during[-1]
