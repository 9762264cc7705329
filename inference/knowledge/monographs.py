"""Drug monographs: each medicine's properties with their sources (``data/monographs.yaml``).

The file lists, for the most prescribed medicines and the high-alert ones, what is particular to
each drug: its QT risk category, its labelled use in liver impairment, risk properties
(serotonergic, CNS-depressant, bleeding, hyperkalaemia, nephrotoxic, hypoglycaemia, constipation,
myelosuppression, a level that rises when smoking stops, absorption that needs stomach acid, liver
or muscle injury, raised intracranial pressure, slowing the bowel, raising blood pressure), its
clearance-pathway roles (xanthine oxidase among them), the tests it needs and how often, its usual
adult daily maximum and its daily maximum per kg of body weight. This module validates the
file's shape and answers which flags each drug gains; ``drugs.py`` checks the names against the
drug table and merges the flags, and ``drug_properties.py`` shows the whole monograph. No I/O
after import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._datafile import DATA_DIR, load_file, problems_message

__all__ = [
    "MONOGRAPHS_FILE",
    "CypRole",
    "Hepatic",
    "Monitor",
    "Monograph",
    "MonographsFile",
    "QtRisk",
    "WeightMax",
    "derived_flags",
    "load_monographs",
]

MONOGRAPHS_FILE = DATA_DIR / "monographs.yaml"

_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
_Name = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9 .-]*[a-z0-9]$")]
_Text = Annotated[str, Field(min_length=1)]
ListId = Literal["top300", "ismp-amb", "ismp-acute"]
Property = Literal[
    "serotonergic",
    "cns-depressant",
    "bleeding",
    "hyperkalaemia",
    "nephrotoxic",
    "hypoglycaemia",
    "constipation",
    "myelosuppression",
    "smoking-sensitive",
    "acid-dependent",
    "hepatotoxic",
    "myotoxic",
    "sodium-lowering",
    "raises-icp",
    "antimotility",
    "raises-bp",
]
Pathway = Literal[
    "cyp1a2", "cyp2c9", "cyp2c19", "cyp2d6", "cyp3a", "p-gp", "oatp1b1", "xanthine-oxidase"
]
_SUBSTRATE_GRADES = ("sensitive", "moderate-sensitive", "narrow-index")
_PERPETRATOR_GRADES = ("strong", "moderate", "weak", "listed")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QtRisk(_Strict):
    risk: Literal["known", "possible", "conditional"]
    source: _Id


class Hepatic(_Strict):
    action: Literal["avoid", "reduce", "caution"]
    source: _Id


class CypRole(_Strict):
    path: Pathway
    role: Literal["substrate", "inhibitor", "inducer"]
    grade: Literal[
        "sensitive", "moderate-sensitive", "narrow-index", "strong", "moderate", "weak", "listed"
    ]
    source: _Id

    @model_validator(mode="after")
    def _graded(self) -> CypRole:
        allowed = _SUBSTRATE_GRADES if self.role == "substrate" else _PERPETRATOR_GRADES
        if self.grade not in allowed:
            raise ValueError(f"grade {self.grade!r} is not a grade of a {self.role}")
        return self


class Monitor(_Strict):
    # A LOINC group of service/record/vocabulary.py (checked by drug_properties.py).
    test: Annotated[str, Field(pattern=r"^[a-z0-9_]+$")]
    days: Annotated[int, Field(gt=0, le=730)]
    source: _Id


class MaxDose(_Strict):
    mg: Annotated[float, Field(gt=0)]
    source: _Id


class WeightMax(_Strict):
    """A daily maximum per kilogram of actual body weight (the only basis a source gave us so
    far), optionally only for a patient lighter than ``below_kg``."""

    mg_per_kg_day: Annotated[float, Field(gt=0, le=200)]
    below_kg: Annotated[float, Field(gt=0, le=300)] | None = None
    source: _Id


class Monograph(_Strict):
    drug: _Name
    lists: tuple[ListId, ...] = ()
    qt: QtRisk | None = None
    hepatic: Hepatic | None = None
    props: dict[Property, _Id] = Field(default_factory=dict)
    cyp: tuple[CypRole, ...] = ()
    monitor: tuple[Monitor, ...] = ()
    max_mg: MaxDose | None = None
    weight_max: WeightMax | None = None

    def sources(self) -> tuple[str, ...]:
        """Every source id a value of this monograph names."""
        out = [*self.props.values(), *(c.source for c in self.cyp)]
        out += [m.source for m in self.monitor]
        out += [
            x.source for x in (self.qt, self.hepatic, self.max_mg, self.weight_max) if x is not None
        ]
        return tuple(out)


class FlagMap(_Strict):
    qt: dict[Literal["known", "possible", "conditional"], _Id]
    hepatic: dict[Literal["avoid", "reduce", "caution"], _Id]
    props: dict[Property, _Id]
    max_mg: _Id  # the flag of every drug with a usual adult daily maximum
    weight_max: _Id  # the flag of every drug with a daily maximum per kg of body weight


class MonographsFile(_Strict):
    version: _Text
    sources: dict[_Id, _Text]
    lists: dict[ListId, _Text]
    flags: FlagMap
    monographs: tuple[Monograph, ...]

    @model_validator(mode="after")
    def _references(self) -> MonographsFile:
        problems: list[str] = []
        seen: set[str] = set()
        for m in self.monographs:
            if m.drug in seen:
                problems.append(f"monographs: {m.drug!r} is listed twice")
            seen.add(m.drug)
            for src in m.sources():
                if src not in self.sources:
                    problems.append(f"monographs[{m.drug}]: unknown source {src!r}")
            for p in m.props:
                if p not in self.flags.props:
                    problems.append(f"monographs[{m.drug}].props: {p!r} has no flag")
        if problems:
            raise ValueError(problems_message(problems))
        return self


def derived_flags(f: MonographsFile, m: Monograph) -> tuple[str, ...]:
    """The drug-table flags a monograph's properties stand for."""
    out = [f.flags.props[p] for p in m.props]
    if m.qt is not None:
        out.append(f.flags.qt[m.qt.risk])
    if m.hepatic is not None:
        out.append(f.flags.hepatic[m.hepatic.action])
    return tuple(dict.fromkeys(out))


def load_monographs(path: Path = MONOGRAPHS_FILE) -> MonographsFile:
    """The validated file; ``KnowledgeFileError`` when it is unusable."""
    return load_file(path, MonographsFile)
