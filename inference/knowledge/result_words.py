"""The safety net for results stated in words or flags: an abnormal result with no number.

The interpretation codes, the words and the tests whose results last are data
(``data/result_words.yaml``), validated when this module is imported. After the rule functions,
the criteria and the net for numeric results have made their lines, ``worded_net`` looks at the
latest result of each test that has no number: when the record flags it abnormal or words it so
(and not normal), it is recent (or of an inherited trait), and no line of the plan cites it, it
adds one line, "Review <test> of <date>: "<value as recorded>"", the value quoted as the record
has it, cut at a whole word, never interpreted. Pure: no I/O after import, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from service.record.profile import Observation, PatientProfile

from ._datafile import DATA_DIR, check_patterns, load_file, problems_message
from .analysis import Output, Proposal, rid
from .facts import Facts
from .pregnancy import is_pregnancy_test
from .reports_orders import quote
from .result_net import RESULT_NET, RESULT_NET_ACUTE, RESULTS, Line
from .rule_points import point_of
from .units import DAYS_PER_YEAR, MONTHS_PER_YEAR

__all__ = [
    "WORDS",
    "WORDS_FILE",
    "Worded",
    "WordsFile",
    "load_words",
    "said",
    "worded_line",
    "worded_net",
    "worded_results",
]

WORDS_FILE = DATA_DIR / "result_words.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Interpretation(_Strict):
    """The record's flags: codes (and their displays) that make a result abnormal, critical
    (this week), or normal (the words then say nothing)."""

    abnormal: tuple[str, ...] = Field(min_length=1)
    critical: tuple[str, ...] = ()
    normal: tuple[str, ...] = ()
    displays: tuple[str, ...] = ()
    critical_displays: tuple[str, ...] = ()
    source: str

    @model_validator(mode="after")
    def _critical_is_abnormal(self) -> Interpretation:
        if set(self.critical) - set(self.abnormal):
            raise ValueError("every critical code must be an abnormal code")
        if set(self.normal) & set(self.abnormal):
            raise ValueError("a code is both normal and abnormal")
        return self


class Pattern(_Strict):
    pattern: str
    source: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        check_patterns([v])
        return v


class Words(_Strict):
    abnormal: tuple[Pattern, ...] = Field(min_length=1)
    normal: tuple[Pattern, ...] = ()


class Lasting(_Strict):
    """Tests of an inherited trait: their latest result counts however old."""

    names: tuple[str, ...] = ()
    source: str

    @field_validator("names")
    @classmethod
    def _compile(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        check_patterns(v)
        return v


class Sooner(_Strict):
    """An abnormal result of one of these tests, in a record that shows ``context``, is
    reviewed as ``criterion`` says (timeframes.yaml)."""

    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    names: tuple[str, ...] = ()
    loinc: tuple[str, ...] = ()
    context: Literal["pregnancy"]
    criterion: Literal["net-review-result-pregnancy", "net-review-result-acute"]
    source: str

    @field_validator("names")
    @classmethod
    def _compile(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        check_patterns(v)
        return v


class WordsFile(_Strict):
    version: str
    sources: dict[str, str] = Field(min_length=1)
    line: Line
    interpretation: Interpretation
    words: Words
    lasting: Lasting
    sooner: tuple[Sooner, ...] = ()

    @model_validator(mode="after")
    def _sources(self) -> WordsFile:
        cited = [self.interpretation.source, self.lasting.source]
        cited += [w.source for w in (*self.words.abnormal, *self.words.normal)]
        cited += [s.source for s in self.sooner]
        problems = [f"unknown source {s!r}" for s in cited if s not in self.sources]
        if problems:
            raise ValueError(problems_message(problems))
        return self


def load_words(path: Path = WORDS_FILE) -> WordsFile:
    """Read and validate the file (``KnowledgeFileError`` names what is wrong)."""
    return load_file(path, WordsFile)


WORDS = load_words()


@dataclass(frozen=True, slots=True)
class Worded:
    """The latest result of a test, with no number, flagged or worded abnormal."""

    obs: Observation
    critical: bool


def said(o: Observation) -> str:
    """The value as the record states it: its text, else the displays of its coded value."""
    return o.value_text.strip() or "; ".join(c.display for c in o.value_codes if c.display)


def _flags(o: Observation, data: WordsFile) -> tuple[bool, bool, bool]:
    """(flagged abnormal, flagged critical, flagged normal) by the record's interpretation."""
    i = data.interpretation
    codes = {c.code for c in o.interpretation}
    displays = {c.display.strip().lower() for c in o.interpretation}
    abnormal = bool(codes & set(i.abnormal) or displays & set(i.displays))
    critical = bool(codes & set(i.critical) or displays & set(i.critical_displays))
    return abnormal, critical, bool(codes & set(i.normal))


