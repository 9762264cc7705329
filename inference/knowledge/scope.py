"""The population the knowledge was built and validated for (``data/scope.yaml``): its check
families, the markers of the populations outside it (pregnancy, children, transplant...) and the
facts whose absence disables a check; and ``marked``, the record entries that put a patient in
one such population. Criteria read ``marked`` to stand back where their advice does not hold
(``Trigger.outside``); ``coverage`` reads the rest. A module of its own so that the criteria
interpreter and the coverage statement, which reads the criteria, do not import each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Code, Observation
from service.record.vocabulary import ICD10, SNOMED

from . import conditions, drugs
from ._datafile import DATA_DIR, check_patterns, load_yaml
from .criteria.schema import Kind
from .facts import Facts
from .parameters import param

__all__ = [
    "SCOPE",
    "SCOPE_FILE",
    "Applies",
    "FamilyDef",
    "MarkerDef",
    "MeasurementsDef",
    "ScopeFile",
    "load_scope",
    "marked",
    "marker_refs",
    "within",
]

SCOPE_FILE = DATA_DIR / "scope.yaml"

_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
_Text = Annotated[str, Field(min_length=1)]
_Loinc = Annotated[str, Field(pattern=r"^[0-9]{1,7}-[0-9]$")]
_Sctid = Annotated[str, Field(pattern=r"^[1-9][0-9]{5,17}$")]
_Icd10 = Annotated[str, Field(pattern=r"^[A-Z][0-9A-Z.]{0,7}$")]
_Days = Annotated[int, Field(gt=0, le=3650)]
_Age = Annotated[int, Field(ge=0, le=130)]
_Sex = Literal["male", "female"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Applies(_Strict):
    sex: _Sex | None = None
    age_min: _Age | None = None
    age_max: _Age | None = None


class FamilyDef(_Strict):
    id: _Id
    label: _Text
    kinds: tuple[Kind, ...]
    groups: tuple[_Id, ...] = ()
    needs: Literal["kidney", "age", "none"] = "none"
    applies: Applies = Applies()


class MarkerDef(_Strict):
    id: _Id
    label: _Text
    check: _Text
    age_below: _Age | None = None
    sex: _Sex | None = None
    within_days: _Days | None = None  # None: ``window.marker_days``
    snomed: tuple[_Sctid, ...] = ()
    icd10: tuple[_Icd10, ...] = ()
    text: tuple[_Text, ...] = ()
    encounter_snomed: tuple[_Sctid, ...] = ()
    encounter_text: tuple[_Text, ...] = ()
    observations: tuple[_Loinc, ...] = ()
    present_loinc: tuple[_Loinc, ...] = ()
    medicines: tuple[_Text, ...] = ()
    # The marker holds when this typed fact does (``Facts.pregnancy``, ``Facts.lactation``):
    # the same reading of the record as the criteria's, an ended pregnancy included.
    fact: Literal["pregnancy", "lactation"] | None = None


class PositiveValues(_Strict):
    snomed: tuple[_Sctid, ...]
    text: tuple[_Text, ...]


class PregnancyStatusDef(_Strict):
    age_min: _Age
    age_max: _Age
    flag: _Id
    marker: _Id
    status_loinc: tuple[_Loinc, ...] = Field(min_length=1)
    days: _Days
    # Words of a problem or a result that say the woman cannot conceive.
    cannot_conceive_words: tuple[_Text, ...] = ()


class LevelDef(_Strict):
    drug: _Id
    label: _Text
    loinc: tuple[_Loinc, ...] = Field(min_length=1)
    days: _Days


class MissingDef(_Strict):
    kidney_function_days: _Days
    child_weight_days: _Days
    pregnancy_status: PregnancyStatusDef
    levels: tuple[LevelDef, ...]


class MeasurementsDef(_Strict):
    """The vital signs and body measurements that are context, not reasoning items, unless a
    check reads them or the record flags them abnormal (``concepts``). ``codes`` are LOINC
    codes, under a key the concept index does not harvest: no check reads them here."""

    codes: tuple[_Loinc, ...] = Field(min_length=1)
    names: tuple[_Text, ...] = ()
    abnormal: tuple[_Text, ...] = Field(min_length=1)
    source: _Text


class ScopeFile(_Strict):
    version: _Text
    population: _Text
    families: tuple[FamilyDef, ...] = Field(min_length=1)
    markers: tuple[MarkerDef, ...]
    positive_values: PositiveValues
    missing: MissingDef
    measurements: MeasurementsDef

    @model_validator(mode="after")
    def _references(self) -> ScopeFile:
        known = {d.name for d in drugs.DRUGS}
        for lv in self.missing.levels:
            if lv.drug not in known:
                raise ValueError(f"missing.levels: unknown drug {lv.drug!r}")
        ps = self.missing.pregnancy_status
        if ps.flag not in drugs.FLAG_LABELS:
            raise ValueError(f"missing.pregnancy_status.flag: unknown flag {ps.flag!r}")
        if ps.marker not in {m.id for m in self.markers}:
            raise ValueError(f"missing.pregnancy_status.marker: unknown marker {ps.marker!r}")
        for m in self.markers:
            check_patterns((*m.text, *m.encounter_text, *m.medicines), f"markers[{m.id}]: ")
        return self


def load_scope(path: Path = SCOPE_FILE) -> ScopeFile:
    """Validate ``path``; ``KnowledgeFileError`` when it is unusable."""
    return load_yaml(path, ScopeFile)


SCOPE: ScopeFile = load_scope()


def within(d: date | None, as_of: date, days: float) -> bool:
    return d is not None and 0 <= (as_of - d).days <= days


def _coded(codes: Iterable[Code], m: MarkerDef, snomed: tuple[str, ...]) -> bool:
    for c in codes:
        if c.system == SNOMED and c.code in snomed:
            return True
        if c.system in (ICD10, conditions.ICD10_WHO):
            flat = c.code.replace(".", "").upper()
            if any(flat.startswith(p.replace(".", "")) for p in m.icd10):
                return True
    return False


def _said(text: str, patterns: tuple[str, ...]) -> bool:
    low = text.lower()
    return any(re.search(p, low) for p in patterns)


def _positive(o: Observation) -> bool:
    pv = SCOPE.positive_values
    if any(c.system == SNOMED and c.code in pv.snomed for c in o.value_codes):
        return True
    return _said(o.value_text.strip(), pv.text)


def marker_refs(m: MarkerDef, f: Facts) -> Iterator[str]:
    p = f.p
    days = m.within_days if m.within_days is not None else param("window.marker_days")
    if m.age_below is not None and f.age is not None and f.age < m.age_below:
        yield p.ref
    held = {"pregnancy": f.pregnancy, "lactation": f.lactation}.get(m.fact or "")
    if held is not None:
        yield from held.refs
    for pr in p.problems:
        if pr.active and pr.abatement is None:
            words = " ".join((pr.text, *(c.display for c in pr.codes)))
            if _coded(pr.codes, m, m.snomed) or _said(words, m.text):
                yield pr.ref
    for e in p.encounters:
        if within(e.start, p.as_of, days):
            words = " ".join((e.kind, e.reason_text, *(c.display for c in (*e.types, *e.reasons))))
            if _coded((*e.types, *e.reasons), m, m.encounter_snomed) or _said(
                words, m.encounter_text
            ):
                yield e.ref
    for o in p.observations:
        if within(o.effective, p.as_of, days) and (
            o.loinc in m.present_loinc or (o.loinc in m.observations and _positive(o))
        ):
            yield o.ref
    said: dict[str, bool] = {}  # a record may repeat one medicine thousands of times
    for med in f.meds:
        if med.text not in said:
            said[med.text] = _said(med.text, m.medicines)
        if said[med.text]:
            yield med.ref


def marked(f: Facts, marker_id: str) -> tuple[str, ...]:
    """The record entries that put the patient in the out-of-scope population ``marker_id``
    (a marker of ``data/scope.yaml``, e.g. pregnancy); empty when none does. Criteria read it
    to stand back where their advice does not hold (``Trigger.outside``)."""
    m = next((x for x in SCOPE.markers if x.id == marker_id), None)
    if m is None:
        raise KeyError(f"no scope marker {marker_id!r}")
    if m.sex is not None and f.p.sex != m.sex:
        return ()
    return tuple(dict.fromkeys(marker_refs(m, f)))
