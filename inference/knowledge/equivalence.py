"""Equivalent doses across a family of drugs, from ``data/dose_equivalence.yaml``.

A guideline states a dose threshold for one reference drug (prednisolone 7.5 mg a day); this
module turns a daily dose of any member of the family into the reference drug's dose with the
same effect. A drug no table holds has no equivalent (None): the caller says nothing rather than
guess. Read once, at import; no other I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._datafile import DATA_DIR, load_file

__all__ = ["EQUIVALENCE_FILE", "Equivalent", "equivalent", "in_table", "load_equivalence"]

EQUIVALENCE_FILE = DATA_DIR / "dose_equivalence.yaml"

_Mg = Annotated[float, Field(gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Table(_Strict):
    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$")]
    reference: str
    reference_mg: _Mg
    doses: dict[str, _Mg] = Field(min_length=1)  # mg of each drug equal to ``reference_mg``
    source: str

    @model_validator(mode="after")
    def _reference_listed(self) -> Table:
        if self.doses.get(self.reference) != self.reference_mg:
            raise ValueError(f"{self.id}: the reference drug's own dose must be reference_mg")
        return self


class EquivalenceFile(_Strict):
    version: str
    last_reviewed: str
    sources: dict[str, str] = Field(min_length=1)
    tables: tuple[Table, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _sources(self) -> EquivalenceFile:
        unknown = [t.id for t in self.tables if t.source not in self.sources]
        if unknown:
            raise ValueError(f"tables {unknown} cite unknown sources")
        ids = [t.id for t in self.tables]
        if len(set(ids)) != len(ids):
            raise ValueError("table ids are not unique")
        return self


def load_equivalence(path: Path = EQUIVALENCE_FILE) -> EquivalenceFile:
    return load_file(path, EquivalenceFile)


EQUIVALENCE = load_equivalence()


@dataclass(frozen=True, slots=True)
class Equivalent:
    """``daily_mg`` of ``drug`` a day is ``reference_daily_mg`` of ``reference`` a day."""

    drug: str
    daily_mg: float
    reference: str
    reference_daily_mg: float


def equivalent(
    table: str, drug: str, daily_mg: float, data: EquivalenceFile = EQUIVALENCE
) -> Equivalent | None:
    """``daily_mg`` of ``drug`` as the reference drug of ``table``; None when the table does not
    hold the drug (or no such table).

    >>> e = equivalent("glucocorticoid", "hydrocortisone", 20)
    >>> (e.reference, e.reference_daily_mg)
    ('prednisolone', 5.0)
    """
    t = next((x for x in data.tables if x.id == table), None)
    if t is None or drug not in t.doses:
        return None
    return Equivalent(drug, daily_mg, t.reference, daily_mg * t.reference_mg / t.doses[drug])


def in_table(table: str, drug: str, data: EquivalenceFile = EQUIVALENCE) -> bool:
    """Whether ``table`` holds ``drug``."""
    return any(t.id == table and drug in t.doses for t in data.tables)
