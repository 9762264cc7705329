"""DiagnosticReport and ServiceRequest -> ``Report`` and ``Order`` facts. Private to
``fhir_mapping``; called by ``_profile``'s builder for entries it has linked to the Patient.

A report's conclusion is kept as written (it is quoted where it is shown, never rewritten); an
order's due day (``occurrence[x]``) may lie after the request, since it is a plan, so it is read
as a date without counting towards the record's date. Nothing is parsed from free text here.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Final, Protocol

from fhir_mapping._parsed import ParsedEntry
from fhir_mapping._read import cc_text as _cc_text
from fhir_mapping._read import codes as _codes
from fhir_mapping._read import to_date
from service.record.profile import Order, Report, UnusedFact


class _Builder(Protocol):
    """What these readers use of the profile builder (``_profile._Builder``)."""

    unused: list[UnusedFact]

    def _date(
        self, ref: str, path: str, value: object, *, dates_record: bool = True
    ) -> date | None: ...

    def _link(self, ref: str, path: str, reference: Any) -> str: ...


__all__ = ["order", "report"]

_SKIPPED: Final = frozenset({"entered-in-error", "cancelled"})


def report(b: _Builder, entry: ParsedEntry) -> Report | None:
    """The report of ``entry``; None when it was entered in error or cancelled."""
    r: Any = entry.resource
    if r.status in _SKIPPED:
        return None
    eff_v = r.effectiveDateTime or (
        (r.effectivePeriod.end or r.effectivePeriod.start) if r.effectivePeriod else None
    )
    effective = b._date(entry.ref, "DiagnosticReport.effective[x]", eff_v)
    issued = b._date(entry.ref, "DiagnosticReport.issued", r.issued)
    if issued is None and effective is None and to_date(r.issued or eff_v) is None:
        b.unused.append(UnusedFact(entry.ref, "DiagnosticReport.issued", "no date"))
    codes = tuple(c for cc in r.conclusionCode or () for c in _codes(cc))
    return Report(
        ref=entry.ref,
        text=_cc_text(r.code),
        codes=_codes(r.code),
        status=str(r.status or ""),
        issued=issued,
        effective=effective,
        conclusion=str(r.conclusion or "").strip(),
        conclusion_codes=codes,
        based_on=_links(b, entry.ref, "DiagnosticReport.basedOn", r.basedOn),
    )


def order(b: _Builder, entry: ParsedEntry) -> Order | None:
    """The order of ``entry``; None when it was entered in error."""
    r: Any = entry.resource
    if r.status == "entered-in-error":
        return None
    authored = b._date(entry.ref, "ServiceRequest.authoredOn", r.authoredOn)
    due_v = r.occurrenceDateTime or (
        (r.occurrencePeriod.end or r.occurrencePeriod.start) if r.occurrencePeriod else None
    )
    due: date | None = to_date(due_v)
    if due is not None and authored is not None and due < authored:
        b.unused.append(
            UnusedFact(entry.ref, "ServiceRequest.occurrence[x]", "due before it was ordered")
        )
        due = None
    reasons = (
        *_links(b, entry.ref, "ServiceRequest.reasonReference", r.reasonReference),
        *_links(b, entry.ref, "ServiceRequest.supportingInfo", r.supportingInfo),
    )
    return Order(
        ref=entry.ref,
        text=_cc_text(r.code),
        codes=_codes(r.code),
        status=str(r.status or ""),
        intent=str(r.intent or ""),
        authored=authored,
        due=due,
        categories=tuple(c for cc in r.category or () for c in _codes(cc)),
        reasons=reasons,
    )


def _links(b: _Builder, ref: str, path: str, references: Any) -> tuple[str, ...]:
    """The ``Type/id`` of each reference that resolves in the bundle (the rest listed)."""
    out = (b._link(ref, f"{path}[{k}]", x) for k, x in enumerate(references or ()))
    return tuple(dict.fromkeys(x for x in out if x))
