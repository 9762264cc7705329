"""Reference resolution inside one Bundle, and the ``Type/id`` form every fact cites.

Private to ``fhir_mapping``. Resolves ``urn:uuid:``/``urn:oid:`` fullUrls, relative ``Type/id``
references (also with ``/_history/n``) and absolute ``http(s)://base/Type/id`` URLs. Relative
references are matched on ``Type/id`` whatever the base of the referring entry: a bundle that
mixes two servers holding the same ``Type/id`` would be ambiguous, and such ids are reported as
duplicates when the bundle is indexed. Conditional references (``Patient?identifier=...``) never
resolve.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["RefIndex", "entry_ref", "relative_ref"]

_ID: Final = re.compile(r"[A-Za-z0-9\-.]{1,64}")
_TYPE: Final = re.compile(r"[A-Z][A-Za-z]+")
_UUID: Final = re.compile(r"urn:uuid:([0-9a-fA-F\-]{36})")


def relative_ref(reference: str) -> str | None:
    """``Type/id`` for a relative or absolute RESTful reference (history dropped), else None.

    >>> relative_ref("http://example.org/fhir/Patient/123/_history/2")
    'Patient/123'
    >>> relative_ref("urn:uuid:3d74586a-1aa8-423f-901d-83159831528e") is None
    True
    """
    if "?" in reference or reference.startswith(("urn:", "#")):
        return None
    parts = reference.rstrip("/").split("/")
    if len(parts) >= 4 and parts[-2] == "_history":
        parts = parts[:-2]
    if len(parts) < 2:
        return None
    rtype, rid = parts[-2], parts[-1]
    if _TYPE.fullmatch(rtype) and _ID.fullmatch(rid):
        return f"{rtype}/{rid}"
    return None


def entry_ref(resource_type: str, resource_id: str | None, full_url: str) -> str:
    """The ``Type/id`` that facts cite: the resource id, else one taken from the fullUrl
    (``urn:uuid:<uuid>`` or ``.../Type/id``), else ""."""
    if resource_id:
        return f"{resource_type}/{resource_id}"
    m = _UUID.fullmatch(full_url)
    if m:
        return f"{resource_type}/{m.group(1)}"
    rel = relative_ref(full_url) if full_url else None
    if rel and rel.split("/", 1)[0] == resource_type:
        return rel
    return ""


class RefIndex:
    """Maps every name an entry can be referred by to its position in ``ParsedBundle.entries``."""

    __slots__ = ("_by_key",)

    def __init__(self) -> None:
        self._by_key: dict[str, int] = {}

    def add(self, pos: int, ref: str, full_url: str) -> int | None:
        """Index one entry; returns the position of an earlier entry with the same name, if any."""
        clash = None
        for key in {k for k in (ref, full_url) if k}:
            prev = self._by_key.setdefault(key, pos)
            if prev != pos:
                clash = prev
        return clash

    def resolve(self, reference: str | None) -> int | None:
        if not reference:
            return None
        reference = reference.strip()
        hit = self._by_key.get(reference)
        if hit is not None:
            return hit
        rel = relative_ref(reference)
        return None if rel is None else self._by_key.get(rel)
