"""A site's own knowledge folder over the shipped criteria, and the stamp every plan records.

A hospital adapts the knowledge without forking it: a folder (``CANOE_KNOWLEDGE_DIR``, one
level, so a Kubernetes ConfigMap can be mounted as it is) holding

* ``site.yaml`` (optional): the overlay's ``version`` label, criteria to ``retire`` by id (each
  with the site's reason), ``params`` to set, ``{criterion id: {param name: value}}``, and
  ``parameters``, ``{name: value}``, the site's values of the named clinical parameters
  (``data/parameters.yaml``: thresholds, windows);
* ``*.json``: criteria the site adds, in the shipped files' format (``criteria.schema``).

The overlay is validated exactly like the shipped data, and more: an unknown or retired id, a
param the criterion does not read, an added id that already exists, each stops start-up with a
``KnowledgeError`` naming the file, the path inside it and the problem. ``install`` makes the
result the knowledge that plans use; ``active`` returns it. The ``KnowledgeStamp`` (the shipped
knowledge's version and content hash, the overlay's label and hash) goes into every plan's
deliberation and Provenance. Reads files only in ``load_site`` and ``shipped``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, field_validator

from service.core.model import KnowledgeStamp

from ._datafile import DATA_DIR, KnowledgeFileError, load_file
from .changelog import CHANGELOG_FILE, changelog
from .criteria import CRITERIA_DIR, Criterion, KnowledgeError, load
from .criteria.loader import _evidence_ids
from .criteria.loader import load_file as load_criteria_file
from .parameters import set_site_values, shipped_parameters

__all__ = [
    "SITE_FILE",
    "Change",
    "Knowledge",
    "SiteFile",
    "active",
    "content_hash",
    "firing",
    "install",
    "load_site",
    "shipped",
    "with_drafts",
]

SITE_FILE = "site.yaml"
_Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Retirement(_Strict):
    id: _Id
    reason: str = Field(min_length=1)  # why this site does not use it (the formulary, a policy)


class SiteFile(_Strict):
    """``site.yaml``: the overlay's own label, what it retires and the params it sets."""

    version: str = Field(min_length=1)
    description: str = ""
    retire: tuple[Retirement, ...] = ()
    # strict: ``true`` is not a number, and a quoted "30" is not one either
    params: dict[_Id, dict[str, StrictInt | StrictFloat]] = Field(default_factory=dict)
    parameters: dict[str, StrictInt | StrictFloat] = Field(default_factory=dict)

    @field_validator("parameters")
    @classmethod
    def _finite_parameters(cls, v: dict[str, int | float]) -> dict[str, int | float]:
        for name, x in v.items():
            if not math.isfinite(x):
                raise ValueError(f"{name}: {x} is not a finite number")
        return v

    @field_validator("params")
    @classmethod
    def _finite(cls, v: dict[str, dict[str, int | float]]) -> dict[str, dict[str, int | float]]:
        for cid, values in v.items():
            for name, x in values.items():
                if not math.isfinite(x):
                    raise ValueError(f"{cid}.{name}: {x} is not a finite number")
        return v


@dataclass(frozen=True, slots=True)
class Change:
    """One difference from the shipped criteria: ``kind`` retired, params or added."""

    kind: Literal["retired", "params", "added", "parameter"]
    criterion: str
    detail: str
    file: str


@dataclass(frozen=True, slots=True, eq=False)
class Knowledge:
    """The criteria plans use, the stamp that names them, and how they differ from the shipped
    set. Compared by identity: one is built per start-up."""

    criteria: tuple[Criterion, ...]
    stamp: KnowledgeStamp
    changes: tuple[Change, ...] = ()
    drafts: bool = False  # draft criteria fire too (``knowledge.drafts``, for testing them)
    # the site's values of named parameters (``parameters.param``); empty: the shipped ones
    parameters: Mapping[str, int | float] = field(default_factory=dict)


def content_hash(files: Iterable[tuple[str, bytes]]) -> str:
    """``sha256:<hex>`` over (name, bytes) pairs in name order: each name, a NUL, the file's
    own sha256, a newline. Independent of the order the files were listed in."""
    h = hashlib.sha256()
    for name, data in sorted(files):
        h.update(name.encode("utf-8") + b"\0" + hashlib.sha256(data).hexdigest().encode() + b"\n")
    return "sha256:" + h.hexdigest()


def _shipped_files() -> list[tuple[str, bytes]]:
    out = [(f"criteria/{p.name}", p.read_bytes()) for p in CRITERIA_DIR.glob("*.json")]
    out += [
        (f"data/{p.name}", p.read_bytes())
        for p in DATA_DIR.iterdir()
        if p.suffix in (".yaml", ".json")
    ]
    return out


def _versioned(criteria: tuple[Criterion, ...]) -> tuple[Criterion, ...]:
    """``criteria``, each naming a release of the change log, else ``KnowledgeError``."""
    releases = {r.version for r in changelog().releases}
    for c in criteria:
        if c.version not in releases:
            raise KnowledgeError(
                CHANGELOG_FILE.name, "releases", f"{c.id}: version {c.version!r} is not a release"
            )
    return criteria


