"""The patient as the reasoning sees it: a frozen, FHIR-free profile.

Built by ``fhir_mapping.ingest`` from a validated Bundle and read by the inference backends and the
pipeline. Every fact carries ``ref``, the FHIR reference (``Type/id``) of the resource it came
from: those references are the evidence trail that arguments cite and that Provenance lists.
Nothing here may import FHIR, gRPC or any I/O library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

__all__ = [
    "Allergy",
    "Code",
    "Encounter",
    "Medication",
    "Observation",
    "PatientProfile",
    "Problem",
    "SocialFact",
    "UnusedFact",
]

SNOMED = "http://snomed.info/sct"
ICD10 = "http://hl7.org/fhir/sid/icd-10-cm"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
LOINC = "http://loinc.org"


@dataclass(frozen=True, slots=True)
class Code:
    """One coding. ``system`` is the canonical URL (``SNOMED``, ``RXNORM``...) or "" if absent."""

    system: str
    code: str
    display: str = ""


@dataclass(frozen=True, slots=True)
class Problem:
    """A Condition. ``clinical_status`` e.g. active/resolved/inactive; ``verification`` e.g.
    confirmed/provisional/unconfirmed/refuted/entered-in-error ("" when absent)."""

    ref: str
    text: str
    codes: tuple[Code, ...]
    clinical_status: str
    verification: str
    onset: date | None
    abatement: date | None = None
    recognised: bool = True  # False: no code from a known system matched our knowledge

    @property
    def active(self) -> bool:
        return self.clinical_status in ("active", "recurrence", "relapse") and (
            self.verification not in ("refuted", "entered-in-error")
        )


@dataclass(frozen=True, slots=True)
class Medication:
    """A MedicationRequest. ``status`` is the FHIR status (active, stopped, completed...)."""

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

    @property
    def active(self) -> bool:
        return self.status in ("active", "on-hold", "draft")


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


@dataclass(frozen=True, slots=True)
class Allergy:
    ref: str
    substance: str
    codes: tuple[Code, ...]
    criticality: str = ""


@dataclass(frozen=True, slots=True)
class Encounter:
    ref: str
    kind: str
    start: date | None
    end: date | None = None


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
    as_of: date  # reference date for ages and recency: latest dated fact in the record
    problems: tuple[Problem, ...] = ()
    medications: tuple[Medication, ...] = ()
    observations: tuple[Observation, ...] = ()  # latest per LOINC code
    allergies: tuple[Allergy, ...] = ()
    encounters: tuple[Encounter, ...] = ()
    social: tuple[SocialFact, ...] = ()
    unused: tuple[UnusedFact, ...] = ()
    source_refs: tuple[str, ...] = field(default=())  # every resource reference in the bundle

    @property
    def age(self) -> int | None:
        if self.birth_date is None:
            return None
        b, d = self.birth_date, self.as_of
        return d.year - b.year - ((d.month, d.day) < (b.month, b.day))

    @property
    def active_problems(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.active)

    @property
    def active_medications(self) -> tuple[Medication, ...]:
        return tuple(m for m in self.medications if m.active)

    def latest(self, loinc: str) -> Observation | None:
        for o in self.observations:
            if o.loinc == loinc:
                return o
        return None


Sex = Literal["male", "female", "other", "unknown"]
