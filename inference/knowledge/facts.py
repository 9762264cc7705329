"""Typed patient facts the criteria read: what is true of this patient, and how sure we are.

Built once per profile from ``service.record.profile.PatientProfile``: medicines with their parsed
daily dose and the date of the first order of the same ingredient; kidney function from the
reported eGFR *and* from creatinine (CKD-EPI 2021, Cockcroft-Gault where weight is known), the
lower governing dosing; lab-defined CKD; blood pressure from every reading; same-day conflicting
results (repeat before acting). Every number an argument may state is a field here.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from datetime import date
from operator import attrgetter
from typing import Final

from service.record.profile import (
    MAX_AGE_YEARS,
    Code,
    Condition,
    Encounter,
    Immunization,
    Medication,
    Observation,
    PatientProfile,
    years_between,
)
from service.record.vocabulary import LOINC, LOINC_GROUPS, SNOMED
from service.work import checkpoint

from .conditions import GROUPS_BY_KEY, classify
from .drugs import drug, identify, matches, strength_mg
from .parameters import param, param_int
from .pregnancy import Lactation, Pregnancy, lactation_of, pregnancy_of
from .transitions import MedChange, Stay, changes_of, index_stay, stay_values
from .units import (
    CREATININE_UMOL_L_PER_MG_DL,
    DAYS_PER_WHOLE_MONTH,
    DAYS_PER_YEAR,
    HBA1C_NGSP_PERCENT_AT_ZERO_IFCC,
    HBA1C_NGSP_PERCENT_PER_IFCC_MMOL_MOL,
    HBA1C_PERCENT_DECIMALS,
    MAX_DAYS_PER_YEAR,
    MG_PER_G,
    MG_PER_MCG,
    TWO_DECIMALS_BELOW,
    WHOLE_NUMBERS_FROM,
)

__all__ = [
    "AcuteKidneyInjury",
    "BloodPressure",
    "Conflict",
    "Event",
    "Facts",
    "Kidney",
    "MedFact",
    "Smoking",
    "StrokeScore",
    "Unsteady",
    "age_phrase",
    "ckd_epi_2021",
    "cockcroft_gault",
    "fmt",
    "hba1c_percent",
    "setting_of",
    "without_tag",
]

_STRENGTH = re.compile(
    r"(\d+(?:\.\d+)?)\s*(mg|mcg|micrograms?|milligrams?|grams?|µg|μg|ug|g)\b", re.I
)
# The KDIGO eGFR categories' lower edges (G1 to G4), where doses change (``_disagree``).
_KDIGO_EDGES = (
    "kidney.kdigo_g1_from_ml_min",
    "kidney.kdigo_g2_from_ml_min",
    "kidney.kdigo_g3a_from_ml_min",
    "kidney.kdigo_g3b_from_ml_min",
    "kidney.kdigo_g4_from_ml_min",
)
# No interval in a record is longer than a lifetime.
_MAX_DAYS = MAX_DAYS_PER_YEAR * MAX_AGE_YEARS
# Ages English speaks with a vowel sound first, so "an" goes before them: 8, 11, 18, 80 to 89.
_AN_AGE = re.compile(r"8\d?|1[18]")
_QUOTED_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# A SNOMED CT semantic tag closing a display ("Ex-smoker (finding)"), left out of texts.
_TAG = re.compile(r"\s*\((finding|situation|disorder|observable entity)\)\s*$")


def without_tag(text: str) -> str:
    """``text`` without a closing SNOMED CT semantic tag: "Hyperlipidemia (disorder)" reads
    "Hyperlipidemia"."""
    return _TAG.sub("", text)


# A dose's unit as UCUM codes it ("ug") or as a record writes it ("mcg", "microgram"), with
# the micro sign or the Greek mu, into mg.
_TO_MG = {
    "mg": 1.0,
    "milligram": 1.0,
    "milligrams": 1.0,
    "mcg": MG_PER_MCG,
    "ug": MG_PER_MCG,
    "µg": MG_PER_MCG,
    "μg": MG_PER_MCG,
    "microgram": MG_PER_MCG,
    "micrograms": MG_PER_MCG,
    "g": MG_PER_G,
    "gram": MG_PER_G,
    "grams": MG_PER_G,
}


def fmt(value: float | None) -> str:
    """How every number is rendered in text (and how the property test reads it back), never
    rounded across the precision a record states: two decimals at most below 20, one below
    1,000, whole numbers above, trailing zeros dropped; two significant digits below 1, so a
    suppressed TSH of 0.05 or a creatinine of 0.48 is not printed as 0.1 or 0.5, a creatinine
    of 1.25 not as 1.2, an eGFR of 29.6 not as 30.

    >>> [fmt(v) for v in (None, 187.64, 29.6, 20.0, 7.25, 3.0, 1.25, 0.48, 0.05, 0.0, 1234.5)]
    ['?', '187.6', '29.6', '20', '7.25', '3', '1.25', '0.48', '0.05', '0', '1234']
    """
    if value is None:
        return "?"
    if abs(value) >= WHOLE_NUMBERS_FROM:
        return f"{value:.0f}"
    if abs(value) >= 1 or value == 0:
        text = f"{value:.2f}" if abs(value) < TWO_DECIMALS_BELOW else f"{value:.1f}"
        return text.rstrip("0").removesuffix(".")
    return f"{value:.2g}"


def age_phrase(age: int | None) -> str:
    """How a patient's age is named in text, with the article English needs before it.

    "An" goes before the ages spoken with a vowel sound first: 8, 11, 18 and 80 to 89.

    >>> [age_phrase(a) for a in (None, 8, 11, 18, 75)]
    ['an adult', 'an 8-year-old', 'an 11-year-old', 'an 18-year-old', 'a 75-year-old']
    >>> [age_phrase(a) for a in (80, 85, 89, 90)]
    ['an 80-year-old', 'an 85-year-old', 'an 89-year-old', 'a person aged 90 or over']
    >>> age_phrase(1), age_phrase(61), age_phrase(81)
    ('a 1-year-old', 'a 61-year-old', 'an 81-year-old')
    """
    if age is None:
        return "an adult"
    cap = param_int("age.stated_cap_years")
    if age >= cap:
        return f"a person aged {cap} or over"
    article = "an" if _AN_AGE.fullmatch(str(age)) else "a"
    return f"{article} {age}-year-old"


def _mg(value: float, unit: str) -> float | None:
    factor = _TO_MG.get(unit.strip().strip("{}").strip().lower())
    return None if factor is None else value * factor


def _strength_mg(text: str) -> float | None:
    m = _STRENGTH.search(text)
    if m is None:
        return None
    number, unit = m.groups()
    return _mg(float(number), unit)


@dataclass(frozen=True, slots=True)
class MedFact:
    ref: str
    text: str
    drugs: tuple[str, ...]  # ingredient names
    classes: tuple[str, ...]
    flags: tuple[str, ...]
    acb: int  # anticholinergic burden score of its strongest ingredient
    authored: date | None
    first_authored: date | None  # first order of any of its ingredients in the record
    unit_mg: float | None  # mg per administration: the stated dose, else the product strength
    daily_mg: float | None  # mg per day where dose and frequency are both stated
    dose_stated: bool  # False: the dose is read from the product strength (verify)

    @property
    def name(self) -> str:
        return self.drugs[0] if self.drugs else self.text


@dataclass(frozen=True, slots=True)
class Kidney:
    """Kidney function for dosing. ``value`` governs: the lower of the reported eGFR, the
    CKD-EPI 2021 eGFR from creatinine and the Cockcroft-Gault clearance (mL/min)."""

    value: float
    basis: str  # "reported eGFR" | "eGFR from creatinine" | "Cockcroft-Gault clearance"
    reported: Observation | None
    creatinine: Observation | None
    computed: float | None  # CKD-EPI 2021 from creatinine
    crcl: float | None  # Cockcroft-Gault
    # The estimates disagree, like with like (a same-day conflict, or the reported eGFR against
    # the CKD-EPI eGFR from that day's creatinine): recheck before relying on either.
    discordant: bool
    refs: tuple[str, ...]
    # Not settled although the latest estimates may agree (``Facts._kidney_unsteady``): a
    # creatinine on the reported eGFR's day that contradicts it, or creatinine results changing
    # by half or more within a few months. Doses read it at lower certainty until a repeat.
    unsteady: tuple[Unsteady, ...] = ()

    @property
    def settled(self) -> bool:
        """The estimates agree and the creatinine is in a steady state."""
        return not self.discordant and not self.unsteady


@dataclass(frozen=True, slots=True)
class Unsteady:
    """One reason the kidney function is not settled: ``creatinine`` (with the eGFR it implies)
    contradicts the reported eGFR of the same day (``later`` None), or changed to ``later``
    within ``days``."""

    creatinine: Observation
    implied_egfr: float
    later: Observation | None
    days: int


@dataclass(frozen=True, slots=True)
class AcuteKidneyInjury:
    """A creatinine rise that meets the KDIGO 2012 definition: ``latest`` against ``baseline``,
    ``rise_umol_l`` apart (µmol/L, whatever units the results carry) over ``days`` days."""

    baseline: Observation
    latest: Observation
    rise_umol_l: float
    ratio: float
    days: int


@dataclass(frozen=True, slots=True)
class BloodPressure:
    readings: int  # in the last year
    raised: int  # of those, at or above 140/90
    systolic: float
    diastolic: float
    date: date | None
    severe: bool  # latest at or above 180 systolic or 110 diastolic
    refs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conflict:
    quantity: str
    day: date
    values: tuple[float, ...]
    refs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StrokeScore:
    """CHA2DS2-VASc (Lip et al., Chest 2010; ESC AF 2020 and NICE NG196 2021 use it) from the
    typed facts. ``parts`` is (label, points, refs) for each component that scored."""

    score: int
    parts: tuple[tuple[str, int, tuple[str, ...]], ...]

    @property
    def refs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r for _, _, rs in self.parts for r in rs))


@dataclass(frozen=True, slots=True)
class Event:
    """A dated high-stakes event: a Condition's onset or an Encounter's start."""

    text: str
    day: date
    setting: str  # "emergency visit", "hospital stay", "visit" or "onset" (a Condition)
    refs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Smoking:
    """The latest recorded tobacco smoking status: ``status`` is "current", "former", "never"
    or "unknown"; ``text`` the record's own wording; ``day`` when it was recorded."""

    status: str
    text: str
    day: date | None
    refs: tuple[str, ...]

    @property
    def current(self) -> bool:
        return self.status == "current"


