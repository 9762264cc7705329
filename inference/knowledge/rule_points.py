"""The points and options of the rule functions, read from ``data/rule_points.yaml``.

A rule function (``rules.py``) decides *whether* a point is made; what the point says, who says
it, how strong it is, what it is about and which concern it raises are data, taken here by a
stable id, so a clinician can change them without reading Python and one entry serves every rule
that makes the same point. Likewise each option a rule proposes takes its category, urgency,
priority class and the concerns it answers from the file. The file is validated at import (a bad
entry stops start-up naming the file and the place). Pure: no I/O after import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from inference.protocol import Priority, Severity
from service.core.evaluation import CATEGORY_ORDER, URGENCY_ORDER
from service.core.model import Stance

from ._datafile import DATA_DIR, load_file
from .analysis import Cited, Point, refs
from .criteria.loader import EVIDENCE_FILE
from .roles import ROLE_BY_NAME
from .strength import Factors, best_grade, tau
from .themes import THEMES

__all__ = [
    "RULE_POINTS_FILE",
    "RuleOption",
    "RulePoint",
    "RulePointsFile",
    "make_point",
    "point_of",
    "rule_option",
    "rule_points",
]

RULE_POINTS_FILE: Path = DATA_DIR / "rule_points.yaml"
_PointId = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$")]
_Word = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$")]
_Severity = Literal["critical", "major", "moderate", "minor"]


class RulePoint(BaseModel):
    """One point a rule function makes: who, for or against, the text template and the rest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str
    stance: Stance
    text: str = Field(min_length=1)
    evidence: tuple[str, ...] = Field(min_length=1)
    # what its strength is read from (``strength.Factors``; the grade is its evidence's)
    severity: _Severity
    certainty: Literal["certain", "probable", "uncertain"]
    directness: Literal["direct", "indirect", "contextual"]
    # the severity where the rule's named condition holds (``make_point(..., stronger_if=name)``)
    stronger: dict[_Word, _Severity] = Field(default_factory=dict)
    recent: bool = False
    harm: Severity | None = None
    themes: tuple[_Word, ...]  # stated, may be empty: never read from the text
    concern: str  # "" for a point that raises none

    @field_validator("themes")
    @classmethod
    def _known_themes(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(v) - THEMES.codes)
        if unknown:
            raise ValueError(f"unknown themes {unknown} (see themes.yaml)")
        return v

    @field_validator("role")
    @classmethod
    def _known_role(cls, v: str) -> str:
        if v not in ROLE_BY_NAME:
            raise ValueError(f"unknown role {v!r}")
        return v


class RuleOption(BaseModel):
    """What a rule function's option is: its id, category, urgency and priority class."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^opt-[a-z0-9-]+$")
    category: str
    urgency: int = Field(ge=0)
    priority: Priority
    urgency_class: str = ""
    answers: tuple[_Word, ...] = ()

    @field_validator("category")
    @classmethod
    def _known_category(cls, v: str) -> str:
        if v not in CATEGORY_ORDER:
            raise ValueError(f"unknown category {v!r}")
        return v

    @field_validator("urgency_class")
    @classmethod
    def _known_urgency(cls, v: str) -> str:
        if v and v not in URGENCY_ORDER:
            raise ValueError(f"unknown urgency class {v!r}")
        return v


class RulePointsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    points: dict[_PointId, RulePoint] = Field(min_length=1)
    options: dict[_Word, RuleOption] = Field(min_length=1)


@cache
def rule_points() -> RulePointsFile:
    """The shipped file (``KnowledgeFileError`` on a bad one)."""
    return load_file(RULE_POINTS_FILE, RulePointsFile)


def make_point(
    point_id: str, facts: Iterable[str | Cited], *, stronger_if: str = "", **values: object
) -> Point:
    """The point ``point_id`` about ``facts``, its text filled with ``values``; ``stronger_if``
    names the condition under which its ``stronger`` severity applies ("" or an unlisted name:
    the plain one). An unknown id is a programming error (``KeyError`` naming it)."""
    try:
        p = rule_points().points[point_id]
    except KeyError:
        raise KeyError(f"no point {point_id!r} in {RULE_POINTS_FILE.name}") from None
    return point_of(p, facts, stronger_if=stronger_if, **values)


def point_of(
    p: RulePoint, facts: Iterable[str | Cited], *, stronger_if: str = "", **values: object
) -> Point:
    """The point ``p`` states about ``facts`` (a point kept in another data file, in this
    file's form), its strength from its stated factors and its evidence's grade."""
    factors = Factors(p.stronger.get(stronger_if, p.severity), p.certainty, p.directness)
    cited = refs(facts)
    strength = tau(
        factors.severity,
        factors.certainty,
        best_grade(evidence_grade(e) for e in p.evidence),
        factors.directness,
        about_patient=p.stance == "support" or bool(cited),
    )
    return Point(
        p.role,
        p.stance,
        p.text.format(**values),
        cited,
        p.evidence,
        strength,
        harm=p.harm,
        factors=factors,
        recent=p.recent,
        themes=p.themes,
        concern=p.concern,
    )


@cache
def _grades() -> dict[str, str]:
    """Evidence id -> its grade, from the evidence base the points cite."""
    data = json.loads(EVIDENCE_FILE.read_text(encoding="utf-8"))
    return {d["id"]: d["grade"] for d in data["documents"]}


def evidence_grade(evidence_id: str) -> str:
    """The grade of one evidence statement ("none" for an id the base does not hold)."""
    return _grades().get(evidence_id, "none")


def rule_option(key: str) -> RuleOption:
    """The option entry ``key`` (``KeyError`` naming it when absent)."""
    try:
        return rule_points().options[key]
    except KeyError:
        raise KeyError(f"no option {key!r} in {RULE_POINTS_FILE.name}") from None
