"""How a FHIR date and a CodeableConcept are read into the profile's terms: one module that
the profile builder and its readers of reports and orders share (neither imports the other)."""

from __future__ import annotations

from datetime import date, datetime

from fhir_mapping import r4
from fhir_mapping.codes import canonical_system
from service.record.profile import Code

__all__ = ["cc_text", "codes", "to_date"]


def to_date(value: object) -> date | None:
    """A FHIR date/dateTime/instant as a calendar date. Partial dates ("2019", "2019-03") take
    their first day; the time zone as written is kept (no conversion to UTC)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and value[:4].isdigit():
        try:
            year = int(value[:4])
            month = int(value[5:7]) if len(value) >= 7 else 1
            day = int(value[8:10]) if len(value) >= 10 else 1
            return date(year, month, day)
        except ValueError:
            return None
    return None


def cc_text(cc: r4.CodeableConcept | None) -> str:
    if cc is None:
        return ""
    if cc.text:
        return str(cc.text)
    for c in cc.coding or ():
        if c.display:
            return str(c.display)
    return ""


def codes(cc: r4.CodeableConcept | None) -> tuple[Code, ...]:
    if cc is None:
        return ()
    return tuple(
        Code(canonical_system(c.system), str(c.code), str(c.display or ""))
        for c in cc.coding or ()
        if c.code
    )