# Coded smoking statuses: the SNOMED CT concepts of the US Core / ONC smoking-status value set
# (which Synthea writes as the value of LOINC 72166-2 "Tobacco smoking status", and older
# records as Conditions) and the LOINC answers of the same question (answer list LL2201-3).
# "Smoker, current status unknown" (SNOMED 77176002, LOINC LA18979-7) says nothing about now.
SMOKING_CODES: dict[tuple[str, str], str] = {
    (SNOMED, "449868002"): "current",  # smokes tobacco daily (current every day smoker)
    (SNOMED, "428041000124106"): "current",  # occasional tobacco smoker (some days)
    (SNOMED, "428071000124103"): "current",  # heavy tobacco smoker
    (SNOMED, "428061000124105"): "current",  # light tobacco smoker
    (SNOMED, "65568007"): "current",  # cigarette smoker
    (SNOMED, "8517006"): "former",  # ex-smoker
    (SNOMED, "266919005"): "never",  # never smoked tobacco
    (SNOMED, "77176002"): "unknown",  # smoker, current status unknown
    (SNOMED, "266927001"): "unknown",  # tobacco smoking consumption unknown
    (LOINC, "LA18976-3"): "current",  # current every day smoker
    (LOINC, "LA18977-1"): "current",  # current some day smoker
    (LOINC, "LA18981-3"): "current",  # heavy tobacco smoker
    (LOINC, "LA18982-1"): "current",  # light tobacco smoker
    (LOINC, "LA15920-4"): "former",  # former smoker
    (LOINC, "LA18978-9"): "never",  # never smoker
    (LOINC, "LA18979-7"): "unknown",  # smoker, current status unknown
    (LOINC, "LA18980-5"): "unknown",  # unknown if ever smoked
}


