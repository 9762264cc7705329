"""What the record's reports and orders say, by one set of rules (``data/reports_orders.yaml``).

A released report is still to follow when no order names it and either it was released after
the record's last contact (a record with no contact says nothing of it) or its conclusion
recommends a further test (a phrase of the file, none of its declining phrases); an order is
outstanding when it is active, is an order (not a proposal), nothing answers it and its due day
has passed. The net that makes plan lines (``report_net``) and the claims checker (``claims``)
both ask these questions here, so they cannot disagree. Pure: no I/O after import, no clock
(the plan day is passed in).
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Order, PatientProfile, Report

from ._datafile import DATA_DIR, check_patterns, load_yaml

__all__ = [
    "REPORTS_ORDERS",
    "REPORTS_ORDERS_FILE",
    "ReportsOrdersFile",
    "answered",
    "due_day",
    "last_contact",
    "load_reports_orders",
    "named_by_orders",
    "outstanding",
    "quote",
    "recommends",
    "to_follow",
]

REPORTS_ORDERS_FILE = DATA_DIR / "reports_orders.yaml"

_Days = Annotated[int, Field(gt=0, le=3650)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _DaysValue(_Strict):
    value: _Days
    source: str


class _Chars(_Strict):
    value: Annotated[int, Field(ge=40, le=400)]
    source: str


class _Values(_Strict):
    values: tuple[str, ...] = Field(min_length=1)
    source: str


class _Phrases(_Strict):
    phrases: tuple[str, ...] = Field(min_length=1)
    source: str


class Window(_Strict):
    """How long an order of this kind may wait for its result when it states no due day."""

    kind: str = Field(pattern=r"^[a-z][a-z-]*$")
    systems: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    days: _Days
    source: str


class ReportsOrdersFile(_Strict):
    version: str
    sources: dict[str, str] = Field(min_length=1)
    report_lookback_days: _DaysValue
    order_intents: _Values
    windows: tuple[Window, ...] = Field(min_length=1)
    quote_chars: _Chars
    recommends: _Phrases
    declines: _Phrases

    @model_validator(mode="after")
    def _known(self) -> ReportsOrdersFile:
        cited = [
            self.report_lookback_days.source,
            self.order_intents.source,
            self.quote_chars.source,
            self.recommends.source,
            self.declines.source,
            *(w.source for w in self.windows),
        ]
        bad = sorted({s for s in cited if s not in self.sources})
        if bad:
            raise ValueError(f"sources {bad} are not in 'sources'")
        last = self.windows[-1]
        if last.systems or last.categories:
            raise ValueError("the last window must match every order (no systems, categories)")
        check_patterns([*self.recommends.phrases, *self.declines.phrases], "phrases: ")
        return self


def load_reports_orders(path: Path = REPORTS_ORDERS_FILE) -> ReportsOrdersFile:
    return load_yaml(path, ReportsOrdersFile)


REPORTS_ORDERS = load_reports_orders()


def _words(phrases: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(rf"(?<![a-z0-9])(?:{p})(?![a-z0-9])" for p in phrases))


_RECOMMENDS = _words(REPORTS_ORDERS.recommends.phrases)
_DECLINES = _words(REPORTS_ORDERS.declines.phrases)


def recommends(conclusion: str, data: ReportsOrdersFile = REPORTS_ORDERS) -> bool:
    """Whether a conclusion recommends a further test or referral: a phrase of ``recommends``
    and none of ``declines`` among its words (case aside).

    >>> recommends("New 9 mm nodule, right upper lobe. CT chest in 3 months is recommended.")
    True
    >>> recommends("Stable appearances. No further imaging is recommended.")
    False
    """
    text = " ".join(conclusion.lower().split())
    if data is REPORTS_ORDERS:
        found, declined = _RECOMMENDS, _DECLINES
    else:
        found, declined = _words(data.recommends.phrases), _words(data.declines.phrases)
    return found.search(text) is not None and declined.search(text) is None


def last_contact(p: PatientProfile) -> date | None:
    """The last day of the record's latest contact with care (an Encounter's end, else start)."""
    days = [d for e in p.encounters for d in (e.end or e.start,) if d is not None]
    return max(days) if days else None


def named_by_orders(p: PatientProfile) -> frozenset[str]:
    """Every report an order of the record names (as its reason or support): it was acted on."""
    return frozenset(r for o in p.orders for r in o.reasons)


def to_follow(
    r: Report, p: PatientProfile, plan_day: date, data: ReportsOrdersFile = REPORTS_ORDERS
) -> str | None:
    """Why ``r`` is still to follow ("released after the last contact", "recommends a further
    test"); None when it is not (not released, undated, too old, or already acted on)."""
    day = r.day
    if not r.released or day is None or r.ref in named_by_orders(p):
        return None
    if not 0 <= (plan_day - day).days <= data.report_lookback_days.value:
        return None
    if recommends(r.conclusion, data):
        return "recommends a further test"
    # With no contact in the record (a CDS client that sent none) nothing says when the patient
    # was last seen: the report is not said to be unseen.
    contact = last_contact(p)
    if contact is not None and day > contact:
        return "released after the last contact"
    return None


def due_day(o: Order, data: ReportsOrdersFile = REPORTS_ORDERS) -> date | None:
    """The day ``o``'s result is due: its occurrence, else the day it was written plus the
    window of its kind; None when neither is known."""
    if o.due is not None:
        return o.due
    if o.authored is None:
        return None
    systems = {c.system for c in o.codes}
    categories = {c.code for c in o.categories}
    for w in data.windows:
        if not w.systems and not w.categories:
            return o.authored + timedelta(days=w.days)
        if systems & set(w.systems) or categories & set(w.categories):
            return o.authored + timedelta(days=w.days)
    return None  # unreachable: the last window matches every order (validated at load)


def answered(o: Order, p: PatientProfile) -> str | None:
    """The report or result that answers ``o`` (names it in ``basedOn``, or has its code on or
    after the day it was written); None when nothing does."""
    for r in p.reports:
        if o.ref in r.based_on:
            return r.ref
    for ob in p.readings + p.observations:
        if o.ref in ob.based_on:
            return ob.ref
    codes = {(c.system, c.code) for c in o.codes}
    if not codes or o.authored is None:
        return None
    since = o.authored
    for r in p.reports:
        if (r.day or date.min) >= since and codes & {(c.system, c.code) for c in r.codes}:
            return r.ref
    loincs = {code for system, code in codes if system == "http://loinc.org"}
    for ob in p.readings + p.observations:
        if ob.loinc in loincs and (ob.effective or date.min) >= since:
            return ob.ref
    return None


def outstanding(
    o: Order, p: PatientProfile, plan_day: date, data: ReportsOrdersFile = REPORTS_ORDERS
) -> date | None:
    """The day ``o`` was due, when it is an active order whose due day has passed by
    ``plan_day`` with nothing to answer it; None otherwise."""
    if not o.active or o.intent not in data.order_intents.values:
        return None
    due = due_day(o, data)
    if due is None or due >= plan_day or answered(o, p) is not None:
        return None
    return due


def quote(conclusion: str, data: ReportsOrdersFile = REPORTS_ORDERS) -> str:
    """The conclusion as written, cut at a whole word with an ellipsis when it is longer than
    ``quote_chars``: shortened, never reworded (control characters become spaces).

    >>> quote("Sinus rhythm.")
    'Sinus rhythm.'
    """
    printable = "".join(ch if ch.isprintable() else " " for ch in conclusion)
    text = " ".join(printable.split())
    limit = data.quote_chars.value
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"
