"""A validated Bundle and its entries: what ``ingest`` parses and ``_profile`` reads (a module of
their own, so that neither imports the other)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fhir_mapping import r4
from fhir_mapping._refs import RefIndex

__all__ = ["ParsedBundle", "ParsedEntry"]


@dataclass(frozen=True, slots=True)
class ParsedEntry:
    """One validated entry. ``ref`` is ``Type/id`` ("" when the resource has no usable id and is
    of a type the profile does not cite)."""

    index: int
    full_url: str
    ref: str
    resource: r4.Resource

    @property
    def resource_type(self) -> str:
        return type(self.resource).__name__

    @property
    def expression(self) -> str:
        return f"Bundle.entry[{self.index}].resource"


@dataclass(frozen=True, slots=True)
class ParsedBundle:
    """A validated Bundle: its type, the one Patient, every entry, and reference resolution."""

    type: str
    patient: ParsedEntry
    entries: tuple[ParsedEntry, ...]
    shell: r4.Bundle | None = field(default=None, repr=False)  # Bundle.* without its entries
    refs: RefIndex = field(default_factory=RefIndex, repr=False, compare=False)

    def resolve(self, reference: str | None) -> ParsedEntry | None:
        """The entry a reference (``urn:uuid:...``, ``Type/id``, absolute URL) points to."""
        i = self.refs.resolve(reference)
        return None if i is None else self.entries[i]