def smoking_status(codes: tuple[Code, ...]) -> str | None:
    """The smoking status a coded value or Condition states, None when it states none."""
    for c in codes:
        status = SMOKING_CODES.get((c.system, c.code))
        if status is not None:
            return status
    return None


# Verification statuses of a diagnosis not yet made (FHIR R4 condition-ver-status).
SUSPECTED = frozenset({"provisional", "differential", "unconfirmed"})

# v3 ActCode encounter classes read as a hospital stay or an emergency visit.
_SETTING = {
    "EMER": "emergency visit",
    "IMP": "hospital stay",
    "ACUTE": "hospital stay",
    "NONAC": "hospital stay",
    "OBSENC": "hospital stay",
    "SS": "hospital stay",
}


def setting_of(e: Encounter) -> str:
    """How the texts name an Encounter's setting: "emergency visit", "hospital stay" or
    "visit"."""
    return _SETTING.get(e.class_code, "visit")


def _adult_inputs(creatinine_mg_dl: float, age: int, weight_kg: float = 1.0) -> None:
    """Kidney equations are defined for adults up to ``MAX_AGE_YEARS`` with a positive
    creatinine (and weight): anything else would give a negative or absurd estimate, so it is a
    caller's error (``Facts`` passes only plausible facts and ages)."""
    adult = param("kidney.equation_min_age_years")
    if not (adult <= age <= MAX_AGE_YEARS and creatinine_mg_dl > 0 and weight_kg > 0):
        raise ValueError("kidney function is estimated only for a plausible adult record")


def ckd_epi_2021(creatinine_mg_dl: float, age: int, female: bool) -> float:
    """CKD-EPI 2021 race-free creatinine equation (Inker et al., NEJM 2021), mL/min/1.73m2;
    its constants are the ``kidney.ckd_epi_2021.*`` parameters."""
    _adult_inputs(creatinine_mg_dl, age)
    if female:
        kappa = param("kidney.ckd_epi_2021.kappa_female")
        alpha = param("kidney.ckd_epi_2021.alpha_female")
    else:
        kappa = param("kidney.ckd_epi_2021.kappa_male")
        alpha = param("kidney.ckd_epi_2021.alpha_male")
    r = creatinine_mg_dl / kappa
    egfr = (
        param("kidney.ckd_epi_2021.coefficient")
        * min(r, 1.0) ** alpha
        * max(r, 1.0) ** param("kidney.ckd_epi_2021.exponent_above_kappa")
        * param("kidney.ckd_epi_2021.age_base") ** age
    )
    return float(egfr) * (param("kidney.ckd_epi_2021.female_factor") if female else 1.0)


def cockcroft_gault(creatinine_mg_dl: float, age: int, weight_kg: float, female: bool) -> float:
    """Cockcroft-Gault creatinine clearance (mL/min), actual body weight; positive, since the
    age is at most ``MAX_AGE_YEARS`` (below the equation's ``age_from_years``); its constants
    are the ``kidney.cockcroft_gault.*`` parameters."""
    _adult_inputs(creatinine_mg_dl, age, weight_kg)
    sex = param("kidney.cockcroft_gault.female_factor") if female else 1.0
    top = param("kidney.cockcroft_gault.age_from_years") - age
    return top * weight_kg * sex / (param("kidney.cockcroft_gault.divisor") * creatinine_mg_dl)


def hba1c_percent(o: Observation) -> Observation:
    """An HbA1c in IFCC mmol/mol restated in NGSP %, the unit the knowledge's HbA1c thresholds
    are written in (``units``: the NGSP/IFCC master equation); any other unit as it is."""
    if o.value is None or "mol" not in o.unit.lower():
        return o
    pct = HBA1C_NGSP_PERCENT_PER_IFCC_MMOL_MOL * o.value + HBA1C_NGSP_PERCENT_AT_ZERO_IFCC
    return replace(o, value=round(pct, HBA1C_PERCENT_DECIMALS), unit="%")


def _creatinine_mg_dl(o: Observation) -> float | None:
    if o.value is None:
        return None
    return o.value / CREATININE_UMOL_L_PER_MG_DL if "mol" in o.unit.lower() else o.value


def _disagree(a: float, b: float) -> bool:
    """Two eGFRs disagree where it matters for dosing: the lower below 60 and the two more than
    a fifth apart, or more than a tenth apart across a KDIGO category edge (90, 60, 45, 30,
    15) where doses change (the ``kidney.*`` parameters)."""
    lo, hi = min(a, b), max(a, b)
    if hi <= 0:
        return False
    gap = (hi - lo) / hi
    crosses = any(lo < param(edge) <= hi for edge in _KDIGO_EDGES)
    return lo < param("kidney.dosing_concern_egfr_ml_min") and (
        gap > param("kidney.discordant_fraction")
        or (crosses and gap > param("kidney.discordant_across_edge_fraction"))
    )