PRECEDENCE_FILE = DATA_DIR / "precedence.yaml"


class Precedence(_Strict):
    """``data/precedence.yaml``: every shipped criterion's id, in the order they are applied."""

    description: str = ""
    order: tuple[_Id, ...] = Field(min_length=1)


def _in_precedence(criteria: tuple[Criterion, ...]) -> tuple[Criterion, ...]:
    """``criteria`` in the order of ``precedence.yaml``, which lists each exactly once."""
    name = PRECEDENCE_FILE.name
    try:
        order = load_file(PRECEDENCE_FILE, Precedence).order
    except KnowledgeFileError as exc:
        raise KnowledgeError(name, exc.where, exc.problem) from None
    by_id = {c.id: c for c in criteria}
    rank: dict[str, int] = {}
    for i, cid in enumerate(order):
        if cid not in by_id:
            raise KnowledgeError(name, f"order[{i}]", f"unknown criterion {cid!r}")
        if cid in rank:
            raise KnowledgeError(name, f"order[{i}]", f"{cid!r} is listed twice")
        rank[cid] = i
    missing = sorted(set(by_id) - set(rank))
    if missing:
        raise KnowledgeError(name, "order", f"criteria not listed: {', '.join(missing)}")
    return tuple(sorted(criteria, key=lambda c: rank[c.id]))


@cache
def shipped() -> Knowledge:
    """The shipped criteria, validated (``KnowledgeError`` on a bad file), with their stamp:
    the change log's version and the content hash of the files."""
    try:
        version = changelog().version
    except KnowledgeFileError as exc:
        raise KnowledgeError(CHANGELOG_FILE.name, exc.where, exc.problem) from None
    return Knowledge(
        _in_precedence(_versioned(load())), KnowledgeStamp(version, content_hash(_shipped_files()))
    )


def firing(knowledge: Knowledge) -> tuple[Criterion, ...]:
    """The criteria that may fire: the active ones, and the drafts where ``knowledge.drafts``
    (a site testing them); retired ones never."""
    allowed = ("active", "draft") if knowledge.drafts else ("active",)
    return tuple(c for c in knowledge.criteria if c.status in allowed)


def _site_files(folder: Path) -> list[Path]:
    """The overlay's files; anything else visible there is refused (a ``site.yml`` typo would
    otherwise be silently ignored). Hidden entries (a ConfigMap's ``..data``) are skipped."""
    if not folder.is_dir():
        raise KnowledgeError(str(folder), "(folder)", "not a readable folder")
    files = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith("."):
            continue
        if p.name != SITE_FILE and p.suffix != ".json":
            raise KnowledgeError(
                p.name, "(file)", f"not a site knowledge file ({SITE_FILE} or criteria *.json)"
            )
        files.append(p)
    if not files:
        raise KnowledgeError(str(folder), "(folder)", f"holds neither {SITE_FILE} nor *.json")
    return files


def _site_file(path: Path) -> SiteFile:
    try:
        return load_file(path, SiteFile)
    except KnowledgeFileError as exc:
        raise KnowledgeError(path.name, exc.where, exc.problem) from None


def _added(
    paths: Iterable[Path], known: Mapping[str, Criterion]
) -> tuple[list[Criterion], list[Change]]:
    evidence = _evidence_ids()
    added: list[Criterion] = []
    changes: list[Change] = []
    seen: dict[str, str] = {}
    for path in paths:
        for k, c in enumerate(load_criteria_file(path, evidence).criteria):
            where = f"criteria[{k}].id"
            if c.id in known:
                raise KnowledgeError(
                    path.name, where, f"{c.id!r} is a shipped criterion (retire it, add a new id)"
                )
            if c.id in seen:
                raise KnowledgeError(path.name, where, f"{c.id!r} already defined in {seen[c.id]}")
            seen[c.id] = path.name
            added.append(c)
            changes.append(Change("added", c.id, f"{c.kind}: {c.option.id}", path.name))
    return added, changes


def _retired(site: SiteFile, known: Mapping[str, Criterion]) -> tuple[set[str], list[Change]]:
    out: set[str] = set()
    changes = []
    for i, r in enumerate(site.retire):
        if r.id not in known:
            raise KnowledgeError(SITE_FILE, f"retire[{i}].id", f"unknown criterion {r.id!r}")
        if r.id in out:
            raise KnowledgeError(SITE_FILE, f"retire[{i}].id", f"{r.id!r} is retired twice")
        out.add(r.id)
        changes.append(Change("retired", r.id, r.reason, SITE_FILE))
    return out, changes


