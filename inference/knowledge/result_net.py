"""The safety net for results: an abnormal recent result that no line of the plan rests on.

The reference intervals and critical values are data (``data/reference_intervals.yaml``),
validated when this module is imported. After the rule functions and the criteria have made
their lines (``rules._analyse``), ``result_net`` looks at the latest result of each test of the
file, dated within the file's window of the plan day: when it lies outside the interval that
applies to this patient (sex, age, a condition on record, a medicine taken; the laboratory's own
range sent with the result, where it sent one it can be read in) and no line already
cites a result of that test, it adds one line, "Review <test> <value> (<range>) on <date>: not
addressed by any check", with the value before it where the record has one. A result in a unit
the file does not list is not judged. ``critical_result`` tells the timeframes which result is at
a critical value, so that every line resting on it is for today. Pure: no I/O after import, no
clock (the plan day is the profile's).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Observation, PatientProfile, years_between
from service.record.vocabulary import LOINC_GROUPS
from service.text.words import unit_words

from ._datafile import DATA_DIR, load_file, problems_message
from .analysis import Output, Point, Proposal
from .conditions import GROUPS_BY_KEY, classify
from .drugs import members
from .facts import Facts, MedFact, fmt
from .monographs import load_monographs
from .rule_points import RuleOption, RulePoint, point_of
from .units import (
    ACR_MG_G_PER_MG_MMOL,
    BILIRUBIN_UMOL_L_PER_MG_DL,
    BOUND_MAX_DECIMALS,
    CALCIUM_MG_DL_PER_MMOL_L,
    COBALAMIN_PMOL_L_PER_NG_L,
    CREATININE_UMOL_L_PER_MG_DL,
    DAYS_PER_YEAR,
    FOLATE_NMOL_L_PER_UG_L,
    FREE_T4_PMOL_L_PER_NG_DL,
    GLUCOSE_MG_DL_PER_MMOL_L,
    HBA1C_IFCC_PER_NGSP,
    HBA1C_NGSP_OFFSET,
    MAGNESIUM_MG_DL_PER_MMOL_L,
    ML_PER_L,
    MONTHS_PER_YEAR,
    PER_DL_PER_L,
    PER_UL_PER_THOUSAND_PER_UL,
    PERCENT,
    PHOSPHATE_MG_DL_PER_MMOL_L,
    TRIGLYCERIDE_MG_DL_PER_MMOL_L,
    URATE_UMOL_L_PER_MG_DL,
    UREA_NITROGEN_MG_DL_PER_MMOL_L,
    VITAMIN_D_NMOL_L_PER_NG_ML,
)

__all__ = [
    "RESULTS",
    "RESULTS_FILE",
    "RESULT_CONVERSIONS",
    "Abnormal",
    "BelowBest",
    "CriticalValue",
    "Interval",
    "LabTest",
    "ResultsFile",
    "ScoreBand",
    "ValueBand",
    "Withheld",
    "Withhold",
    "abnormal_results",
    "below_best",
    "best_line",
    "best_net",
    "critical_result",
    "in_interval_unit",
    "interval_for",
    "lab_interval",
    "load_results",
    "named",
    "net_line",
    "result_net",
    "test_of",
    "tied_medicines",
    "unaddressed",
    "withheld",
    "withhold_line",
    "withhold_net",
]
# The lines' criterion ids (timeframes.yaml): a result short of a critical value is reviewed
# this week when its test is ``acute``, else in routine time; a critical value makes every line
# resting on it today.
RESULT_NET = "net-review-result"
RESULT_NET_ACUTE = "net-review-result-acute"
# a severity band of the file (a result far below the patient's best) makes its line today
RESULT_NET_NOW = "net-review-result-now"
# a result at which a monitored medicine is withheld until the specialist team is consulted
RESULT_WITHHOLD = "net-withhold-monitored"

RESULTS_FILE = DATA_DIR / "reference_intervals.yaml"
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
# How a result in another unit becomes the unit its reference interval is written in, by the
# name ``data/reference_intervals.yaml`` gives the conversion, from the factors of ``units.py``:
# (factor, offset), so that value_in_interval_unit = value x factor + offset.
RESULT_CONVERSIONS: dict[str, tuple[float, float]] = {
    "same": (1.0, 0.0),
    "per-dl-to-per-l": (PER_DL_PER_L, 0.0),
    "per-ml-to-per-l": (ML_PER_L, 0.0),
    "per-ul-to-per-nl": (1.0 / PER_UL_PER_THOUSAND_PER_UL, 0.0),
    "glucose-mg-dl": (1.0 / GLUCOSE_MG_DL_PER_MMOL_L, 0.0),
    "creatinine-mg-dl": (CREATININE_UMOL_L_PER_MG_DL, 0.0),
    "urea-nitrogen-mg-dl": (1.0 / UREA_NITROGEN_MG_DL_PER_MMOL_L, 0.0),
    "calcium-mg-dl": (1.0 / CALCIUM_MG_DL_PER_MMOL_L, 0.0),
    "magnesium-mg-dl": (1.0 / MAGNESIUM_MG_DL_PER_MMOL_L, 0.0),
    "phosphate-mg-dl": (1.0 / PHOSPHATE_MG_DL_PER_MMOL_L, 0.0),
    "bilirubin-mg-dl": (BILIRUBIN_UMOL_L_PER_MG_DL, 0.0),
    "free-t4-ng-dl": (FREE_T4_PMOL_L_PER_NG_DL, 0.0),
    "hba1c-percent": (HBA1C_IFCC_PER_NGSP, -HBA1C_NGSP_OFFSET * HBA1C_IFCC_PER_NGSP),
    "cobalamin-pmol-l": (1.0 / COBALAMIN_PMOL_L_PER_NG_L, 0.0),
    "folate-nmol-l": (1.0 / FOLATE_NMOL_L_PER_UG_L, 0.0),
    "vitamin-d-ng-ml": (VITAMIN_D_NMOL_L_PER_NG_ML, 0.0),
    "acr-mg-g": (1.0 / ACR_MG_G_PER_MG_MMOL, 0.0),
    "urate-mg-dl": (URATE_UMOL_L_PER_MG_DL, 0.0),
    "triglyceride-mg-dl": (1.0 / TRIGLYCERIDE_MG_DL_PER_MMOL_L, 0.0),
}
_LOINC = re.compile(r"^\d{1,7}-\d$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(_Strict):
    """An adult reference interval and whom it is for; no bound at all (``note`` says why):
    the test is not judged for that population."""

    low: float | None = None
    high: float | None = None
    sex: Literal["male", "female", "any"] = "any"
    min_age: int | None = Field(default=None, ge=0)  # None: the file's adult age
    max_age: int | None = Field(default=None, ge=0)
    conditions: tuple[str, ...] = ()  # only with one of these condition groups on record
    taking: tuple[str, ...] = ()  # only while taking one of these (drug:, class:, flag:)
    note: str = ""
    source: str

    @model_validator(mode="after")
    def _bounds(self) -> Interval:
        if self.low is not None and self.high is not None and self.low >= self.high:
            raise ValueError(f"low {self.low} is not below high {self.high}")
        if self.low is None and self.high is None and not self.note:
            raise ValueError("an interval with no bound needs a 'note' saying why")
        return self

    @property
    def judged(self) -> bool:
        return self.low is not None or self.high is not None


class CriticalValue(_Strict):
    """A value at or beyond which (``op``) the result is acted on today, and the first step."""

    op: Literal[">=", ">", "<=", "<"]
    value: float
    first_step: str = Field(min_length=1)
    source: str
    unless: tuple[str, ...] = ()  # condition groups with which the value is expected


class TimesUpper(_Strict):
    """A result above ``times`` the interval's upper bound, on a medicine that harms or is
    monitored by the test, is reviewed as ``criterion`` says (timeframes.yaml)."""

    times: float = Field(gt=1)
    criterion: Literal["net-review-result-now", "net-review-result-72h"]
    source: str


class ValueBand(_Strict):
    """A result beyond ``value`` (by ``op``, in the test's unit) is reviewed as ``criterion``
    says (timeframes.yaml), sooner than the test's own timing, on any medicine."""

    op: Literal[">=", ">", "<=", "<"]
    value: float
    criterion: Literal["net-review-result-now", "net-review-result-72h"]
    source: str


class Withhold(_Strict):
    """A result beyond ``value`` (by ``op``, in the test's unit) on a medicine whose monograph
    monitors ``monitored`` (a LOINC group) under the monograph source ``under``: the medicine is
    withheld and the specialist team consulted, as ``source`` says."""

    op: Literal[">=", ">", "<=", "<"]
    value: float
    monitored: str
    under: str
    source: str


class Medicines(_Strict):
    """The medicines an abnormal result of a test is tied to: those of ``harmed_by`` (drug
    specs: ``flag:``, ``class:``, ``drug:``) and those whose monograph monitors the test."""

    harmed_by: tuple[str, ...] = ()
    # which side of the interval those medicines push the result to (a potassium-raising
    # medicine explains a high potassium, not a low one)
    side: Literal["high", "low"] = "high"
    bands: tuple[TimesUpper, ...] = ()  # the first that the result is above


class ScoreBand(_Strict):
    """A named band of a scored questionnaire: a score at or above ``at_least`` (and under the
    next band's) is said in ``words``."""

    at_least: float
    words: str = Field(min_length=1)
    source: str


class LabTest(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    name: str = Field(min_length=1)
    group: str | None = None
    loinc: tuple[str, ...] = ()
    # How a result with no usable LOINC code is known for this test: patterns (regular
    # expressions, lower case) searched in the name the record gives it ("blood ketones")
    names: tuple[str, ...] = ()
    unit: str
    # the decimals a laboratory reports the test with in ``unit``: a result converted from
    # another unit is rounded to them before it is judged
    decimals: int = Field(ge=0)
    units: dict[str, str] = Field(min_length=1)
    intervals: tuple[Interval, ...] = Field(min_length=1)
    critical: tuple[CriticalValue, ...] = ()
    # Tests that speak for this one (an eGFR is worked out from the creatinine): a line on one
    # of them, or one of them abnormal too, and this test gets no line of its own.
    covered_by: tuple[str, ...] = ()
    # Condition groups of the problem the result shows (a low glucose is a hypoglycaemia): a
    # line citing a condition of one of them addresses the result.
    problems: tuple[str, ...] = ()
    # An abnormality of this test can do harm within days (electrolytes, blood counts, clotting,
    # cardiac markers): its line is for this week; any other, within four weeks (timeframes.yaml).
    acute: bool = False
    medicines: Medicines = Medicines()
    # A scored questionnaire: its line says the band the score is in, not the interval
    score_bands: tuple[ScoreBand, ...] = ()
    # Severity bands of the value itself, on any medicine: the first the result is beyond
    bands: tuple[ValueBand, ...] = ()
    # Values at which a monitored medicine is withheld (``withhold_net``)
    withhold: tuple[Withhold, ...] = ()

    @property
    def codes(self) -> tuple[str, ...]:
        group = LOINC_GROUPS.get(self.group, ()) if self.group else ()
        return tuple(dict.fromkeys((*group, *self.loinc)))


class Window(_Strict):
    months: int = Field(gt=0)
    # a critical value older than this (days before the plan day) is no longer for today: it
    # was acted on when reported, or it is a line like any other abnormal result
    critical_days: int = Field(ge=0)
    source: str


class Line(RuleOption):
    """The net's line: its option (the id each test's line extends) and the GP's point."""

    point: RulePoint


class Band(_Strict):
    """A result under ``below_percent`` of the patient's best is reviewed as ``criterion``
    says (its timeframe: timeframes.yaml)."""

    below_percent: float = Field(gt=0, le=PERCENT)
    criterion: Literal["net-review-result-now", "net-review-result-acute", "net-review-result"]
    source: str


class BestTest(_Strict):
    """A test judged against the patient's own best: the best is the highest earlier result, or
    a value the record names as the best or the predicted one (``best_names``)."""

    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    name: str = Field(min_length=1)
    loinc: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    best_names: tuple[str, ...] = Field(min_length=1)
    units: tuple[str, ...] = Field(min_length=1)  # judged only between results in one of these
    bands: tuple[Band, ...] = Field(min_length=1)  # the first whose fraction it is under


class BestLine(Line):
    tests: tuple[BestTest, ...] = Field(min_length=1)


class ResultsFile(_Strict):
    version: str
    sources: dict[str, str] = Field(min_length=1)
    window: Window
    line: Line
    adult_from_years: int = Field(gt=0)
    tests: tuple[LabTest, ...] = Field(min_length=1)
    personal_best: BestLine
    # the line for a result at which a monitored medicine is withheld (``withhold_net``)
    withhold_line: Line

    @model_validator(mode="after")
    def _references(self) -> ResultsFile:
        problems: list[str] = []
        seen_ids: set[str] = set()
        seen_codes: dict[str, str] = {}
        for t in self.tests:
            problems += _test_problems(t, self.sources)
            if t.id in seen_ids:
                problems.append(f"tests[{t.id}]: listed twice")
            seen_ids.add(t.id)
            for code in t.codes:
                if code in seen_codes:
                    problems.append(f"tests[{t.id}]: code {code} is also {seen_codes[code]}'s")
                seen_codes[code] = t.id
        problems += [
            f"tests[{t.id}]: covered_by names unknown test {x!r}"
            for t in self.tests
            for x in t.covered_by
            if x not in seen_ids
        ]
        cited = [b.source for t in self.personal_best.tests for b in t.bands]
        problems += [f"personal_best: unknown source {x!r}" for x in cited if x not in self.sources]
        if self.window.source not in self.sources:
            problems.append(f"window: unknown source {self.window.source!r}")
        if problems:
            raise ValueError(problems_message(problems))
        return self


def _norm(unit: str) -> str:
    """A unit as the file writes it: lower case, "u" for micro, no spaces."""
    return unit.strip().lower().replace("µ", "u").replace("μ", "u").replace(" ", "")


def _test_problems(t: LabTest, sources: dict[str, str]) -> list[str]:
    where = f"tests[{t.id}]"
    out: list[str] = []
    if t.group is not None and t.group not in LOINC_GROUPS:
        out.append(f"{where}: {t.group!r} is no LOINC group")
    if not t.codes and not t.names:
        out.append(f"{where}: names no LOINC group, no code and no name")
    for pattern in t.names:
        try:
            re.compile(pattern)
        except re.error as exc:
            out.append(f"{where}: name pattern {pattern!r} is no regular expression ({exc})")
    out += [f"{where}: bad LOINC code {c!r}" for c in t.loinc if not _LOINC.match(c)]
    for unit, conversion in t.units.items():
        if unit != _norm(unit):
            out.append(f"{where}: unit {unit!r} is not written as {_norm(unit)!r}")
        if conversion not in RESULT_CONVERSIONS:
            out.append(f"{where}: unknown conversion {conversion!r} (units.RESULT_CONVERSIONS)")
    if t.units.get(_norm(t.unit)) != "same":
        out.append(f"{where}: units must map the test's own unit {t.unit!r} to 'same'")
    cited = [*(i.source for i in t.intervals), *(c.source for c in t.critical)]
    cited += [b.source for b in t.score_bands]
    cited += [b.source for b in t.bands] + [w.source for w in t.withhold]
    starts = [b.at_least for b in t.score_bands]
    if starts != sorted(set(starts)):
        out.append(f"{where}: score_bands must rise, each from its own score")
    out += [f"{where}: unknown source {s!r}" for s in cited if s not in sources]
    groups = [g for i in t.intervals for g in i.conditions] + [
        g for c in t.critical for g in c.unless
    ]
    groups += list(t.problems)
    out += [f"{where}: unknown condition group {g!r}" for g in groups if g not in GROUPS_BY_KEY]
    specs = [s for i in t.intervals for s in i.taking] + list(t.medicines.harmed_by)
    out += [
        f"{where}: unknown source {b.source!r}"
        for b in t.medicines.bands
        if b.source not in sources
    ]
    out += [f"{where}: unknown drug spec {s!r}" for s in specs if not members(s)]
    return out + _withhold_problems(t)


def _withhold_problems(t: LabTest) -> list[str]:
    """A withhold value names a monitored test no monograph monitors under its source."""
    monitored = {(x.test, x.source) for m in load_monographs().monographs for x in m.monitor}
    return [
        f"tests[{t.id}]: no monograph monitors {w.monitored!r} under {w.under!r}"
        for w in t.withhold
        if (w.monitored, w.under) not in monitored
    ]


def load_results(path: Path = RESULTS_FILE) -> ResultsFile:
    """Read and validate the reference intervals (``KnowledgeFileError`` names what is wrong)."""
    return load_file(path, ResultsFile)


RESULTS = load_results()
# drug -> the tests (LOINC groups) its monograph monitors
_MONITORED = {m.drug: {x.test for x in m.monitor} for m in load_monographs().monographs}
# drug -> (test, source) of each monitoring its monograph states
_MONITORED_UNDER = {
    m.drug: {(x.test, x.source) for x in m.monitor} for m in load_monographs().monographs
}
_BY_CODE = {code: t for t in RESULTS.tests for code in t.codes}


def test_of(loinc: str, data: ResultsFile = RESULTS) -> LabTest | None:
    """The test of the file that a LOINC code reports, None when none does."""
    if data is RESULTS:
        return _BY_CODE.get(loinc)
    return next((t for t in data.tests if loinc in t.codes), None)


def in_interval_unit(t: LabTest, value: float, unit: str) -> float | None:
    """``value`` in ``unit`` converted into the unit the test's numbers are written in; None
    when the file lists no conversion for ``unit`` (the result is then not judged)."""
    name = t.units.get(_norm(unit))
    if name is None:
        return None
    if name == "same":
        return value
    factor, offset = RESULT_CONVERSIONS[name]
    # judged at the precision the test is reported at in its own unit: magnesium 1.7 mg/dL is
    # 0.699 mmol/L, reported 0.70, at the lower limit and not below it
    return round(value * factor + offset, t.decimals)


def _in_record_unit(t: LabTest, value: float, unit: str) -> float:
    """The inverse of ``in_interval_unit``: a bound written in the test's unit, in ``unit``."""
    factor, offset = RESULT_CONVERSIONS[t.units[_norm(unit)]]
    return (value - offset) / factor


def _age_on(p: PatientProfile, day: date) -> int | None:
    return years_between(p.birth_date, day) if p.birth_date is not None else None


def interval_for(t: LabTest, f: Facts, day: date, data: ResultsFile = RESULTS) -> Interval | None:
    """The first interval of ``t`` that applies to the patient of ``f`` on ``day`` (sex, age,
    condition, medicine); None when none does (a child, an unknown sex where the interval is
    sex-specific): the result is then not judged."""
    age = _age_on(f.p, day)
    for i in t.intervals:
        low_age = data.adult_from_years if i.min_age is None else i.min_age
        if age is None or age < low_age or (i.max_age is not None and age > i.max_age):
            continue
        if i.sex != "any" and i.sex != f.p.sex:
            continue
        if i.conditions and not any(f.active(g) for g in i.conditions):
            continue
        if i.taking and not any(f.with_spec(s) for s in i.taking):
            continue
        return i
    return None


def _outside(i: Interval, value: float) -> bool:
    return (i.low is not None and value < i.low) or (i.high is not None and value > i.high)


@dataclass(frozen=True, slots=True)
class Abnormal:
    """The latest result of ``test`` outside ``interval``, and the result before it (if any)."""

    test: LabTest
    obs: Observation
    interval: Interval
    previous: Observation | None
    # the interval is the laboratory's own range sent with the result (``lab_interval``)
    from_lab: bool = False


def _value(t: LabTest, o: Observation) -> float | None:
    return None if o.value is None else in_interval_unit(t, o.value, o.unit)


def abnormal_results(f: Facts, data: ResultsFile = RESULTS) -> tuple[Abnormal, ...]:
    """For each test of the file, its latest result within the window of the plan day when it
    lies outside the interval that applies; in the file's order."""
    found = (_abnormal(t, f, data) for t in data.tests)
    return tuple(a for a in found if a is not None)


def named(t: LabTest, o: Observation) -> bool:
    """``o`` has no usable LOINC code and the name the record gives it is one of ``t``'s."""
    if o.loinc and o.recognised:
        return False
    text = o.display.lower()
    return any(re.search(pattern, text) for pattern in t.names)


def _series(t: LabTest, p: PatientProfile) -> list[Observation]:
    """Every dated numeric result of ``t``, the readings and the latest per code, and the
    results known by name (``named``)."""
    series = [o for o in p.series(t.codes) if o.effective is not None]
    latest = [
        o
        for o in p.observations
        if (o.loinc in t.codes or named(t, o)) and o.value is not None and o not in series
    ]
    return series + [o for o in latest if o.effective is not None]


def _abnormal(t: LabTest, f: Facts, data: ResultsFile) -> Abnormal | None:
    series = _series(t, f.p)
    if not series:
        return None
    day = max(o.effective or date.min for o in series)
    window_days = data.window.months * DAYS_PER_YEAR / MONTHS_PER_YEAR
    if not 0 <= (f.p.plan_day - day).days <= window_days:
        return None
    interval = interval_for(t, f, day, data)
    if interval is None or not interval.judged:
        return None
    # of the results of the latest day (the two eyes, a repeat), the first outside the interval
    # that applies to it: the laboratory's own range where it sent one, else the file's
    judged = [(o, lab_interval(t, o, interval.source)) for o in series if o.effective == day]
    outside = [
        (o, lab or interval, lab is not None)
        for o, lab in judged
        if (v := _value(t, o)) is not None and _outside(lab or interval, v)
    ]
    if not outside:
        return None
    latest, applied, from_lab = outside[0]
    earlier = [o for o in series if (o.effective or date.min) < day and _value(t, o) is not None]
    previous = max(earlier, key=lambda o: o.effective or date.min) if earlier else None
    return Abnormal(t, latest, applied, previous, from_lab)


def lab_interval(t: LabTest, o: Observation, source: str) -> Interval | None:
    """The laboratory's own reference range sent with ``o``, in the unit of ``t``'s numbers,
    where its unit is the result's or one the file converts (a range with no unit is in the
    result's); None where it sent none, or one that cannot be read so. It is the range that
    applies to this sample, so it is stated and judged before the file's (``source``: the
    file's interval it stands in for, kept as its citation)."""
    if o.range_low is None and o.range_high is None:
        return None
    unit = o.range_unit or o.unit
    low = None if o.range_low is None else in_interval_unit(t, o.range_low, unit)
    high = None if o.range_high is None else in_interval_unit(t, o.range_high, unit)
    if (o.range_low is not None and low is None) or (o.range_high is not None and high is None):
        return None
    if low is not None and high is not None and low >= high:
        return None
    return Interval(low=low, high=high, source=source)


def _range(a: Abnormal) -> str:
    """The interval in the unit of the result: "133-146 mmol/L", "up to 21 mg/dL"."""
    if a.from_lab:
        return _lab_range(a.obs)
    i, t, unit = a.interval, a.test, unit_words(a.obs.unit)
    # at the precision the result is stated in (a bound converted into another unit is not
    # shown to more places than the result itself: "up to 7.5 %", not "up to 7.46 %")
    # (more places where fewer would make the result look inside its interval)
    value = a.obs.value
    shown = fmt(value) if value is not None else ""
    places = len(shown.partition(".")[2])
    raw_low = None if i.low is None else _in_record_unit(t, i.low, a.obs.unit)
    raw_high = None if i.high is None else _in_record_unit(t, i.high, a.obs.unit)
    if t.units.get(_norm(a.obs.unit)) == "same":  # the file's own unit: the bounds as stated
        places = BOUND_MAX_DECIMALS
    while places < BOUND_MAX_DECIMALS and value is not None:
        lo = None if raw_low is None else round(raw_low, places)
        hi = None if raw_high is None else round(raw_high, places)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            break
        places += 1
    low = "" if raw_low is None else fmt(round(raw_low, places))
    high = "" if raw_high is None else fmt(round(raw_high, places))
    # (fmt drops the zeros rounding leaves: 3.5 stays 3.5, not 3.5000)
    if low and high:
        return f"{low}-{high} {unit}".strip()
    return f"up to {high} {unit}".strip() if high else f"{low} {unit} or more".replace("  ", " ")


def _band_words(a: Abnormal) -> str | None:
    """The words of the highest score band the result reaches; None for a test with none."""
    value = _value(a.test, a.obs)
    reached = [b for b in a.test.score_bands if value is not None and value >= b.at_least]
    return reached[-1].words if reached else None


def _shown_range(a: Abnormal) -> str:
    """What the line puts in brackets: a score's band, else the interval (``_range``)."""
    return _band_words(a) or _range(a)


def _lab_range(o: Observation) -> str:
    """The laboratory's own range as it sent it: "130-170 g/L", "up to 5 mg/L"."""
    unit = unit_words(o.range_unit or o.unit)
    low = "" if o.range_low is None else fmt(o.range_low)
    high = "" if o.range_high is None else fmt(o.range_high)
    if low and high:
        return f"{low}-{high} {unit}".strip()
    return f"up to {high} {unit}".strip() if high else f"{low} {unit} or more".replace("  ", " ")


def _trend(a: Abnormal) -> str:
    """ ", up from 4.9 on <date>": the earlier value as recorded when in the same unit, else
    converted into the latest's unit; "" when there is none."""
    prev, latest = a.previous, a.obs
    if prev is None or prev.effective is None or prev.value is None or latest.value is None:
        return ""
    if _norm(prev.unit) == _norm(latest.unit):
        before, now, shown = prev.value, latest.value, prev.value
    else:
        converted, now_si = _value(a.test, prev), _value(a.test, latest)
        if converted is None or now_si is None:
            return ""
        before, now, shown = converted, now_si, _in_record_unit(a.test, converted, latest.unit)
    word = "up from" if now > before else "down from" if now < before else "unchanged from"
    return f", {word} {fmt(shown)} on {prev.effective.isoformat()}"


def tied_medicines(a: Abnormal, f: Facts) -> tuple[MedFact, ...]:
    """The active medicines that harm the test of ``a`` (``harmed_by``) or whose monograph
    monitors it, in the record's order."""
    t = a.test
    value, i = _value(t, a.obs), a.interval
    high = value is not None and i.high is not None and value > i.high
    specs = t.medicines.harmed_by if high == (t.medicines.side == "high") else ()
    meds = {m.ref: m for spec in specs for m in f.with_spec(spec)}
    for m in f.meds:
        if t.group is not None and any(t.group in _MONITORED.get(d, ()) for d in m.drugs):
            meds.setdefault(m.ref, m)
    return tuple(m for m in f.meds if m.ref in meds)


def _band(a: Abnormal, tied: tuple[MedFact, ...]) -> TimesUpper | None:
    """The first band of the test that the result is above, on a tied medicine."""
    high, value = a.interval.high, _value(a.test, a.obs)
    if not tied or high is None or value is None:
        return None
    return next((b for b in a.test.medicines.bands if value > b.times * high), None)


def net_line(a: Abnormal, tied: tuple[MedFact, ...] = ()) -> str:
    """The plan line: "Review <test> <value> (<range>) on <date>[, up from ...]: not addressed
    by any check"."""
    day = a.obs.effective.isoformat() if a.obs.effective is not None else "an unknown date"
    value = f"{fmt(a.obs.value)} {unit_words(a.obs.unit)}".strip()
    on = f", on {', '.join(dict.fromkeys(_med_words(a, m) for m in tied))}" if tied else ""
    return (
        f"Review {a.test.name} {value} ({_shown_range(a)}) on {day}{_trend(a)}{on}: "
        "not addressed by any check"
    )


def _med_words(a: Abnormal, m: MedFact) -> str:
    """The medicine's name, with "(first prescribed <date>)" when the record's first order of it
    falls after the result before ``a`` and no later than ``a``: the change came with it."""
    start, prev, day = m.first_authored, a.previous, a.obs.effective
    if start is None or prev is None or prev.effective is None or day is None:
        return m.name
    if prev.effective < start <= day:
        return f"{m.name} (first prescribed {start.isoformat()})"
    return m.name


def _cited(proposals: Iterable[Proposal]) -> set[str]:
    return {r for p in proposals for r in (*p.refs, *(f for pt in p.points for f in pt.facts))}


def result_net(f: Facts, o: Output, data: ResultsFile = RESULTS) -> None:
    """Add a line for each abnormal recent result of a test no line of ``o`` cites a result
    of (a criterion or rule that read the test explains it; the net does not repeat it), after
    the lines that withhold a monitored medicine (``withhold_net``)."""
    withhold_net(f, o, data)
    spec = data.line
    for a in unaddressed(f, o.proposals, data):
        tied = tied_medicines(a, f)
        facts = tuple(x.ref for x in (a.obs, a.previous, *tied) if x is not None)
        value = f"{fmt(a.obs.value)} {unit_words(a.obs.unit)}".strip()
        shown = _shown_range(a)
        point = point_of(spec.point, facts, test=a.test.name, value=value, range=shown)
        why = (
            f"{a.test.name} {value} is outside its reference interval ({shown}) and no "
            "other line of this plan rests on it: decide what it means for this patient (a "
            "cause to look for, an action, or none) and record the decision."
        )
        band = _band(a, tied)
        criterion = RESULT_NET_ACUTE if a.test.acute else RESULT_NET
        criterion = band.criterion if band is not None else criterion
        criterion = next(
            (b.criterion for b in a.test.bands if _beyond(a, b.op, b.value)), criterion
        )
        o.proposals.append(_proposal(spec, a.test.id, (net_line(a, tied), why), point, criterion))
    best_net(f, o, data)


def _proposal(
    spec: Line, test: str, text: tuple[str, str], point: Point, criterion: str
) -> Proposal:
    """The net's line for ``test``: its title and rationale (``text``), the GP's point."""
    return Proposal(
        f"{spec.id}-{test}",
        text[0],
        spec.category,
        text[1],
        point.facts,
        (),
        (point,),
        None,
        None,
        spec.urgency,
        spec.priority,
        urgency_class=spec.urgency_class,
        answers=spec.answers,
        criteria=(criterion,),
    )


@dataclass(frozen=True, slots=True)
class BelowBest:
    """The latest result of ``test`` under a band's fraction of the patient's ``best``."""

    test: BestTest
    obs: Observation
    best: Observation
    percent: int
    band: Band


def _best_results(t: BestTest, p: PatientProfile) -> tuple[list[Observation], list[Observation]]:
    """(the dated results of ``t``, the values the record names as the best or predicted)."""
    found = [
        o
        for o in (*p.readings, *p.observations)
        if o.value is not None
        and o.effective is not None
        and _norm(o.unit) in t.units
        and (o.loinc in t.loinc or (not (o.loinc and o.recognised) and _named_as(t.names, o)))
    ]
    found = list(dict.fromkeys(found))
    best = [o for o in found if _named_as(t.best_names, o)]
    return [o for o in found if o not in best], best


def _named_as(patterns: Iterable[str], o: Observation) -> bool:
    return any(re.search(x, o.display.lower()) for x in patterns)


def below_best(f: Facts, data: ResultsFile = RESULTS) -> tuple[BelowBest, ...]:
    """For each test judged against the patient's best, its latest result within the window
    when it is under the fraction of a band; in the file's order."""
    out: list[BelowBest] = []
    window_days = data.window.months * DAYS_PER_YEAR / MONTHS_PER_YEAR
    for t in data.personal_best.tests:
        results, named_best = _best_results(t, f.p)
        if not results:
            continue
        latest = max(results, key=lambda o: o.effective or date.min)
        day = latest.effective or date.min
        earlier = [o for o in (*results, *named_best) if (o.effective or date.min) <= day]
        earlier = [o for o in earlier if o is not latest]
        if not earlier or not 0 <= (f.p.plan_day - day).days <= window_days:
            continue
        best = max(earlier, key=lambda o: o.value or 0.0)
        if not best.value or latest.value is None:
            continue
        percent = latest.value / best.value * PERCENT
        band = next((b for b in t.bands if percent < b.below_percent), None)
        if band is not None:
            out.append(BelowBest(t, latest, best, int(percent), band))
    return tuple(out)


def best_line(b: BelowBest) -> str:
    """ "Review Peak flow 310 L/min (55% of the best, 560 L/min on <date>) on <date>: ..."."""
    return (
        f"Review {b.test.name} {_said(b.obs)} ({b.percent}% of {_best_words(b)}) on "
        f"{_day(b.obs)}: not addressed by any check"
    )


def _said(o: Observation) -> str:
    return f"{fmt(o.value)} {unit_words(o.unit)}".strip()


def _day(o: Observation) -> str:
    return o.effective.isoformat() if o.effective is not None else "an unknown date"


def _best_words(b: BelowBest) -> str:
    """ "the best, 560 L/min on <date>" or "the value recorded as 'Peak flow, best', ..."."""
    named = _named_as(b.test.best_names, b.best)
    which = f"the value recorded as {b.best.display!r}" if named else "the best earlier result"
    return f"{which}, {_said(b.best)} on {_day(b.best)}"


def best_net(f: Facts, o: Output, data: ResultsFile = RESULTS) -> None:
    """Add a line for each result under a band's fraction of the patient's best that no line
    of ``o`` cites."""
    spec = data.personal_best
    cited = _cited(o.proposals)
    for b in below_best(f, data):
        results, named_best = _best_results(b.test, f.p)
        if {x.ref for x in (*results, *named_best)} & cited:
            continue
        facts = (b.obs.ref, b.best.ref)
        words = _best_words(b)
        point = point_of(
            spec.point, facts, test=b.test.name, value=_said(b.obs), percent=b.percent, best=words
        )
        why = (
            f"{b.test.name} {_said(b.obs)} is {b.percent}% of {words}, and no other line of this "
            "plan rests on it: decide what it means for this patient and record the decision."
        )
        o.proposals.append(_proposal(spec, b.test.id, (best_line(b), why), point, b.band.criterion))


def unaddressed(
    f: Facts, proposals: Iterable[Proposal], data: ResultsFile = RESULTS, *, spoken: bool = True
) -> tuple[Abnormal, ...]:
    """The abnormal recent results (``abnormal_results``) that no line of ``proposals``
    addresses (``_explained``), less (``spoken``) those another abnormal test of the net speaks
    for (``covered_by``: its own line will say it)."""
    cited = _cited(proposals)
    found = abnormal_results(f, data)
    abnormal = {a.test.id for a in found}
    by_id = {t.id: t for t in data.tests}
    return tuple(
        a
        for a in found
        if not _explained(a, (a.test, *(by_id[x] for x in a.test.covered_by)), f.p, cited)
        and not (spoken and abnormal & set(a.test.covered_by))
    )


def _explained(a: Abnormal, tests: Iterable[LabTest], p: PatientProfile, cited: set[str]) -> bool:
    """A line cites a result of one of ``tests``, a condition of the problem the result shows,
    or the contact (an admission, an emergency visit) the result was taken in."""
    tests = tuple(tests)
    codes = {code for t in tests for code in t.codes}
    results = (*p.readings, *p.observations)
    if {r.ref for r in results if r.loinc in codes or any(named(t, r) for t in tests)} & cited:
        return True
    groups = set(a.test.problems)
    if any(groups & set(classify(pr)) for pr in p.problems if pr.ref in cited):
        return True
    day = a.obs.effective
    return day is not None and any(
        e.start is not None and e.start <= day <= (e.end or e.start)
        for e in p.encounters
        if e.ref in cited
    )


def critical_result(
    profile: PatientProfile, o: Observation, data: ResultsFile = RESULTS
) -> tuple[str, str, str] | None:
    """(test id, first step, source) of the first critical value of the file that ``o``
    reaches, in the unit of the file, when ``o`` is recent enough to act on today; None when
    none does (or the unit is not listed, or the result is older)."""
    t = test_of(o.loinc, data)
    if t is None or not t.critical or o.value is None or o.effective is None:
        return None
    if not 0 <= (profile.plan_day - o.effective).days <= data.window.critical_days:
        return None
    value = in_interval_unit(t, o.value, o.unit)
    if value is None:
        return None
    groups = {g for pr in profile.active_problems for g in classify(pr)}
    for c in t.critical:
        if _OPS[c.op](value, c.value) and not groups & set(c.unless):
            return t.id, c.first_step, data.sources[c.source]
    return None


def _beyond(a: Abnormal, op: str, value: float) -> bool:
    """The result of ``a``, in its test's unit, is beyond ``value`` by ``op``."""
    v = _value(a.test, a.obs)
    return v is not None and _OPS[op](v, value)


@dataclass(frozen=True, slots=True)
class Withheld:
    """A recent result of ``test`` beyond a withhold value, and the monitored medicines."""

    test: LabTest
    obs: Observation
    at: Withhold
    medicines: tuple[MedFact, ...]


def withheld(f: Facts, data: ResultsFile = RESULTS) -> tuple[Withheld, ...]:
    """For each test with withhold values, its latest result dated within the window's
    ``critical_days`` of the plan day, when it is beyond the first value whose monitored test
    an active medicine's monograph monitors under that value's source."""
    out: list[Withheld] = []
    for a in abnormal_results(f, data):
        if a.obs.effective is None:
            continue
        if not 0 <= (f.p.plan_day - a.obs.effective).days <= data.window.critical_days:
            continue
        for w in a.test.withhold:
            meds = tuple(
                m
                for m in f.meds
                if any((w.monitored, w.under) in _MONITORED_UNDER.get(d, ()) for d in m.drugs)
            )
            if meds and _beyond(a, w.op, w.value):
                out.append(Withheld(a.test, a.obs, w, meds))
                break
    return tuple(out)


_OP_WORDS = {"<": "under {}", "<=": "{} or less", ">": "over {}", ">=": "{} or more"}


def withhold_line(w: Withheld) -> str:
    """ "Withhold azathioprine and discuss with the specialist team: Neutrophils 0.8 10*9/L
    (under 1.6 10*9/L) on <date>"."""
    names = " and ".join(dict.fromkeys(m.name for m in w.medicines))
    bound = _in_record_unit(w.test, w.at.value, w.obs.unit)
    threshold = _OP_WORDS[w.at.op].format(f"{fmt(bound)} {unit_words(w.obs.unit)}".strip())
    return (
        f"Withhold {names} and discuss with the specialist team: {w.test.name} {_said(w.obs)} "
        f"({threshold}) on {_day(w.obs)}"
    )


def withhold_net(f: Facts, o: Output, data: ResultsFile = RESULTS) -> None:
    """Add a line for today for each recent result at which a monitored medicine is withheld
    until the specialist team is consulted (``withheld``), whatever other line cites it."""
    spec = data.withhold_line
    for w in withheld(f, data):
        facts = (w.obs.ref, *(m.ref for m in w.medicines))
        names = " and ".join(dict.fromkeys(m.name for m in w.medicines))
        source = data.sources[w.at.source]
        point = point_of(spec.point, facts, test=w.test.name, value=_said(w.obs), drugs=names)
        why = f"{withhold_line(w)}. Source: {source}."
        proposal = _proposal(spec, w.test.id, (withhold_line(w), why), point, RESULT_WITHHOLD)
        o.proposals.append(replace(proposal, action="hold"))
