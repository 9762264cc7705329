"""The patient's wording of a plan's activities, from ``data/patient_wording.yaml``.

Each activity gets a short plain-language line: the one of its action kind where the file words
that kind (``actions``: a stop today, a taper, a switch, a course's end), so the patient is told
what the clinician is told; else the template keyed by its id template (``opt-stop-{a}`` words
``opt-stop-warfarin``). A template is filled with the plain names of the medicine the activity
acts on and, for a switch, of the one it changes to; the date a course ends; where a medicine was
stopped (a hospital stay, an emergency visit); and cited numbers of ``data/parameters.yaml``
(``{fast_sugar_g}``). A literal number in a template is refused, so the patient version states
no number, dose or date that is not in the record or the knowledge. A child's plan is addressed
to the parent (a template's ``child_text``). An activity no template matches (or one whose
template needs a fact the activity lacks) is left to the core's generic line
(``service.text.patient.generic_wording``). Read once, at import; no other I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from service.core.model import ACTION_KINDS, Option, PatientWording
from service.record.profile import PatientProfile

from ._datafile import DATA_DIR, load_file
from .actions import action_kind
from .criteria.schema import NUMBER
from .drugs import identify, named_in
from .parameters import param, param_int, shipped_parameters
from .transitions import changes_of, index_stay

__all__ = [
    "ANOTHER_MEDICINE",
    "PATIENT_WORDING_FILE",
    "PatientWordings",
    "cited_numbers",
    "load_wordings",
    "patient_wordings",
]

PATIENT_WORDING_FILE = DATA_DIR / "patient_wording.yaml"
Section = Literal["medicines", "tests", "visits", "watch", "other", "intro"]
# Plan-wide lines may also word the patient version's frame: its title, each section's heading
# and the line of an empty plan (in a child's plan, all addressed to the parent).
FrameSection = Literal[
    "title",
    "heading-medicines",
    "heading-tests",
    "heading-visits",
    "heading-other",
    "heading-watch",
    "empty",
]
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
# Facts of the activity a template may name; cited numbers come from the file's ``parameters``.
_FIELDS = frozenset({"medicine", "target", "date", "stay"})
# A switch whose target the option does not name.
ANOTHER_MEDICINE = "another medicine"


def _plain(text: str) -> str:
    if NUMBER.search(_PLACEHOLDER.sub("", text)):
        raise ValueError(
            "a patient wording holds no literal number (the record or a cited parameter, "
            "through a placeholder, states them)"
        )
    return " ".join(text.split())


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Line(_Strict):
    section: Section | FrameSection
    text: str
    child_text: str = ""  # said in a child's plan, to the parent, in place of ``text``

    @field_validator("text", "child_text")
    @classmethod
    def _text(cls, v: str) -> str:
        return _plain(v)


class ActivityWording(_Strict):
    id: str = Field(pattern=r"^[a-z0-9{}][a-z0-9{}\-]*$")
    section: Section
    text: str
    watch: str = ""
    child_text: str = ""
    advice: str | None = None  # a key of ``advice``: lines said with the activity

    @field_validator("text", "watch", "child_text")
    @classmethod
    def _texts(cls, v: str) -> str:
        return _plain(v)


class ActionWording(_Strict):
    """How the patient is told an action kind; ``urgent``: only for an urgent or resolve-first
    option (a switch today), matched before the entry without it."""

    kind: str
    urgent: bool = False
    section: Section
    text: str
    child_text: str = ""
    watch: str = ""

    @field_validator("text", "watch", "child_text")
    @classmethod
    def _texts(cls, v: str) -> str:
        return _plain(v)


class TakenWording(_Strict):
    """How the patient is told an action on a medicine recorded as taken, not prescribed here
    (``kinds``: the action kinds it tells, empty for any; ``origin``: only a medicine the record
    has that way, ``Medication.taken``)."""

    kinds: tuple[str, ...] = ()
    origin: str = ""
    section: Section
    text: str
    child_text: str = ""
    watch: str = ""

    @field_validator("text", "watch", "child_text")
    @classmethod
    def _texts(cls, v: str) -> str:
        return _plain(v)


class Advice(_Strict):
    """Lines said as "what to watch for" with the activities that name this advice;
    ``glucagon`` only where glucagon is prescribed or offered in the plan."""

    watch: tuple[str, ...] = Field(min_length=1)
    glucagon: tuple[str, ...] = ()

    @field_validator("watch", "glucagon")
    @classmethod
    def _texts(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_plain(x) for x in v)


class PatientWordings(_Strict):
    version: str
    last_reviewed: str = ""
    # Placeholder -> the cited parameter (``data/parameters.yaml``) whose value it states.
    parameters: dict[str, str] = Field(default_factory=dict)
    plan: tuple[Line, ...] = ()
    actions: tuple[ActionWording, ...] = ()
    taken: tuple[TakenWording, ...] = ()
    advice: dict[str, Advice] = Field(default_factory=dict)
    activities: tuple[ActivityWording, ...]

    @model_validator(mode="after")
    def _known(self) -> PatientWordings:
        """Every placeholder names a fact or a cited parameter; every kind, advice and
        parameter named exists."""
        unknown_params = sorted(set(self.parameters.values()) - set(shipped_parameters()))
        if unknown_params:
            raise ValueError(f"parameters {unknown_params} are not in parameters.yaml")
        known = _FIELDS | set(self.parameters)
        texts = [("plan", t) for line in self.plan for t in (line.text, line.child_text)]
        texts += [(a.kind, t) for a in self.actions for t in (a.text, a.child_text, a.watch)]
        texts += [("taken", t) for a in self.taken for t in (a.text, a.child_text, a.watch)]
        texts += [(w.id, t) for w in self.activities for t in (w.text, w.child_text, w.watch)]
        texts += [(k, t) for k, a in self.advice.items() for t in (*a.watch, *a.glucagon)]
        for where, text in texts:
            unknown = set(_PLACEHOLDER.findall(text)) - known
            if unknown:
                raise ValueError(
                    f"{where}: unknown placeholder(s) {sorted(unknown)}; known: {sorted(known)}"
                )
        bad_kinds = sorted({a.kind for a in self.actions} - set(ACTION_KINDS))
        if bad_kinds:
            raise ValueError(f"unknown action kind(s) {bad_kinds}")
        bad_advice = sorted({w.advice for w in self.activities if w.advice} - set(self.advice))
        if bad_advice:
            raise ValueError(f"unknown advice {bad_advice}")
        return self


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


@dataclass(frozen=True, slots=True)
class _Plan:
    """What every activity's wording may read about the patient and the plan."""

    profile: PatientProfile
    child: bool
    glucagon: bool  # prescribed, or offered by the plan
    stay: str  # where medicines were last changed: " while you were in the hospital"...
    course_ends: dict[str, str]  # MedicationRequest ref -> the day its course ends, in words


