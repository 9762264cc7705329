"""Typed claims about the record, and the one checker that holds each against it.

Every activity the criteria propose rests on facts about the patient, and its sentences assert
them: a medicine was stopped during a stay, a test has no result, a daily dose is above a limit,
two medicines are taken together, the patient smokes, an event was recent. The
interpreter states each firing's claims (``claims_of`` in ``criteria.interpret``) as the types
below; ``check`` reads the ``PatientProfile`` again by the plainest rule that decides the claim,
not through the facts the firing was built from, and says why a claim does not hold. A firing
with a failing claim is not said; the plan's meta counts the claims checked and names the
withheld ones by criterion id and claim kind (no patient data).

The words that name each test group's results, the statuses of a medicine being taken and the
words of a smoking status are data (``data/claims.yaml``); the words of a stop reason that name
a stay are the transitions' (``data/transitions.yaml``). Pure: no I/O after import, no clock
(the plan day is passed in).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.record.profile import Medication, Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS

from ._datafile import DATA_DIR, load_yaml
from .adherence import not_taken
from .facts import smoking_status
from .reports_orders import outstanding, to_follow
from .transitions import TRANSITIONS
from .weight_dosing import weight_kg

__all__ = [
    "CLAIMS_FILE",
    "AboveLimit",
    "Booked",
    "Claim",
    "ClaimsFile",
    "CurrentSmoker",
    "FeatureRead",
    "NoResult",
    "NotGiven",
    "NotUnderCare",
    "OrderOutstanding",
    "Recent",
    "ReportToFollow",
    "ResultsOfContact",
    "StoppedInStay",
    "TakenTogether",
    "care_service",
    "check",
    "latest_named",
    "latest_named_is",
    "load_claims",
    "result_by_name",
]

CLAIMS_FILE = DATA_DIR / "claims.yaml"

_Days = Annotated[int, Field(gt=0, le=3650)]
_Word = Annotated[str, Field(min_length=2, pattern=r"^[a-z0-9][a-z0-9 ./:&-]*$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CareInPlace(_Strict):
    """A service the patient may already be under: the options that refer to it, the words of
    an active problem or of a contact (an Encounter's type, kind or reason) that show it, and
    how recent such a contact must be (days before the plan day)."""

    service: _Word
    options: tuple[str, ...] = Field(min_length=1)
    words: tuple[_Word, ...] = Field(min_length=1)
    within_days: _Days


class ClaimsFile(_Strict):
    version: str
    sources: dict[str, str] = Field(min_length=1)
    # Words of an Observation's name that make it a result of a test group, whatever its code.
    test_words: dict[str, tuple[_Word, ...]]
    # Words of a name that make it another test, whatever ``test_words`` it also holds.
    test_not_words: dict[str, tuple[_Word, ...]] = {}
    # Other test groups whose result also answers a check of the key group.
    answered_by: dict[str, tuple[str, ...]] = {}
    # Statuses of a MedicationRequest that mean the medicine is being taken (or is the order
    # being signed).
    taken_statuses: tuple[str, ...] = Field(min_length=1)
    # Smoking statuses (as the record's coded value reads) that make a current smoker.
    current_smoking_words: tuple[_Word, ...] = Field(min_length=1)
    not_smoking_words: tuple[_Word, ...] = Field(min_length=1)
    # Words of an Immunization's name that make it a dose of the vaccine the texts name.
    vaccine_words: dict[str, tuple[_Word, ...]] = {}
    # Services a patient may already be under, so that no option refers them there again.
    care_in_place: tuple[CareInPlace, ...] = ()


def load_claims(path: Path = CLAIMS_FILE) -> ClaimsFile:
    data = load_yaml(path, ClaimsFile)
    named = {*data.test_words, *data.test_not_words, *data.answered_by}
    unknown = (named | {g for gs in data.answered_by.values() for g in gs}) - set(LOINC_GROUPS)
    if unknown:
        raise ValueError(f"{path}: test_words names unknown test groups {sorted(unknown)}")
    return data


CLAIMS = load_claims()


@dataclass(frozen=True, slots=True)
class StoppedInStay:
    """``medicine`` (a MedicationRequest reference) was stopped or held during ``stay`` (an
    Encounter reference), not replaced by another order of the same medicine."""

    medicine: str
    stay: str
    kind: Literal["stopped-in-stay"] = "stopped-in-stay"


@dataclass(frozen=True, slots=True)
class NoResult:
    """The record holds no result of ``test`` (a ``LOINC_GROUPS`` key), by code or by name."""

    test: str
    kind: Literal["no-result"] = "no-result"


@dataclass(frozen=True, slots=True)
class AboveLimit:
    """``medicine``'s stated daily dose compares to ``limit`` as ``op`` says (the source's
    own operator)."""

    medicine: str
    daily: float | None
    op: str
    limit: float
    kind: Literal["above-limit"] = "above-limit"


@dataclass(frozen=True, slots=True)
class FeatureRead:
    """A feature of a dose rule read from the record: the age on the plan day (``ref`` empty),
    or the result ``ref`` (a body weight in kg, a creatinine in the unit it is charted in) is
    ``value`` and compares to ``threshold`` as ``op`` says exactly when ``met``."""

    feature: str
    ref: str
    value: float
    op: str
    threshold: float
    met: bool
    kind: Literal["feature-read"] = "feature-read"


@dataclass(frozen=True, slots=True)
class TakenTogether:
    """Every medicine in ``medicines`` is being taken now (none on hold or stopped, none
    recorded as not taken: ``adherence.not_taken``)."""

    medicines: tuple[str, ...]
    kind: Literal["taken-together"] = "taken-together"


@dataclass(frozen=True, slots=True)
class CurrentSmoker:
    """The latest smoking status recorded says the patient smokes."""

    kind: Literal["current-smoker"] = "current-smoker"


@dataclass(frozen=True, slots=True)
class Recent:
    """An event on ``day`` happened at most ``within_days`` before the plan day."""

    day: date
    within_days: int
    kind: Literal["recent"] = "recent"


@dataclass(frozen=True, slots=True)
class NotGiven:
    """No dose of ``vaccine`` (what the texts call it) was given within ``within_days`` before
    the plan day (None: ever), whatever code the record gives the dose."""

    vaccine: str
    within_days: int | None
    kind: Literal["not-given"] = "not-given"


@dataclass(frozen=True, slots=True)
class NotUnderCare:
    """The patient is not already under ``service`` (a ``care_in_place`` entry): no active
    problem names it and no contact with it within its window."""

    service: str
    kind: Literal["not-under-care"] = "not-under-care"


@dataclass(frozen=True, slots=True)
class ReportToFollow:
    """``report`` (a DiagnosticReport reference) is released, recent, named by no order, and
    was released after the record's last contact or recommends a further test."""

    report: str
    kind: Literal["report-to-follow"] = "report-to-follow"


