"""The patient record: a frozen, FHIR-free profile of one patient.

Built by ``fhir_mapping.ingest`` from a validated Bundle and read by the inference backends, the
pipeline and the plan's text; the code systems and LOINC groups it is read with are in
``service.record.vocabulary``. Every fact carries ``ref``, the FHIR reference (``Type/id``) of
the resource it came from: those references are the evidence trail that arguments cite and that
Provenance lists.
Nothing here may import FHIR, gRPC or any I/O library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from service.core.model import SourceRecord
from service.record.vocabulary import CVX

__all__ = [
    "MAX_AGE_YEARS",
    "REPORT_RELEASED",
    "Allergy",
    "Booking",
    "Code",
    "Condition",
    "Encounter",
    "Immunization",
    "Medication",
    "MedicationStatement",
    "Observation",
    "Order",
    "PatientProfile",
    "Report",
    "SocialFact",
    "UnusedFact",
    "years_between",
]


# The oldest age a record may imply. The oldest verified human lived to 122; a birth date that
# makes someone older than this is a recording error, not an age, and no fact is computed from it.
MAX_AGE_YEARS = 120


@dataclass(frozen=True, slots=True)
class Code:
    """One coding. ``system`` is the canonical URL (``SNOMED``, ``RXNORM``...) or "" if absent."""

    system: str
    code: str
    display: str = ""


@dataclass(frozen=True, slots=True)
class Condition:
    """A Condition in the record (not a ``service.core.model.Problem``, which is a problem the
    plan addresses). ``clinical_status`` e.g. active/resolved/inactive; ``verification`` e.g.
    confirmed/provisional/unconfirmed/refuted/entered-in-error ("" when absent)."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    clinical_status: str
    verification: str
    onset: date | None
    abatement: date | None = None
    recognised: bool = True  # False: no code from a known system matched our knowledge
    # Other Conditions recording the same active coded problem (same code, same statuses), folded
    # into this one; ``onset`` is the earliest of them.
    duplicates: tuple[str, ...] = ()
    recorded: date | None = None  # ``recordedDate``: when the record first said it

    @property
    def active(self) -> bool:
        return self.clinical_status in ("active", "recurrence", "relapse") and (
            self.verification not in ("refuted", "entered-in-error")
        )


@dataclass(frozen=True, slots=True)
class Medication:
    """A MedicationRequest, or a medicine a MedicationStatement records as taken that no active
    request prescribes (``taken`` non-empty: how the record says it is taken, ``ref`` the
    statement's; built by ``inference.knowledge.taken``). ``status`` is the FHIR status
    (active, stopped, completed...)."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    status: str
    intent: str
    authored: date | None
    dose: str = ""  # human-readable dose, e.g. "5 mg"
    frequency: str = ""  # human-readable timing, e.g. "2 per 1 d"
    route: str = ""
    recognised: bool = True
    # Typed dose, parsed from dosageInstruction.doseAndRate, else from its text where the whole
    # text reads as one dose (``service.record.dose_text``; None when stated in neither):
    # ``dose_value`` ``dose_unit`` per administration, ``times_per_day`` from timing.repeat.
    dose_value: float | None = None
    dose_unit: str = ""
    times_per_day: float | None = None
    # Around a hospital stay: the list it belongs to (``category`` codes: inpatient, discharge,
    # community, outpatient), why it was stopped or held (``statusReason`` text), the course
    # (``courseOfTherapyType`` code: acute, continuous, seasonal), the first and last day of a
    # course (``boundsPeriod``, or the last day a dispensed supply lasts), the request a dose
    # change replaces (``priorPrescription``) and the Encounter it was written in.
    categories: tuple[str, ...] = ()
    status_reason: str = ""
    course: str = ""
    starts: date | None = None
    ends: date | None = None
    prior: str = ""
    encounter: str = ""
    # The Conditions it was ordered for (``reasonReference`` that resolve in the bundle).
    reasons: tuple[str, ...] = ()
    note: str = ""  # the request's notes (``note[].text``), as written
    # "" for a prescription; for a medicine recorded as taken, not prescribed here, how the
    # record says it is taken (``inference.knowledge.taken.ORIGINS``: over the counter, by the
    # patient's own account, or only recorded).
    taken: str = ""

    @property
    def active(self) -> bool:
        # "intended": a MedicationStatement's status (a medicine recorded as to be taken).
        return self.status in ("active", "on-hold", "draft", "intended")


@dataclass(frozen=True, slots=True)
class MedicationStatement:
    """A MedicationStatement: what the patient (or someone for them) says about taking a
    medicine. ``status`` is the FHIR status (active, not-taken, stopped, on-hold...); ``day``
    the day it speaks for (``effective[x]``, else ``dateAsserted``); ``reason`` the words of its
    ``statusReason`` and notes, as written. How it was recorded: ``categories`` (the
    category's codes and text, lower case), ``informant`` (the resource type of its
    ``informationSource``: Patient, RelatedPerson, Practitioner...); and the dose as stated in
    its first ``dosage``, read like a request's."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    status: str
    day: date | None = None
    reason: str = ""
    categories: tuple[str, ...] = ()
    informant: str = ""
    dose: str = ""
    frequency: str = ""
    route: str = ""
    dose_value: float | None = None
    dose_unit: str = ""
    times_per_day: float | None = None