def _medicine(option: Option, profile: PatientProfile) -> str:
    """The plain name(s) of the medicine the activity acts on ("" when it names none): its
    request's, else those of a request it cites that its title names (a medicine kept off the
    list after a stay acts on no active request)."""
    med = next((m for m in profile.medications if m.ref == option.medication_ref), None)
    if med is not None:
        return " and ".join(identify(med))
    titled = set(named_in(option.title))
    refs = set(option.refs)  # an option may cite thousands of orders
    cited = (identify(m) for m in profile.medications if m.ref in refs)
    return next((" and ".join(n) for n in cited if titled & set(n)), "")


def _target(option: Option, medicine: str, profile: PatientProfile) -> str:
    """What a switch changes to: the medicines its title names after the one it acts on, else
    those its description names, else "another medicine"; never one the patient takes now (the
    other drug of an interaction)."""
    own = set(medicine.split(" and "))
    own |= {n for m in profile.active_medications for n in identify(m)}
    for text in (option.title, option.description):
        after = text.lower().partition(medicine.split(" and ")[0])[2] if medicine else text
        names = [n for n in named_in(after) if n not in own]
        if names:
            return " or ".join(names)
    return ANOTHER_MEDICINE


def _day(d: date) -> str:
    return f"{d.day} {d:%B} {d.year}"


def _fill(text: str, values: dict[str, str]) -> str:
    out = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)
    return out[:1].upper() + out[1:]