class Facts:
    """Indexed typed view of one profile, shared by the criteria and the rule functions."""

    def __init__(self, profile: PatientProfile) -> None:
        self.p = profile
        self.age = profile.age
        self.female = profile.sex == "female"
        self.conflicts = self._conflicts()
        self.meds = self._meds(profile)
        self._by_ref = {m.ref: m for m in self.meds}
        self._by_spec: dict[str, tuple[MedFact, ...]] = {}
        # Active orders identical in all but their id (a record that repeats one order) are one
        # medicine to the criteria: combinations bind each once, and a claim about it cites
        # every copy. Work then grows with the distinct medicines, not with the orders.
        self.distinct_meds, self._copies = _identical_orders(profile, self.meds)
        self.problems: tuple[tuple[Condition, tuple[str, ...]], ...] = tuple(
            (pr, classify(pr)) for pr in profile.problems
        )
        self.kidney = self._kidney()
        self.aki = self._aki()
        self.lab_ckd = self._lab_ckd()
        self.bp = self._bp()
        self.stroke = self._stroke_score()
        self.smoking = self._smoking()
        # Pregnancy and breastfeeding now (``pregnancy``: the codes and windows are data).
        self.pregnancy: Pregnancy | None = pregnancy_of(profile)
        self.lactation: Lactation | None = lactation_of(profile)
        # The index hospital stay and the medicine changes around it (``transitions``: the
        # window and classes are data); None and () for a patient with no recent stay.
        self.stay: Stay | None = index_stay(profile)
        self.changes: tuple[MedChange, ...] = changes_of(profile, self.stay)

    # -- immunizations -----------------------------------------------------------------------
    def doses(self, cvx: tuple[str, ...], within_days: float | None) -> tuple[Immunization, ...]:
        """Completed, dated doses carrying one of ``cvx``, oldest first (within the window
        before the record date when given)."""
        wanted = set(cvx)
        return tuple(
            i
            for i in self.p.immunizations
            if i.given
            and i.occurred is not None
            and wanted & set(i.cvx())
            and (within_days is None or (self.p.as_of - i.occurred).days <= within_days)
        )

    # -- recent events -----------------------------------------------------------------------
    def events(
        self,
        groups: tuple[str, ...],
        days: float,
        classes: tuple[str, ...] = (),
        conditions: bool = True,
        words: tuple[str, ...] = (),
    ) -> tuple[Event, ...]:
        """Conditions of ``groups`` with onset, and Encounters whose type, reason or reason
        Condition falls in ``groups`` (or whose type or reason text holds one of ``words``),
        within ``days`` of the record date; latest first."""
        wanted = set(groups)
        out: list[Event] = []
        if conditions:
            for pr, gs in self.problems:
                if (
                    wanted & set(gs)
                    and pr.onset is not None
                    and pr.verification not in ("refuted", "entered-in-error")
                    and 0 <= (self.p.as_of - pr.onset).days <= days
                ):
                    out.append(Event(pr.text, pr.onset, "onset", (pr.ref,)))
        by_ref = {pr.ref: (pr, gs) for pr, gs in self.problems}
        for e in self.p.encounters:
            if e.start is None or not 0 <= (self.p.as_of - e.start).days <= days:
                continue
            if classes and e.class_code not in classes:
                continue
            hit = self._encounter_groups(e, by_ref)
            said = " ".join((e.kind, e.reason_text)).lower()
            word = next((w for w in words if w in said), None)
            if wanted & set(hit[0]) or word is not None:
                setting = setting_of(e)
                text = hit[1] or (e.reason_text if word and word in e.reason_text.lower() else "")
                out.append(Event(text or e.kind, e.start, setting, (e.ref, *hit[2])))
        return tuple(sorted(out, key=lambda x: (x.day, x.refs), reverse=True))

    @staticmethod
    def _encounter_groups(
        e: Encounter, by_ref: dict[str, tuple[Condition, tuple[str, ...]]]
    ) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
        """(groups, the text that matched, the reason Conditions) of one Encounter."""
        groups: list[str] = []
        text = ""
        cited: list[str] = []
        for ref in e.reason_refs:
            got = by_ref.get(ref)
            if got is not None and got[1]:
                groups += got[1]
                text = text or got[0].text
                cited.append(ref)
        for codes, label in ((e.reasons, e.reason_text), (e.types, e.kind)):
            if not codes and not label:
                continue
            probe = Condition(e.ref, label, codes, "active", "confirmed", e.start)
            found = classify(probe)
            if found:
                groups += found
                text = text or label
        return tuple(dict.fromkeys(groups)), text, tuple(cited)

    # -- past orders -------------------------------------------------------------------------
    def recent_orders(self, spec: str, days: float) -> tuple[Medication, ...]:
        """Orders of any status (a one-off treatment is stopped or completed) matching
        ``spec`` and written within ``days`` before the record date; latest first."""
        out = [
            m
            for m in self.p.medications
            if m.authored is not None
            and 0 <= (self.p.as_of - m.authored).days <= days
            and any(matches(n, spec) for n in identify(m))
        ]
        return tuple(sorted(out, key=lambda m: (m.authored or self.p.as_of, m.ref), reverse=True))

    def encounter_of(self, day: date) -> Encounter | None:
        """The Encounter under way on ``day`` (the latest to start, when several are)."""
        under_way = [
            e
            for e in self.p.encounters
            if e.start is not None and e.start <= day <= (e.end or e.start)
        ]
        return max(under_way, key=lambda e: (e.start or day, e.ref), default=None)

    # -- stroke risk in atrial fibrillation -----------------------------------------------------
    def _stroke_score(self) -> StrokeScore:
        parts: list[tuple[str, int, tuple[str, ...]]] = []

        def cond(label: str, points: int, found: tuple[Condition, ...]) -> None:
            if found:
                parts.append((label, points, tuple(p.ref for p in found)))

        cond("heart failure", 1, self.active("heart-failure"))
        cond("hypertension", 1, self.active("hypertension"))
        if self.age is not None and self.age >= param("stroke.cha2ds2vasc.age_one_point_years"):
            two = self.age >= param("stroke.cha2ds2vasc.age_two_points_years")
            points = param_int("stroke.cha2ds2vasc.points_age_oldest") if two else 1
            parts.append((f"age {self.age}", points, (self.p.ref,)))
        cond("diabetes", 1, self.active("diabetes"))
        # A past stroke, TIA or systemic (arterial) thromboembolism counts however old: ever
        # recorded, unless refuted (ESC AF 2020; venous thromboembolism does not count).
        past = tuple(
            pr
            for g in ("stroke", "tia", "systemic-embolism")
            for pr in self.ever(g)
            if pr.verification not in ("refuted", "entered-in-error")
        )
        label = "stroke or TIA"
        if any(pr in self.ever("systemic-embolism") for pr in past):
            label = "stroke, TIA or thromboembolism"
        cond(label, param_int("stroke.cha2ds2vasc.points_stroke"), tuple(dict.fromkeys(past)))
        cond("vascular disease", 1, (*self.active("chd"), *self.active("pad")))
        if self.female:
            parts.append(("female sex", 1, (self.p.ref,)))
        return StrokeScore(sum(p for _, p, _ in parts), tuple(parts))

    # -- medicines ---------------------------------------------------------------------------
    @staticmethod
    def _first_orders(profile: PatientProfile) -> dict[str, date]:
        first: dict[str, date] = {}
        for m in profile.medications:  # every order, any status: durations run from the first
            for name in identify(m):
                if m.authored is not None and (name not in first or m.authored < first[name]):
                    first[name] = m.authored
        return first

    @staticmethod
    def _meds(profile: PatientProfile) -> tuple[MedFact, ...]:
        first = Facts._first_orders(profile)
        out = [_med_fact(m, first) for m in profile.active_medications]
        return tuple(sorted(out, key=lambda x: (x.ref, x.text)))

    def med_fact(self, m: Medication) -> MedFact:
        """The typed view of any request, stopped or completed ones included (a medicine
        stopped in hospital is named by the criteria that read the stay)."""
        got = self._by_ref.get(m.ref)
        return got if got is not None else _med_fact(m, self._first_orders(self.p))

    def copies(self, ref: str) -> tuple[str, ...]:
        """Every active order identical to the one at ``ref`` (itself first); ``(ref,)`` for
        an order that has no copy, or that is not an active order."""
        return self._copies.get(ref, (ref,))

    def distinct_with_spec(self, spec: str) -> tuple[MedFact, ...]:
        """``with_spec`` over the distinct medicines (one of each set of identical orders)."""
        return _with_spec(self.distinct_meds, spec)

    def stay_values(self, quantity: str) -> tuple[Observation, Observation] | None:
        """The first and last reading of a quantity (``LOINC_GROUPS`` key) during the index stay:
        on admission and at discharge; None without a stay or two readings on two days."""
        if self.stay is None:
            return None
        return stay_values(self.p, self.stay, LOINC_GROUPS[quantity])

    def with_spec(self, spec: str) -> tuple[MedFact, ...]:
        # Every criterion asks again: each spec is looked up in the medicines once.
        got = self._by_spec.get(spec)
        if got is None:
            got = self._by_spec[spec] = _with_spec(self.meds, spec)
        return got

    def years_on(self, m: MedFact) -> int | None:
        return _years(m.first_authored, self.p.as_of)

    # -- problems ----------------------------------------------------------------------------
    def active(self, group: str) -> tuple[Condition, ...]:
        return tuple(pr for pr, gs in self.problems if group in gs and self.is_current(pr, gs))

    def ever(self, group: str) -> tuple[Condition, ...]:
        return tuple(pr for pr, gs in self.problems if group in gs)

    def is_current(self, pr: Condition, gs: tuple[str, ...]) -> bool:
        """Active, confirmed (a suspected diagnosis is not yet one: no check treats it as
        established), not a "history of" or artefact record, and not an acute illness long
        past."""
        if not pr.active or pr.abatement is not None or pr.verification in SUSPECTED:
            return False
        kinds = {GROUPS_BY_KEY[g].kind for g in gs if g in GROUPS_BY_KEY}
        if kinds & {"history", "family", "noise"}:
            return False
        if "acute" in kinds and not kinds & {"chronic"}:
            age = None if pr.onset is None else (self.p.as_of - pr.onset).days
            return age is not None and age <= param("window.stale_acute_days")
        return True

    # -- observations ------------------------------------------------------------------------
    def latest(self, quantity: str) -> Observation | None:
        """Latest usable value of a quantity (``LOINC_GROUPS`` key); None when the latest day
        holds conflicting values (they are repeat-before-acting, not facts)."""
        if quantity in self.conflicts:
            return None
        o = self.p.latest_of(LOINC_GROUPS[quantity])
        if o is None or o.value is None:
            return None
        return hba1c_percent(o) if quantity == "hba1c" else o

    def days_since(self, d: date | None) -> int | None:
        """Days from ``d`` to the record date: 0 for a date on or after it (a date the clock-skew
        allowance let through), None when unknown or further back than any lifetime."""
        if d is None:
            return None
        days = max(0, (self.p.as_of - d).days)
        return days if days <= _MAX_DAYS else None

    def _conflicts(self) -> dict[str, Conflict]:
        out: dict[str, Conflict] = {}
        conflict = param("lab.same_day_conflict_fraction")
        for quantity, loincs in LOINC_GROUPS.items():
            series = self.p.series(loincs)
            if not series or series[-1].effective is None:
                continue
            day, code, setting = series[-1].effective, series[-1].loinc, series[-1].setting
            # Same code, same day, taken the same way: two methods (direct and calculated LDL)
            # or two positions (lying and standing blood pressure) may differ honestly.
            same = [
                o
                for o in series
                if o.effective == day
                and o.loinc == code
                and o.setting == setting
                and o.value is not None
            ]
            values = sorted({o.value for o in same if o.value is not None})
            if values and values[-1] - values[0] > conflict * abs(values[-1]):
                out[quantity] = Conflict(
                    quantity, day, tuple(values), tuple(dict.fromkeys(o.ref for o in same))
                )
        return out

    def age_on(self, day: date | None) -> int | None:
        """Whole years on ``day`` (a result's date: an equation that reads age takes the age
        the patient was when the sample was taken); the plan day's age when it is undated."""
        born = self.p.birth_date
        if born is None or day is None:
            return self.age
        return max(0, years_between(born, day))

    def _kidney(self) -> Kidney | None:
        reported = self.latest("egfr")
        creat = self.latest("creatinine")
        conflicted = bool({"egfr", "creatinine"} & set(self.conflicts))
        computed = crcl = None
        adult = param("kidney.equation_min_age_years")
        age = self.age_on(creat.effective) if creat is not None else None
        if creat is not None and age is not None and adult <= age <= MAX_AGE_YEARS:
            scr = _creatinine_mg_dl(creat)
            if scr is not None and scr > 0:
                computed = ckd_epi_2021(scr, age, self.female)
                weight = self.latest("weight")
                kg = (
                    weight.value if weight is not None and "lb" not in weight.unit.lower() else None
                )
                if kg is not None and kg > 0:
                    crcl = cockcroft_gault(scr, age, kg, self.female)
        candidates: list[tuple[float, str]] = []
        if reported is not None and reported.value is not None:
            candidates.append((reported.value, "reported eGFR"))
        if computed is not None:
            candidates.append((computed, "eGFR from creatinine"))
        if crcl is not None:
            candidates.append((crcl, "Cockcroft-Gault clearance"))
        if not candidates:
            return None
        value, basis = min(candidates)
        unsteady = self._kidney_unsteady(reported)
        # Disagreement compares like with like: a same-day conflict, or the reported eGFR against
        # the CKD-EPI 2021 eGFR from the latest creatinine, taken the same day. A
        # Cockcroft-Gault clearance below the eGFR is not a disagreement: it is not indexed to
        # body surface area and falls with age and weight, so in older, lighter people it is
        # expected to read lower (Dowling 2013, Pharmacotherapy 33:912; KDIGO 2024 CKD chapter
        # 4, drug dosing). A repeat would not close that gap; the clearance stays a dosing input
        # for the medicines whose labels are written in it (``renal_limit``).
        discordant = conflicted or (
            reported is not None
            and reported.value is not None
            and creat is not None
            and computed is not None
            and creat.effective == reported.effective
            and _disagree(reported.value, computed)
        )
        # The observation that governs comes first: it is the fact that justifies a dosing
        # action (the clinician summary shows it as the key fact). A computed estimate (CKD-EPI
        # or Cockcroft-Gault) is governed by the creatinine it is computed from.
        computed_governs = creat is not None and (
            reported is None
            or reported.value is None
            or reported.value - value >= param("kidney.creatinine_governs_margin_ml_min")
        )
        first = (creat, reported) if computed_governs else (reported, creat)
        refs = tuple(o.ref for o in first if o is not None)
        refs = tuple(
            dict.fromkeys((*refs, *(o.ref for u in unsteady for o in (u.creatinine, u.later) if o)))
        )
        return Kidney(
            value,
            basis,
            reported,
            creat,
            computed,
            crcl,
            discordant,
            refs,
            unsteady,
        )

    def _aki(self) -> AcuteKidneyInjury | None:
        """Acute kidney injury by the KDIGO 2012 creatinine criteria, read at the latest result
        (when it is recent): a rise of ``kidney.aki_rise_umol_l`` or more over a result at most
        ``kidney.aki_rise_window_days`` earlier, or ``kidney.aki_ratio`` times the lowest result
        of the ``kidney.aki_baseline_window_days`` before it. The largest rise is the one said."""
        series = [
            (o, mg * CREATININE_UMOL_L_PER_MG_DL)
            for o in self.p.series(LOINC_GROUPS["creatinine"])
            if o.effective is not None
            for mg in (_creatinine_mg_dl(o),)
            if mg is not None and mg > 0
        ]
        if not series:
            return None
        latest, now = series[-1]
        assert latest.effective is not None
        age = self.days_since(latest.effective)
        if age is None or age > param_int("kidney.aki_current_within_days"):
            return None
        found: list[AcuteKidneyInjury] = []
        for o, umol in series[:-1]:
            assert o.effective is not None
            days = (latest.effective - o.effective).days
            quick = days <= param_int("kidney.aki_rise_window_days")
            rise = now - umol
            met = (quick and rise >= param("kidney.aki_rise_umol_l")) or (
                days <= param_int("kidney.aki_baseline_window_days")
                and now >= param("kidney.aki_ratio") * umol
            )
            if met and days >= 0:
                found.append(AcuteKidneyInjury(o, latest, rise, now / umol, days))
        return max(found, key=lambda a: a.rise_umol_l) if found else None

    def _kidney_unsteady(self, reported: Observation | None) -> tuple[Unsteady, ...]:
        """Why the latest estimates cannot be trusted for dosing although they agree: a
        creatinine on the reported eGFR's own day that implies a very different eGFR (the
        estimates disagree, as in ``_kidney``), or, among creatinine results within
        ``kidney.unsteady_window_days`` of the latest, two that differ by
        ``kidney.unsteady_creatinine_ratio`` or more (not a steady state). Only where it matters
        for dosing: the eGFR implied below ``kidney.dosing_concern_egfr_ml_min``."""
        if self.age is None or self.age < param("kidney.equation_min_age_years"):
            return ()
        series = [
            (o, mg)
            for o in self.p.series(LOINC_GROUPS["creatinine"])
            if o.effective is not None
            for mg in (_creatinine_mg_dl(o),)
            if mg is not None and mg > 0
        ]
        out: list[Unsteady] = []

        def implied(mg: float, day: date | None = None) -> float | None:
            """The eGFR a creatinine implies at the age on its day; None where the equation
            does not apply (a child then, or an implausible age)."""
            age = self.age_on(day)
            if age is None or not param("kidney.equation_min_age_years") <= age <= MAX_AGE_YEARS:
                return None
            return ckd_epi_2021(mg, age, self.female)

        if reported is not None and reported.value and reported.effective is not None:
            for o, mg in series:
                if o.effective != reported.effective:
                    continue
                e = implied(mg, o.effective)
                if e is not None and _disagree(e, reported.value):
                    out.append(Unsteady(o, e, None, 0))
                    break
        window_days = param("kidney.unsteady_window_days")
        concern = param("kidney.dosing_concern_egfr_ml_min")
        if series:
            last_day = series[-1][0].effective
            assert last_day is not None
            window = [
                (o, mg)
                for o, mg in series
                if (last_day - (o.effective or last_day)).days <= window_days
            ]
            high = max(window, key=lambda x: x[1])
            low = min(window, key=lambda x: x[1])
            ratio = param("kidney.unsteady_creatinine_ratio")
            worst = implied(high[1], high[0].effective)
            if high[1] >= ratio * low[1] and worst is not None and worst < concern:
                first, later = sorted((high, low), key=lambda x: x[0].effective or last_day)
                assert first[0].effective is not None and later[0].effective is not None
                days = (later[0].effective - first[0].effective).days
                at_first = implied(first[1], first[0].effective)
                if at_first is not None:
                    out.append(Unsteady(first[0], at_first, later[0], days))
        return tuple(out)

    def _lab_ckd(self) -> tuple[str, ...]:
        """Refs proving CKD by labs: eGFR < 60 on two results at least 90 days apart (the
        latest also < 60), or a latest urine albumin-creatinine ratio of 30 mg/g or more (the
        ``kidney.ckd_*`` and ``kidney.albuminuria_*`` parameters)."""
        low = [o for o in self.p.series(LOINC_GROUPS["egfr"]) if o.value is not None]
        refs: tuple[str, ...] = ()
        ckd, chronic = param("kidney.ckd_egfr_ml_min"), param("kidney.ckd_chronicity_days")
        if low and low[-1].value is not None and low[-1].value < ckd and low[-1].effective:
            last = low[-1]
            assert last.effective is not None
            earlier = [
                o
                for o in low
                if o.value is not None
                and o.value < ckd
                and o.effective is not None
                and (last.effective - o.effective).days >= chronic
            ]
            if earlier:
                refs = (earlier[-1].ref, last.ref)
        uacr = self.latest("uacr")
        albuminuria = param("kidney.albuminuria_uacr_mg_g")
        if uacr is not None and uacr.value is not None and uacr.value >= albuminuria:
            refs = (*refs, uacr.ref)
        return refs

    def _bp(self) -> BloodPressure | None:
        sys_ = self.p.series(LOINC_GROUPS["systolic_bp"])
        dia = {o.ref: o for o in self.p.series(LOINC_GROUPS["diastolic_bp"])}
        if not sys_:
            return None
        last = sys_[-1]
        window = param("window.bp_readings_days")
        recent = [o for o in sys_ if o is last or _within(self.days_since(o.effective), window)]
        pairs = [(o, dia.get(o.ref)) for o in recent]
        # Readings are judged as charted and printed, in whole mmHg: 179.6 is a systolic of 180.
        raised_sys, raised_dia = param("bp.raised_systolic_mmhg"), param("bp.raised_diastolic_mmhg")
        raised = sum(
            1
            for s, d in pairs
            if round(s.value or 0) >= raised_sys
            or (d is not None and round(d.value or 0) >= raised_dia)
        )
        d_last = dia.get(last.ref)
        sv = last.value or 0.0
        dv = d_last.value if d_last is not None and d_last.value is not None else 0.0
        return BloodPressure(
            len(pairs),
            raised,
            sv,
            dv,
            last.effective,
            round(sv) >= param("bp.severe_systolic_mmhg")
            or round(dv) >= param("bp.severe_diastolic_mmhg"),
            tuple(dict.fromkeys(s.ref for s, _ in pairs)),
        )

    def _smoking(self) -> Smoking | None:
        """The latest coded smoking status: the value of the latest tobacco smoking status
        Observation, or a smoking Condition dated later (its onset; a resolved current-smoking
        Condition says the person stopped on its abatement date)."""
        found: list[tuple[date, int, Smoking]] = []
        for o in self.p.observations:
            if o.loinc in LOINC_GROUPS["smoking_status"]:
                status = smoking_status(o.value_codes)
                if status is not None:
                    day = o.effective
                    text = _TAG.sub("", o.value_text)
                    found.append((day or date.min, 1, Smoking(status, text, day, (o.ref,))))
        for pr in self.p.problems:
            status = smoking_status(pr.codes)
            if status is None or pr.verification in ("refuted", "entered-in-error"):
                continue
            if pr.active and pr.abatement is None:
                text = _TAG.sub("", pr.text)
                found.append((pr.onset or date.min, 0, Smoking(status, text, pr.onset, (pr.ref,))))
            elif status == "current" and pr.abatement is not None:
                text = f"{_TAG.sub('', pr.text)}, resolved"
                stopped = Smoking("former", text, pr.abatement, (pr.ref,))
                found.append((pr.abatement, 0, stopped))
        if not found:
            return None
        return max(found, key=lambda t: (t[0], t[1]))[2]

    # -- numbers the texts may state ----------------------------------------------------------
    def numbers(self) -> frozenset[str]:
        """Every number rendered from a typed fact (the property test's allow-list)."""
        vals: list[float | None] = [float(self.age) if self.age is not None else None]
        cap = param_int("age.stated_cap_years")
        if self.age is not None and self.age >= cap:
            vals.append(float(cap))  # ages from the cap are stated as "90 or over"
        vals += [o.value for o in self.p.readings]
        vals += [o.value for o in self.p.observations]
        for m in self.meds:
            vals += [m.unit_mg, m.daily_mg, float(self.years_on(m) or 0)]
        if self.kidney is not None:
            vals += [self.kidney.value, self.kidney.computed, self.kidney.crcl]
            for u in self.kidney.unsteady:
                vals += [u.implied_egfr, float(u.days)]
        if self.aki is not None:
            vals += [float(self.aki.days)]
        if self.bp is not None:
            vals += [float(self.bp.readings), float(self.bp.raised)]
        vals += [float(len(self.meds))]
        if self.pregnancy is not None and self.pregnancy.weeks is not None:
            vals.append(float(self.pregnancy.weeks))
        vals += [float(self.stroke.score), *(float(p) for _, p, _ in self.stroke.parts)]
        # Names quoted from the record carry their own numbers ("Digoxin 0.125 MG Oral Tablet").
        quoted = [m.text for m in self.meds] + [p.text for p, _ in self.problems]
        # Past orders are quoted too (a one-off treatment), with the months since those of
        # the last year (how ``interpret._ago`` states an interval).
        quoted += [o.text for o in self.p.medications]
        for o in self.p.medications:
            days = self.days_since(o.authored)
            if days is not None and 0 <= days <= DAYS_PER_YEAR:
                vals += [float(days), float(days // DAYS_PER_WHOLE_MONTH)]
        if self.stay is not None:
            vals.append(float(self.stay.days_since))
            dated = [self.stay.discharged, *(c.ends for c in self.changes if c.ends)]
            vals += [float(v) for d in dated for v in (d.day, d.year)]
            vals += [float(_course_days(c)) for c in self.changes if _course_days(c)]
        # The record's last date and the plan day, as a line about an old record states them.
        vals += [float(v) for d in (self.p.as_of, self.p.plan_day) for v in (d.year, d.day)]
        gap = (self.p.plan_day - self.p.as_of).days  # how long before the plan the record ends
        vals += [float(gap), float(gap // DAYS_PER_WHOLE_MONTH), float(int(gap // DAYS_PER_YEAR))]
        words = {w for t in quoted for w in _QUOTED_NUMBER.findall(t)}
        return frozenset(fmt(v) for v in vals if v is not None) | words


def _with_spec(meds: tuple[MedFact, ...], spec: str) -> tuple[MedFact, ...]:
    kind, _, name = spec.partition(":")
    if kind == "drug":
        return tuple(m for m in meds if name in m.drugs)
    if kind == "flag":
        return tuple(m for m in meds if name in m.flags)
    return tuple(m for m in meds if name in m.classes)


# Every field but the ref, read at C speed: a record may hold thousands of orders
# (``dataclasses.replace`` is several times slower, ``fields()`` per call twice as slow).
_CONTENT: Final = {
    cls: attrgetter(*(f.name for f in fields(cls) if f.name != "ref"))
    for cls in (MedFact, Medication)
}


def _content(value: MedFact | Medication) -> tuple[object, ...]:
    """Every field but the ref."""
    content: tuple[object, ...] = _CONTENT[type(value)](value)
    return content


def _identical_orders(
    profile: PatientProfile, meds: tuple[MedFact, ...]
) -> tuple[tuple[MedFact, ...], dict[str, tuple[str, ...]]]:
    """The first of each set of active orders that differ in their id only (in ``meds``
    order), and, by the first one's ref, the refs of the whole set in that order."""
    requests = {m.ref: m for m in profile.active_medications}
    sets: dict[object, list[str]] = {}
    firsts: list[MedFact] = []
    for m in meds:
        checkpoint()
        request = requests.get(m.ref)
        key = (_content(m), _content(request) if request is not None else m.ref)
        found = sets.get(key)
        if found is None:
            sets[key] = [m.ref]
            firsts.append(m)
        else:
            found.append(m.ref)
    return tuple(firsts), {refs[0]: tuple(refs) for refs in sets.values()}


def _med_fact(m: Medication, first: dict[str, date]) -> MedFact:
    """One request as the criteria read it: ingredients, classes, dose and first order."""
    names = identify(m)
    ds = [drug(n) for n in names]
    starts = [first[n] for n in names if n in first]
    text = m.text or next((c.display for c in m.codes if c.display), m.ref)
    unit_mg, stated = _unit_dose(m, text)
    if unit_mg is None and names:  # the RxNorm clinical drug's strength (drug table)
        unit_mg = next(
            (
                mg
                for c in m.codes
                if c.code
                for mg in (strength_mg(c.code, names[0]),)
                if mg is not None
            ),
            None,
        )
    daily = unit_mg * m.times_per_day if unit_mg and m.times_per_day else None
    return MedFact(
        m.ref,
        text,
        names,
        tuple(sorted({c for d in ds for c in d.classes})),
        tuple(sorted({f for d in ds for f in getattr(d, "flags", ())})),
        max((int(getattr(d, "acb", 0)) for d in ds), default=0),
        m.authored,
        min(starts) if starts else m.authored,
        unit_mg,
        daily if stated else None,
        stated,
    )


def _course_days(c: MedChange) -> int:
    """Days a course runs, first and last day included (0 when its first day is unknown)."""
    start = c.med.starts or c.med.authored
    return 0 if start is None or c.ends is None else (c.ends - start).days + 1


def _unit_dose(m: Medication, text: str) -> tuple[float | None, bool]:
    if m.dose_value is not None:
        mg = _mg(m.dose_value, m.dose_unit)
        if mg is not None:
            return mg, True
        strength = _strength_mg(text)  # "1 {tbl}" of a 500 mg tablet
        if strength is not None and m.dose_unit.strip("{} ").lower() in (
            "tbl",
            "tablet",
            "cap",
            "capsule",
            "",
        ):
            return strength * m.dose_value, True
    return _strength_mg(text), False


def _within(days: int | None, window: float) -> bool:
    """A known interval of at most ``window`` days."""
    return days is not None and days <= window


def _years(a: date | None, b: date) -> int | None:
    """Whole years from ``a`` to ``b``: 0 when ``a`` is later, None when unknown or longer
    than any lifetime."""
    if a is None:
        return None
    years = max(0, years_between(a, b))
    return years if years <= MAX_AGE_YEARS else None