def _worded_abnormal(text: str, data: WordsFile) -> bool:
    low = text.lower()
    if any(re.search(w.pattern, low) for w in data.words.normal):
        return False
    return any(re.search(w.pattern, low) for w in data.words.abnormal)


def _abnormal(o: Observation, data: WordsFile) -> Worded | None:
    abnormal, critical, normal = _flags(o, data)
    if not abnormal and (normal or not _worded_abnormal(said(o), data)):
        return None
    return Worded(o, critical)


def _key(o: Observation) -> str:
    """A test is its LOINC code, else the name the record gives it."""
    return o.loinc if o.loinc and o.recognised else " ".join(o.display.lower().split())


def _lasting(o: Observation, data: WordsFile) -> bool:
    name = o.display.lower()
    return any(re.search(x, name) for x in data.lasting.names)


def _latest(p: PatientProfile) -> list[Observation]:
    """The latest dated result of each test that has no number, in the record's order."""
    latest: dict[str, Observation] = {}
    for o in p.observations:
        if o.value is not None or o.effective is None or not said(o) or is_pregnancy_test(o):
            continue
        seen = latest.get(_key(o))
        if seen is None or (seen.effective or date.min) < o.effective:
            latest[_key(o)] = o
    return list(latest.values())


def worded_results(f: Facts, data: WordsFile = WORDS) -> tuple[Worded, ...]:
    """The latest result of each test with no number, flagged or worded abnormal, dated within
    the window of the reference intervals (any date for a test of an inherited trait)."""
    window_days = RESULTS.window.months * DAYS_PER_YEAR / MONTHS_PER_YEAR
    out: list[Worded] = []
    for o in _latest(f.p):
        age = (f.p.plan_day - (o.effective or date.min)).days
        if age < 0 or (age > window_days and not _lasting(o, data)):
            continue
        found = _abnormal(o, data)
        if found is not None:
            out.append(found)
    return tuple(out)


def worded_line(w: Worded) -> str:
    """ "Review <test> of <date>: "<value as recorded>"" (the value cut at a whole word)."""
    return f'Review {_name(w.obs)} of {_day(w.obs)}: "{quote(said(w.obs))}"'


def _name(o: Observation) -> str:
    return quote(o.display) or "a result"


def _day(o: Observation) -> str:
    return o.effective.isoformat() if o.effective is not None else "an unknown date"


def _criterion(w: Worded, f: Facts, data: WordsFile) -> str:
    """This week when flagged critical or a band of ``sooner`` applies, else routine."""
    if w.critical:
        return RESULT_NET_ACUTE
    name = w.obs.display.lower()
    for s in data.sooner:
        test = w.obs.loinc in s.loinc or any(re.search(x, name) for x in s.names)
        if test and s.context == "pregnancy" and f.pregnancy is not None:
            return s.criterion
    return RESULT_NET


def _cited(proposals: Iterable[Proposal]) -> set[str]:
    return {r for p in proposals for r in (*p.refs, *(f for pt in p.points for f in pt.facts))}


def worded_net(f: Facts, o: Output, data: WordsFile = WORDS) -> None:
    """Add a line for each result flagged or worded abnormal that no line of ``o`` cites."""
    spec = data.line
    cited = _cited(o.proposals)
    for w in worded_results(f, data):
        if w.obs.ref in cited:
            continue
        value, name, day = quote(said(w.obs)), _name(w.obs), _day(w.obs)
        point = point_of(spec.point, (w.obs.ref,), test=name, day=day, value=value)
        why = (
            f'{name} of {day} is recorded as "{value}" and no other line of this plan rests on '
            "it: decide what it means for this patient (an action, or none) and record the "
            "decision."
        )
        o.proposals.append(
            Proposal(
                f"{spec.id}-{rid(w.obs.ref)}",
                worded_line(w),
                spec.category,
                why,
                (w.obs.ref,),
                (),
                (point,),
                None,
                None,
                spec.urgency,
                spec.priority,
                urgency_class=spec.urgency_class,
                answers=spec.answers,
                criteria=(_criterion(w, f, data),),
            )
        )
