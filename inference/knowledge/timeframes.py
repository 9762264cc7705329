"""When each action should happen and how much harm it averts, from ``data/timeframes.yaml``.

A proposal's timeframe (``service.core.model.TIMEFRAMES``: now, 72h, 7d, 4w, next-review) is,
first match wins: a critical value among the results it rests on (``now``, with the value's
first step), a cited override for its criterion or rule option, else the first default rule
whose keys (urgency class, action kind, priority class, criterion kind) all match. Its harm
score is severity x likelihood, the worst over the criteria that proposed it. Read once, at
import; no other I/O.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.core.model import ACTION_KINDS, TIMEFRAMES, Timeframe
from service.record.profile import Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS

from ._datafile import DATA_DIR, check_patterns, load_file
from .result_net import critical_result

__all__ = [
    "TIMEFRAMES_FILE",
    "Critical",
    "critical_finding",
    "harm_score",
    "is_transition",
    "timeframe_of",
]

TIMEFRAMES_FILE = DATA_DIR / "timeframes.yaml"
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
_URGENCY = ("resolve-first", "urgent", "soon", "routine")
_PRIORITIES = ("safety", "omission", "monitoring", "review")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CriticalValue(_Strict):
    quantity: str
    op: Literal[">=", ">", "<=", "<"]
    value: float
    unit: str
    first_step: str = Field(min_length=1)
    source: str


class Override(_Strict):
    criteria: tuple[str, ...] = Field(min_length=1)  # criterion ids or rule option ids
    timeframe: Timeframe
    source: str


class DefaultRule(_Strict):
    urgency_class: str | None = None
    action: tuple[str, ...] = ()
    priority: tuple[str, ...] = ()
    kind: tuple[str, ...] = ()
    timeframe: Timeframe
    source: str


class Harm(_Strict):
    severity: dict[str, float]
    likelihood: dict[str, float]
    rule_severity: dict[str, str]
    rule_likelihood: float = Field(gt=0)


class TimeframesFile(_Strict):
    version: str
    sources: dict[str, str]
    critical: tuple[CriticalValue, ...]
    overrides: tuple[Override, ...]
    defaults: tuple[DefaultRule, ...] = Field(min_length=1)
    transition_criteria: str
    harm: Harm

    @model_validator(mode="after")
    def _known(self) -> TimeframesFile:
        cited = [
            *(c.source for c in self.critical),
            *(o.source for o in self.overrides),
            *(d.source for d in self.defaults),
        ]
        bad = sorted({s for s in cited if s not in self.sources})
        if bad:
            raise ValueError(f"sources {bad} are not in 'sources'")
        unknown = sorted({c.quantity for c in self.critical} - set(LOINC_GROUPS))
        if unknown:
            raise ValueError(f"critical quantities {unknown} are no LOINC group")
        for d in self.defaults:
            _check_keys(d)
        last = self.defaults[-1]
        if last.urgency_class or last.action or last.priority or last.kind:
            raise ValueError("the last default rule must match everything (state no key)")
        check_patterns([self.transition_criteria], "transition_criteria: ")
        return self


def _check_keys(d: DefaultRule) -> None:
    if d.urgency_class is not None and d.urgency_class not in _URGENCY:
        raise ValueError(f"unknown urgency class {d.urgency_class!r}")
    wrong = sorted(set(d.action) - set(ACTION_KINDS)) + sorted(set(d.priority) - set(_PRIORITIES))
    if wrong:
        raise ValueError(f"unknown action kinds or priority classes {wrong}")


DATA = load_file(TIMEFRAMES_FILE, TimeframesFile)
_TRANSITION = re.compile(DATA.transition_criteria + r"\Z")
_OVERRIDES = {cid: o for o in DATA.overrides for cid in o.criteria}


@dataclass(frozen=True, slots=True)
class Critical:
    """A result at or beyond a critical value: the value's first step and its source."""

    quantity: str
    first_step: str
    source: str


def critical_finding(
    profile: PatientProfile, refs: Iterable[str], data: TimeframesFile = DATA
) -> Critical | None:
    """The first critical value (in the file's order) that a result among ``refs`` reaches,
    compared with the operator the file states, else the first of the reference intervals'
    (``result_net.critical_result``: unit by unit, recent results only); None when none does."""
    cited = set(refs)
    observations = [o for o in profile.observations if o.ref in cited]
    for c in data.critical:
        if any(_reaches(o, c) for o in observations):
            return Critical(c.quantity, c.first_step, c.source)
    # the critical values of the reference intervals (``result_net``), unit by unit
    found = next(filter(None, (critical_result(profile, o) for o in observations)), None)
    return Critical(*found) if found is not None else None


def _reaches(o: Observation, c: CriticalValue) -> bool:
    return (
        o.loinc in LOINC_GROUPS[c.quantity] and o.value is not None and _OPS[c.op](o.value, c.value)
    )


def timeframe_of(
    *,
    option_id: str,
    criteria: Iterable[str],
    kinds: Iterable[str],
    urgency_class: str,
    action: str,
    priority: str,
    critical: bool = False,
    data: TimeframesFile = DATA,
) -> Timeframe:
    """When the action should happen: ``now`` at a critical value, else the soonest cited
    override for any of its ``criteria`` (or its ``option_id``, a rule function's option),
    else the first default rule that matches (the file's last one matches everything)."""
    if critical:
        return "now"
    keys = _OVERRIDES if data is DATA else {c: o for o in data.overrides for c in o.criteria}
    overrides = [keys[c] for c in (*criteria, option_id) if c in keys]
    if overrides:
        return min((o.timeframe for o in overrides), key=TIMEFRAMES.index)
    kind_set = set(kinds)
    for d in data.defaults:
        if _matches(d, urgency_class, action, priority, kind_set):
            return d.timeframe
    raise AssertionError("the last default rule matches everything")  # validated at load


def _matches(d: DefaultRule, urgency: str, action: str, priority: str, kinds: set[str]) -> bool:
    return (
        (d.urgency_class is None or d.urgency_class == urgency)
        and (not d.action or action in d.action)
        and (not d.priority or priority in d.priority)
        and (not d.kind or bool(kinds & set(d.kind)))
    )


def harm_score(
    findings: Iterable[tuple[str, str]], priority: str, data: TimeframesFile = DATA
) -> float:
    """Severity x likelihood, the worst over ``findings`` ((criterion kind, harm severity)
    pairs); a proposal with none (a rule function's) takes its priority class's severity and
    the rule likelihood.

    >>> harm_score([("drug-drug", "major"), ("monitoring", "moderate")], "safety")
    2.4
    >>> harm_score([], "review")
    0.6
    """
    h = data.harm
    scores = [
        h.severity.get(sev, 1.0) * h.likelihood.get(kind, h.rule_likelihood)
        for kind, sev in findings
    ]
    if not scores:
        scores = [h.severity[h.rule_severity.get(priority, "minor")] * h.rule_likelihood]
    return round(max(scores), 3)


def is_transition(criteria: Iterable[str]) -> bool:
    """Whether a proposal is a transition action (a criterion of the transitions file made it)."""
    return any(_TRANSITION.match(c) for c in criteria)
