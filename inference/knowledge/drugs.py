"""Drug knowledge: ingredients, classes, flags, anticholinergic scores and renal dose limits.

The table itself is data (``data/drugs.yaml``), validated against the schema below when this
module is imported; a file that breaks it stops start-up with ``KnowledgeFileError``. This module
turns it into frozen records and answers the questions rules and criteria ask: which ingredients
a MedicationRequest holds (by RxNorm code, ingredient or clinical drug, and by name in its text —
Synthea writes "Diazepam [Valium]", "Simvistatin 10 MG" (sic), "Lasix 40mg"), what classes and
flags an ingredient has, its ACB score, the strength of a clinical drug, and which kidney-function
band limits its dose. Criteria name drugs as ``drug:<ingredient>``, ``class:<id>`` or ``flag:<id>``.
No rules, no patient logic, no I/O after import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Medication
from service.record.vocabulary import RXNORM

from ._datafile import DATA_DIR, KnowledgeFileError, load_file, problems_message
from .monographs import MONOGRAPHS_FILE, Monograph, derived_flags, load_monographs
from .parameters import param_int

__all__ = [
    "CLASS_LABELS",
    "CLINICAL_FILE",
    "DRUGS",
    "DRUGS_FILE",
    "FLAG_LABELS",
    "VERSION",
    "ClinicalDrug",
    "ClinicalDrugsFile",
    "Drug",
    "DrugTable",
    "DrugsFile",
    "KnowledgeFileError",
    "RenalLimit",
    "acb",
    "clinical_drug",
    "drug",
    "identify",
    "load_drugs",
    "matches",
    "max_daily_mg",
    "members",
    "monitor_of",
    "named_in",
    "renal_limit",
    "renal_limits",
    "strength_mg",
    "weight_max_of",
]

DRUGS_FILE = DATA_DIR / "drugs.yaml"
# RxNorm clinical drugs are many (about 2,000) and machine-extracted: JSON, which loads ~10x
# faster than YAML.
CLINICAL_FILE = DATA_DIR / "clinical_drugs.json"

# --------------------------------------------------------------------------- file schema

_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
_Name = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9 .-]*[a-z0-9]$")]
_Rxcui = Annotated[str, Field(pattern=r"^[1-9][0-9]{0,9}$")]
_Text = Annotated[str, Field(min_length=1)]
Action = Literal["avoid", "switch", "do-not-start", "reduce", "max-dose", "review", "monitor"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClassDef(_Strict):
    id: _Id
    label: _Text
    includes: tuple[_Id, ...] = ()
    source: _Id


class DrugDef(_Strict):
    name: _Name
    rxcui: _Rxcui | None = None
    names: tuple[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9 .-]*$")], ...] = Field(
        min_length=1
    )
    classes: tuple[_Id, ...]
    flags: tuple[_Id, ...] = ()
    acb: Annotated[int, Field(ge=1, le=3)] | None = None
    acb_source: _Id | None = None
    max_daily_mg: Annotated[float, Field(gt=0)] | None = None
    max_source: _Id | None = None

    @model_validator(mode="after")
    def _paired(self) -> DrugDef:
        if (self.acb is None) != (self.acb_source is None):
            raise ValueError("acb and acb_source go together")
        if (self.max_daily_mg is None) != (self.max_source is None):
            raise ValueError("max_daily_mg and max_source go together")
        if self.name not in self.names:
            raise ValueError(f"names must include the ingredient name {self.name!r}")
        return self


class RenalLimitDef(_Strict):
    spec: Annotated[str, Field(pattern=r"^(drug|class):[a-z0-9][a-z0-9 .-]*$")]
    measure: Literal["egfr", "crcl"]
    below: Annotated[float, Field(gt=0, le=150)]
    # How the kidney function compares with ``below`` inside the band, as the source states
    # it: "below 30" is ``<``, "45 or less" and a band "40-60" that includes 60 are ``<=``.
    below_op: Literal["<", "<="]
    at_least: Annotated[float, Field(ge=0)] | None = None
    action: Action
    max_daily_mg: Annotated[float, Field(gt=0)] | None = None
    advice: _Text
    source: _Id
    ref: _Text
    evidence: tuple[Annotated[str, Field(pattern=r"^EB-[A-Z]+-[0-9]{3}$")], ...] = ()
    urgent: bool = False
    # With action "switch": what replaces the drug (a stop that leaves its indication
    # untreated, an anticoagulant in atrial fibrillation, is not the action).
    instead: _Text | None = None

    @model_validator(mode="after")
    def _band(self) -> RenalLimitDef:
        if (self.action == "switch") != (self.instead is not None):
            raise ValueError("instead is given exactly when action is switch")
        if self.at_least is not None and self.at_least >= self.below:
            raise ValueError(f"at_least {self.at_least} must be below {self.below}")
        if (self.action == "max-dose") != (self.max_daily_mg is not None):
            raise ValueError("max_daily_mg is given exactly when action is max-dose")
        return self


class ClinicalDrugDef(_Strict):
    rxcui: _Rxcui
    display: _Text
    ingredients: dict[_Name, Annotated[float, Field(gt=0)] | None] = Field(min_length=1)
    source: _Id


class DrugsFile(_Strict):
    version: _Text
    sources: dict[_Id, _Text]
    classes: tuple[ClassDef, ...]
    flags: tuple[ClassDef, ...]
    drugs: tuple[DrugDef, ...]
    renal_limits: tuple[RenalLimitDef, ...]

    @model_validator(mode="after")
    def _references(self) -> DrugsFile:
        """Every id a record uses is defined once; class inclusion has no cycle."""
        problems: list[str] = []
        classes = _unique("classes", (c.id for c in self.classes), problems)
        flags = _unique("flags", (f.id for f in self.flags), problems)
        names = _unique("drugs", (d.name for d in self.drugs), problems)
        if classes & flags:
            problems.append(f"ids used both as class and flag: {sorted(classes & flags)}")
        _unique("rxcui", (d.rxcui for d in self.drugs if d.rxcui), problems)
        known = _Known(classes, flags, names, set(self.sources), problems)
        self._check_groups(known)
        self._check_drugs(known)
        for r in self.renal_limits:
            kind, _, value = r.spec.partition(":")
            known.need(
                f"renal_limits[{r.spec}].spec", kind, value, names if kind == "drug" else classes
            )
            known.need(f"renal_limits[{r.spec}].source", "source", r.source, known.sources)
        graph = {c.id: c.includes for c in self.classes}
        for c_id in graph:
            if c_id in _closure(c_id, graph):
                problems.append(f"classes[{c_id}]: includes itself through its subclasses")
        if problems:
            raise ValueError(problems_message(problems))
        return self

    def _check_groups(self, known: _Known) -> None:
        for group, where in ((self.classes, "classes"), (self.flags, "flags")):
            for g in group:
                for inc in g.includes:
                    known.need(f"{where}[{g.id}].includes", "class", inc, known.classes)
                known.need(f"{where}[{g.id}].source", "source", g.source, known.sources)

    def _check_drugs(self, known: _Known) -> None:
        strong = param_int("acb.strong_score")
        for d in self.drugs:
            for c_id in d.classes:
                known.need(f"drugs[{d.name}].classes", "class", c_id, known.classes)
            for f_id in d.flags:
                known.need(f"drugs[{d.name}].flags", "flag", f_id, known.flags)
            for src in (d.acb_source, d.max_source):
                if src is not None:
                    known.need(f"drugs[{d.name}]", "source", src, known.sources)
            if (d.acb == strong) != ("strong-anticholinergic" in d.classes):
                known.problems.append(
                    f"drugs[{d.name}]: class strong-anticholinergic is exactly the drugs "
                    f"with an ACB score of {strong}"
                )


@dataclass(frozen=True, slots=True)
class _Known:
    """The ids a drug file defines, and the problems found so far in checking it."""

    classes: set[str]
    flags: set[str]
    names: set[str]
    sources: set[str]
    problems: list[str]

    def need(self, where: str, kind: str, value: str, known: set[str]) -> None:
        if value not in known:
            self.problems.append(f"{where}: unknown {kind} {value!r}")


class ClinicalDrugsFile(_Strict):
    version: _Text
    description: _Text
    sources: dict[_Id, _Text]
    clinical_drugs: tuple[ClinicalDrugDef, ...]

    @model_validator(mode="after")
    def _references(self) -> ClinicalDrugsFile:
        problems: list[str] = []
        _unique("rxcui", (c.rxcui for c in self.clinical_drugs), problems)
        for cd in self.clinical_drugs:
            if cd.source not in self.sources:
                problems.append(f"clinical_drugs[{cd.rxcui}].source: unknown source {cd.source!r}")
        if problems:
            raise ValueError(problems_message(problems))
        return self


def _unique(what: str, values: Iterable[str], problems: list[str]) -> set[str]:
    seen: set[str] = set()
    for v in values:
        if v in seen:
            problems.append(f"{what}: {v!r} is defined twice")
        seen.add(v)
    return seen


def _closure(start: str, graph: dict[str, tuple[str, ...]]) -> set[str]:
    """Every class reachable from ``start`` through ``includes`` (not ``start`` itself unless
    there is a cycle)."""
    out: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        x = todo.pop()
        if x not in out:
            out.add(x)
            todo.extend(graph.get(x, ()))
    return out


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class Drug:
    """One ingredient. ``classes`` and ``flags`` are closed over class inclusion (warfarin is a
    ``vka`` and therefore an ``anticoagulant``); ``names`` are lower-case words or phrases matched
    on word boundaries; ``rxnorm`` holds the ingredient RxCUI (when confirmed) and every clinical
    drug code that contains it."""

    name: str
    classes: tuple[str, ...]
    names: tuple[str, ...] = ()
    rxnorm: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    rxcui: str | None = None
    acb: int = 0
    acb_source: str | None = None
    max_daily_mg: float | None = None
    # The tests its monograph names, each with its interval in days once the dose is stable.
    monitor: tuple[tuple[str, int], ...] = ()
    # Its monograph's daily maximum per kg of actual body weight: (mg/kg a day, the weight in kg
    # below which it applies or None for every weight).
    weight_max: tuple[float, float | None] | None = None


@dataclass(frozen=True, slots=True)
class RenalLimit:
    """A dose limit in one band of kidney function: ``at_least`` <= value and value ``below_op``
    ``below`` (< or <=), the value being ``measure`` (eGFR in mL/min/1.73m2 or Cockcroft-Gault
    CrCl in mL/min)."""

    spec: str
    measure: Literal["egfr", "crcl"]
    below: float
    at_least: float | None
    action: Action
    max_daily_mg: float | None
    advice: str
    source: str
    ref: str
    evidence: tuple[str, ...]
    urgent: bool
    instead: str | None = None
    below_op: Literal["<", "<="] = "<"

    def applies(self, value: float) -> bool:
        under = value <= self.below if self.below_op == "<=" else value < self.below
        return under and (self.at_least is None or value >= self.at_least)


@dataclass(frozen=True, slots=True)
class ClinicalDrug:
    """An RxNorm clinical drug: its ingredients and their mg per unit (None when not stated or
    not a solid unit)."""

    rxcui: str
    display: str
    strengths: tuple[tuple[str, float | None], ...]


@dataclass(frozen=True, slots=True)
class DrugTable:
    version: str
    drugs: tuple[Drug, ...]
    class_labels: dict[str, str]
    flag_labels: dict[str, str]
    renal: tuple[RenalLimit, ...]
    clinical: dict[str, ClinicalDrug]
    sources: dict[str, str]


def _with_monographs(drugs: list[Drug], flag_ids: set[str], path: Path) -> list[Drug]:
    """The drugs with the flags and daily maximum their monographs give (``monographs.py``)."""
    mf = load_monographs(path)
    by_name = {d.name: d for d in drugs}
    out = dict(by_name)
    for key, flag in (("max_mg", mf.flags.max_mg), ("weight_max", mf.flags.weight_max)):
        if flag not in flag_ids:
            raise KnowledgeFileError(path, f"flags.{key}", f"unknown flag {flag!r}")
    for m in mf.monographs:
        d = by_name.get(m.drug)
        if d is None:
            raise KnowledgeFileError(path, f"monographs[{m.drug}]", "not a drug of drugs.yaml")
        flags = derived_flags(mf, m)
        unknown = sorted(set(flags) - flag_ids)
        if unknown:
            raise KnowledgeFileError(path, f"monographs[{m.drug}]", f"unknown flag {unknown[0]!r}")
        top = d.max_daily_mg
        if m.max_mg is not None and top is not None and top != m.max_mg.mg:
            raise KnowledgeFileError(
                path, f"monographs[{m.drug}].max_mg", "differs from drugs.yaml"
            )
        out[m.drug] = replace(
            d,
            flags=tuple(dict.fromkeys((*d.flags, *flags))),
            max_daily_mg=top if top is not None else (m.max_mg.mg if m.max_mg else None),
            monitor=tuple((x.test, x.days) for x in m.monitor),
            weight_max=_per_kg(m),
        )
    return [_max_flags(out[d.name], mf.flags.max_mg, mf.flags.weight_max) for d in drugs]


def _per_kg(m: Monograph) -> tuple[float, float | None] | None:
    w = m.weight_max
    return None if w is None else (w.mg_per_kg_day, w.below_kg)


def _max_flags(d: Drug, max_flag: str, weight_flag: str) -> Drug:
    """The drug with the flags of the maximums it has (a daily one, one per kg)."""
    extra: tuple[str, ...] = (max_flag,) if d.max_daily_mg is not None else ()
    extra += (weight_flag,) if d.weight_max is not None else ()
    return replace(d, flags=(*d.flags, *extra)) if extra else d


def load_drugs(
    path: Path = DRUGS_FILE,
    clinical_path: Path = CLINICAL_FILE,
    monographs_path: Path = MONOGRAPHS_FILE,
) -> DrugTable:
    """Validate both files and build the table; ``KnowledgeFileError`` when either is unusable
    or they disagree (a clinical drug naming an unknown ingredient, a code used twice, versions
    that differ)."""
    f = load_file(path, DrugsFile)
    cf = load_file(clinical_path, ClinicalDrugsFile)
    if cf.version != f.version:
        raise KnowledgeFileError(
            clinical_path, "version", f"{cf.version!r} differs from {path.name}'s {f.version!r}"
        )
    names = {d.name for d in f.drugs}
    ingredient_codes = {d.rxcui for d in f.drugs if d.rxcui}
    for cd in cf.clinical_drugs:
        unknown = sorted(set(cd.ingredients) - names)
        if unknown:
            where = f"clinical_drugs[{cd.rxcui}].ingredients"
            raise KnowledgeFileError(clinical_path, where, f"unknown drug {unknown[0]!r}")
        if cd.rxcui in ingredient_codes:
            where = f"clinical_drugs[{cd.rxcui}]"
            raise KnowledgeFileError(clinical_path, where, f"{cd.rxcui} is an ingredient code")
    graph = {c.id: c.includes for c in f.classes}
    flag_graph = {x.id: x.includes for x in f.flags}
    codes: dict[str, list[str]] = {d.name: ([d.rxcui] if d.rxcui else []) for d in f.drugs}
    for cd in cf.clinical_drugs:
        for ing in cd.ingredients:
            codes[ing].append(cd.rxcui)
    below = {c_id: _closure(c_id, graph) for c_id in graph}
    parents = {c_id: sorted(p for p in graph if c_id in below[p]) for c_id in graph}
    drugs: list[Drug] = []
    for d in f.drugs:
        classes = list(d.classes)
        for c_id in d.classes:
            classes += [p for p in parents[c_id] if p not in classes]
        flags = list(d.flags)
        for flag_id, members in flag_graph.items():
            if flag_id not in flags and set(members) & set(classes):
                flags.append(flag_id)
        drugs.append(
            Drug(
                d.name,
                tuple(dict.fromkeys(classes)),
                d.names,
                tuple(codes[d.name]),
                tuple(flags),
                d.rxcui,
                d.acb or 0,
                d.acb_source,
                d.max_daily_mg,
            )
        )
    drugs = _with_monographs(drugs, {x.id for x in f.flags}, monographs_path)
    renal = tuple(
        RenalLimit(
            r.spec,
            r.measure,
            r.below,
            r.at_least,
            r.action,
            r.max_daily_mg,
            r.advice,
            r.source,
            r.ref,
            r.evidence,
            r.urgent,
            r.instead,
            r.below_op,
        )
        for r in f.renal_limits
    )
    clinical = {
        cd.rxcui: ClinicalDrug(cd.rxcui, cd.display, tuple(cd.ingredients.items()))
        for cd in cf.clinical_drugs
    }
    return DrugTable(
        f.version,
        tuple(drugs),
        {c.id: c.label for c in f.classes},
        {x.id: x.label for x in f.flags},
        renal,
        clinical,
        {**f.sources, **cf.sources},
    )


_TABLE = load_drugs()

VERSION: str = _TABLE.version
DRUGS: tuple[Drug, ...] = _TABLE.drugs
# Labels for class and flag ids: what argument texts and retrieval queries say.
CLASS_LABELS: dict[str, str] = {**_TABLE.class_labels, **_TABLE.flag_labels}
FLAG_LABELS: dict[str, str] = dict(_TABLE.flag_labels)

_BY_NAME = {d.name: d for d in DRUGS}
_BY_CODE: dict[str, tuple[Drug, ...]] = {}
for _d in DRUGS:
    for _c in _d.rxnorm:
        _BY_CODE[_c] = (*_BY_CODE.get(_c, ()), _d)
_NAME_OF: dict[str, str] = {n: d.name for d in DRUGS for n in d.names}
# One alternation, longest names first, so "isosorbide mononitrate" wins over shorter overlaps.
_NAMES_RE = re.compile(
    r"\b(" + "|".join(re.escape(n) for n in sorted(_NAME_OF, key=len, reverse=True)) + r")\b"
)


# Apostrophes are dropped before names are matched: "St John's wort" is written with one or
# none, straight or curly, and the names in drugs.yaml carry none.
_APOSTROPHES = str.maketrans("", "", "'\u2019")


def _matchable(text: str) -> str:
    return text.lower().translate(_APOSTROPHES)


def drug(name: str) -> Drug:
    return _BY_NAME[name]


@lru_cache(maxsize=4096)
def _from_text(text: str) -> tuple[str, ...]:
    return tuple(sorted({_NAME_OF[m.group(1)] for m in _NAMES_RE.finditer(_matchable(text))}))


def named_in(text: str) -> tuple[str, ...]:
    """Ingredient names a free text names, in the order it names them (each once)."""
    return tuple(dict.fromkeys(_NAME_OF[m.group(1)] for m in _NAMES_RE.finditer(_matchable(text))))


def identify(med: Medication) -> tuple[str, ...]:
    """Ingredient names of one MedicationRequest: RxNorm codes and text both count."""
    names: set[str] = set()
    for code in med.codes:
        if code.system in (RXNORM, "") and code.code in _BY_CODE:
            names.update(d.name for d in _BY_CODE[code.code])
        names.update(_from_text(code.display))
    names.update(_from_text(med.text))
    return tuple(sorted(names))


@lru_cache(maxsize=1024)
def members(spec: str) -> frozenset[str]:
    """Ingredient names a ``drug:``/``class:``/``flag:`` spec stands for (empty when unknown)."""
    kind, _, value = spec.partition(":")
    if kind == "drug":
        return frozenset({value} & _BY_NAME.keys())
    if kind == "class":
        return frozenset(d.name for d in DRUGS if value in d.classes)
    if kind == "flag":
        return frozenset(d.name for d in DRUGS if value in d.flags)
    return frozenset()


def matches(name: str, spec: str) -> bool:
    return name in members(spec)


def acb(name: str) -> int:
    """Anticholinergic Cognitive Burden score of an ingredient (0 when not listed)."""
    d = _BY_NAME.get(name)
    return d.acb if d is not None else 0


def max_daily_mg(name: str) -> float | None:
    """Usual adult daily maximum in mg, where the table holds one."""
    d = _BY_NAME.get(name)
    return d.max_daily_mg if d is not None else None


def weight_max_of(name: str) -> tuple[float, float | None] | None:
    """The daily maximum per kg of actual body weight and the weight it applies below."""
    d = _BY_NAME.get(name)
    return d.weight_max if d is not None else None


def monitor_of(name: str) -> tuple[tuple[str, int], ...]:
    """The tests the drug's monograph names and their intervals in days (none when absent)."""
    d = _BY_NAME.get(name)
    return d.monitor if d is not None else ()


