"""What each activity does and when: its action kind, from ``data/actions.yaml``.

The kind is read from what the option already carries: a criterion's own ``action`` where it
states one, else the option's id (``opt-stop-{a}`` stops, ``opt-taper-{a}`` tapers ...), with an
urgent or resolve-first stop made a stop today ("stop-now") and any other a stop at the next
review. A stop of a medicine that must not be stopped suddenly (the file's ``withdrawal`` list,
cited per drug or class) is a taper instead, and its clinician title says so: the clinician
summary and the patient version both read the kind, so the patient is never told to stop today
what the clinician is told to taper. Read once, at import; no other I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from service.core.model import ACTION_KINDS, ActionKind
from service.record.profile import PatientProfile

from ._datafile import DATA_DIR, load_file
from .criteria.schema import SPEC
from .drugs import identify, members

__all__ = [
    "ACTIONS_FILE",
    "WithdrawalRisk",
    "action_kind",
    "medicine_withdrawal_risk",
    "taper_title",
    "withdrawal_risk",
]

ACTIONS_FILE = DATA_DIR / "actions.yaml"
# The kinds an id pattern may name: "stop" is split into a stop today or at the next review by
# how soon the option is to be acted on.
_ID_KINDS = frozenset({*ACTION_KINDS, "stop"}) - {"stop-now", "stop-at-review"}
_NOW = frozenset({"urgent", "resolve-first"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ByIdRule(_Strict):
    pattern: str
    kind: str

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from exc
        return v

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in _ID_KINDS:
            raise ValueError(f"unknown action kind {v!r}; known: {sorted(_ID_KINDS)}")
        return v


class WithdrawalEntry(_Strict):
    spec: str = Field(pattern=SPEC.pattern)
    min_days: int | None = Field(default=None, ge=1)
    source: str


class ActionsFile(_Strict):
    version: str
    by_id: tuple[ByIdRule, ...] = Field(min_length=1)
    sources: dict[str, str]
    withdrawal: tuple[WithdrawalEntry, ...]

    @model_validator(mode="after")
    def _known(self) -> ActionsFile:
        bad = [w.spec for w in self.withdrawal if w.source not in self.sources]
        if bad:
            raise ValueError(f"withdrawal entries {bad} name a source not in 'sources'")
        empty = [w.spec for w in self.withdrawal if not members(w.spec)]
        if empty:
            raise ValueError(f"withdrawal entries {empty} name no drug of the drug data")
        return self


ACTIONS = load_file(ACTIONS_FILE, ActionsFile)
_BY_ID = tuple((re.compile(r.pattern + r"\Z"), r.kind) for r in ACTIONS.by_id)


@dataclass(frozen=True, slots=True)
class WithdrawalRisk:
    """Why a medicine is not stopped suddenly: the entry that names it and its source."""

    spec: str
    source: str
    statement: str


def action_kind(option_id: str, urgency_class: str | None, stated: str | None = None) -> ActionKind:
    """The action kind of an option: ``stated`` (a criterion's own) where given, else what its
    id says, a stop being "stop-now" when it is urgent or resolve-first.

    >>> action_kind("opt-stop-aspirin", "urgent"), action_kind("opt-stop-aspirin", "soon")
    ('stop-now', 'stop-at-review')
    >>> action_kind("opt-intensify-statin-simvastatin", "soon")
    'switch'
    """
    kind = stated or next((k for pattern, k in _BY_ID if pattern.match(option_id)), "review")
    if kind == "stop":
        kind = "stop-now" if urgency_class in _NOW else "stop-at-review"
    return kind  # type: ignore[return-value]  # validated against ACTION_KINDS at load


def withdrawal_risk(
    ingredients: tuple[str, ...], first_order: date | None, as_of: date
) -> WithdrawalRisk | None:
    """The withdrawal entry that forbids stopping a medicine of these ingredients suddenly, for
    use since ``first_order`` (unknown: taken as long enough); None when none applies."""
    days = None if first_order is None else (as_of - first_order).days
    for w in ACTIONS.withdrawal:
        if not members(w.spec) & set(ingredients):
            continue
        if w.min_days is None or days is None or days >= w.min_days:
            return WithdrawalRisk(w.spec, w.source, ACTIONS.sources[w.source])
    return None


def medicine_withdrawal_risk(
    profile: PatientProfile, medication_ref: str | None
) -> tuple[str, WithdrawalRisk] | None:
    """The plain name of the medicine a request holds and why it is not stopped suddenly, for
    the request ``medication_ref`` of ``profile``; None when it names none or none applies."""
    med = next((m for m in profile.medications if m.ref == medication_ref), None)
    names = identify(med) if med is not None else ()
    if not names:
        return None
    orders = [
        m.authored
        for m in profile.medications
        if m.authored is not None and set(identify(m)) & set(names)
    ]
    risk = withdrawal_risk(names, min(orders, default=None), profile.as_of)
    return None if risk is None else (" and ".join(names), risk)


def taper_title(title: str, medicine: str) -> str:
    """A stop's clinician title once it is a taper: what to do comes first, the stop's own
    reasons after it."""
    return f"Taper {medicine} step by step, not stopped suddenly (withdrawal risk): {title}"