def _values(option: Option, plan: _Plan) -> dict[str, str]:
    medicine = _medicine(option, plan.profile)
    values = {k: f"{param(v):g}" for k, v in WORDINGS.parameters.items()}
    values["stay"] = plan.stay
    if medicine:
        values["medicine"] = medicine
        values["target"] = _target(option, medicine, plan.profile)
    if option.medication_ref in plan.course_ends:
        values["date"] = plan.course_ends[option.medication_ref]
    return values


def _action_wording(option: Option) -> ActionWording | None:
    kind = option.action or action_kind(option.id, option.urgency_class)
    urgent = option.urgency_class in ("urgent", "resolve-first")
    fits = [a for a in WORDINGS.actions if a.kind == kind and (urgent or not a.urgent)]
    return min(fits, key=lambda a: not a.urgent, default=None)


def _taken_wording(option: Option, profile: PatientProfile) -> TakenWording | None:
    """The wording of an action on a medicine recorded as taken, not prescribed here; None for
    a prescription (or an option on no medicine)."""
    med = next((m for m in profile.medications if m.ref == option.medication_ref), None)
    if med is None or not med.taken:
        return None
    kind = option.action or action_kind(option.id, option.urgency_class)
    fits = [
        t
        for t in WORDINGS.taken
        if (not t.kinds or kind in t.kinds) and t.origin in ("", med.taken)
    ]
    return min(fits, key=lambda t: (not t.origin, not t.kinds), default=None)


def _word(option: Option, plan: _Plan) -> tuple[PatientWording, ...]:
    by_id = next((c.wording for c in _COMPILED if c.pattern.match(option.id)), None)
    taken = _taken_wording(option, plan.profile)
    if taken is not None:
        by_id = None  # its advice and watch lines speak of a prescription
    chosen = taken or _action_wording(option) or by_id
    if chosen is None:
        return ()
    text = (chosen.child_text or chosen.text) if plan.child else chosen.text
    watch = chosen.watch or (by_id.watch if by_id is not None else "")
    values = _values(option, plan)
    if any(name not in values for name in _PLACEHOLDER.findall(text + watch)):
        return ()
    out = [PatientWording(option.id, chosen.section, _fill(text, values), _fill(watch, values))]
    advice = WORDINGS.advice.get(by_id.advice) if by_id is not None and by_id.advice else None
    if advice is not None:
        lines = (*advice.watch, *(advice.glucagon if plan.glucagon else ()))
        out += [PatientWording(option.id, "watch", _fill(line, values)) for line in lines]
    return tuple(out)


def _plan_facts(profile: PatientProfile, options: tuple[Option, ...]) -> _Plan:
    age = profile.age
    child = age is not None and age < param_int("age.adult_years")
    glucagon = any("glucagon" in identify(m) for m in profile.active_medications) or any(
        o.id == "opt-start-glucagon" for o in options
    )
    stay = index_stay(profile)
    where = {"hospital stay": " while you were in the hospital"}
    where["emergency visit"] = " when you were seen for an emergency"
    ends = {
        c.med.ref: _day(c.ends)
        for c in changes_of(profile, stay)
        if c.ends is not None and c.kind in ("course-ending", "course-ended")
    }
    return _Plan(profile, child, glucagon, where.get(stay.setting, "") if stay else "", ends)


def cited_numbers() -> frozenset[str]:
    """The numbers the wording states from cited parameters (``{fast_sugar_g}``), as written."""
    return frozenset(f"{param(name):g}" for name in WORDINGS.parameters.values())


def patient_wordings(
    profile: PatientProfile, options: Iterable[Option]
) -> tuple[PatientWording, ...]:
    """The plan-wide lines (no option id), and each option's wording where a template fits,
    followed by the advice lines its template names (under the same option id)."""
    opts = tuple(options)
    plan = _plan_facts(profile, opts)
    said = (
        (line, (line.child_text or line.text) if plan.child else line.text)
        for line in WORDINGS.plan
    )
    lines = tuple(PatientWording("", line.section, text) for line, text in said)
    return lines + tuple(w for o in opts for w in _word(o, plan))
