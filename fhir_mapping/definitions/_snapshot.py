"""Snapshots of the project's extension StructureDefinitions, built from the R4 core Extension.

A StructureDefinition that constrains Extension states in its ``differential`` only what it
changes; tools that load a package as shipped (validators, IG tooling, EHR profile loaders) also
want the ``snapshot``: every element of the type with those constraints applied. This builds it
as the FHIR snapshot generator does for an extension: the elements of the base Extension
(``base/StructureDefinition-Extension.json``, the official R4 definition) in order, each with its
differential element laid over it, and each slice of ``Extension.extension`` right after the
sliced element, followed by the Extension's own elements re-pathed beneath the slice. A
differential element that lands nowhere is an error, never dropped. Pure: no I/O beyond reading
the committed base once.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources

__all__ = ["extension_snapshot"]

_BASE_FILE = "StructureDefinition-Extension.json"
_ROOT = "Extension"
_SLICED = "Extension.extension"


@cache
def _base_text() -> str:
    return (
        resources.files("fhir_mapping.definitions.base")
        .joinpath(_BASE_FILE)
        .read_text(encoding="utf-8")
    )


def _base_elements() -> list[dict[str, object]]:
    """The R4 Extension's snapshot elements (a fresh copy each call)."""
    elements: list[dict[str, object]] = json.loads(_base_text())["snapshot"]["element"]
    return elements


def _laid_over(element: dict[str, object], diff: Mapping[str, object] | None) -> dict[str, object]:
    """``element`` with every constraint of ``diff`` (its differential element) in place."""
    for key, value in (diff or {}).items():
        if key not in ("id", "path"):
            element[key] = copy.deepcopy(value)
    return element


def _slice(
    head: Mapping[str, object],
    base: Sequence[dict[str, object]],
    diff: Mapping[str, Mapping[str, object]],
) -> list[dict[str, object]]:
    """The snapshot elements of one slice of ``Extension.extension``: the slice itself, then the
    Extension's own elements beneath it (``Extension.extension:part.url``, ...)."""
    sid = str(head["id"])
    sliced = next(e for e in base if e["id"] == _SLICED)
    first = copy.deepcopy(sliced)
    first.pop("slicing", None)  # the slicing belongs to the sliced element, not to a slice
    first.update(id=sid, path=_SLICED)
    out = [_laid_over(first, head)]
    for e in base:
        if e["id"] == _ROOT:
            continue
        child = copy.deepcopy(e)
        tail = str(e["id"]).removeprefix(f"{_ROOT}.")
        child.update(id=f"{sid}.{tail}", path=f"{_SLICED}.{tail}")
        out.append(_laid_over(child, diff.get(f"{sid}.{tail}")))
    return out


def extension_snapshot(differential: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """The snapshot elements of an extension whose differential elements are ``differential``
    (ids as the R4 snapshot generator writes them: ``Extension.extension:part.value[x]``)."""
    diff = {str(d["id"]): d for d in differential}
    base = _base_elements()
    out: list[dict[str, object]] = []
    for e in base:
        out.append(_laid_over(copy.deepcopy(e), diff.get(str(e["id"]))))
        if e["id"] == _SLICED:
            for d in differential:
                if "sliceName" in d and d["path"] == _SLICED:
                    out += _slice(d, base, diff)
    placed = {e["id"] for e in out}
    lost = [i for i in diff if i not in placed]
    if lost:
        raise ValueError(f"differential elements with no place in the snapshot: {lost}")
    return out
