"""Dose reductions a product label ties to counted features of the patient.

A label may lower a dose when enough of a few features are met (apixaban for atrial
fibrillation: two of age, body weight and serum creatinine). The rules are data
(``data/dose_features.yaml``); this module reads each feature from the typed facts, counts the
met ones and says whether the current dose is above the reduced one (``above``) or, where the
label says so plainly, reduced with too few features met (``below``). Read by the criteria that
hold ``Trigger.feature_dose``. Pure: no I/O after import, no clock.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Observation

from ._datafile import DATA_DIR, load_yaml
from .facts import Facts, MedFact
from .weight_dosing import weight_kg

__all__ = [
    "DOSE_FEATURES_FILE",
    "DoseFeaturesFile",
    "Feature",
    "FeatureDose",
    "Met",
    "Reduction",
    "creatinine_in",
    "feature_doses",
    "load_dose_features",
]

DOSE_FEATURES_FILE = DATA_DIR / "dose_features.yaml"

Op = Literal[">=", "<=", ">", "<"]
OPS: Mapping[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
_Positive = Annotated[float, Field(gt=0, le=10000)]
# Units a creatinine result is charted in, as the thresholds name them.
_CREATININE_UNITS = {
    "umol/l": "umol/L",
    "µmol/l": "umol/L",
    "micromol/l": "umol/L",
    "mg/dl": "mg/dL",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Feature(_Strict):
    """One feature of a rule: a numeric one compares the patient's value, in the unit a
    threshold names, with that threshold by ``op``; a ``drug`` one is met by any of ``drugs``
    taken with the bound medicine."""

    kind: Literal["age", "weight", "creatinine", "drug"]
    op: Op | None = None
    thresholds: dict[Literal["years", "kg", "umol/L", "mg/dL"], _Positive] = {}
    drugs: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _shape(self) -> Feature:
        numeric = self.kind != "drug"
        if numeric != (self.op is not None and bool(self.thresholds)) or numeric == bool(
            self.drugs
        ):
            raise ValueError(f"feature {self.kind}: op and thresholds, or drugs, not both")
        return self


class Reduction(_Strict):
    drug: str = Field(min_length=1)
    conditions: tuple[str, ...] = Field(min_length=1)
    indication: str = Field(min_length=1)
    reduced_daily_mg: _Positive
    reduced_dose: str = Field(min_length=1)
    at_least: int = Field(ge=1)
    features: tuple[Feature, ...] = Field(min_length=1)
    under_dose: bool = False
    under_dose_crcl_min: Annotated[float, Field(ge=0, le=200)] | None = None
    source: str
    ref: str = Field(min_length=1)


class Window(_Strict):
    value: Annotated[int, Field(gt=0, le=3650)]
    source: str


class DoseFeaturesFile(_Strict):
    version: str
    last_reviewed: date
    sources: dict[str, str] = Field(min_length=1)
    weight_within_days: Window
    reductions: tuple[Reduction, ...]

    @model_validator(mode="after")
    def _cited(self) -> DoseFeaturesFile:
        named = {r.source for r in self.reductions} | {self.weight_within_days.source}
        unknown = named - set(self.sources)
        if unknown:
            raise ValueError(f"unknown sources {sorted(unknown)}")
        return self


def load_dose_features(path: Path = DOSE_FEATURES_FILE) -> DoseFeaturesFile:
    return load_yaml(path, DoseFeaturesFile)


@cache
def _table() -> DoseFeaturesFile:
    return load_dose_features()


@dataclass(frozen=True, slots=True)
class Met:
    """One feature read from the record: its value in ``unit``, the threshold of that unit,
    whether it is met, and the record entry it rests on ('' for the age)."""

    kind: str
    value: float
    unit: str
    op: str
    threshold: float
    met: bool
    ref: str = ""
    day: date | None = None
    text: str = ""  # a medicine's own wording (``drug`` features)


@dataclass(frozen=True, slots=True)
class FeatureDose:
    rule: Reduction
    med: MedFact
    read: tuple[Met, ...]  # every feature the record answers
    unknown: tuple[str, ...]  # the kinds it does not

    @property
    def met(self) -> tuple[Met, ...]:
        return tuple(x for x in self.read if x.met)


def creatinine_in(o: Observation) -> tuple[float, str] | None:
    """A creatinine result's value and the threshold unit it is charted in; None when the
    unit is none of those (the feature is then unknown, never converted)."""
    unit = _CREATININE_UNITS.get(o.unit.strip().lower())
    return None if unit is None or o.value is None else (o.value, unit)


def _numeric(feat: Feature, value: float, unit: str) -> Met | None:
    threshold = feat.thresholds.get(unit)  # type: ignore[call-overload]
    if threshold is None or feat.op is None:
        return None
    return Met(feat.kind, value, unit, feat.op, threshold, OPS[feat.op](value, threshold))


def _read(feat: Feature, f: Facts, m: MedFact, weight_days: int) -> Met | None:
    if feat.kind == "age":
        return None if f.age is None else _numeric(feat, float(f.age), "years")
    if feat.kind == "drug":
        return _with_drug(feat, f, m)
    o = f.latest(feat.kind)
    if o is None:
        return None
    got: tuple[float, str] | None
    if feat.kind == "weight":
        age = f.days_since(o.effective)
        kg = weight_kg(o) if age is not None and age <= weight_days else None
        got = None if kg is None else (kg, "kg")
    else:
        got = creatinine_in(o)
    x = None if got is None else _numeric(feat, *got)
    return (
        None
        if x is None
        else Met(x.kind, x.value, x.unit, x.op, x.threshold, x.met, o.ref, o.effective)
    )


def _with_drug(feat: Feature, f: Facts, m: MedFact) -> Met:
    other = next(
        (x for spec in feat.drugs for x in f.with_spec(spec) if x.ref != m.ref),
        None,
    )
    if other is None:
        return Met("drug", 0.0, "", "", 0.0, False)
    return Met("drug", 0.0, "", "", 0.0, True, other.ref, other.authored, other.text)


def _reading(rule: Reduction, f: Facts, m: MedFact) -> FeatureDose:
    days = _table().weight_within_days.value
    read: list[Met] = []
    unknown: list[str] = []
    for feat in rule.features:
        got = _read(feat, f, m, days)
        if got is None:
            unknown.append(feat.kind)
        else:
            read.append(got)
    return FeatureDose(rule, m, tuple(read), tuple(unknown))


def _holds(d: FeatureDose, f: Facts, direction: str) -> bool:
    rule, daily = d.rule, d.med.daily_mg
    if direction == "above":
        return len(d.met) >= rule.at_least and (daily is None or daily > rule.reduced_daily_mg)
    k = f.kidney
    crcl_ok = rule.under_dose_crcl_min is None or (
        k is not None and k.crcl is not None and k.crcl >= rule.under_dose_crcl_min
    )
    return (
        rule.under_dose
        and crcl_ok
        and not d.unknown
        and len(d.met) < rule.at_least
        and daily is not None
        and daily <= rule.reduced_daily_mg
    )


def feature_doses(
    f: Facts, direction: Literal["above", "below"], table: DoseFeaturesFile | None = None
) -> Iterator[FeatureDose]:
    """Each active medicine a rule names, taken for the rule's indication, whose dose is above
    the reduced one with enough features met (``above``; an unstated dose too, to verify), or
    reduced with every feature known and too few met (``below``)."""
    for rule in (table or _table()).reductions:
        if not any(f.active(g) for g in rule.conditions):
            continue
        for m in f.distinct_with_spec(f"drug:{rule.drug}"):
            d = _reading(rule, f, m)
            if _holds(d, f, direction):
                yield d