@dataclass(frozen=True, slots=True)
class Observation:
    """The latest value of one LOINC-coded lab or vital (components flattened: systolic and
    diastolic blood pressure become two observations sharing ``ref``)."""

    ref: str
    loinc: str
    display: str
    value: float | None
    unit: str
    effective: date | None
    value_text: str = ""
    recognised: bool = True  # False: the LOINC code is malformed or there is no LOINC coding
    # The codings of a coded value (valueCodeableConcept), e.g. the SNOMED CT smoking status
    # of a LOINC 72166-2 observation; ``value_text`` is its text.
    value_codes: tuple[Code, ...] = ()
    # The laboratory's flags (``interpretation``: H, L, HH, A ...), its notes' text, and the
    # orders (ServiceRequest references) it answers (``basedOn``).
    interpretation: tuple[Code, ...] = ()
    note: str = ""
    based_on: tuple[str, ...] = ()
    # How the reading was taken, in the record's words (body position, method, body site,
    # notes; lower case): two readings taken differently are not two tries at one value.
    setting: str = ""
    # The laboratory's own reference range sent with the result (``referenceRange``: its first
    # range with a bound), in ``range_unit``; None where it states no such bound.
    range_low: float | None = None
    range_high: float | None = None
    range_unit: str = ""


# DiagnosticReport statuses of a report whose result is released (no longer preliminary).
REPORT_RELEASED = ("final", "amended", "corrected", "appended")


@dataclass(frozen=True, slots=True)
class Report:
    """A DiagnosticReport: what was examined (``text``, ``codes``), its ``status``, the day of
    the examination (``effective``) and of release (``issued``), the reporter's conclusion as
    written (never rewritten: it is quoted) and coded, and the orders it answers (``based_on``,
    ServiceRequest references)."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    status: str
    issued: date | None
    effective: date | None = None
    conclusion: str = ""
    conclusion_codes: tuple[Code, ...] = ()
    based_on: tuple[str, ...] = ()

    @property
    def released(self) -> bool:
        return self.status in REPORT_RELEASED

    @property
    def day(self) -> date | None:
        """The day the report was released, else the day of the examination."""
        return self.issued or self.effective


@dataclass(frozen=True, slots=True)
class Order:
    """A ServiceRequest: the test or procedure asked for (``text``, ``codes``), its ``status``
    (active, completed, revoked...) and ``intent`` (order, plan, proposal...), the day it was
    written (``authored``) and the day it is due (``occurrence[x]``: the date, or a period's
    end), its category codes and the resources it names as its reason or support."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    status: str
    intent: str
    authored: date | None
    due: date | None = None
    categories: tuple[Code, ...] = ()
    reasons: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.status == "active"


@dataclass(frozen=True, slots=True)
class Booking:
    """Something the record plans for a later day that is not a ServiceRequest: an Encounter
    with status planned, or a Procedure in preparation. ``text`` and ``codes`` are the
    Encounter's type and reason, or the Procedure's code; ``categories`` the Procedure's
    category; ``day`` the planned start (it may lie after the request: it is a plan)."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    status: str
    day: date | None
    categories: tuple[Code, ...] = ()


@dataclass(frozen=True, slots=True)
class Allergy:
    ref: str
    substance: str
    codes: tuple[Code, ...]
    criticality: str = ""
    clinical_status: str = ""  # active / inactive / resolved ("" when absent)
    verification: str = ""  # confirmed / unconfirmed / refuted / entered-in-error ("" when absent)
    recognised: bool = True


@dataclass(frozen=True, slots=True)
class Encounter:
    """A contact with care. ``kind`` is the first type's text (else the class); ``class_code``
    the v3 ActCode (AMB, EMER, IMP, ACUTE, OBSENC...); ``types`` and ``reasons`` the coded type
    and reason (``reason_refs``: Conditions named as the reason); ``discharge`` the coded
    discharge disposition's code ("" when absent)."""

    ref: str
    kind: str
    start: date | None
    end: date | None = None
    class_code: str = ""
    types: tuple[Code, ...] = ()
    reasons: tuple[Code, ...] = ()
    reason_text: str = ""
    reason_refs: tuple[str, ...] = ()
    discharge: str = ""
    # Conditions named in ``Encounter.diagnosis`` (admission and discharge diagnoses), by rank.
    diagnoses: tuple[str, ...] = ()
    discharge_text: str = ""  # the disposition's text or display

    @property
    def emergency_or_inpatient(self) -> bool:
        """An emergency visit or a hospital stay (v3 ActCode classes)."""
        return self.class_code in ("EMER", "IMP", "ACUTE", "NONAC", "OBSENC", "SS")