def _with_params(site: SiteFile, criteria: dict[str, Criterion], retired: set[str]) -> list[Change]:
    """Set each criterion's params in ``criteria`` (in place), re-validated as a whole."""
    changes = []
    for cid, values in site.params.items():
        if cid in retired:
            raise KnowledgeError(SITE_FILE, f"params.{cid}", f"{cid!r} is retired here")
        c = criteria.get(cid)
        if c is None:
            raise KnowledgeError(SITE_FILE, f"params.{cid}", f"unknown criterion {cid!r}")
        for name, value in values.items():
            if name not in c.params:
                known = ", ".join(sorted(c.params)) or "none"
                raise KnowledgeError(
                    SITE_FILE,
                    f"params.{cid}.{name}",
                    f"{cid} has no param {name!r} (its params: {known})",
                )
            problem = _param_refuses(c, name, value)
            if problem:
                raise KnowledgeError(SITE_FILE, f"params.{cid}.{name}", problem)
            changes.append(
                Change("params", cid, f"{name}: {c.params[name]:g} -> {value:g}", SITE_FILE)
            )
        raw = c.model_dump(mode="json", exclude_defaults=True)
        raw["params"] = {**c.params, **values}
        criteria[cid] = Criterion.model_validate(raw)
    return changes


# A criterion param compared with one of these quantities takes the allowed range of this named
# parameter (``data/parameters.yaml``): a kidney threshold is an eGFR whatever criterion reads it.
_QUANTITY_RANGE = {"kidney": "kidney.ckd_egfr_ml_min", "egfr": "kidney.ckd_egfr_ml_min"}


def _lab_quantities(c: Criterion, name: str) -> set[str]:
    """The quantities ``c`` compares its param ``name`` with, in any trigger it has."""
    triggers = [c.trigger, *c.exceptions, *(p.when for p in c.points if p.when)]
    if c.option.caveat_when is not None:
        triggers.append(c.option.caveat_when)
    out: set[str] = set()
    while triggers:
        t = triggers.pop()
        out |= {lab.quantity for lab in t.labs if lab.param == name}
        triggers += [*t.any_of, *t.none_of]
    return out


def _param_refuses(c: Criterion, name: str, value: float) -> str | None:
    """Why a site's ``value`` for ``c``'s param ``name`` is impossible, else None. Every shipped
    param is a window, an age, a count, a dose or a threshold: none is negative, and one that
    is above zero (a divisor, a window) stays so; a lab threshold keeps its quantity's range."""
    shipped_value = c.params[name]
    if value < 0 or (shipped_value > 0 and value <= 0):
        bound = "above 0" if shipped_value > 0 else "0 or more"
        return f"{value:g} is not allowed: {c.id}'s {name} must be {bound}"
    for quantity in sorted(_lab_quantities(c, name)):
        ranged = _QUANTITY_RANGE.get(quantity)
        if ranged is not None:
            problem = shipped_parameters()[ranged].refuses(value)
            if problem:
                return f"{problem} (a {quantity} threshold, as {ranged})"
    return None


def _with_parameters(site: SiteFile) -> list[Change]:
    """One change per named parameter the site sets; an unknown name, or a value of the wrong
    type or out of the parameter's range, is a ``KnowledgeError``."""
    shipped_values = shipped_parameters()
    changes = []
    for name, value in site.parameters.items():
        known = shipped_values.get(name)
        if known is None:
            raise KnowledgeError(SITE_FILE, f"parameters.{name}", f"unknown parameter {name!r}")
        problem = known.refuses(value)
        if problem:
            raise KnowledgeError(SITE_FILE, f"parameters.{name}", problem)
        detail = f"{known.value:g} -> {value:g} {known.unit}"
        changes.append(Change("parameter", name, detail, SITE_FILE))
    return changes


def with_drafts(knowledge: Knowledge) -> Knowledge:
    """``knowledge`` with its draft criteria firing too (a site testing them)."""
    return Knowledge(
        knowledge.criteria, knowledge.stamp, knowledge.changes, True, knowledge.parameters
    )


def load_site(folder: Path, base: Knowledge | None = None) -> Knowledge:
    """``base`` (the shipped knowledge) with the site folder applied: retirements, params,
    added criteria (after the shipped ones, in file order). ``KnowledgeError`` names the file,
    the path in it and the problem."""
    base = base or shipped()
    paths = _site_files(folder)
    site_path = next((p for p in paths if p.name == SITE_FILE), None)
    site = _site_file(site_path) if site_path is not None else SiteFile(version="unversioned")
    known = {c.id: c for c in base.criteria}
    added, added_changes = _added((p for p in paths if p.suffix == ".json"), known)
    retired, changes = _retired(site, known)
    merged = {c.id: c for c in (*base.criteria, *added)}
    changes += _with_params(site, merged, retired)
    changes += _with_parameters(site)
    criteria = tuple(c for cid, c in merged.items() if cid not in retired)
    stamp = KnowledgeStamp(
        base.stamp.version,
        base.stamp.content_hash,
        site.version,
        content_hash((p.name, p.read_bytes()) for p in paths),
    )
    return Knowledge(criteria, stamp, (*changes, *added_changes), parameters=site.parameters)


_ACTIVE: list[Knowledge] = []


def active() -> Knowledge:
    """The knowledge plans use now: the installed one, else the shipped."""
    return _ACTIVE[-1] if _ACTIVE else shipped()


def install(knowledge: Knowledge) -> None:
    """Make ``knowledge`` the one plans use (at start-up; cached case analyses are keyed by
    the knowledge's stamp, so no plan mixes two)."""
    _ACTIVE[:] = [knowledge]
    set_site_values(knowledge.parameters)
