"""Blood panels: quantities one sample measures together (``data/panels.yaml``).

Monitoring criteria propose one check per quantity; where several quantities of one panel fall
due at once, ``criteria.interpret`` makes them one activity listing each reason, since a
clinician orders one blood test (the renal profile reports creatinine, eGFR, sodium and
potassium together). Read and validated once, at import.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.vocabulary import LOINC_GROUPS

from ._datafile import DATA_DIR, load_yaml
from .parameters import param_int

__all__ = ["PANELS", "PANELS_FILE", "Panel", "PanelsFile", "load_panels"]

PANELS_FILE = DATA_DIR / "panels.yaml"


class Panel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")
    title: str
    intro: str
    quantities: dict[str, str]
    source: str

    @model_validator(mode="after")
    def _known(self) -> Panel:
        least = param_int("panel.min_quantities")
        if len(self.quantities) < least:
            raise ValueError(f"a panel measures at least {least} quantities")
        unknown = sorted(set(self.quantities) - set(LOINC_GROUPS))
        if unknown:
            raise ValueError(f"unknown quantities {unknown} (LOINC_GROUPS keys)")
        if "{tests}" not in self.title:
            raise ValueError("title must list the tests due ({tests})")
        return self


class PanelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    panels: tuple[Panel, ...]

    @model_validator(mode="after")
    def _disjoint(self) -> PanelsFile:
        seen: dict[str, str] = {}
        for p in self.panels:
            for q in p.quantities:
                if q in seen:
                    raise ValueError(f"quantity {q!r} in panels {seen[q]!r} and {p.id!r}")
                seen[q] = p.id
        return self


def load_panels(path: Path = PANELS_FILE) -> tuple[Panel, ...]:
    return load_yaml(path, PanelsFile).panels


PANELS: tuple[Panel, ...] = load_panels()
