"""Named clinical parameters: every threshold, window and equation constant the knowledge reads.

The values live in ``data/parameters.yaml``, each with its unit, source and a description, and
are validated at import (a bad file stops start-up naming the place, like every knowledge file).
Code reads them with ``param(name)`` *when it decides*, never into a module constant, so that a
site's values (``parameters`` in its ``site.yaml``, applied by ``site.install``) take effect.
Pure: no I/O after import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, model_validator

from ._datafile import DATA_DIR, load_file

__all__ = [
    "PARAMETERS_FILE",
    "Parameter",
    "param",
    "param_int",
    "set_site_values",
    "shipped_parameters",
    "site_values",
]

PARAMETERS_FILE: Path = DATA_DIR / "parameters.yaml"
_Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")]


class Parameter(BaseModel):
    """One named constant: its value, type and allowed range, unit, where it comes from and
    what it means. A whole number in the file stays an ``int`` (a count, an age, a day window
    prints as "60", not "60.0"); ``true`` is never a number."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: StrictInt | StrictFloat
    # ``integer``: a count, an age, a day window (no fraction); ``number``: any finite value.
    type: Literal["integer", "number"]
    min: StrictInt | StrictFloat | None = None  # the lowest value allowed
    above: StrictInt | StrictFloat | None = None  # values must be greater (a divisor: above 0)
    max: StrictInt | StrictFloat
    unit: str = Field(min_length=1)
    source: str = Field(min_length=1)
    description: str = Field(min_length=1)

    @model_validator(mode="after")
    def _in_range(self) -> Parameter:
        if (self.min is None) == (self.above is None):
            raise ValueError("state exactly one lower bound: min or above")
        problem = self.refuses(self.value)
        if problem:
            raise ValueError(problem)
        return self

    def refuses(self, value: object) -> str | None:
        """Why ``value`` cannot be this parameter's (wrong type, out of range), else None."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{value!r} is not a number"
        if not math.isfinite(value):
            return f"{value} is not a finite number"
        if self.type == "integer" and value != int(value):
            return f"{value:g} is not a whole number"
        if self.min is not None and value < self.min:
            return f"{value:g} is below the allowed range {self.range_text()}"
        if self.above is not None and value <= self.above:
            return f"{value:g} is not in the allowed range {self.range_text()}"
        if value > self.max:
            return f"{value:g} is above the allowed range {self.range_text()}"
        return None

    def range_text(self) -> str:
        """The allowed range in words: "5 to 120 mL/min/1.73m2", "above 0 to 1000 ..."."""
        low = f"{self.min:g}" if self.min is not None else f"above {self.above:g}"
        return f"{low} to {self.max:g} {self.unit}"


class ParametersFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    parameters: dict[_Name, Parameter]


@cache
def shipped_parameters() -> Mapping[str, Parameter]:
    """The shipped parameters by name (``KnowledgeFileError`` on a bad file)."""
    return MappingProxyType(load_file(PARAMETERS_FILE, ParametersFile).parameters)


_SITE: dict[str, int | float] = {}


def param(name: str) -> int | float:
    """The value of parameter ``name``: the site's where it sets one, else the shipped one.
    A name not in the file is a programming error (``KeyError`` naming it)."""
    if name in _SITE:
        return _SITE[name]
    try:
        return shipped_parameters()[name].value
    except KeyError:
        raise KeyError(f"no parameter {name!r} in {PARAMETERS_FILE.name}") from None


def param_int(name: str) -> int:
    """The value of parameter ``name`` where it counts whole things (points, days, a size);
    a value with a fraction is a ``ValueError`` naming it (``site.load_site`` refuses one)."""
    value = param(name)
    if value != int(value):
        raise ValueError(f"parameter {name!r} must be a whole number, not {value}")
    return int(value)


def site_values() -> Mapping[str, int | float]:
    """The values a site set (empty when none)."""
    return MappingProxyType(dict(_SITE))


def set_site_values(values: Mapping[str, int | float]) -> None:
    """Make ``values`` (already validated against the shipped names) the site's values."""
    unknown = sorted(set(values) - set(shipped_parameters()))
    if unknown:
        raise KeyError(f"unknown parameters: {', '.join(unknown)}")
    shipped = shipped_parameters()
    _SITE.clear()
    # a whole number where the shipped value is one stays an int, as the shipped value does
    _SITE.update(
        (n, int(v) if isinstance(shipped[n].value, int) and v == int(v) else v)
        for n, v in values.items()
    )
