"""Emergency patterns in the results of a recent contact (``data/emergencies.yaml``).

A contact that began at most ``presenting.acute_days`` before the plan day, whose results taken
during it meet every group of a cited pattern (diabetic ketoacidosis, neutropenic sepsis, acute
severe ulcerative colitis), gets one line for today that names those results, their day, the source
whose thresholds they meet and the medicines taken that the source says to stop; the line never
says the patient has the condition, only that the results meet its thresholds. Results are compared
in the unit the file states (or converted by the reference intervals' own conversions); a result in
another unit is not judged. Also answers whether a contact's results meet a pattern or a critical
value (``acute_contact``), which the presenting problems use for their timing. Pure: no I/O after
import, no clock.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Encounter, Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS
from service.text.words import unit_words

from ._datafile import DATA_DIR, load_yaml
from .analysis import Output, Proposal, rid
from .claims import ResultsOfContact, check
from .conditions import CONDITION_GROUPS
from .criteria.interpret import day_words
from .drugs import members
from .facts import Facts, MedFact, fmt
from .parameters import param_int
from .registry import Case
from .result_net import RESULTS, LabTest, in_interval_unit
from .rule_points import make_point, rule_option
from .timeframes import critical_finding

__all__ = [
    "EMERGENCIES",
    "EMERGENCIES_FILE",
    "EMERGENCY",
    "EmergenciesFile",
    "Met",
    "acute_contact",
    "flag_emergencies",
    "load_emergencies",
    "met_patterns",
    "said",
]

EMERGENCIES_FILE = DATA_DIR / "emergencies.yaml"
EMERGENCY = "net-emergency-pattern"  # the lines' criterion id (timeframes.yaml: now)
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Test(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    name: str = Field(min_length=1)
    interval_test: str | None = None  # a test id of data/reference_intervals.yaml
    loinc: tuple[str, ...] = ()
    # words of the name of a result sent with no usable LOINC code that make it this test
    names: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    unit: str = ""
    source: str


class _Threshold(_Strict):
    test: str
    op: Literal[">=", ">", "<=", "<"]
    value: float


class _Group(_Strict):
    tests: tuple[_Threshold, ...] = Field(min_length=1)
    condition: str | None = None  # a condition group that meets the group on its own


class _Pattern(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    name: str = Field(min_length=1)
    says: str = Field(min_length=1)
    scope: str = ""
    source: str
    groups: tuple[_Group, ...] = Field(min_length=1)
    # Medicines to stop when the pattern is met (drug:/class:/flag: specs), and why, in the
    # source's terms; the line names each such medicine the patient takes.
    stop: tuple[str, ...] = ()
    stop_why: str = ""

    @model_validator(mode="after")
    def _stop_has_why(self) -> _Pattern:
        if bool(self.stop) != bool(self.stop_why):
            raise ValueError(f"pattern {self.id!r}: stop and stop_why are given together")
        return self


class EmergenciesFile(_Strict):
    version: str
    last_reviewed: str
    sources: dict[str, str] = Field(min_length=1)
    tests: tuple[_Test, ...] = Field(min_length=1)
    patterns: tuple[_Pattern, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _known(self) -> EmergenciesFile:
        problems = _problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _problems(f: EmergenciesFile) -> list[str]:
    """What the file names that it, the reference intervals or the condition groups lack."""
    cited = {*(t.source for t in f.tests), *(p.source for p in f.patterns)}
    tests = {t.id for t in f.tests}
    used = {x.test for p in f.patterns for g in p.groups for x in g.tests}
    interval = {t.id for t in RESULTS.tests}
    groups = {g.condition for p in f.patterns for g in p.groups if g.condition}
    known_groups = {g.key for g in CONDITION_GROUPS}
    return [
        *(f"source {s!r} is not in 'sources'" for s in sorted(cited - set(f.sources))),
        *(f"unknown test {x!r}" for x in sorted(used - tests)),
        *(
            f"test {t.id!r}: no interval test {t.interval_test!r}"
            for t in f.tests
            if t.interval_test is not None and t.interval_test not in interval
        ),
        *(
            f"test {t.id!r} names no interval test, no LOINC code and no name"
            for t in f.tests
            if t.interval_test is None and not t.loinc and not t.names
        ),
        *(f"unknown medicine spec {x!r}" for p in f.patterns for x in p.stop if not members(x)),
        *(f"unknown condition group {g!r}" for g in sorted(groups - known_groups)),
    ]


def load_emergencies(path: Path = EMERGENCIES_FILE) -> EmergenciesFile:
    return load_yaml(path, EmergenciesFile)


EMERGENCIES = load_emergencies()


@dataclass(frozen=True, slots=True)
class Met:
    """A pattern the results of one contact meet: the contact, its day, the results that met
    each group (as recorded) and the conditions that met a group in their place."""

    pattern: str
    name: str
    says: str
    scope: str
    contact: str
    day: date
    results: tuple[Observation, ...]
    conditions: tuple[str, ...]  # Condition references
    condition_words: tuple[str, ...]  # how the line names them, as recorded
    stop: tuple[MedFact, ...] = ()  # medicines taken that the source says to stop
    stop_why: str = ""


def _recent_contacts(p: PatientProfile) -> list[Encounter]:
    window = param_int("presenting.acute_days")
    out = []
    for e in p.encounters:
        day = e.start or e.end
        if day is not None and 0 <= (p.plan_day - day).days <= window:
            out.append(e)
    return sorted(out, key=lambda e: (e.start or e.end or date.min, e.ref))


def _of_contact(p: PatientProfile, e: Encounter) -> list[Observation]:
    """The results taken during ``e`` (from its start day to its end day), latest last."""
    first = e.start or e.end
    last = e.end or e.start
    assert first is not None and last is not None  # a recent contact is dated
    # coded results are every reading; a result with no usable LOINC code is kept only as the
    # latest of its kind (and is then recognised by its name, ``_Test.names``)
    every = {o.ref: o for o in (*p.readings, *p.observations) if o.value is not None}
    return [o for o in every.values() if o.effective is not None and first <= o.effective <= last]


def _value(t: _Test, o: Observation) -> float | None:
    """``o``'s value in the unit ``t``'s thresholds are written in, when ``o`` is a result of
    ``t`` (by its LOINC code, else by its name); None when it is not, or its unit is not one
    the file lists."""
    if o.value is None or not _is_test(t, o):
        return None
    if t.interval_test is not None:
        return in_interval_unit(_lab(t.interval_test), o.value, o.unit)
    unit = o.unit.strip().lower().replace(" ", "")
    return o.value if unit in t.units else None


def _is_test(t: _Test, o: Observation) -> bool:
    if o.loinc and o.recognised:
        if t.interval_test is None:
            return o.loinc in t.loinc
        lab = _lab(t.interval_test)
        return o.loinc in {*lab.loinc, *(LOINC_GROUPS.get(lab.group, ()) if lab.group else ())}
    name = o.display.lower()
    return any(re.search(rf"\b{re.escape(w)}", name) for w in t.names)


def _lab(test_id: str) -> LabTest:
    return next(x for x in RESULTS.tests if x.id == test_id)


def _latest_meeting(
    results: list[Observation], g: _Group, tests: dict[str, _Test]
) -> Observation | None:
    """The result that meets a threshold of ``g``: for each test, only its latest result in
    the contact counts (a later normal one means the value was repeated)."""
    for x in g.tests:
        t = tests[x.test]
        valued = [(o, v) for o in results if (v := _value(t, o)) is not None]
        if valued:
            o, v = max(valued, key=lambda ov: (ov[0].effective or date.min, ov[0].ref))
            if _OPS[x.op](v, x.value):
                return o
    return None


def met_patterns(f: Facts, data: EmergenciesFile = EMERGENCIES) -> tuple[Met, ...]:
    """Every pattern the results of a recent contact meet (one per pattern: the latest contact)."""
    tests = {t.id: t for t in data.tests}
    found: dict[str, Met] = {}
    for e in _recent_contacts(f.p):
        results = _of_contact(f.p, e)
        if not results:
            continue
        for pattern in data.patterns:
            met = _meets(f, e, results, pattern, tests)
            if met is not None:
                found[pattern.id] = met
    return tuple(found.values())


def _meets(
    f: Facts,
    e: Encounter,
    results: list[Observation],
    pattern: _Pattern,
    tests: dict[str, _Test],
) -> Met | None:
    hits: list[Observation] = []
    conditions: list[str] = []
    words: list[str] = []
    for g in pattern.groups:
        o = _latest_meeting(results, g, tests)
        if o is not None:
            hits.append(o)
            continue
        held = f.active(g.condition) if g.condition else ()
        if not held:
            return None
        conditions.append(held[0].ref)
        words.append(f'"{" ".join(held[0].text.split())}" on record')
    day = e.start or e.end
    assert day is not None
    stop = {m.ref: m for spec in pattern.stop for m in f.with_spec(spec)}
    return Met(
        pattern.id,
        pattern.name,
        pattern.says,
        pattern.scope,
        e.ref,
        day,
        tuple(hits),
        tuple(conditions),
        tuple(words),
        tuple(stop.values()),
        pattern.stop_why,
    )


def acute_contact(p: PatientProfile, contact: str, f: Facts | None = None) -> tuple[str, ...]:
    """The results of ``contact`` (recent, within ``presenting.acute_days``) that meet an
    emergency pattern or reach a critical value; () when none does or it is not recent."""
    e = next((x for x in _recent_contacts(p) if x.ref == contact), None)
    if e is None:
        return ()
    results = _of_contact(p, e)
    facts = f if f is not None else Facts(p)
    met = [m for m in met_patterns(facts) if m.contact == contact]
    refs = [o.ref for m in met for o in m.results]
    refs += [o.ref for o in results if critical_finding(p, (o.ref,)) is not None]
    return tuple(dict.fromkeys(refs))


def said(o: Observation) -> str:
    """A result as the lines name it: its name, value and unit as recorded."""
    name = " ".join(o.display.split()) or o.loinc
    value = fmt(o.value) if o.value is not None else o.value_text
    return f"{name} {value} {unit_words(o.unit)}".strip()


def flag_emergencies(c: Case, o: Output, data: EmergenciesFile = EMERGENCIES) -> None:
    """Add one line for today for each pattern a recent contact's results meet."""
    for m in met_patterns(c, data):
        o.claims_checked += 1
        refs = tuple(x.ref for x in m.results)
        if check(ResultsOfContact(refs, m.contact), c.p, c.p.plan_day) is not None:
            o.withheld.append(f"{EMERGENCY}:results-of-contact")
            continue
        o.proposals.append(_line(m))


def _line(m: Met) -> Proposal:
    spec = rule_option("emergency-pattern")
    day = day_words(m.day)
    results = ", ".join([*(said(x) for x in m.results), *m.condition_words])
    title = f"Assess today for {m.name}: {results} (contact of {day})"
    what = (
        f"The results of the contact of {day} ({results}) meet the thresholds {m.says} gives "
        f"for {m.name}. Assess the patient today and arrange emergency care if the picture "
        f"agrees. {m.scope}"
    ).strip()
    if m.stop:
        names = ", ".join(x.name for x in m.stop)
        title += f"; stop {names}"
        what += f" Stop {names}: {m.stop_why}."
    refs = (*(x.ref for x in m.results), *m.conditions, m.contact, *(x.ref for x in m.stop))
    point = make_point(
        "emergencies.pattern", refs, day=day, results=results, source=m.says, pattern=m.name
    )
    return Proposal(
        f"{spec.id}-{m.pattern}-{rid(m.contact)}",
        title,
        spec.category,
        what,
        refs,
        (),
        (point,),
        urgency=spec.urgency,
        priority=spec.priority,
        criteria=(EMERGENCY,),
        urgency_class=spec.urgency_class,
        action="review",
    )
