"""The patient's wording of a plan's activities, from ``data/patient_wording.yaml``.

Each activity gets a short plain-language line from the template keyed by its id template
(``opt-stop-{a}`` words ``opt-stop-warfarin``), filled only with the plain name of the medicine
the activity acts on; the file's templates hold no literal number, so the patient version states
no number, dose or date that is not in the record or the knowledge. An activity no template
matches (or one whose template needs a medicine it does not name) is left to the core's generic
line (``service.text.patient.generic_wording``). Read once, at import; no other I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from service.core.model import Option, PatientWording
from service.record.profile import PatientProfile

from ._datafile import DATA_DIR, load_file
from .criteria.schema import NUMBER
from .drugs import identify

__all__ = ["PATIENT_WORDING_FILE", "PatientWordings", "load_wordings", "patient_wordings"]

PATIENT_WORDING_FILE = DATA_DIR / "patient_wording.yaml"
Section = Literal["medicines", "tests", "visits", "watch", "other"]
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_FIELDS = frozenset({"medicine"})


def _plain(text: str) -> str:
    if NUMBER.search(_PLACEHOLDER.sub("", text)):
        raise ValueError("a patient wording holds no literal number (the record states them)")
    unknown = set(_PLACEHOLDER.findall(text)) - _FIELDS
    if unknown:
        raise ValueError(f"unknown placeholder(s) {sorted(unknown)}; known: {sorted(_FIELDS)}")
    return " ".join(text.split())


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Line(_Strict):
    section: Section
    text: str

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        return _plain(v)


class ActivityWording(_Strict):
    id: str = Field(pattern=r"^[a-z0-9{}][a-z0-9{}\-]*$")
    section: Section
    text: str
    watch: str = ""

    @field_validator("text", "watch")
    @classmethod
    def _texts(cls, v: str) -> str:
        return _plain(v)


class PatientWordings(_Strict):
    version: str
    plan: tuple[Line, ...] = ()
    activities: tuple[ActivityWording, ...]


@dataclass(frozen=True, slots=True)
class _Compiled:
    wording: ActivityWording
    pattern: re.Pattern[str]
    fixed: int  # characters outside the placeholders: the more, the more specific


def _compile(w: ActivityWording) -> _Compiled:
    parts = re.split(r"\{[a-z]+\}", w.id)
    pattern = re.compile(".+".join(re.escape(p) for p in parts) + r"\Z")
    return _Compiled(w, pattern, sum(len(p) for p in parts))


def load_wordings(path: Path = PATIENT_WORDING_FILE) -> PatientWordings:
    """The wording file, validated (a bad edit stops start-up, naming the entry)."""
    return load_file(path, PatientWordings)


WORDINGS = load_wordings()
_COMPILED = sorted((_compile(w) for w in WORDINGS.activities), key=lambda c: -c.fixed)


def _medicine(option: Option, profile: PatientProfile) -> str:
    """The plain name(s) of the medicine the activity acts on ("" when it names none)."""
    med = next((m for m in profile.medications if m.ref == option.medication_ref), None)
    names = identify(med) if med is not None else ()
    return " and ".join(names)


def _fill(text: str, medicine: str) -> str:
    out = text.replace("{medicine}", medicine)
    return out[:1].upper() + out[1:]


def _word(option: Option, profile: PatientProfile) -> PatientWording | None:
    match = next((c.wording for c in _COMPILED if c.pattern.match(option.id)), None)
    if match is None:
        return None
    medicine = _medicine(option, profile)
    if not medicine and "{medicine}" in match.text + match.watch:
        return None
    watch = _fill(match.watch, medicine) if match.watch else ""
    return PatientWording(option.id, match.section, _fill(match.text, medicine), watch)


def patient_wordings(
    profile: PatientProfile, options: Iterable[Option]
) -> tuple[PatientWording, ...]:
    """The plan-wide lines (no option id) and each option's wording, where a template fits."""
    plan = tuple(PatientWording("", line.section, line.text) for line in WORDINGS.plan)
    per_option = (_word(o, profile) for o in options)
    return plan + tuple(w for w in per_option if w is not None)
