"""How clinician text is worded where the plan is read (``data/locale.yaml``): units, spellings.

``clinician_wording(locale)`` gives the ``Wording`` the planner applies to a plan's clinician
text: the results the locale shows in another unit (the factor a named constant of ``units``:
a fact of measurement, the same for every site, like the factors the kidney equations use) and,
for ``us``, the US spellings. Validated at import (a bad file stops start-up naming the place).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.text.summary import UnitChange, Wording

from . import units
from ._datafile import DATA_DIR, load_file

__all__ = ["LOCALE_FILE", "LocaleFile", "clinician_wording"]

LOCALE_FILE = DATA_DIR / "locale.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Conversion(_Strict):
    loinc: tuple[str, ...] = Field(min_length=1)
    source: str = Field(alias="from", min_length=1)
    target: str = Field(alias="to", min_length=1)
    multiply_by: str | None = None
    divide_by: str | None = None

    @model_validator(mode="after")
    def _one_known_factor(self) -> Conversion:
        named = [n for n in (self.multiply_by, self.divide_by) if n is not None]
        if len(named) != 1:
            raise ValueError("give exactly one of multiply_by and divide_by")
        if named[0] not in units.__all__:
            raise ValueError(f"{named[0]} is not a unit factor of inference/knowledge/units.py")
        return self

    def change(self) -> UnitChange:
        if self.multiply_by is not None:
            factor = float(getattr(units, self.multiply_by))
        else:
            factor = 1 / float(getattr(units, str(self.divide_by)))
        return UnitChange(frozenset(self.loinc), self.source, self.target, factor)


class LocaleWords(_Strict):
    spellings: bool
    units: tuple[Conversion, ...] = ()


class LocaleFile(_Strict):
    version: str = Field(min_length=1)
    locales: dict[Literal["uk", "us"], LocaleWords]
    spellings: dict[str, str]


_FILE = load_file(LOCALE_FILE, LocaleFile)


def clinician_wording(locale: Literal["uk", "us"]) -> Wording:
    """The wording of clinician text for ``locale`` (``Wording()`` where it changes nothing)."""
    words = _FILE.locales.get(locale)
    if words is None:
        return Wording()
    spellings = tuple(_FILE.spellings.items()) if words.spellings else ()
    return Wording(tuple(c.change() for c in words.units), spellings)
