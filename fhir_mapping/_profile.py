"""Validated R4B resources -> ``PatientProfile`` facts. Private to ``fhir_mapping``.

Reads only what ``parse_bundle`` has validated and linked to the Patient. Unusable codes are
kept (``recognised=False``) and explained as ``UnusedFact``; nothing is guessed (a coding with no
system is not assumed to be SNOMED CT). ``as_of`` is the latest date among the patient's usable
facts, never the wall clock, so the same bundle and request time always give the same profile;
with no dated fact it falls back to ``Bundle.timestamp`` and otherwise refuses the bundle. It
never lies after the request's day.

Dates a record cannot have (``DateWindow``: after the request beyond the clock-skew allowance,
before the birth date, a birth date in the future or implying an impossible age) are not facts:
each is listed as an ``UnusedFact``; an Observation whose own date is impossible is not used at
all (a result at an unknown time cannot be the latest one), and other resources are kept undated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from fhir_mapping import r4
from fhir_mapping._bookings import PLANNED_ENCOUNTER, planned_encounter, procedure_in_preparation
from fhir_mapping._parsed import ParsedBundle, ParsedEntry
from fhir_mapping._plausible import DateWindow, implausible
from fhir_mapping._read import cc_text as _cc_text
from fhir_mapping._read import codes as _codes
from fhir_mapping._read import to_date
from fhir_mapping._refs import relative_ref
from fhir_mapping._reports import order as _order
from fhir_mapping._reports import report as _report
from fhir_mapping._social import social_kind
from fhir_mapping._statements import statement as _statement
from fhir_mapping.codes import (
    ICD10,
    ICD10_WHO,
    LOINC,
    NDC,
    RXNORM,
    SNOMED,
    canonical_system,
    code_problem,
)
from service.core.model import SourceRecord
from service.errors import BundleError, Issue
from service.record.dose_text import read_dose
from service.record.profile import (
    Allergy,
    Booking,
    Code,
    Condition,
    Encounter,
    Immunization,
    Medication,
    MedicationStatement,
    Observation,
    Order,
    PatientProfile,
    Report,
    SocialFact,
    UnusedFact,
)
from service.record.vocabulary import CVX
from service.work import checkpoint

__all__ = ["build", "to_date"]

_PROBLEM_SYSTEMS: Final = frozenset({SNOMED, ICD10, ICD10_WHO})
_MEDICATION_SYSTEMS: Final = frozenset({RXNORM})
_ALLERGY_SYSTEMS: Final = frozenset({SNOMED, RXNORM})
_SKIPPED_STATUS: Final = frozenset({"entered-in-error", "cancelled"})
_ACTIVE_CLINICAL: Final = frozenset({"active", "recurrence", "relapse"})

_CVX_ALIASES: Final = frozenset({CVX, "urn:oid:2.16.840.1.113883.12.292"})
_CVX_CODE: Final = re.compile(r"^\d{1,3}$")


def _first_code(cc: r4.CodeableConcept | None) -> str:
    if cc is None:
        return ""
    for c in cc.coding or ():
        if c.code:
            return str(c.code)
    return ""


def _recognise(
    ref: str,
    path: str,
    cc: r4.CodeableConcept | None,
    usable: frozenset[str],
    unused: list[UnusedFact],
) -> bool:
    """Whether ``cc`` has a well-formed code in one of the ``usable`` systems; explains why not.

    Malformed codes in known systems are always reported (they are data errors); local or
    system-less codings only when nothing usable is left, since local codes beside a standard
    one are normal."""
    if cc is None:
        unused.append(UnusedFact(ref, path, "no code"))
        return False
    codings = list(cc.coding or ())
    if not codings:
        reason = "free text only, no coding" if cc.text else "no code"
        unused.append(UnusedFact(ref, path, reason))
        return False
    ok = False
    soft: list[UnusedFact] = []
    for i, c in enumerate(codings):
        system = canonical_system(c.system)
        where = f"{path}.coding[{i}]"
        problem = code_problem(system, str(c.code or ""))
        if problem is None and system in usable:
            ok = True
        elif problem is None and system == NDC:
            soft.append(UnusedFact(ref, where, "NDC is not mapped to RxNorm by this service"))
        elif problem is None:
            soft.append(UnusedFact(ref, where, f"code system {system} is not used for this fact"))
        elif system in _CHECKED:
            unused.append(UnusedFact(ref, where, problem))
        else:
            soft.append(UnusedFact(ref, where, problem))
    if not ok:
        unused.extend(soft)
    return ok


_CHECKED: Final = frozenset({SNOMED, LOINC, RXNORM, NDC, ICD10, ICD10_WHO})


def _status(cc: r4.CodeableConcept | None) -> str:
    return _first_code(cc)


def _num(value: Decimal | float | int | None) -> float | None:
    return None if value is None else float(value)


def _fmt(value: Decimal | float | int | None) -> str:
    return "" if value is None else f"{float(value):g}"


def _quantity_text(q: r4.Quantity | None) -> str:
    if q is None or q.value is None:
        return ""
    unit = q.unit or q.code or ""
    return f"{_fmt(q.value)} {unit}".strip()


class _Builder:
    """Accumulates facts for one bundle; single use."""

    def __init__(self, parsed: ParsedBundle, window: DateWindow) -> None:
        self.parsed = parsed
        self.window = window
        self.patient_ref = parsed.patient.ref
        self.problems: list[Condition] = []
        self.medications: list[Medication] = []
        self.observations: dict[str, tuple[tuple[date, int], Observation]] = {}
        self.allergies: list[Allergy] = []
        self.encounters: list[Encounter] = []
        self.immunizations: list[Immunization] = []
        self.statements: list[MedicationStatement] = []
        self.social: list[SocialFact] = []
        self.reports: list[Report] = []
        self.orders: list[Order] = []
        self.bookings: list[Booking] = []
        self.unused: list[UnusedFact] = []
        self.readings: list[tuple[date, int, Observation]] = []
        self.dates: list[date] = []
        self.dated: list[tuple[str, str, date]] = []  # (ref, path, day) of every kept date

    # -- helpers ---------------------------------------------------------------------------------
    def _date(
        self, ref: str, path: str, value: object, *, dates_record: bool = True
    ) -> date | None:
        """``value`` as a date when the record can have it; otherwise listed as unusable. A kept
        date counts towards the record date unless ``dates_record`` is False."""
        day = to_date(value)
        if day is None:
            return None
        why = self.window.after(day)
        if why is not None:
            self.unused.append(UnusedFact(ref, path, why))
            return None
        self.dated.append((ref, path, day))
        if dates_record:
            self.dates.append(day)
        return day

    def drop_before(self, earliest: date, born: date | None) -> None:
        """Take every clinical date before ``earliest`` out of the facts (listing each), as
        ``_date`` does with dates after the request. An Observation's readings go with their
        date; an older reading of a code never outlives a dropped later one, so the latest per
        code stays exact."""
        early = [(ref, path, day) for ref, path, day in self.dated if day < earliest]
        if not early:
            return
        self.unused.extend(UnusedFact(r, path, DateWindow.before(d, born)) for r, path, d in early)
        self.dates = [d for d in self.dates if d >= earliest]

        def keep(day: date | None) -> date | None:
            return day if day is None or day >= earliest else None

        self.problems = [
            replace(p, onset=keep(p.onset), abatement=keep(p.abatement)) for p in self.problems
        ]
        self.medications = [replace(m, authored=keep(m.authored)) for m in self.medications]
        self.encounters = [
            replace(e, start=keep(e.start), end=keep(e.end)) for e in self.encounters
        ]
        self.immunizations = [replace(i, occurred=keep(i.occurred)) for i in self.immunizations]
        self.reports = [
            replace(r, issued=keep(r.issued), effective=keep(r.effective)) for r in self.reports
        ]
        self.orders = [replace(o, authored=keep(o.authored)) for o in self.orders]
        self.readings = [
            t for t in self.readings if t[2].effective is None or t[2].effective >= earliest
        ]
        self.observations = {
            k: v
            for k, v in self.observations.items()
            if v[1].effective is None or v[1].effective >= earliest
        }

    def _is_patients(self, entry: ParsedEntry, element: str) -> bool:
        reference = getattr(entry.resource, element, None)
        if reference is None:
            self.unused.append(
                UnusedFact(
                    entry.ref,
                    f"{entry.resource_type}.{element}",
                    "no subject; not known to be this patient's",
                )
            )
            return False
        target = self.parsed.resolve(reference.reference)
        return target is not None and target.ref == self.patient_ref

    # -- resources -------------------------------------------------------------------------------
    def condition(self, entry: ParsedEntry) -> None:
        r: Any = entry.resource
        verification = _status(r.verificationStatus)
        if verification == "entered-in-error":
            return
        text = _cc_text(r.code)
        codes = _codes(r.code)
        clinical = _status(r.clinicalStatus)
        onset_v = r.onsetDateTime or (r.onsetPeriod.start if r.onsetPeriod else None)
        abate_v = r.abatementDateTime or (
            (r.abatementPeriod.end or r.abatementPeriod.start) if r.abatementPeriod else None
        )
        onset = self._date(entry.ref, "Condition.onset[x]", onset_v)
        abatement = self._date(entry.ref, "Condition.abatement[x]", abate_v)
        recorded = self._date(entry.ref, "Condition.recordedDate", r.recordedDate)
        kind = social_kind(codes, text)
        if kind is not None:
            current = (clinical in _ACTIVE_CLINICAL or (not clinical and abatement is None)) and (
                verification != "refuted"
            )
            if current:  # a resolved finding (past unemployment) is no longer the person's life
                self.social.append(SocialFact(entry.ref, kind, text))
            return
        recognised = _recognise(entry.ref, "Condition.code", r.code, _PROBLEM_SYSTEMS, self.unused)
        self.problems.append(
            Condition(
                ref=entry.ref,
                text=text,
                codes=codes,
                clinical_status=clinical,
                verification=verification,
                onset=onset,
                abatement=abatement,
                recognised=recognised,
                recorded=recorded,
            )
        )

    def _medication_concept(self, e: ParsedEntry) -> tuple[r4.CodeableConcept | None, str, str]:
        """(concept, display fallback, FHIRPath of the concept) for a MedicationRequest."""
        r: Any = e.resource
        if r.medicationCodeableConcept is not None:
            return r.medicationCodeableConcept, "", "MedicationRequest.medicationCodeableConcept"
        ref = r.medicationReference
        display = str(ref.display or "") if ref is not None else ""
        target_ref = str(ref.reference or "") if ref is not None else ""
        med: Any = None
        if target_ref.startswith("#"):
            for c in r.contained or ():
                if isinstance(c, r4.Medication) and c.id == target_ref[1:]:
                    med = c
        elif target_ref:
            hit = self.parsed.resolve(target_ref)
            if hit is not None and isinstance(hit.resource, r4.Medication):
                med = hit.resource
        if med is None:
            return None, display, "MedicationRequest.medicationReference"
        return med.code, display, "MedicationRequest.medicationReference.resolve().code"

    def medication_request(self, entry: ParsedEntry) -> None:
        r: Any = entry.resource
        if r.status in _SKIPPED_STATUS:
            return
        concept, display, path = self._medication_concept(entry)
        if concept is None:
            self.unused.append(
                UnusedFact(entry.ref, path, "medication reference does not resolve to a Medication")
            )
            recognised = False
        else:
            recognised = _recognise(entry.ref, path, concept, _MEDICATION_SYSTEMS, self.unused)
        authored = self._date(entry.ref, "MedicationRequest.authoredOn", r.authoredOn)
        dose = frequency = route = ""
        dose_value: float | None = None
        dose_unit = ""
        per_day: float | None = None
        dosage: Any = (r.dosageInstruction or [None])[0]
        if dosage is not None:
            dose, frequency, route = _dosage(dosage)
            dose_value, dose_unit, per_day = _typed_dose(dosage)
        course = _first_code(r.courseOfTherapyType)
        starts, ends = self._course(entry.ref, r, dosage, course, (dose_value, dose_unit, per_day))
        self.medications.append(
            Medication(
                ref=entry.ref,
                text=_cc_text(concept) or display,
                codes=_codes(concept),
                status=str(r.status or ""),
                intent=str(r.intent or ""),
                authored=authored,
                dose=dose,
                frequency=frequency,
                route=route,
                recognised=recognised,
                dose_value=dose_value,
                dose_unit=dose_unit,
                times_per_day=per_day,
                categories=tuple(c.code for cc in r.category or () for c in _codes(cc)),
                status_reason=_cc_text(r.statusReason),
                course=course,
                starts=starts,
                ends=ends,
                prior=self._link(
                    entry.ref, "MedicationRequest.priorPrescription", r.priorPrescription
                ),
                encounter=self._link(entry.ref, "MedicationRequest.encounter", r.encounter),
                reasons=tuple(
                    x
                    for k, ref in enumerate(r.reasonReference or ())
                    if (x := self._link(entry.ref, f"MedicationRequest.reasonReference[{k}]", ref))
                ),
                note=" ".join(str(n.text) for n in r.note or () if n.text),
            )
        )

    def _link(self, ref: str, path: str, reference: Any) -> str:
        """The ``Type/id`` a reference resolves to in the bundle; "" (listed as unusable) when it
        names nothing there, since a link to an unknown resource cannot be followed."""
        if reference is None or not reference.reference:
            return ""
        hit = self.parsed.resolve(reference.reference)
        if hit is None or not hit.ref:
            self.unused.append(UnusedFact(ref, path, "reference does not resolve in the bundle"))
            return ""
        return hit.ref

    def _course(
        self,
        ref: str,
        r: Any,
        dosage: Any,
        course: str,
        dose: tuple[float | None, str, float | None],
    ) -> tuple[date | None, date | None]:
        """(first day, last day) of a time-limited course: the dosage's ``boundsPeriod``, else,
        for a short (acute) course only, the days its dispensed supply lasts from its start
        (``expectedSupplyDuration``, or the quantity over the daily dose in the same unit). A
        continuous medicine's dispense is a refill interval, not an end. The last day may lie
        after the request (a course still running), so it is checked only against the first."""
        where = "MedicationRequest.dosageInstruction[0].timing.repeat.boundsPeriod"
        rep = dosage.timing.repeat if dosage is not None and dosage.timing is not None else None
        bounds = rep.boundsPeriod if rep is not None else None
        start = to_date(bounds.start) if bounds is not None else None
        end = to_date(bounds.end) if bounds is not None else None
        if start is not None and end is not None and end < start:
            self.unused.append(UnusedFact(ref, f"{where}.end", "the course ends before it starts"))
            end = None
        if end is not None or course != "acute" or r.dispenseRequest is None:
            return start, end
        first = start or to_date(r.authoredOn)
        days = self._supply_days(ref, r.dispenseRequest, dose)
        if first is None or days is None:
            return start, None
        return start or first, first + timedelta(days=max(1, round(days)) - 1)

    def _supply_days(
        self, ref: str, dispense: Any, dose: tuple[float | None, str, float | None]
    ) -> float | None:
        path = "MedicationRequest.dispenseRequest"
        duration = dispense.expectedSupplyDuration
        if duration is not None and duration.value is not None:
            unit = str(duration.code or duration.unit or "").lower()
            factor = _SUPPLY_DAYS.get(unit)
            if factor is None or duration.value <= 0:
                why = f"supply duration {_fmt(duration.value)} {unit} is not a positive time"
                self.unused.append(UnusedFact(ref, f"{path}.expectedSupplyDuration", why))
                return None
            return float(duration.value) * factor
        qty = dispense.quantity
        value, unit, per_day = dose
        if qty is None or qty.value is None or value is None or not per_day:
            return None
        if str(qty.code or qty.unit or "").strip("{}").lower() != unit.strip("{}").lower():
            return None  # a pack size in another unit than the dose says nothing of its days
        return float(qty.value) / (value * per_day)

    def observation(self, entry: ParsedEntry, order: int) -> None:
        r: Any = entry.resource
        if r.status in _SKIPPED_STATUS or r.status == "cancelled":
            return
        eff_v = (
            r.effectiveDateTime
            or r.effectiveInstant
            or (r.effectivePeriod.end or r.effectivePeriod.start if r.effectivePeriod else None)
        )
        if eff_v is not None:  # issued is checked, but dates the result only when nothing else
            self._date(entry.ref, "Observation.issued", r.issued, dates_record=False)
        path = "Observation.effective[x]" if eff_v is not None else "Observation.issued"
        eff_v = eff_v or r.issued
        effective = self._date(entry.ref, path, eff_v)
        if effective is None and to_date(eff_v) is not None:
            return  # an impossible date: a result at an unknown time is not a fact
        loinc, recognised = self._loinc(entry.ref, "Observation.code", r.code)
        value, unit, text = _value(r)
        setting = _setting(r)
        if value is not None or text:
            self._keep_obs(
                Observation(
                    entry.ref,
                    loinc,
                    _cc_text(r.code),
                    value,
                    unit,
                    effective,
                    text,
                    recognised,
                    _codes(r.valueCodeableConcept),
                    tuple(c for cc in r.interpretation or () for c in _codes(cc)),
                    " ".join(str(n.text).strip() for n in r.note or () if n.text),
                    self._based_on(entry.ref, r.basedOn),
                    setting=setting,
                    **_reference_range(r),
                ),
                order,
            )
        # Components become observations of their own (systolic and diastolic of a BP panel).
        for k, comp in enumerate(r.component or ()):
            c_loinc, c_ok = self._loinc(entry.ref, f"Observation.component[{k}].code", comp.code)
            c_value, c_unit, c_text = _value(comp)
            if c_value is None and not c_text:
                continue
            self._keep_obs(
                Observation(
                    entry.ref,
                    c_loinc,
                    _cc_text(comp.code),
                    c_value,
                    c_unit,
                    effective,
                    c_text,
                    c_ok and recognised,
                    setting=setting,
                ),
                order,
            )

    def _based_on(self, ref: str, references: Any) -> tuple[str, ...]:
        """The orders an Observation answers (``basedOn`` that resolve in the bundle)."""
        out = (
            self._link(ref, f"Observation.basedOn[{k}]", x) for k, x in enumerate(references or ())
        )
        return tuple(dict.fromkeys(x for x in out if x))

    def _loinc(self, ref: str, path: str, cc: r4.CodeableConcept | None) -> tuple[str, bool]:
        """The LOINC code of ``cc`` ("" if none) and whether it is usable."""
        candidates = [
            str(c.code)
            for c in (cc.coding or () if cc else ())
            if c.code and canonical_system(c.system) == LOINC
        ]
        ok = _recognise(ref, path, cc, frozenset({LOINC}), self.unused)
        good = [c for c in candidates if code_problem(LOINC, c) is None]
        if good:
            return good[0], True
        return (candidates[0] if candidates else ""), ok and bool(candidates)

    def _keep_obs(self, obs: Observation, order: int) -> None:
        if obs.value is not None and obs.recognised:
            problem = implausible(obs.loinc, obs.value, obs.unit)
            if problem is not None:
                self.unused.append(UnusedFact(obs.ref, f"Observation[{obs.loinc}].value", problem))
                return
            self.readings.append((obs.effective or date.min, order, obs))
        # Latest per LOINC code; ties (Synthea repeats results on one date) go to the later entry.
        # Observations without a LOINC code are kept one per resource.
        key = obs.loinc if obs.loinc and obs.recognised else f"{obs.ref}#{obs.loinc}#{obs.display}"
        rank = (obs.effective or date.min, order)
        prev = self.observations.get(key)
        if prev is None or rank > prev[0]:
            self.observations[key] = (rank, obs)

    def allergy(self, entry: ParsedEntry) -> None:
        r: Any = entry.resource
        verification = _status(r.verificationStatus)
        if verification == "entered-in-error":
            return
        self._date(entry.ref, "AllergyIntolerance.recordedDate", r.recordedDate)
        self._date(entry.ref, "AllergyIntolerance.onset[x]", r.onsetDateTime)
        self._date(entry.ref, "AllergyIntolerance.lastOccurrence", r.lastOccurrence)
        recognised = _recognise(
            entry.ref, "AllergyIntolerance.code", r.code, _ALLERGY_SYSTEMS, self.unused
        )
        self.allergies.append(
            Allergy(
                ref=entry.ref,
                substance=_cc_text(r.code),
                codes=_codes(r.code),
                criticality=str(r.criticality or ""),
                clinical_status=_status(r.clinicalStatus),
                verification=verification,
                recognised=recognised,
            )
        )

    def encounter(self, entry: ParsedEntry) -> None:
        r: Any = entry.resource
        if r.status in _SKIPPED_STATUS:
            return
        if r.status == PLANNED_ENCOUNTER:  # a plan, not a contact that took place
            self.bookings.append(planned_encounter(entry))
            return
        start_v = r.period.start if r.period else None
        end_v = r.period.end if r.period else None
        start = self._date(entry.ref, "Encounter.period.start", start_v)
        end = self._date(entry.ref, "Encounter.period.end", end_v)
        kind = ""
        for t in r.type or ():
            kind = _cc_text(t)
            if kind:
                break
        class_code = str(r.class_fhir.code or "") if r.class_fhir is not None else ""
        if not kind and r.class_fhir is not None:
            kind = str(r.class_fhir.display or class_code)
        types = tuple(c for t in r.type or () for c in _codes(t))
        reasons = tuple(c for rc in r.reasonCode or () for c in _codes(rc))
        reason_text = next((t for rc in r.reasonCode or () if (t := _cc_text(rc))), "")
        reason_refs: list[str] = []
        for ref in r.reasonReference or ():
            hit = self.parsed.resolve(ref.reference)
            if hit is not None and hit.ref:
                reason_refs.append(hit.ref)
        hosp = r.hospitalization
        discharge = _first_code(hosp.dischargeDisposition) if hosp is not None else ""
        disposition = _cc_text(hosp.dischargeDisposition) if hosp is not None else ""
        diagnoses: list[tuple[int, int, str]] = []
        for k, dx in enumerate(r.diagnosis or ()):
            target = self._link(entry.ref, f"Encounter.diagnosis[{k}].condition", dx.condition)
            if target:
                diagnoses.append((dx.rank or 10**6, k, target))
        self.encounters.append(
            Encounter(
                entry.ref,
                kind,
                start,
                end,
                class_code=class_code,
                types=types,
                reasons=reasons,
                reason_text=reason_text,
                reason_refs=tuple(reason_refs),
                discharge=discharge,
                diagnoses=tuple(t for _, _, t in sorted(diagnoses)),
                discharge_text=disposition,
            )
        )

    def immunization(self, entry: ParsedEntry) -> None:
        """A vaccine given (or recorded as not given). Recognised when it carries a well-formed
        CVX code, or a SNOMED CT code; the date is ``occurrenceDateTime`` (a free-text
        ``occurrenceString`` is kept undated and reported)."""
        r: Any = entry.resource
        if r.status == "entered-in-error":
            return
        occurred = self._date(entry.ref, "Immunization.occurrence[x]", r.occurrenceDateTime)
        if occurred is None and to_date(r.occurrenceDateTime) is None:
            why = "date given only as text" if r.occurrenceString else "no date"
            self.unused.append(UnusedFact(entry.ref, "Immunization.occurrence[x]", why))
        codes: list[Code] = []
        recognised = False
        for i, c in enumerate(r.vaccineCode.coding or ()):
            if not c.code:
                continue
            raw = str(c.system or "")
            system = CVX if raw in _CVX_ALIASES else canonical_system(raw)
            code = str(c.code)
            codes.append(Code(system, code, str(c.display or "")))
            where = f"Immunization.vaccineCode.coding[{i}]"
            if system == CVX:
                if _CVX_CODE.match(code):
                    recognised = True
                else:
                    self.unused.append(UnusedFact(entry.ref, where, f"{code!r}: not a CVX code"))
            elif system == SNOMED and code_problem(SNOMED, code) is None:
                recognised = True
        if not recognised:
            self.unused.append(
                UnusedFact(entry.ref, "Immunization.vaccineCode", "no usable CVX or SNOMED CT code")
            )
        self.immunizations.append(
            Immunization(
                ref=entry.ref,
                text=_cc_text(r.vaccineCode),
                codes=tuple(codes),
                status=str(r.status or ""),
                occurred=occurred,
                recognised=recognised,
            )
        )


def _dosage(dosage: Any) -> tuple[str, str, str]:
    dose = ""
    for dr in dosage.doseAndRate or ():
        if dr.doseQuantity is not None:
            dose = _quantity_text(dr.doseQuantity)
        elif dr.doseRange is not None:
            low, high = _quantity_text(dr.doseRange.low), _quantity_text(dr.doseRange.high)
            dose = f"{low} to {high}".strip(" to")
        if dose:
            break
    frequency = ""
    timing = dosage.timing
    rep = timing.repeat if timing is not None else None
    if rep is not None and rep.frequency is not None and rep.period is not None:
        frequency = f"{rep.frequency} per {_fmt(rep.period)} {rep.periodUnit or ''}".strip()
    elif timing is not None and timing.code is not None:
        frequency = _cc_text(timing.code)
    if dosage.asNeededBoolean or dosage.asNeededCodeableConcept is not None:
        frequency = f"{frequency}, as needed" if frequency else "as needed"
    if not dose and not frequency and dosage.text:
        dose = str(dosage.text)
    route = _cc_text(dosage.route)
    return dose, frequency, route


# UCUM time units of a dispensed supply's expected duration, in days.
_SUPPLY_DAYS: Final = {"d": 1.0, "day": 1.0, "days": 1.0, "wk": 7.0, "week": 7.0, "weeks": 7.0}

_PER_DAY = {"s": 86_400.0, "min": 1_440.0, "h": 24.0, "d": 1.0, "wk": 1 / 7, "mo": 1 / 30}


def _typed_dose(dosage: Any) -> tuple[float | None, str, float | None]:
    """(dose per administration, its unit, administrations per day) where the record states them
    as data; never guessed from free text."""
    value: float | None = None
    unit = ""
    for dr in dosage.doseAndRate or ():
        q = dr.doseQuantity
        if q is not None and q.value is not None:
            value, unit = float(q.value), str(q.unit or q.code or "")
            break
    per_day: float | None = None
    rep = dosage.timing.repeat if dosage.timing is not None else None
    if rep is not None and rep.frequency and rep.period and rep.periodUnit in _PER_DAY:
        per_day = float(rep.frequency) / float(rep.period) * _PER_DAY[str(rep.periodUnit)]
    return _with_text_dose(dosage, value, unit, per_day)


def _with_text_dose(
    dosage: Any, value: float | None, unit: str, per_day: float | None
) -> tuple[float | None, str, float | None]:
    """The typed dose completed from ``dosageInstruction.text`` where the whole text reads as
    one dose (``read_dose``) and agrees with every part the data states; where they disagree, or
    the dose is taken as needed, the data alone."""
    said = read_dose(str(dosage.text)) if dosage.text else None
    if said is None or dosage.asNeededBoolean or dosage.asNeededCodeableConcept is not None:
        return value, unit, per_day
    same_dose = value is None or (value == said.value and unit.strip().lower() == said.unit)
    same_times = per_day is None or math.isclose(per_day, said.per_day)
    if not (same_dose and same_times):
        return value, unit, per_day
    if value is None:
        value, unit = said.value, said.unit
    return value, unit, said.per_day if per_day is None else per_day


# LOINC 8361-8: body position with respect to gravity (a blood pressure panel's component).
_BODY_POSITION = "8361-8"


def _setting(r: Any) -> str:
    """How an Observation was taken, in its own words: method, body site, a body-position
    component, notes (lower case, "" when it says nothing). Compared, never shown."""
    parts = [_cc_text(r.method), _cc_text(r.bodySite)]
    for comp in r.component or ():
        if any(c.code == _BODY_POSITION for c in ((comp.code and comp.code.coding) or ())):
            parts.append(_value(comp)[2])
    parts += [str(n.text) for n in r.note or () if n.text]
    return "; ".join(p.strip().lower() for p in parts if p and p.strip())


def _reference_range(r: Any) -> dict[str, Any]:
    """The first ``referenceRange`` with a numeric bound, as the Observation's ``range_low``,
    ``range_high`` and ``range_unit`` (empty where none has one). A range for a sub-population
    (``appliesTo``, ``age``) is the laboratory's choice for this patient and is read as sent."""
    for rr in r.referenceRange or ():
        low, high = rr.low, rr.high
        lo = _num(low.value) if low is not None else None
        hi = _num(high.value) if high is not None else None
        if lo is None and hi is None:
            continue
        bound = low if lo is not None else high
        return {
            "range_low": lo,
            "range_high": hi,
            "range_unit": str(bound.unit or bound.code or ""),
        }
    return {}