@dataclass(frozen=True, slots=True)
class OrderOutstanding:
    """``order`` (a ServiceRequest reference) is an active order whose due day has passed
    with no report or result to answer it."""

    order: str
    kind: Literal["order-outstanding"] = "order-outstanding"


@dataclass(frozen=True, slots=True)
class Booked:
    """``order`` (a ServiceRequest reference, or a planned Encounter or Procedure in
    preparation) is in the record, not cancelled or completed, and due on ``day``, which is
    not before the plan day."""

    order: str
    day: date
    kind: Literal["booked"] = "booked"


@dataclass(frozen=True, slots=True)
class ResultsOfContact:
    """Each of ``results`` (Observation references) is in the record and was taken during
    ``contact`` (an Encounter reference): from its start day to its end day."""

    results: tuple[str, ...]
    contact: str
    kind: Literal["results-of-contact"] = "results-of-contact"


Claim = (
    StoppedInStay
    | NoResult
    | AboveLimit
    | FeatureRead
    | TakenTogether
    | CurrentSmoker
    | Recent
    | NotGiven
    | NotUnderCare
    | ReportToFollow
    | OrderOutstanding
    | Booked
    | ResultsOfContact
)

_OPS: Mapping[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}
_WORD = re.compile(r"[a-z][a-z0-9]+")


def check(claim: Claim, p: PatientProfile, plan_day: date, data: ClaimsFile = CLAIMS) -> str | None:
    """Why ``claim`` does not hold for ``p`` on ``plan_day``; None when it holds."""
    if isinstance(claim, Recent):
        days = (plan_day - claim.day).days
        return None if 0 <= days <= claim.within_days else f"{days} days before the plan day"
    return _checkers()[type(claim)](claim, p, plan_day, data)


