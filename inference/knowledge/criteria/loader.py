"""Load and validate the criteria files; refuse a bad one naming file, path and problem.

A criterion's point may be ``{"use": "<id>"}``: the reusable point of that id in
``data/points.yaml``, put in its place before the criterion is validated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._datafile import KnowledgeFileError, parse_file
from .._datafile import load_file as load_data_file
from ..conditions import GROUPS_BY_KEY
from ..drugs import CLASS_LABELS, DRUGS
from ..roles import ROLE_BY_NAME
from ..themes import THEMES
from .schema import POINTS_FILE, CriteriaFile, Criterion, PointLibrary, Trigger

__all__ = ["CRITERIA_DIR", "POINTS_FILE", "KnowledgeError", "load", "point_library"]

CRITERIA_DIR = Path(__file__).resolve().parent
EVIDENCE_FILE = CRITERIA_DIR.parent.parent / "evidence_base.json"
# Quantities a lab test or monitor may name: LOINC_GROUPS keys and the governing kidney value.
_DERIVED_QUANTITIES = frozenset({"kidney"})


class KnowledgeError(ValueError):
    """A knowledge file is unusable: ``file``, ``path`` (inside it) and ``problem``."""

    def __init__(self, file: str, path: str, problem: str) -> None:
        super().__init__(f"{file}: {path}: {problem}")
        self.file, self.path, self.problem = file, path, problem


def _loc(loc: Iterable[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _evidence_ids() -> frozenset[str]:
    data = json.loads(EVIDENCE_FILE.read_text(encoding="utf-8"))
    return frozenset(str(d["id"]) for d in data["documents"])


def point_library(path: Path = POINTS_FILE) -> dict[str, dict[str, Any]]:
    """The reusable points by id, each as a criterion would spell it out (validated, themes
    checked against the vocabulary; a bad entry is a ``KnowledgeFileError`` naming it)."""
    lib = load_data_file(path, PointLibrary)
    evidence = _evidence_ids()
    for pt in lib.points:
        for where, problem in _check_point(pt, f"points[{pt.id}]", evidence):
            raise KnowledgeError(path.name, where, problem)
    return {pt.id: pt.model_dump(exclude={"id"}, exclude_unset=True) for pt in lib.points}


def _resolve_uses(raw: object, library: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """Put each ``{"use": id}`` point of ``raw`` (a criteria file's JSON) in place; the places
    and problems of the references that cannot be resolved."""
    bad: list[tuple[str, str]] = []
    criteria = raw.get("criteria") if isinstance(raw, dict) else None
    for k, c in enumerate(criteria if isinstance(criteria, list) else []):
        points = c.get("points") if isinstance(c, dict) else None
        if not isinstance(points, list):
            continue
        for i, pt in enumerate(points):
            if not (isinstance(pt, dict) and "use" in pt):
                continue
            where = f"criteria[{k}].points[{i}]"
            name = f"{c.get('id')}: " if isinstance(c.get("id"), str) else ""
            if set(pt) != {"use"}:
                bad.append((where, f"{name}a reused point takes no other field than 'use'"))
            elif pt["use"] not in library:
                bad.append((f"{where}.use", f"{name}unknown reusable point {pt['use']!r}"))
            else:
                points[i] = dict(library[pt["use"]])
    return bad


def _check_point(pt: Any, where: str, evidence: frozenset[str]) -> list[tuple[str, str]]:
    bad: list[tuple[str, str]] = []
    if pt.role not in ROLE_BY_NAME:
        bad.append((f"{where}.role", f"unknown role {pt.role!r}"))
    for j, theme in enumerate(pt.themes):
        if theme not in THEMES.codes:
            bad.append((f"{where}.themes[{j}]", f"unknown theme {theme!r} (data/themes.yaml)"))
    for j, ev in enumerate(pt.evidence):
        if ev not in evidence:
            bad.append((f"{where}.evidence[{j}]", f"unknown evidence id {ev!r}"))
    return bad


def _check_spec(spec: str) -> str | None:
    kind, _, name = spec.partition(":")
    if kind == "drug" and name not in {d.name for d in DRUGS}:
        return f"unknown drug {name!r}"
    if kind == "class" and name not in CLASS_LABELS:
        return f"unknown drug class {name!r}"
    if kind == "flag" and not any(name in getattr(d, "flags", ()) for d in DRUGS):
        return f"no drug carries flag {name!r}"
    return None


def _check_trigger(t: Trigger, where: str, quantities: frozenset[str]) -> list[tuple[str, str]]:
    """Every drug spec, condition group and quantity a trigger names is one the knowledge
    defines; (path, problem) for each that is not."""
    specs = [
        (f"{where}.{field}[{i}]", spec)
        for field in ("drugs", "absent_drugs", "bound_matches")
        for i, spec in enumerate(getattr(t, field))
    ]
    specs += [
        (f"{where}.count.specs[{i}]", s) for i, s in enumerate(t.count.specs if t.count else ())
    ]
    groups = [
        (f"{where}.{field}[{i}]", group)
        for field in ("any_conditions", "absent_conditions", "ever_conditions")
        for i, group in enumerate(getattr(t, field))
    ]
    events = t.recent_event.groups if t.recent_event is not None else ()
    groups += [(f"{where}.recent_event.groups[{i}]", g) for i, g in enumerate(events)]
    labs = [(f"{where}.labs[{i}].quantity", lab.quantity) for i, lab in enumerate(t.labs)]
    if t.monitor is not None:
        labs.append((f"{where}.monitor.quantity", t.monitor.quantity))
    bad = [(path, problem) for path, spec in specs if (problem := _check_spec(spec))]
    bad += [(p, f"unknown condition group {g!r}") for p, g in groups if g not in GROUPS_BY_KEY]
    bad += [(p, f"unknown quantity {q!r}") for p, q in labs if q not in quantities]
    for i, alt in enumerate(t.any_of):
        bad += _check_trigger(alt, f"{where}.any_of[{i}]", quantities)
    return bad


def _check(c: Criterion, evidence: frozenset[str]) -> list[tuple[str, str]]:
    from service.record.vocabulary import LOINC_GROUPS

    quantities = frozenset(LOINC_GROUPS) | _DERIVED_QUANTITIES
    bad = _check_trigger(c.trigger, "trigger", quantities)
    for i, ex in enumerate(c.exceptions):
        bad += _check_trigger(ex, f"exceptions[{i}]", quantities)
    for i, pt in enumerate(c.points):
        bad += _check_point(pt, f"points[{i}]", evidence)
        if pt.when is not None:
            bad += _check_trigger(pt.when, f"points[{i}].when", quantities)
    for j, ev in enumerate(c.evidence):
        if ev not in evidence:
            bad.append((f"evidence[{j}]", f"unknown evidence id {ev!r}"))
    return bad


def load_file(
    path: Path,
    evidence: frozenset[str] | None = None,
    library: dict[str, dict[str, Any]] | None = None,
) -> CriteriaFile:
    """One validated criteria file, or ``KnowledgeError`` naming file, path and problem."""
    name = path.name
    try:
        raw = parse_file(path)
    except KnowledgeFileError as exc:
        where = "(file)" if exc.where == "(top level)" else exc.where
        raise KnowledgeError(name, where, exc.problem) from None
    for where, problem in _resolve_uses(raw, library if library is not None else _LIBRARY):
        raise KnowledgeError(name, where, problem)
    try:
        parsed = CriteriaFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise KnowledgeError(name, _loc(first["loc"]), first["msg"]) from None
    ev = evidence if evidence is not None else _evidence_ids()
    for k, c in enumerate(parsed.criteria):
        for where, problem in _check(c, ev):
            raise KnowledgeError(name, f"criteria[{k}].{where}", f"{c.id}: {problem}")
    return parsed


def load(directory: Path = CRITERIA_DIR) -> tuple[Criterion, ...]:
    """Every criterion of every ``*.json`` file in ``directory``, ids unique, in file order."""
    evidence = _evidence_ids()
    out: list[Criterion] = []
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.json")):
        for k, c in enumerate(load_file(path, evidence, _LIBRARY).criteria):
            if c.id in seen:
                raise KnowledgeError(
                    path.name, f"criteria[{k}].id", f"{c.id!r} already defined in {seen[c.id]}"
                )
            seen[c.id] = path.name
            out.append(c)
    return tuple(out)


_LIBRARY = point_library()