def _value(r: Any) -> tuple[float | None, str, str]:
    """(numeric value, unit, text value) of an Observation or component."""
    q = r.valueQuantity
    if q is not None:
        return _num(q.value), str(q.unit or q.code or ""), ""
    if r.valueCodeableConcept is not None:
        return None, "", _cc_text(r.valueCodeableConcept)
    if r.valueInteger is not None:
        return float(r.valueInteger), "", ""
    if r.valueString:
        return None, "", str(r.valueString)
    if getattr(r, "valueDateTime", None) is not None:  # a last menstrual period, a due date
        return None, "", str(r.valueDateTime)
    if r.valueBoolean is not None:
        return None, "", "true" if r.valueBoolean else "false"
    return None, "", ""


def _patient(entry: ParsedEntry) -> tuple[str, date | None]:
    p: Any = entry.resource
    return str(p.gender or "unknown"), to_date(p.birthDate)


def _patient_name(entry: ParsedEntry) -> str:
    """The name a clinician calls the patient by: the official (else usual, else first) name,
    its text where the source wrote one, else given names then family."""
    names: list[Any] = list(getattr(entry.resource, "name", None) or [])
    if not names:
        return ""
    rank = {"official": 0, "usual": 1}
    n = min(names, key=lambda x: rank.get(str(x.use or ""), 2))
    if n.text:
        return str(n.text).strip()
    return " ".join([*(str(g) for g in n.given or ()), str(n.family or "")]).strip()