def _no_result(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    found = result_by_name(p, claim.test, data)
    return None if found is None else f"a result is recorded ({found})"


def _above_limit(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    if claim.daily is None:
        return "the daily dose is not stated"
    compare = _OPS.get(claim.op)
    if compare is None:
        return f"unknown comparison {claim.op!r}"
    return None if compare(claim.daily, claim.limit) else "the dose is within the limit"


def _feature(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    compare = _OPS.get(claim.op)
    if compare is None:
        return f"unknown comparison {claim.op!r}"
    value = _feature_value(claim, p)
    if value is None:
        return "the value is not in the record"
    if not math.isclose(value, claim.value):
        return f"the record holds {value}, not {claim.value}"
    return None if compare(value, claim.threshold) == claim.met else "the comparison differs"


def _feature_value(claim: Any, p: PatientProfile) -> float | None:
    if claim.feature == "age":
        return None if p.age is None else float(p.age)
    o = next((x for x in p.observations if x.ref == claim.ref), None)
    if o is None or o.value is None:
        return None
    return weight_kg(o) if claim.feature == "weight" else o.value


def _together(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    by_ref = {m.ref: m for m in p.medications}
    for ref in claim.medicines:
        m = by_ref.get(ref)
        if m is None or m.status not in data.taken_statuses:
            return f"a medicine is {m.status if m is not None else 'absent'}"
        if not_taken(m, p) is not None:
            return "a medicine is recorded as not taken"
    return None


def _report(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    r = next((x for x in p.reports if x.ref == claim.report), None)
    if r is None:
        return "the report is not in the record"
    return None if to_follow(r, p, plan_day) else "the report needs no follow-up"


def _order(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    o = next((x for x in p.orders if x.ref == claim.order), None)
    if o is None:
        return "the order is not in the record"
    return None if outstanding(o, p, plan_day) else "the order is answered or not yet due"


def result_by_name(p: PatientProfile, test: str, data: ClaimsFile = CLAIMS) -> str | None:
    """The reference of a result of ``test`` in the record, found by the group's codes or by a
    word of the result's name; None when there is none."""
    found = latest_named(p, test, data)
    return found.ref if found is not None else None


def latest_named(p: PatientProfile, test: str, data: ClaimsFile = CLAIMS) -> Observation | None:
    """The latest result of ``test`` (a ``LOINC_GROUPS`` key), by the group's codes or by a
    word of the result's name (``test_words``): a result a site codes another way is still a
    result, and so is a result of a group that answers it (``answered_by``: a creatinine for
    an eGFR). None when the record holds none."""
    tests = (test, *data.answered_by.get(test, ()))
    codes = {c for t in tests for c in LOINC_GROUPS.get(t, ())}
    found = [
        o
        for o in p.observations
        if o.loinc in codes or any(_named(o.display, t, data) for t in tests)
    ]
    return max(found, key=lambda o: o.effective or date.min) if found else None


def latest_named_is(o: Observation, test: str, data: ClaimsFile = CLAIMS) -> bool:
    """True when the result ``o`` is one of ``test`` (a ``LOINC_GROUPS`` key), by code or by a
    word of its name, as ``latest_named`` reads results."""
    return o.loinc in LOINC_GROUPS.get(test, ()) or _named(o.display, test, data)


def _named(name: str, test: str, data: ClaimsFile) -> bool:
    low = name.lower()
    return any(_has_word(low, w) for w in data.test_words.get(test, ())) and not any(
        _has_word(low, w) for w in data.test_not_words.get(test, ())
    )


def _has_word(text: str, word: str) -> bool:
    return _word_pattern(word).search(text) is not None


@cache
def _word_pattern(word: str) -> re.Pattern[str]:
    """``word`` standing alone, compiled once (the words are the knowledge's own: a plan asks
    them of every result's name)."""
    return re.compile(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])")


def _stopped_in_stay(claim: StoppedInStay, p: PatientProfile, data: ClaimsFile) -> str | None:
    by_ref = {m.ref: m for m in p.medications}
    m = by_ref.get(claim.medicine)
    if m is None or m.status not in ("stopped", "on-hold", "cancelled"):
        return f"the request is {m.status if m is not None else 'absent'}"
    if any(_replaces(o, m) for o in p.medications if o.ref != m.ref):
        return "another order of the same medicine replaces it (a dose change)"
    stay = next((e for e in p.encounters if e.ref == claim.stay), None)
    if stay is None or stay.end is None:
        return "the stay is not in the record"
    start = stay.start or stay.end
    dated = [d for d in (m.ends, m.authored) if d is not None and start <= d <= stay.end]
    reason = m.status_reason.lower()
    words = TRANSITIONS.changes.stop_reason_words
    if m.encounter == stay.ref or dated or any(_has_word(reason, w) for w in words):
        return None
    return "nothing dates the stop inside the stay"


def _replaces(other: Medication, m: Medication) -> bool:
    """``other`` is a current order that replaces ``m``: it names ``m`` as its prior order, or
    it is the same medicine (a shared code, or the same first word of its name)."""
    if other.status not in ("active", "on-hold", "draft"):
        return False
    if other.prior == m.ref:
        return True
    if {(c.system, c.code) for c in other.codes if c.code} & {
        (c.system, c.code) for c in m.codes if c.code
    }:
        return True
    first = _WORD.findall(other.text.lower())[:1]
    return bool(first) and first == _WORD.findall(m.text.lower())[:1]


def _given(claim: NotGiven, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    words = data.vaccine_words.get(claim.vaccine, ())
    for i in p.immunizations:
        if not i.given or i.occurred is None:
            continue
        if claim.within_days is not None and (plan_day - i.occurred).days > claim.within_days:
            continue
        name = " ".join([i.text, *(c.display for c in i.codes)]).lower()
        if any(_has_word(name, w) for w in words):
            return f"a dose was given on {i.occurred.isoformat()}"
    return None


def _under_care(
    claim: NotUnderCare, p: PatientProfile, plan_day: date, data: ClaimsFile
) -> str | None:
    care = next((c for c in data.care_in_place if c.service == claim.service), None)
    if care is None:
        return None
    for pr in p.active_problems:
        if any(_has_word(pr.text.lower(), w) for w in care.words):
            return f"an active problem says so ({pr.ref})"
    for e in p.encounters:
        day = e.end or e.start
        if day is None or not 0 <= (plan_day - day).days <= care.within_days:
            continue
        name = " ".join([e.kind, e.reason_text, *(t.display for t in e.types)]).lower()
        if any(_has_word(name, w) for w in care.words):
            return f"a contact with it on {day.isoformat()} ({e.ref})"
    return None


def care_service(option_id: str, data: ClaimsFile = CLAIMS) -> str | None:
    """The service an option refers the patient to, by its id (``care_in_place``)."""
    return next((c.service for c in data.care_in_place if option_id in c.options), None)


def _smoker(p: PatientProfile, data: ClaimsFile) -> str | None:
    statuses = [o for o in p.observations if o.loinc in LOINC_GROUPS["smoking_status"]]
    if statuses:
        latest = max(statuses, key=lambda o: o.effective or date.min)
        coded = smoking_status(latest.value_codes)
        if coded is not None:
            return None if coded == "current" else f"the latest smoking status is {coded}"
        text = " ".join([latest.value_text, *(c.display for c in latest.value_codes)]).lower()
    else:  # a smoking problem on the list (tobacco dependence) speaks when no status does
        text = " ".join(c.text for c in p.active_problems if "smok" in c.text.lower()).lower()
    if not text:
        return "no smoking status is recorded"
    if any(_has_word(text, w) for w in data.not_smoking_words):
        return "the latest smoking status is not current"
    if any(_has_word(text, w) for w in data.current_smoking_words):
        return None
    return "the latest smoking status does not say current"


def _booked(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    o = next((x for x in p.orders if x.ref == claim.order), None)
    b = next((x for x in p.bookings if x.ref == claim.order), None)
    if o is None and b is None:
        return "the order is not in the record"
    if o is not None and (
        o.status in ("revoked", "completed", "entered-in-error") or o.due != claim.day
    ):
        return "the order is not booked for that day"
    if b is not None and b.day != claim.day:
        return "the booking is not for that day"
    return None if claim.day >= plan_day else "the day has passed"


def _of_contact(claim: Any, p: PatientProfile, plan_day: date, data: ClaimsFile) -> str | None:
    e = next((x for x in p.encounters if x.ref == claim.contact), None)
    first, last = (None, None) if e is None else (e.start or e.end, e.end or e.start)
    if first is None or last is None:
        return "the contact is not in the record, or not dated"
    days = {o.ref: o.effective for o in (*p.readings, *p.observations)}
    for ref in claim.results:
        day = days.get(ref)
        if day is None or not first <= day <= last:
            return f"{ref} was not taken during the contact"
    return None


_Checker = Callable[[Any, PatientProfile, date, ClaimsFile], "str | None"]


@cache
def _checkers() -> dict[type, _Checker]:
    """One check per claim kind (``Recent``, the plain comparison of days, is in ``check``)."""
    return {
        StoppedInStay: lambda c, p, day, data: _stopped_in_stay(c, p, data),
        NoResult: _no_result,
        AboveLimit: _above_limit,
        FeatureRead: _feature,
        TakenTogether: _together,
        CurrentSmoker: lambda c, p, day, data: _smoker(p, data),
        NotGiven: _given,
        NotUnderCare: _under_care,
        ReportToFollow: _report,
        OrderOutstanding: _order,
        Booked: _booked,
        ResultsOfContact: _of_contact,
    }