def clinical_drug(rxcui: str) -> ClinicalDrug | None:
    return _TABLE.clinical.get(rxcui)


def strength_mg(rxcui: str, ingredient: str) -> float | None:
    """mg of ``ingredient`` per unit of the clinical drug ``rxcui`` (None when unknown)."""
    cd = _TABLE.clinical.get(rxcui)
    if cd is None:
        return None
    return dict(cd.strengths).get(ingredient)


def renal_limits(name: str) -> tuple[RenalLimit, ...]:
    """Every kidney-function limit for an ingredient, its own and its classes', in file order."""
    return tuple(r for r in _TABLE.renal if matches(name, r.spec))


def renal_limit(
    name: str, *, egfr: float | None = None, crcl: float | None = None
) -> tuple[RenalLimit, ...]:
    """The limits whose band holds the patient's kidney function. Each limit is read against the
    measure its source uses; when only the other measure is known, that one stands in for it."""
    out: list[RenalLimit] = []
    for r in renal_limits(name):
        own, other = (egfr, crcl) if r.measure == "egfr" else (crcl, egfr)
        value = own if own is not None else other
        if value is not None and r.applies(value):
            out.append(r)
    return tuple(out)


def renal_straddle(
    name: str, *, egfr: float | None = None, crcl: float | None = None
) -> tuple[RenalLimit, ...]:
    """The limits ``renal_limit`` leaves out because the estimates fall either side of a band's
    edge: the band holds at the other, lower estimate but not at the one its source reads (a
    clearance of 35 and an eGFR of 28 against a band below a clearance of 30). Such a band is
    read from the lower estimate, as a probable finding until a repeat settles it."""
    if egfr is None or crcl is None:
        return ()
    out: list[RenalLimit] = []
    for r in renal_limits(name):
        own, other = (egfr, crcl) if r.measure == "egfr" else (crcl, egfr)
        if other < own and r.applies(other) and not r.applies(own):
            out.append(r)
    return tuple(out)