def _sorted_obs(items: Iterable[tuple[tuple[date, int], Observation]]) -> tuple[Observation, ...]:
    return tuple(o for _, o in sorted(items, key=lambda t: (t[1].loinc, t[1].ref, t[0])))


def _procedure_of(b: _Builder, e: ParsedEntry) -> None:
    planned = procedure_in_preparation(e)
    if planned is not None:
        b.bookings.append(planned)


def _statement_of(b: _Builder, e: ParsedEntry) -> None:
    said = _statement(b, e)
    if said is None:
        return
    dosage: Any = (e.resource.dosage or [None])[0]  # type: ignore[attr-defined]
    if dosage is not None:
        dose, frequency, route = _dosage(dosage)
        value, unit, per_day = _typed_dose(dosage)
        said = replace(
            said,
            dose=dose,
            frequency=frequency,
            route=route,
            dose_value=value,
            dose_unit=unit,
            times_per_day=per_day,
        )
    b.statements.append(said)


# The resources the profile reads: the element that names the patient, and the reader (the
# entry's position is the order of an Observation among its like).
_Reader = Callable[["_Builder", ParsedEntry, int], None]
_READERS: Final[dict[str, tuple[str, _Reader]]] = {
    "Condition": ("subject", lambda b, e, _: b.condition(e)),
    "MedicationRequest": ("subject", lambda b, e, _: b.medication_request(e)),
    "Observation": ("subject", lambda b, e, order: b.observation(e, order)),
    "AllergyIntolerance": ("patient", lambda b, e, _: b.allergy(e)),
    "Encounter": ("subject", lambda b, e, _: b.encounter(e)),
    "Immunization": ("patient", lambda b, e, _: b.immunization(e)),
    "DiagnosticReport": ("subject", lambda b, e, _: _reports_and_orders(b, e)),
    "ServiceRequest": ("subject", lambda b, e, _: _reports_and_orders(b, e)),
    "MedicationStatement": ("subject", lambda b, e, _: _statement_of(b, e)),
    "Procedure": ("subject", lambda b, e, _: _procedure_of(b, e)),
}


