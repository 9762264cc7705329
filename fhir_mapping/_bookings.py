"""A planned Encounter and a Procedure in preparation -> ``Booking`` facts. Private to
``fhir_mapping``; called by ``_profile``'s builder for entries it has linked to the Patient.

A booking's day is a plan, so it may lie after the request: it is read as a date without the
window that drops a past fact dated in the future, and it never counts towards the record's
date. Nothing is parsed from free text here.
"""

from __future__ import annotations

from typing import Any, Final

from fhir_mapping._parsed import ParsedEntry
from fhir_mapping._read import cc_text as _cc_text
from fhir_mapping._read import codes as _codes
from fhir_mapping._read import to_date
from service.record.profile import Booking

__all__ = ["PLANNED_ENCOUNTER", "planned_encounter", "procedure_in_preparation"]

PLANNED_ENCOUNTER: Final = "planned"
_PREPARATION: Final = "preparation"


def planned_encounter(entry: ParsedEntry) -> Booking:
    """The booking a planned Encounter makes: its type and reason, and its planned start."""
    r: Any = entry.resource
    concepts = [*(r.type or ()), *(r.reasonCode or ())]
    text = next((t for cc in concepts if (t := _cc_text(cc))), "")
    start = r.period.start if r.period else None
    return Booking(
        ref=entry.ref,
        text=text,
        codes=tuple(c for cc in concepts for c in _codes(cc)),
        status=str(r.status or ""),
        day=to_date(start),
    )


def procedure_in_preparation(entry: ParsedEntry) -> Booking | None:
    """The booking of a Procedure in preparation (its code, category and planned day); None
    for a Procedure in any other status (done, stopped, in error: not a plan)."""
    r: Any = entry.resource
    if r.status != _PREPARATION:
        return None
    when = r.performedDateTime or (
        (r.performedPeriod.start or r.performedPeriod.end) if r.performedPeriod else None
    )
    return Booking(
        ref=entry.ref,
        text=_cc_text(r.code),
        codes=_codes(r.code),
        status=str(r.status),
        day=to_date(when),
        categories=_codes(r.category) if r.category is not None else (),
    )