@dataclass(frozen=True, slots=True)
class Immunization:
    """An Immunization. ``codes`` carry the vaccine (CVX where coded); ``status`` is the FHIR
    status (completed, not-done); ``occurred`` the date it was given (None when unknown)."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    status: str
    occurred: date | None
    recognised: bool = True  # False: no well-formed CVX (or SNOMED) code

    @property
    def given(self) -> bool:
        return self.status == "completed"

    def cvx(self) -> tuple[str, ...]:
        return tuple(c.code for c in self.codes if c.system == CVX)


@dataclass(frozen=True, slots=True)
class SocialFact:
    """A functional or psychosocial fact (lives alone, caregiver, falls, SDOH findings...).
    ``kind`` is a short machine key such as ``lives_alone``, ``fall_history``, ``sdoh``."""

    ref: str
    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class UnusedFact:
    """A fact the profile could not use (unknown code system, free text only...). Surfaced in
    the plan so a reviewer sees what the panel did not consider."""

    ref: str
    field: str  # FHIRPath-like location, e.g. "Condition.code"
    reason: str


@dataclass(frozen=True, slots=True)
class PatientProfile:
    ref: str  # "Patient/<id>"
    sex: str  # FHIR administrative gender
    birth_date: date | None
    # Reference date for ages and recency: the latest usable dated fact in the record, never
    # after the time of the request.
    as_of: date
    problems: tuple[Condition, ...] = ()
    medications: tuple[Medication, ...] = ()
    observations: tuple[Observation, ...] = ()  # latest per LOINC code
    allergies: tuple[Allergy, ...] = ()
    encounters: tuple[Encounter, ...] = ()
    social: tuple[SocialFact, ...] = ()
    unused: tuple[UnusedFact, ...] = ()
    # Every plausible numeric reading, oldest first (``observations`` keeps only the latest per
    # LOINC): blood-pressure series, repeated kidney function, same-day conflicts.
    readings: tuple[Observation, ...] = ()
    source_refs: tuple[str, ...] = field(default=())  # every resource reference in the bundle
    immunizations: tuple[Immunization, ...] = ()  # given, not given, dated or not
    # Where each resource lives in the system that sent it (absolute URL, identifier, display).
    sources: tuple[SourceRecord, ...] = ()
    # The patient's name as the record gives it, for the clinician's heading only (never logged).
    name: str = field(default="", repr=False)
    # The day the plan is made (the request's day); None when the caller gave no time, and
    # then ``as_of`` stands in. Intervals a sentence states about "now" are counted to it.
    received: date | None = None
    reports: tuple[Report, ...] = ()  # DiagnosticReports, oldest first
    orders: tuple[Order, ...] = ()  # ServiceRequests, oldest first
    statements: tuple[MedicationStatement, ...] = ()  # MedicationStatements, oldest first
    bookings: tuple[Booking, ...] = ()  # planned Encounters and Procedures, soonest first

    @property
    def plan_day(self) -> date:
        """The day the plan is made: the request's day, else the record's reference date."""
        return self.received or self.as_of

    @property
    def age(self) -> int | None:
        """Whole years on the plan day (``plan_day``: every view states the age the patient
        is when the plan is made, however old the record); None when unknown or impossible
        (born after that day, or older than ``MAX_AGE_YEARS``), so no fact is ever computed
        from an impossible age."""
        if self.birth_date is None:
            return None
        age = years_between(self.birth_date, self.plan_day)
        return age if 0 <= age <= MAX_AGE_YEARS else None

    @property
    def active_problems(self) -> tuple[Condition, ...]:
        return tuple(p for p in self.problems if p.active)

    @property
    def active_medications(self) -> tuple[Medication, ...]:
        return tuple(m for m in self.medications if m.active)

    def latest(self, loinc: str) -> Observation | None:
        for o in self.observations:
            if o.loinc == loinc:
                return o
        return None

    def latest_of(self, loincs: tuple[str, ...]) -> Observation | None:
        """The most recent observation among several LOINC codes for one quantity (e.g.
        ``LOINC_GROUPS["egfr"]``); ties go to the code listed first."""
        best: Observation | None = None
        for code in loincs:
            o = self.latest(code)
            if o is not None and (
                best is None or (o.effective or date.min) > (best.effective or date.min)
            ):
                best = o
        return best

    def series(self, loincs: tuple[str, ...]) -> tuple[Observation, ...]:
        """Every plausible numeric reading of one quantity, oldest first."""
        return tuple(o for o in self.readings if o.loinc in loincs and o.value is not None)


def years_between(start: date, end: date) -> int:
    """Whole years from ``start`` to ``end`` (negative when ``end`` comes first).

    >>> born = date(1950, 6, 1)
    >>> years_between(born, date(2026, 5, 31)), years_between(born, date(2026, 6, 1))
    (75, 76)
    """
    return end.year - start.year - ((end.month, end.day) < (start.month, start.day))


Sex = Literal["male", "female", "other", "unknown"]