def build(
    parsed: ParsedBundle,
    received: datetime | None = None,
    clock_skew: timedelta = timedelta(days=1),
) -> PatientProfile:
    """The profile of ``parsed`` for a request received at ``received`` (None: dates are checked
    against each other only, not against the time of the request)."""
    window = DateWindow.of(received, clock_skew)
    b = _Builder(parsed, window)
    for order, e in enumerate(parsed.entries):
        checkpoint()
        reader = _READERS.get(e.resource_type)
        if reader is not None and b._is_patients(e, reader[0]):
            reader[1](b, e, order)
    sex, birth = _patient(parsed.patient)
    if birth is not None:
        why = window.birth(birth, _record_day(parsed, b.dates, window.received))
        if why is not None:
            b.unused.insert(0, UnusedFact(parsed.patient.ref, "Patient.birthDate", why))
            birth = None
    earliest = window.earliest(birth)
    if earliest is not None:
        b.drop_before(earliest, birth)
    problems = _fold_duplicates(b.problems)
    as_of = _as_of(parsed, b.dates, window.received)
    return PatientProfile(
        ref=parsed.patient.ref,
        sex=sex,
        birth_date=birth,
        as_of=as_of,
        problems=problems,
        medications=tuple(b.medications),
        observations=_sorted_obs(b.observations.values()),
        allergies=tuple(b.allergies),
        encounters=tuple(b.encounters),
        social=tuple(b.social),
        unused=tuple(b.unused),
        readings=tuple(o for _, _, o in sorted(b.readings, key=lambda t: (t[0], t[1]))),
        source_refs=_source_refs(parsed.entries),
        sources=_sources(parsed.entries),
        immunizations=tuple(sorted(b.immunizations, key=lambda i: (i.occurred or date.min, i.ref))),
        name=_patient_name(parsed.patient),
        received=window.received,
        reports=tuple(sorted(b.reports, key=lambda r: (r.day or date.min, r.ref))),
        orders=tuple(sorted(b.orders, key=lambda o: (o.authored or date.min, o.ref))),
        statements=tuple(sorted(b.statements, key=lambda x: (x.day or date.min, x.ref))),
        bookings=tuple(sorted(b.bookings, key=lambda x: (x.day or date.max, x.ref))),
    )


