"""MedicationStatement -> ``MedicationStatement`` facts. Private to ``fhir_mapping``; called by
``_profile``'s builder for entries it has linked to the Patient.

A statement is kept as the record gives it: its status, the day it speaks for, the words of
its status reason and notes (read by the knowledge's adherence words, never parsed here), how it
was recorded (category, who the information came from) and its first dosage. A statement entered
in error says nothing and is skipped.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Protocol

from fhir_mapping import r4
from fhir_mapping._parsed import ParsedBundle, ParsedEntry
from fhir_mapping._read import cc_text, codes
from service.record.profile import MedicationStatement

__all__ = ["statement"]


class _Builder(Protocol):
    """What this reader uses of the profile builder (``_profile._Builder``)."""

    parsed: ParsedBundle

    def _date(
        self, ref: str, path: str, value: object, *, dates_record: bool = True
    ) -> date | None: ...

    def _medication_concept(self, e: ParsedEntry) -> tuple[r4.CodeableConcept | None, str, str]: ...


def statement(b: _Builder, entry: ParsedEntry) -> MedicationStatement | None:
    """The statement of ``entry``; None when it was entered in error."""
    r: Any = entry.resource
    if r.status == "entered-in-error":
        return None
    concept, display, _ = b._medication_concept(entry)
    eff = r.effectiveDateTime or (
        (r.effectivePeriod.end or r.effectivePeriod.start) if r.effectivePeriod else None
    )
    day = b._date(entry.ref, "MedicationStatement.effective[x]", eff) or b._date(
        entry.ref, "MedicationStatement.dateAsserted", r.dateAsserted
    )
    words = [cc_text(cc) for cc in r.statusReason or ()]
    words += [str(n.text) for n in r.note or () if n.text]
    return MedicationStatement(
        ref=entry.ref,
        text=cc_text(concept) or display,
        codes=codes(concept),
        status=str(r.status or ""),
        day=day,
        reason="; ".join(w for w in words if w),
        categories=_category(r.category),
        informant=_informant(b.parsed, r.informationSource),
    )


def _category(cc: Any) -> tuple[str, ...]:
    """The category's codes and text, lower case (R4 allows one category)."""
    if cc is None:
        return ()
    said = [str(c.code) for c in cc.coding or () if c.code]
    said += [str(c.display) for c in cc.coding or () if c.display]
    said += [str(cc.text)] if cc.text else []
    return tuple(dict.fromkeys(w.lower() for w in said))


def _informant(parsed: ParsedBundle, ref: Any) -> str:
    """The resource type the information came from: the reference's ``type``, else the type of
    the entry it resolves to, else a relative reference's type ("" when none says)."""
    if ref is None:
        return ""
    if ref.type:
        return str(ref.type)
    hit = parsed.resolve(ref.reference)
    if hit is not None:
        return hit.resource_type
    kind = str(ref.reference or "").split("/")[0]
    return kind if kind.isalpha() and kind[:1].isupper() else ""
