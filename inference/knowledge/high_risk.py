"""The medicines whose harm is greatest when no check reads them, as cited data.

``data/high_risk_medicines.yaml`` (validated against ``HighRiskFile`` when this module is
imported) lists them in tiers: ISMP high-alert medicines, narrow-therapeutic-index medicines and
specialist-only medicines, each entry matched by the drug knowledge's classes or flags or by the
words of a medicine's text (for one the drug knowledge does not hold). ``risk_of`` places one
medicine; the coverage statement names an uncovered medicine of a tier before anything else and
raises the CDS card to a warning. No criteria here; no I/O after import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from . import drugs
from ._datafile import DATA_DIR, load_yaml

__all__ = ["HIGH_RISK", "HIGH_RISK_FILE", "HighRiskFile", "Risk", "load_high_risk", "risk_of"]

HIGH_RISK_FILE = DATA_DIR / "high_risk_medicines.yaml"

_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
_Text = Annotated[str, Field(min_length=1)]
_Word = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9 -]*[a-z0-9]$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TierDef(_Strict):
    id: _Id
    label: _Text


class EntryDef(_Strict):
    id: _Id
    tier: _Id
    label: _Text
    classes: tuple[_Id, ...] = ()
    flags: tuple[_Id, ...] = ()
    words: tuple[_Word, ...] = ()
    sources: tuple[_Id, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _matches_something(self) -> EntryDef:
        if not (self.classes or self.flags or self.words):
            raise ValueError("an entry needs classes, flags or words to match a medicine by")
        return self


class HighRiskFile(_Strict):
    version: _Text
    sources: dict[_Id, _Text] = Field(min_length=1)
    tiers: tuple[TierDef, ...] = Field(min_length=1)
    entries: tuple[EntryDef, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> HighRiskFile:
        tiers = {t.id for t in self.tiers}
        classes = set(drugs.CLASS_LABELS) - set(drugs.FLAG_LABELS)
        for e in self.entries:
            where = f"entries[{e.id}]"
            if e.tier not in tiers:
                raise ValueError(f"{where}: unknown tier {e.tier!r}")
            for c in e.classes:
                if c not in classes:
                    raise ValueError(f"{where}: unknown drug class {c!r}")
            for fl in e.flags:
                if fl not in drugs.FLAG_LABELS:
                    raise ValueError(f"{where}: unknown drug flag {fl!r}")
            for s in e.sources:
                if s not in self.sources:
                    raise ValueError(f"{where}: unknown source {s!r}")
        return self


def load_high_risk(path: Path = HIGH_RISK_FILE) -> HighRiskFile:
    """Validate ``path``; ``KnowledgeFileError`` when it is unusable."""
    return load_yaml(path, HighRiskFile)


HIGH_RISK: HighRiskFile = load_high_risk()
_TIER_RANK = {t.id: k for k, t in enumerate(HIGH_RISK.tiers)}
_TIER_LABEL = {t.id: t.label for t in HIGH_RISK.tiers}
_WORDS = tuple(
    (e, re.compile(r"\b(" + "|".join(re.escape(w) for w in e.words) + r")\b"))
    for e in HIGH_RISK.entries
    if e.words
)


@dataclass(frozen=True, slots=True)
class Risk:
    """Where one medicine stands: its tier (``rank`` 0 is the highest), the tier's and the
    entry's labels, and the sources that put it there."""

    rank: int
    tier: str
    label: str
    entry: str
    sources: tuple[str, ...]

    def cited(self) -> str:
        """The sources in words, for the detail view."""
        return "; ".join(HIGH_RISK.sources[s] for s in self.sources)


def _risk(e: EntryDef) -> Risk:
    return Risk(_TIER_RANK[e.tier], e.tier, _TIER_LABEL[e.tier], e.label, e.sources)


def risk_of(text: str, ingredients: tuple[str, ...] = ()) -> Risk | None:
    """The highest tier one medicine falls in (its text and its ingredients' classes and
    flags both count), or None when it is on no list."""
    found: list[Risk] = []
    known = [drugs.drug(n) for n in ingredients]
    for e in HIGH_RISK.entries:
        if any(set(e.classes) & set(d.classes) or set(e.flags) & set(d.flags) for d in known):
            found.append(_risk(e))
    low = text.lower()
    found += [_risk(e) for e, pattern in _WORDS if pattern.search(low)]
    return min(found, key=lambda r: r.rank) if found else None
