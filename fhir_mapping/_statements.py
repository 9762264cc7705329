"""MedicationStatement -> ``MedicationStatement`` facts. Private to ``fhir_mapping``; called by
``_profile``'s builder for entries it has linked to the Patient.

A statement is kept as the record gives it: its status, the day it speaks for, and the words of
its status reason and notes (read by the knowledge's adherence words, never parsed here). A
statement entered in error says nothing and is skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from service.record.profile import MedicationStatement

if TYPE_CHECKING:
    from fhir_mapping._parsed import ParsedEntry
    from fhir_mapping._profile import _Builder

__all__ = ["statement"]


def statement(b: _Builder, entry: ParsedEntry) -> MedicationStatement | None:
    """The statement of ``entry``; None when it was entered in error."""
    from fhir_mapping._profile import _cc_text, _codes

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
    words = [_cc_text(cc) for cc in r.statusReason or ()]
    words += [str(n.text) for n in r.note or () if n.text]
    return MedicationStatement(
        ref=entry.ref,
        text=_cc_text(concept) or display,
        codes=_codes(concept),
        status=str(r.status or ""),
        day=day,
        reason="; ".join(w for w in words if w),
    )
