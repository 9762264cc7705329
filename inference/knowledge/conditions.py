"""Condition knowledge: value sets (SNOMED CT, ICD-10) and wordings per condition group.

The value sets are data (``data/conditions.yaml``), validated against the schema below when this
module is imported; a file that breaks it stops start-up with ``KnowledgeFileError``. ``domains``
say which professional expertise a problem belongs to (votes and panel matching); ``kind`` says
how the attending treats an active entry: ``chronic`` (a real problem), ``acute`` (self-limiting;
stale when still "active" long after onset), ``history`` (a "history of" situation, not a current
problem), ``noise`` (a known Synthea artefact), ``sdoh`` (a social finding, not a medical
diagnosis). Criteria name a condition by its group id. No rules, no I/O after import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from service.record.profile import Condition
from service.record.vocabulary import ICD10, SNOMED

from ._datafile import DATA_DIR, KnowledgeFileError, load_yaml

__all__ = [
    "CONDITIONS_FILE",
    "CONDITION_GROUPS",
    "DOMAINS",
    "GROUPS_BY_KEY",
    "SDOH_NEEDS",
    "VERSION",
    "ConditionGroup",
    "ConditionTable",
    "ConditionsFile",
    "KnowledgeFileError",
    "classify",
    "classify_words",
    "expand_icd10",
    "is_sdoh_need",
    "load_conditions",
    "matches_code",
]

CONDITIONS_FILE = DATA_DIR / "conditions.yaml"
ICD10_WHO = "http://hl7.org/fhir/sid/icd-10"

Kind = Literal["chronic", "acute", "history", "family", "noise", "sdoh"]
# The expertise domains the agent roles vote on (inference/knowledge/roles.py).
Domain = Literal[
    "general",
    "cognition",
    "neuro",
    "mental",
    "renal",
    "metabolic",
    "endocrine",
    "cardiovascular",
    "respiratory",
    "musculoskeletal",
    "falls",
    "function",
    "nutrition",
    "oncology",
    "medication",
    "social",
    "caregiver",
]
DOMAINS: tuple[str, ...] = get_args(Domain)

_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
_Sctid = Annotated[str, Field(pattern=r"^[1-9][0-9]{5,17}$")]
# A code prefix ("I50", "E11.2", "C7A") or a range of three-character categories ("I20-I25").
_ICD_PREFIX = re.compile(r"[A-Z][0-9][0-9A-Z](\.[0-9A-Z]{1,4})?")
_ICD_RANGE = re.compile(r"([A-Z])([0-9]{2})-([A-Z])([0-9]{2})")


def expand_icd10(entry: str) -> tuple[str, ...]:
    """A value-set entry as code prefixes: ``"I20-I25"`` -> I20, I21, ..., I25.

    >>> expand_icd10("K25-K28"), expand_icd10("E11.2")
    (('K25', 'K26', 'K27', 'K28'), ('E11.2',))
    """
    m = _ICD_RANGE.fullmatch(entry)
    if m is not None:
        letter, first, letter2, last = m.groups()
        lo, hi = int(first), int(last)
        if letter != letter2 or lo > hi:
            raise ValueError(f"ICD-10 range {entry!r} must run upwards within one letter")
        return tuple(f"{letter}{n:02d}" for n in range(lo, hi + 1))
    if _ICD_PREFIX.fullmatch(entry) is None:
        raise ValueError(f"{entry!r} is neither an ICD-10 code prefix nor a range like I20-I25")
    return (entry,)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GroupDef(_Strict):
    id: _Id
    label: Annotated[str, Field(min_length=1)]
    kind: Kind
    domains: tuple[Domain, ...] = Field(min_length=1)
    snomed: tuple[_Sctid, ...] = ()
    icd10: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    implies: tuple[_Id, ...] = ()
    source: Annotated[str, Field(min_length=1)]

    @field_validator("icd10")
    @classmethod
    def _icd(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for entry in v:
            expand_icd10(entry)
        return v

    @field_validator("text")
    @classmethod
    def _regex(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in v:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"text pattern {pattern!r} is not a regular expression: {exc}"
                ) from exc
            if pattern != pattern.lower():
                raise ValueError(f"text pattern {pattern!r} must be lower-case")
        return v

    @model_validator(mode="after")
    def _matches_something(self) -> GroupDef:
        if not (self.snomed or self.icd10 or self.text):
            raise ValueError("a group needs at least one SNOMED code, ICD-10 entry or text")
        return self


class ConditionsFile(_Strict):
    version: Annotated[str, Field(min_length=1)]
    groups: tuple[GroupDef, ...] = Field(min_length=1)
    sdoh_needs: dict[_Sctid, str]
    sdoh_need_text: str

    @model_validator(mode="after")
    def _references(self) -> ConditionsFile:
        ids = [g.id for g in self.groups]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"group ids defined twice: {twice}")
        for g in self.groups:
            unknown = [i for i in g.implies if i not in ids or i == g.id]
            if unknown:
                raise ValueError(f"groups[{g.id}].implies: unknown or self group {unknown}")
        if sum(1 for g in self.groups if g.kind == "history") > 1:
            raise ValueError("only one group may be of kind history")
        return self


@dataclass(frozen=True, slots=True)
class ConditionGroup:
    key: str
    label: str
    kind: str  # chronic | acute | history | noise | sdoh
    domains: tuple[str, ...]
    snomed: tuple[str, ...] = ()
    icd10: tuple[str, ...] = ()  # code prefixes, ranges expanded
    text: tuple[str, ...] = ()  # lower-case regex fragments matched on the problem text
    implies: tuple[str, ...] = ()
    source: str = ""


@dataclass(frozen=True, slots=True)
class ConditionTable:
    version: str
    groups: tuple[ConditionGroup, ...]
    sdoh_needs: dict[str, str]
    sdoh_need_text: str


def load_conditions(path: Path = CONDITIONS_FILE) -> ConditionTable:
    """Validate ``path`` and build the table; ``KnowledgeFileError`` when it is unusable."""
    f = load_yaml(path, ConditionsFile)
    groups = tuple(
        ConditionGroup(
            g.id,
            g.label,
            g.kind,
            tuple(g.domains),
            g.snomed,
            tuple(p for e in g.icd10 for p in expand_icd10(e)),
            g.text,
            g.implies,
            g.source,
        )
        for g in f.groups
    )
    return ConditionTable(f.version, groups, dict(f.sdoh_needs), f.sdoh_need_text)


_TABLE = load_conditions()

VERSION: str = _TABLE.version
CONDITION_GROUPS: tuple[ConditionGroup, ...] = _TABLE.groups
GROUPS_BY_KEY: dict[str, ConditionGroup] = {g.key: g for g in CONDITION_GROUPS}
# Social findings that are needs (the rest, e.g. employment, are context, not needs).
SDOH_NEEDS: dict[str, str] = _TABLE.sdoh_needs
_NEED_TEXT = re.compile(_TABLE.sdoh_need_text)

_ORDER = {g.key: i for i, g in enumerate(CONDITION_GROUPS)}
_SNOMED_INDEX: dict[str, tuple[str, ...]] = {}
for _g in CONDITION_GROUPS:
    for _c in _g.snomed:
        _SNOMED_INDEX[_c] = (*_SNOMED_INDEX.get(_c, ()), _g.key)
_ICD_PREFIXES = tuple(
    (g.key, tuple(p.replace(".", "") for p in g.icd10)) for g in CONDITION_GROUPS if g.icd10
)
_GROUP_PATTERNS = tuple((g.key, tuple(re.compile(t) for t in g.text)) for g in CONDITION_GROUPS)


def matches_code(group: str, system: str, code: str) -> bool:
    """Whether one coding belongs to a group's value set (ICD-10 by prefix, dots ignored)."""
    g = GROUPS_BY_KEY[group]
    if system == SNOMED:
        return code in g.snomed
    if system in (ICD10, ICD10_WHO):
        flat = code.replace(".", "").upper()
        return any(flat.startswith(p.replace(".", "")) for p in g.icd10)
    return False