def _reports_and_orders(b: _Builder, e: ParsedEntry) -> None:
    if e.resource_type == "DiagnosticReport":
        found = _report(b, e)
        if found is not None:
            b.reports.append(found)
        return
    placed = _order(b, e)
    if placed is not None:
        b.orders.append(placed)


def _fold_duplicates(problems: Sequence[Condition]) -> tuple[Condition, ...]:
    """Fold repeated records of one active coded problem into the first, earliest onset kept.

    EHR extracts repeat an ongoing diagnosis at every encounter; the panel should see it once.
    Resolved episodes stay separate (each is a dated event), and so do unrecognised ones (their
    codes say nothing reliable about sameness)."""
    keep: list[Condition] = []
    first: dict[tuple[str, str, str, str], int] = {}
    for p in problems:
        usable = [c for c in p.codes if code_problem(c.system, c.code) is None]
        if not (p.active and p.recognised and usable):
            keep.append(p)
            continue
        key = (usable[0].system, usable[0].code, p.clinical_status, p.verification)
        at = first.get(key)
        if at is None:
            first[key] = len(keep)
            keep.append(p)
            continue
        prev = keep[at]
        onsets = [d for d in (prev.onset, p.onset) if d is not None]
        keep[at] = replace(
            prev,
            onset=min(onsets) if onsets else None,
            duplicates=(*prev.duplicates, p.ref),
        )
    return tuple(keep)


