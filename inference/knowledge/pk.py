"""Pharmacokinetic interactions by mechanism: which drugs inhibit or induce which clearance
pathway, and which drugs depend on that pathway.

The table is data (``data/pk_interactions.yaml``), validated when this module is imported; a file
that breaks it (an unknown drug, a substrate with no effect text, a number in a text) stops
start-up with ``KnowledgeFileError``. ``interactions(perpetrator, substrate)`` answers one
question: does the first drug change the exposure of the second through a shared pathway strongly
enough to matter, and if so, what happens and what to do. A pathway's strength grades come from
its source (the FDA table of inhibitors and inducers); a substrate names the weakest grade that
matters for it (``fires_with``: a narrow-therapeutic-index drug is moved by moderate perpetrators
too). No patient logic, no I/O after import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._datafile import DATA_DIR, load_file, problems_message
from .drugs import DRUGS
from .monographs import CypRole, load_monographs

__all__ = [
    "PK_FILE",
    "PkEffect",
    "PkFile",
    "by_roles",
    "interactions",
    "load_pk",
    "perpetrators",
]

PK_FILE = DATA_DIR / "pk_interactions.yaml"

Grade = Literal["strong", "moderate", "listed"]
Direction = Literal["inhibition", "induction"]
_Name = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9 .-]*[a-z0-9]$")]
_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
_EB = Annotated[str, Field(pattern=r"^EB-[A-Z]+-[0-9]{3}$")]
# A number standing on its own: texts state none (the advice names actions, not doses).
_NUMBER = re.compile(r"(?<![A-Za-z0-9\-.])\d+(?:\.\d+)?(?![A-Za-z0-9])")
_RANK = {"strong": 0, "listed": 0, "moderate": 1}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _plain(v: str) -> str:
    found = _NUMBER.findall(re.sub(r"\{[^{}]*\}", "", v))
    if found:
        raise ValueError(f"literal number(s) {found} in a text; the table states no doses")
    return v


class Perpetrators(_Strict):
    strong: tuple[_Name, ...] = ()
    moderate: tuple[_Name, ...] = ()
    # Transporter inhibitors, which the FDA table lists without a strength grade.
    listed: tuple[_Name, ...] = ()


class PathwayDef(_Strict):
    id: _Id
    label: Annotated[str, Field(min_length=1)]
    source: _Id
    inhibitors: Perpetrators = Perpetrators()
    inducers: Perpetrators = Perpetrators()
    # Substrate -> the weakest perpetrator grade that changes its exposure enough to act on.
    substrates: dict[_Name, Literal["strong", "moderate"]] = Field(min_length=1)


class SubstrateDef(_Strict):
    drug: _Name
    # "clears" (the pathway removes the drug) or "activates" (it makes the active form: a
    # prodrug, whose effect falls when the pathway is inhibited).
    route: Literal["clears", "activates"] = "clears"
    inhibited: str | None = None  # what happens when the pathway is inhibited
    inhibited_advice: str | None = None  # the action, a title over {a} (perpetrator), {b}
    induced: str | None = None
    induced_advice: str | None = None
    source: Annotated[str, Field(min_length=1)]  # the label or guideline, with its year
    evidence: tuple[_EB, ...] = Field(min_length=1)

    @field_validator("inhibited", "inhibited_advice", "induced", "induced_advice")
    @classmethod
    def _texts(cls, v: str | None) -> str | None:
        return None if v is None else _plain(v)

    @model_validator(mode="after")
    def _paired(self) -> SubstrateDef:
        if (self.inhibited is None) != (self.inhibited_advice is None):
            raise ValueError("inhibited and inhibited_advice go together")
        if (self.induced is None) != (self.induced_advice is None):
            raise ValueError("induced and induced_advice go together")
        if self.inhibited is None and self.induced is None:
            raise ValueError("a substrate states what inhibition or induction does to it")
        return self


class PkFile(_Strict):
    version: Annotated[str, Field(min_length=1)]
    sources: dict[_Id, Annotated[str, Field(min_length=1)]]
    pathways: tuple[PathwayDef, ...] = Field(min_length=1)
    substrates: tuple[SubstrateDef, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> PkFile:
        problems: list[str] = []
        known = {d.name for d in DRUGS}
        described = {s.drug for s in self.substrates}
        for s in self.substrates:
            if s.drug not in known:
                problems.append(f"substrates[{s.drug}]: unknown drug {s.drug!r}")
        for p in self.pathways:
            if p.source not in self.sources:
                problems.append(f"pathways[{p.id}].source: unknown source {p.source!r}")
            for kind, group in (("inhibitors", p.inhibitors), ("inducers", p.inducers)):
                names = (*group.strong, *group.moderate, *group.listed)
                for n in names:
                    if n not in known:
                        problems.append(f"pathways[{p.id}].{kind}: unknown drug {n!r}")
                if len(set(names)) != len(names):
                    problems.append(f"pathways[{p.id}].{kind}: a drug is graded twice")
            for n in p.substrates:
                if n not in known:
                    problems.append(f"pathways[{p.id}].substrates: unknown drug {n!r}")
                elif n not in described:
                    problems.append(f"pathways[{p.id}].substrates: {n!r} has no entry")
        if len(described) != len(self.substrates):
            problems.append("substrates: a drug is described twice")
        if problems:
            raise ValueError(problems_message(problems))
        return self


@dataclass(frozen=True, slots=True)
class PkEffect:
    """One perpetrator acting on one substrate, every shared pathway together."""

    perpetrator: str
    substrate: str
    direction: Direction
    grade: Grade  # the strongest grade over the shared pathways
    pathways: tuple[str, ...]  # labels, e.g. ("CYP3A4", "P-gp")
    route: Literal["clears", "activates"]
    effect: str
    advice: str
    source: str
    evidence: tuple[str, ...]

    @property
    def verb(self) -> str:
        """ "strongly inhibits", "moderately induces", "inhibits" (an ungraded transporter)."""
        base = "inhibits" if self.direction == "inhibition" else "induces"
        adverb = {"strong": "strongly ", "moderate": "moderately ", "listed": ""}[self.grade]
        return adverb + base

    @property
    def pathway(self) -> str:
        names = self.pathways
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@dataclass(frozen=True, slots=True)
class _Table:
    version: str
    pathways: tuple[PathwayDef, ...]
    substrates: dict[str, SubstrateDef]
    sources: dict[str, str]


def load_pk(path: Path = PK_FILE) -> _Table:
    f = load_file(path, PkFile)
    return _Table(f.version, f.pathways, {s.drug: s for s in f.substrates}, dict(f.sources))


_TABLE = load_pk()
VERSION: str = _TABLE.version


def _grade(group: Perpetrators, name: str) -> Grade | None:
    for grade in ("strong", "listed", "moderate"):
        if name in getattr(group, grade):
            return grade
    return None


@lru_cache(maxsize=4096)
def interactions(perpetrator: str, substrate: str) -> tuple[PkEffect, ...]:
    """What ``perpetrator`` does to ``substrate`` through the pathways they share (at most one
    effect per direction), when the perpetrator's grade reaches the substrate's threshold."""
    sub = _TABLE.substrates.get(substrate)
    if sub is None or perpetrator == substrate:
        return ()
    out: list[PkEffect] = []
    for direction in ("inhibition", "induction"):
        effect = sub.inhibited if direction == "inhibition" else sub.induced
        advice = sub.inhibited_advice if direction == "inhibition" else sub.induced_advice
        if effect is None or advice is None:
            continue
        hits: list[tuple[str, Grade]] = []
        for p in _TABLE.pathways:
            needs = p.substrates.get(substrate)
            group = p.inhibitors if direction == "inhibition" else p.inducers
            grade = _grade(group, perpetrator)
            if needs is None or grade is None or _RANK[grade] > _RANK[needs]:
                continue
            hits.append((p.label, grade))
        if hits:
            best = min((g for _, g in hits), key=lambda g: _RANK[g])
            out.append(
                PkEffect(
                    perpetrator,
                    substrate,
                    direction,
                    best,
                    tuple(label for label, _ in hits),
                    sub.route,
                    effect,
                    advice,
                    sub.source,
                    sub.evidence,
                )
            )
    return tuple(out)


def perpetrators() -> frozenset[str]:
    """Every drug the table lists as an inhibitor or inducer."""
    return frozenset(
        n
        for p in _TABLE.pathways
        for g in (p.inhibitors, p.inducers)
        for n in (*g.strong, *g.moderate, *g.listed)
    )


def _roles() -> dict[str, tuple[CypRole, ...]]:
    return {m.drug: m.cyp for m in load_monographs().monographs if m.cyp}


_ROLES = _roles()
_LABELS = {p.id: p.label for p in _TABLE.pathways}
_GRADES: dict[str, Grade] = {"strong": "strong", "listed": "listed", "moderate": "moderate"}


@lru_cache(maxsize=4096)
def by_roles(
    perpetrator: str,
    substrate: str,
    direction: Direction,
    perpetrator_grades: tuple[str, ...],
    substrate_grades: tuple[str, ...],
) -> PkEffect | None:
    """What the monographs' pathway roles say ``perpetrator`` does to ``substrate``: every
    pathway the first inhibits (or induces) at one of ``perpetrator_grades`` and the second
    depends on at one of ``substrate_grades``, in one effect; ``None`` where none is shared.
    The effect and advice texts are the criterion's own (empty here): the monographs grade
    the roles, they do not word the consequence."""
    if perpetrator == substrate:
        return None
    role = "inhibitor" if direction == "inhibition" else "inducer"
    acts = {
        r.path: r.grade
        for r in _ROLES.get(perpetrator, ())
        if r.role == role and r.grade in perpetrator_grades and r.grade in _GRADES
    }
    # A pathway whose table entry lists the substrate is the table's to judge: it names the
    # weakest grade that matters for that drug, and a weaker perpetrator was left out on purpose.
    judged = {p.id for p in _TABLE.pathways if substrate in p.substrates}
    needs = {
        r.path
        for r in _ROLES.get(substrate, ())
        if r.role == "substrate" and r.grade in substrate_grades and r.path not in judged
    }
    shared = [p for p in acts if p in needs]
    if not shared:
        return None
    best = min((_GRADES[acts[p]] for p in shared), key=lambda g: _RANK[g])
    curated = _TABLE.substrates.get(substrate)
    if curated is not None and curated.route == "activates":
        return None  # a prodrug: the criterion's words (a level that rises) would be wrong
    return PkEffect(
        perpetrator,
        substrate,
        direction,
        best,
        tuple(_LABELS.get(p, p) for p in shared),
        "clears",
        "",
        "",
        "",
        (),
    )
