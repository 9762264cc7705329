"""Living situation: advice that assumes a household, adapted for a patient recorded as homeless or
as living alone (``data/living_situation.yaml``).

``situation`` finds the first situation of the file the record shows (a social fact's kind, a
current Condition's code, or a word of either's text). ``adapt_to_living`` then rewords each
proposal of the plan whose option the file adapts: the phrases that assume people at home are
replaced as the file says, and one sentence naming the situation is added to its description.
Runs after every line is made (``rules.analyse``); pure, no I/O after import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from service.record.profile import Code, PatientProfile
from service.record.vocabulary import ICD10, SNOMED

from . import conditions
from ._datafile import DATA_DIR, load_yaml
from .analysis import Output, Proposal

__all__ = [
    "LIVING",
    "LIVING_FILE",
    "LivingFile",
    "Situation",
    "adapt_to_living",
    "load_living",
    "situation",
]

LIVING_FILE = DATA_DIR / "living_situation.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SituationDef(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z-]*$")
    label: str = Field(min_length=1)
    social_kinds: tuple[str, ...] = ()
    snomed: tuple[str, ...] = ()
    icd10: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    source: str


class Replacement(_Strict):
    from_: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)


class Adaptation(_Strict):
    option: str
    situations: tuple[str, ...] = Field(min_length=1)
    replace: tuple[Replacement, ...] = ()
    add: str = ""
    source: str


class LivingFile(_Strict):
    version: str
    sources: dict[str, str] = Field(min_length=1)
    situations: tuple[SituationDef, ...] = Field(min_length=1)
    adaptations: tuple[Adaptation, ...] = ()

    @model_validator(mode="after")
    def _known(self) -> LivingFile:
        cited = [s.source for s in self.situations] + [a.source for a in self.adaptations]
        bad = sorted({s for s in cited if s not in self.sources})
        if bad:
            raise ValueError(f"sources {bad} are not in 'sources'")
        ids = {s.id for s in self.situations}
        unknown = sorted({x for a in self.adaptations for x in a.situations} - ids)
        if unknown:
            raise ValueError(f"adaptations name unknown situations {unknown}")
        return self


def load_living(path: Path = LIVING_FILE) -> LivingFile:
    return load_yaml(path, LivingFile)


LIVING = load_living()


@dataclass(frozen=True, slots=True)
class Situation:
    """The situation ``id`` the record shows, its ``label`` and the entry that shows it."""

    id: str
    label: str
    ref: str


def _said(text: str, words: tuple[str, ...]) -> bool:
    low = text.lower()
    return any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", low) for w in words)


def _coded(codes: tuple[Code, ...], s: SituationDef) -> bool:
    for c in codes:
        if c.system == SNOMED and c.code in s.snomed:
            return True
        flat = c.code.replace(".", "").upper()
        if c.system in (ICD10, conditions.ICD10_WHO) and any(
            flat.startswith(x.replace(".", "")) for x in s.icd10
        ):
            return True
    return False


def situation(p: PatientProfile, data: LivingFile = LIVING) -> Situation | None:
    """The first situation of the file (in its order) that the record shows; None when none."""
    for s in data.situations:
        for fact in p.social:
            if fact.kind in s.social_kinds or _said(fact.text, s.words):
                return Situation(s.id, s.label, fact.ref)
        for pr in p.problems:
            if (
                pr.active
                and pr.abatement is None
                and (_coded(pr.codes, s) or _said(pr.text, s.words))
            ):
                return Situation(s.id, s.label, pr.ref)
    return None


def _reworded(text: str, a: Adaptation) -> str:
    for r in a.replace:
        text = text.replace(r.from_, r.to)
    return text


def _adapted(p: Proposal, a: Adaptation, where: Situation) -> Proposal:
    added = a.add.replace("{situation}", where.label)
    description = _reworded(p.description, a)
    return replace(
        p,
        title=_reworded(p.title, a),
        description=f"{description} {added}".strip(),
        refs=tuple(dict.fromkeys((*p.refs, where.ref))),
        points=tuple(replace(pt, text=_reworded(pt.text, a)) for pt in p.points),
    )


def adapt_to_living(p: PatientProfile, o: Output, data: LivingFile = LIVING) -> None:
    """Reword, in place, each proposal of ``o`` the file adapts for the situation ``p`` shows."""
    where = situation(p, data)
    if where is None:
        return
    for i, prop in enumerate(o.proposals):
        a = next(
            (x for x in data.adaptations if x.option == prop.id and where.id in x.situations),
            None,
        )
        if a is not None:
            o.proposals[i] = _adapted(prop, a, where)