@lru_cache(maxsize=4096)
def _classify(codes: tuple[tuple[str, str], ...], text: str) -> tuple[str, ...]:
    low = text.lower().strip()
    hits: set[str] = set()
    for system, code in codes:
        if system == SNOMED:
            hits.update(_SNOMED_INDEX.get(code, ()))
        elif system in (ICD10, ICD10_WHO):
            flat = code.replace(".", "").upper()
            hits.update(k for k, prefixes in _ICD_PREFIXES if flat.startswith(prefixes))
    hits.update(k for k, pats in _GROUP_PATTERNS if any(p.search(low) for p in pats))
    found = sorted(hits, key=_ORDER.__getitem__)
    # The history kind wins over disease groups: "History of cardiac arrest" is history, not a
    # cardiac arrest, and "Family history: father had a myocardial infarction" is the father's;
    # a "(finding)" is social unless a disease group matched.
    history = [k for k in found if GROUPS_BY_KEY[k].kind in ("history", "family")]
    if history:
        return (history[0],)
    if len(found) > 1:
        found = [k for k in found if GROUPS_BY_KEY[k].kind != "sdoh"] or found
    # Implied groups (a CKD stage is CKD) follow what matched directly.
    todo = list(found)
    while todo:
        for implied in GROUPS_BY_KEY[todo.pop(0)].implies:
            if implied not in found:
                found.append(implied)
                todo.append(implied)
    return tuple(found)


def classify(problem: Condition) -> tuple[str, ...]:
    """Group keys of one Condition, in table order (codes and text both count), then the groups
    they imply."""
    codes = tuple((c.system, c.code) for c in problem.codes)
    return _classify(codes, problem.text)


def classify_words(codes: tuple[tuple[str, str], ...], text: str) -> tuple[str, ...]:
    """Group keys of codes and words that are not a Condition (a contact's reason)."""
    return _classify(codes, text)


def is_sdoh_need(problem: Condition) -> bool:
    if any(c.code in SDOH_NEEDS for c in problem.codes):
        return True
    return bool(_NEED_TEXT.search(problem.text.lower())) and "(finding)" in problem.text.lower()
