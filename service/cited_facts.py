"""Patient facts cited by arguments, by name, value and date, for the review pages.

Arguments cite facts as FHIR references (``Observation/egfr-1``); a clinician reads names. At
plan time ``fact_index`` keeps, for each cited reference, what the profile knew of it; the
service stores that with version 1 (the facts never change between versions), and the review
pages show it, with ``patient_header`` (name, sex, birth date) for the page's header. Not used
anywhere else, never logged.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from service.record.profile import PatientProfile
from service.text.words import unit_words

__all__ = ["fact_index", "patient_header"]


def _day(d: date | None) -> str:
    return d.isoformat() if d is not None else ""


def fact_index(profile: PatientProfile, refs: Iterable[str]) -> dict[str, dict[str, str]]:
    """{reference: {"kind", "name", "value", "date"}} for each of ``refs`` the profile knows."""
    known: dict[str, dict[str, str]] = {}
    for p in profile.problems:
        status = p.clinical_status or ""
        known[p.ref] = {"kind": "Condition", "name": p.text, "value": status, "date": _day(p.onset)}
    for m in profile.medications:
        value = " ".join(x for x in (m.dose, m.route, m.frequency) if x) or m.status
        known[m.ref] = {
            "kind": "Medication",
            "name": m.text,
            "value": value,
            "date": _day(m.authored),
        }
    for o in profile.observations:
        value = f"{o.value:g} {unit_words(o.unit)}".strip() if o.value is not None else o.value_text
        known[o.ref] = {
            "kind": "Observation",
            "name": o.display or o.loinc,
            "value": value,
            "date": _day(o.effective),
        }
    for a in profile.allergies:
        known[a.ref] = {"kind": "Allergy", "name": a.substance, "value": a.criticality, "date": ""}
    for e in profile.encounters:
        known[e.ref] = {"kind": "Encounter", "name": e.kind, "value": "", "date": _day(e.start)}
    for s in profile.social:
        known[s.ref] = {
            "kind": "Social",
            "name": s.kind.replace("-", " "),
            "value": s.text,
            "date": "",
        }
    return {r: known[r] for r in dict.fromkeys(refs) if r in known}


def patient_header(profile: PatientProfile) -> dict[str, str]:
    """Who the plan is for, as the review pages' header shows it: name, administrative sex and
    birth date (the age is worked out when the page is shown)."""
    return {"name": profile.name, "sex": profile.sex, "birth_date": _day(profile.birth_date)}