def _record_day(parsed: ParsedBundle, dates: Sequence[date], received: date | None) -> date | None:
    """The latest usable date, else ``Bundle.timestamp``; never after the request's day."""
    stamp = to_date(parsed.shell.timestamp) if parsed.shell is not None else None
    latest = max(dates) if dates else stamp
    if latest is None or received is None:
        return latest
    return min(latest, received)


def _as_of(parsed: ParsedBundle, dates: Sequence[date], received: date | None) -> date:
    day = _record_day(parsed, dates, received)
    if day is not None:
        return day
    raise BundleError(
        "the record holds no dated fact to fix the profile's reference date",
        issues=(
            Issue(
                "error",
                "required",
                "no dated clinical fact and no Bundle.timestamp: cannot tell how old the record is",
                ("Bundle.timestamp",),
            ),
        ),
    )


def _source_refs(entries: Iterable[ParsedEntry]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for e in entries:
        if e.ref:
            seen.setdefault(e.ref, None)
    return tuple(seen)


def _sources(entries: Iterable[ParsedEntry]) -> tuple[SourceRecord, ...]:
    """Where each entry lives at the source: its ``fullUrl`` when that is the RESTful URL of the
    same ``Type/id``, its first identifier with a system, and its code's words as a display
    (never a patient's name)."""
    out: dict[str, SourceRecord] = {}
    for e in entries:
        if not e.ref or e.ref in out:
            continue
        url = e.full_url if e.full_url.startswith(("http://", "https://")) else ""
        if url and relative_ref(url) != e.ref:
            url = ""
        res: Any = e.resource
        ident = next(
            (
                (str(i.system), str(i.value))
                for i in (getattr(res, "identifier", None) or ())
                if getattr(i, "system", None) and getattr(i, "value", None)
            ),
            None,
        )
        out[e.ref] = SourceRecord(e.ref, url, ident, _display(res))
    return tuple(out.values())


def _display(res: Any) -> str:
    if type(res).__name__ == "Patient":
        return ""
    concept = getattr(res, "medicationCodeableConcept", None) or getattr(res, "code", None)
    if concept is None or not hasattr(concept, "coding"):
        return ""
    if concept.text:
        return str(concept.text)
    return next((str(c.display) for c in concept.coding or () if c.display), "")
