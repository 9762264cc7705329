"""The criteria file format: pydantic models, validated at start-up.

One ``Criterion`` is one clinical criterion in our own words with its source: what triggers it
(drugs, conditions, age, labs, missing therapy or monitoring), what excuses it (exceptions,
same vocabulary), the activity it proposes, and the points each role would make for and against
it. Texts are templates over typed patient facts (``{a}``, ``{a.text}``, ``{cond}``, ``{age}``,
``{kidney}``...) and over the criterion's own ``params``: a literal number in a template is
refused, so every number a text states comes from the patient's facts or the cited threshold.
"""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from inference.protocol import Priority
from service.core.model import ActionKind

from .._datafile import DATA_DIR, load_file
from ..equivalence import EQUIVALENCE

EQUIVALENCE_TABLES = frozenset(t.id for t in EQUIVALENCE.tables)

__all__ = [
    "KINDS",
    "KIND_URGENCY",
    "MAX_URGENCY",
    "NUMERIC_PARTS",
    "STATUSES",
    "VERSION_PATTERN",
    "ChangeTest",
    "Count",
    "CriteriaFile",
    "Criterion",
    "LabGroup",
    "LabTest",
    "LevelTest",
    "LibraryPoint",
    "Monitor",
    "Op",
    "OptionTemplate",
    "PointLibrary",
    "PointTemplate",
    "PointUse",
    "ProblemTemplate",
    "RecentEvent",
    "RoleTest",
    "StayTest",
    "StrokeRisk",
    "Trigger",
    "UrgencyClass",
    "VaccineDue",
    "WeightCeiling",
    "reusable_points",
    "urgency_class_of",
]

Kind = Literal[
    "drug-disease",
    "drug-drug",
    "drug-age",
    "duplicate-class",
    "renal-dose",
    "dose-ceiling",
    "omission",
    "monitoring",
    "deprescribing",
    "lab-discordance",
    "burden",
    "care-planning",
    "drug-pregnancy",
    "drug-lactation",
    "drug-level",
]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
# The plan categories (``service.core.evaluation.CATEGORY_ORDER``).
Category = Literal[
    "immediate-safety",
    "medication",
    "monitoring",
    "mental-health",
    "rehabilitation",
    "caregiver-support",
    "referral",
    "follow-up",
]
SeverityFactor = Literal["critical", "major", "moderate", "minor"]
UrgencyClass = Literal["resolve-first", "urgent", "soon", "routine"]
# An option's ``urgency`` runs from 0 (none) to this, the most urgent.
MAX_URGENCY = 3
# How soon to act on a criterion's activity when its option does not say (``urgency_class``),
# by kind: contradicting results are settled before anything acts on them; a harm, a missing
# treatment, a due test or a referral is acted on soon; deprescribing for long-term benefit is
# routine, and so are due vaccinations (stated on their options). ``urgency_class_of`` then
# lifts a safety criterion of the highest urgency (an active dangerous combination, a dose far
# above its ceiling) to urgent, and any safety or omission criterion to at least soon.
KIND_URGENCY: dict[str, UrgencyClass] = {
    "drug-disease": "soon",
    "drug-drug": "soon",
    "drug-age": "soon",
    "duplicate-class": "soon",
    "renal-dose": "soon",
    "dose-ceiling": "soon",
    "omission": "soon",
    "monitoring": "soon",
    "deprescribing": "routine",
    "lab-discordance": "resolve-first",
    "burden": "soon",
    "care-planning": "soon",
    "drug-pregnancy": "soon",
    "drug-lactation": "soon",
    "drug-level": "soon",
}
Grade = Literal["A", "B", "C", "D"]
Directness = Literal["direct", "indirect", "contextual"]

# A number standing on its own (not part of a name such as HbA1c, SGLT2, PHQ-9 or CHA2DS2-VASc).
NUMBER = re.compile(r"(?<![A-Za-z0-9\-.])\d+(?:\.\d+)?(?![A-Za-z0-9])")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
SPEC = re.compile(r"^(drug|class|flag):[a-z0-9][a-z0-9 \-]*$")


# The shape the renderer fills (``interpret.render``): ``{name}`` or ``{name.attr}``.
_RENDERED = re.compile(r"^\{[a-z_]+(?:\.[a-z_0-9]+)?\}$")


def _no_literal_numbers(text: str) -> str:
    unrendered = [p for p in _PLACEHOLDER.findall(text) if not _RENDERED.match(p)]
    if unrendered:
        raise ValueError(
            f"placeholder(s) {unrendered} the renderer cannot fill; write {{name}} or "
            "{name.attr} (a reader would see the braces)"
        )
    bare = _PLACEHOLDER.sub("", text)
    found = NUMBER.findall(bare)
    if found:
        raise ValueError(
            f"literal number(s) {found} in template; state numbers through placeholders "
            "({param.x}, {lab.egfr}...) so they come from typed facts"
        )
    return text


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# How a patient's number compares with a param for a trigger part to hold, as the part's source
# states it: "below 30" is ``<``, "30 or less" ``<=``, "above the ceiling" ``>``, "aged 65 or
# over" ``>=``. Every numeric part states its own; none is implied by code.
Op = Literal["<", "<=", ">", ">="]
# The trigger's own numeric parts (field -> the patient's number it reads); ``Trigger.ops``
# holds the comparison of each one a trigger gives.
NUMERIC_PARTS: dict[str, str] = {
    "age_min": "age in whole years",
    "age_max": "age in whole years",
    "min_years_on": "whole years since drug a was first ordered",
    "min_days_on": "days since drug a was first ordered",
    "started_within": "days since drug a was first ordered",
    "daily_mg_above": "daily dose of drug a in mg",
    "equivalent_daily_min": "daily dose of drug a as its equivalence table's reference drug, in mg",
    "gestation_weeks_min": "completed weeks of pregnancy",
    "gestation_weeks_max": "completed weeks of pregnancy",
    "own_monitor_grace": "days since the latest result of a drug's own test, less its interval",
}


class LabTest(_Strict):
    """``quantity`` is a ``LOINC_GROUPS`` key or ``kidney`` (the governing kidney function)."""

    quantity: str
    op: Op
    param: str  # name of the criterion param holding the threshold
    # The result's own range decides where it states one in the result's unit (an INR's target
    # range: 2.5-3.5 for a mechanical valve): its upper bound for ">"/">=", lower for "<"/"<=".
    record_bound: bool = False


class Count(_Strict):
    """At least ``min`` (a param name) distinct active medicines matching any of ``specs``,
    or, with ``by`` = "acb", an anticholinergic burden sum of at least ``min``."""

    specs: tuple[str, ...] = ()
    by: Literal["medicines", "ingredients-in-class", "acb"] = "medicines"
    min: str
    op: Op  # the count (or burden) compared with ``min``
    # At least this many (a param name) distinct medicines must contribute: a burden that one
    # medicine makes up alone is that medicine's own criterion (its stop or switch action), not
    # a second action for the same drug.
    min_medicines: str | None = None


class Monitor(_Strict):
    """Due when no usable result of ``quantity`` within ``param`` days (a param name).

    ``response``: the test only judges whether the bound drug ``a`` works (lipids on a
    statin, urate on a urate-lowering drug). ``harm``: it only watches for a slow, long-term
    harm of continued use of ``a`` (glucose on an antipsychotic, vitamin B12 on metformin).
    Either way it is not proposed when an activity of the plan stops that very drug: the test
    would add a burden and decide nothing (NICE NG56, 2016: treatment burden). Safety
    monitoring (drug levels, INR, potassium, kidney function, and the thyroid on amiodarone,
    whose effects outlast the drug) keeps neither flag and stays while the drug is taken."""

    quantity: str
    days: str
    # Due when the age in days of the latest result compares with ``days`` so (``>``: a result
    # exactly ``days`` old still counts as recent).
    op: Op
    response: bool = False
    harm: bool = False


class VaccineDue(_Strict):
    """Due when fewer than ``doses`` (a param name; one when absent) completed Immunizations
    carry one of the ``cvx`` codes, counting only those within ``within_days`` (a param name)
    of the record date when given. ``available_from``: no such vaccine existed before this
    date, so a record dated earlier is not asked for it."""

    vaccine: str  # what the texts call it, e.g. "influenza vaccine"
    # Its short name where a summary line lists the vaccines due ("flu", "zoster", "Td").
    short: str = Field(min_length=1)
    cvx: tuple[str, ...] = Field(min_length=1)
    within_days: str | None = None
    doses: str | None = None
    available_from: date | None = None
    # The series is complete only once a dose was given at or after this age (a param name,
    # years), whatever the count: the final childhood dose (DTaP, IPV) is given from age four,
    # and one given then ends the series however many came before.
    final_at_age: str | None = None
    # Only for a record that holds some Immunization: one with none says nothing about which
    # doses were given (the childhood schedule is then checked elsewhere, not offered in full).
    only_with_history: bool = False

    @field_validator("cvx")
    @classmethod
    def _cvx(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for code in v:
            if not re.fullmatch(r"\d{1,3}", code):
                raise ValueError(f"{code!r} is not a CVX code (one to three digits)")
        return v

    @field_validator("vaccine")
    @classmethod
    def _numbers(cls, v: str) -> str:
        return _no_literal_numbers(v)


class WeightCeiling(_Strict):
    """A weight-based dose ceiling for the bound ingredient of ``a`` (param names, mg per kg).

    ``per_dose``: one administration of ``a``; ``per_day``: the ingredient's total a day over
    every active product that holds it (a combination product counts). ``rounding`` (a param,
    a factor such as 1.1) widens both ceilings: a liquid dose is rounded to a volume that can
    be measured, so a dose a few per cent above the mg/kg figure is the prescribed dose. With
    no body weight within ``weight_days`` (a param), or a dose not stated, the criterion fires
    at lower certainty as a request to weigh the child and verify the dose."""

    per_dose: str | None = None
    per_day: str | None = None
    rounding: str | None = None
    weight_days: str
    # The dose per kg compared with a ceiling (times ``rounding``) for the dose to exceed it.
    op: Op
    # False: fire only on a known excess (a toxicity check), leaving the request to weigh and
    # verify to the criterion that holds the ceiling.
    verify: bool = True

    @model_validator(mode="after")
    def _some_ceiling(self) -> WeightCeiling:
        if self.per_dose is None and self.per_day is None:
            raise ValueError("a weight-based ceiling needs per_dose, per_day or both")
        return self


class WeightMaxTest(_Strict):
    """Drug ``a``'s ingredient a day, over every active product holding it, per kg of the
    latest body weight within ``weight_days`` (a param), compared by ``op`` with the drug's own
    daily maximum per kg (data/monographs.yaml ``weight_max``; a maximum that applies only
    below a weight holds only for a lighter patient). No recent weight, or a daily amount not
    known: it does not hold (nothing is said)."""

    weight_days: str
    op: Op  # the daily mg/kg against the maximum, as the source states it


class StrokeRisk(_Strict):
    """CHA2DS2-VASc at or above a sex-specific threshold (param names)."""

    min_male: str
    min_female: str
    op: Op  # the score compared with the threshold


class RecentEvent(_Strict):
    """A recent high-stakes event: a Condition of one of ``groups`` with onset within ``days``
    (a param name) of the record date, or an Encounter starting within that window whose type,
    reason or reason Condition falls in one of ``groups`` (restricted to ``encounter_classes``,
    v3 ActCodes such as EMER or IMP, when given). Binds ``event``."""

    groups: tuple[str, ...] = Field(min_length=1)
    days: str
    encounter_classes: tuple[str, ...] = ()
    # Words in an Encounter's type or reason text that also make it the event (lower case),
    # e.g. "detoxification" where no condition group codes the admission.
    encounter_text: tuple[str, ...] = ()
    conditions: bool = True  # a Condition's onset counts, not only an Encounter
    # Only events on or after the first order of the bound drug ``a`` (a fracture *during*
    # bisphosphonate treatment), resolved Conditions included.
    on_drug: bool = False
    # At least this many events (a param name), counted one per day: a Condition and the
    # Encounter for it on the same day are one event (two exacerbations in a year).
    min_events: str | None = None


class StayTest(_Strict):
    """The index hospital stay (``Facts.stay``: the latest inpatient, observation, short or
    emergency stay that ended within the window of ``data/transitions.yaml``). ``groups``: one
    of its diagnoses or reasons falls in one of these condition groups (any stay when empty);
    ``classes``: its Encounter class is one of these v3 ActCodes (any when empty);
    ``within_days`` (a param name): discharged at most this many days before the record date.
    Binds ``stay``."""

    groups: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    within_days: str | None = None
    within_op: Op | None = None  # the days since discharge compared with ``within_days``
    # No result of any of these quantities (``LOINC_GROUPS`` keys) dated after discharge: the
    # test due after the stay has not been done yet.
    unchecked: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _window_op(self) -> StayTest:
        if (self.within_days is None) != (self.within_op is None):
            raise ValueError("within_op is given exactly when within_days is")
        return self


class ChangeTest(_Strict):
    """A medicine change around the index stay (``Facts.changes``) of one of ``kinds``, for a
    medicine matching one of ``specs`` (any medicine when empty). Each such change binds its
    medicine to ``a`` (the trigger's ``drugs`` then bind ``b``, ``c``...) and itself to
    ``change``; the stay it belongs to is bound to ``stay``."""

    kinds: tuple[
        Literal["new", "stopped", "dose-changed", "held", "course-ending", "course-ended"], ...
    ] = Field(min_length=1)
    specs: tuple[str, ...] = ()
    # The changed medicine and a trigger drug (``b``) share one of these classes (a duplicate
    # between the home and the discharge lists).
    same_class: tuple[str, ...] = ()

    @field_validator("specs")
    @classmethod
    def _specs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _drug_specs(v)


class RoleTest(_Strict):
    """A pair of medicines linked through the clearance-pathway roles of their monographs
    (``data/monographs.yaml`` ``cyp``): ``a`` inhibits or induces a pathway at one of
    ``perpetrator`` grades, ``b`` is a substrate of it at one of ``substrate`` grades; binds
    ``a``, ``b`` and ``pk`` (the direction, the strongest grade and the shared pathways).
    ``stopped_within`` (a param name): ``a`` is no longer taken, its order ended within that
    many days before the record date, while ``b`` continues."""

    direction: Literal["inhibition", "induction"]
    perpetrator: tuple[Literal["strong", "moderate", "listed"], ...] = Field(min_length=1)
    substrate: tuple[Literal["sensitive", "moderate-sensitive", "narrow-index"], ...] = Field(
        min_length=1
    )
    stopped_within: str | None = None


class LevelTest(_Strict):
    """A drug level read against the levels table (``data/drug_levels.yaml``); binds the
    measured medicine to ``a``, the level to ``level`` and, where the record shows one, the
    co-prescribed medicine that moves it to ``b``.

    ``above`` / ``below``: the latest level lies outside the range that applies to this patient
    (``b``: a co-prescribed drug the table names as raising / lowering it). ``risen`` /
    ``fallen``: no range applies (the target is the patient's own) and the latest level moved
    that way since the one before, after a drug that moves it that way was started between
    the two (bound to ``b``). ``never``: no level in the record, for drugs whose overdue level
    no other criterion asks for. ``unchecked``: a drug that moves the level (bound to ``b``)
    was started within ``days`` (a param name) and after the latest level."""

    state: Literal["above", "below", "risen", "fallen", "never", "unchecked"]
    days: str | None = None

    @model_validator(mode="after")
    def _window(self) -> LevelTest:
        if self.state == "unchecked" and self.days is None:
            raise ValueError("an 'unchecked' level test needs 'days' (how recent the new drug)")
        return self


def _drug_specs(v: tuple[str, ...]) -> tuple[str, ...]:
    for s in v:
        if not SPEC.match(s):
            raise ValueError(f"drug spec {s!r} is not drug:<name>, class:<id> or flag:<id>")
    return v


class RecentOrders(_Strict):
    """An order of one of ``specs`` of any status (a one-off treatment is completed or
    stopped) written within ``days`` (a param name) before the record date."""

    specs: tuple[str, ...] = Field(min_length=1)
    days: str

    @field_validator("specs")
    @classmethod
    def _specs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _drug_specs(v)


class Trigger(_Strict):
    """All given parts must hold. ``drugs`` bind distinct active medicines to ``a``, ``b``...
    in order; ``any_conditions`` binds the first matching active problem to ``cond``."""

    drugs: tuple[str, ...] = ()
    any_conditions: tuple[str, ...] = ()
    absent_drugs: tuple[str, ...] = ()
    absent_conditions: tuple[str, ...] = ()
    # A problem of one of these groups on record at any time, resolved or historical included;
    # with no ``any_conditions`` it binds ``cond`` (cited, but not linked as a current problem).
    ever_conditions: tuple[str, ...] = ()
    age_min: str | None = None  # param names
    age_max: str | None = None
    sex: Literal["male", "female"] | None = None
    labs: tuple[LabTest, ...] = ()
    monitor: Monitor | None = None
    count: Count | None = None
    min_years_on: str | None = None  # drug ``a`` taken at least this many years (first order)
    min_days_on: str | None = None  # drug ``a`` taken at least this many days (first order)
    daily_mg_above: str | None = None  # drug ``a``'s daily dose above this (unknown: verify)
    # Drug ``a``'s stated daily dose as the reference drug of the table ``equivalence`` names
    # (``data/dose_equivalence.yaml``: hydrocortisone 20 mg is prednisolone 5 mg), compared with
    # this param; a drug the table does not hold never matches, an unstated dose asks to verify.
    equivalence: str | None = None
    equivalent_daily_min: str | None = None
    kidney_discordant: bool = False
    # The kidney function is not settled: a creatinine contradicting the reported eGFR of its
    # day, or creatinine results far apart within weeks (``Facts.kidney.unsteady``).
    kidney_unsteady: bool = False
    # Acute kidney injury by the KDIGO creatinine criteria at a recent latest result
    # (``Facts.aki``); a placeholder ``{aki}`` names the rise.
    kidney_acute: bool = False
    lab_ckd: bool = False  # CKD proven by labs (two low eGFRs 90 days apart, or UACR)
    bp_severe: bool = False
    # The latest recorded tobacco smoking status is one of these (``Facts.smoking``: the latest
    # coded smoking-status Observation or smoking Condition). Binds ``smoking``.
    smoking: tuple[Literal["current", "former", "never", "unknown"], ...] = ()
    conflict: bool = False  # the latest day of some quantity holds conflicting values
    # Each active drug with a kidney-function band (drugs data, ``renal_limits``) that holds
    # the governing kidney function binds ``a`` and ``limit`` (strictest band per ingredient).
    renal_table: bool = False
    # Each pair of active drugs where the first inhibits (or induces) a clearance pathway that
    # the second depends on, at a strength that matters for it (``data/pk_interactions.yaml``),
    # binds ``a`` (the perpetrator), ``b`` (the substrate) and ``pk`` (pathway, effect, advice).
    pk_table: Literal["inhibition", "induction"] | None = None
    # Each active drug a counted-feature dose rule names (``data/dose_features.yaml``), taken
    # for the rule's indication, binds ``a`` and ``features``: ``above`` when enough features
    # are met and the dose is above the reduced one (an unstated dose: verify it), ``below``
    # when every feature is known, too few are met and the dose is the reduced one.
    feature_dose: Literal["above", "below"] | None = None
    roles: RoleTest | None = None
    bound_matches: tuple[str, ...] = ()  # in a point's ``when``: the bound ``a`` matches one
    vaccine: VaccineDue | None = None
    stroke_risk: StrokeRisk | None = None
    recent_event: RecentEvent | None = None
    started_within: str | None = None  # drug ``a`` first ordered within this many days
    recent_orders: RecentOrders | None = None
    stay: StayTest | None = None
    change: ChangeTest | None = None
    weight_dose: WeightCeiling | None = None
    above_weight_max: WeightMaxTest | None = None
    # Pregnant now (True) or not (False), from ``Facts.pregnancy``; binds ``pregnancy``. The
    # gestational-age bounds (param names, whole weeks) hold when the age is not recorded.
    pregnant: bool | None = None
    gestation_weeks_min: str | None = None
    gestation_weeks_max: str | None = None
    lactating: bool | None = None  # breastfeeding now, from ``Facts.lactation``
    level: LevelTest | None = None
    # The record puts the patient in one of these out-of-scope populations (markers of
    # data/scope.yaml, e.g. pregnancy): an exception for advice that does not hold there.
    outside: tuple[str, ...] = ()
    # Drug ``a``'s stated daily dose is above its usual adult maximum (the drug table's
    # ``max_daily_mg``, from data/monographs.yaml or drugs.yaml); an unstated dose never holds.
    above_max_daily: bool = False
    # The latest smoking status says the patient no longer smokes, and a record within this
    # many days (a param name) said they smoked: smoking stopped recently.
    smoking_stopped_within: str | None = None
    # The level test bound a co-prescribed medicine that moves the level (``b``): in a point's
    # ``when``, the point that names the likely cause.
    level_cause: bool = False
    # Each active medicine whose monograph (data/monographs.yaml) names a test and its interval
    # binds ``a`` with that test when the days since its latest result, less the interval,
    # compare with this param (a grace in days) as ``ops`` states, or when there is none:
    # monitoring by the drug's own interval. A monitoring criterion that names the drug and the
    # test stands it down (``interpret``).
    own_monitor_grace: str | None = None
    # At least one alternative must also hold; the first that does extends the binding
    # (e.g. "diabetes OR on metformin").
    any_of: tuple[Trigger, ...] = ()
    # None of these may hold (e.g. "no acute arterial event or thrombolysis within the year").
    none_of: tuple[Trigger, ...] = ()
    # The comparison of each numeric part given above (``NUMERIC_PARTS``), by part name:
    # ``{"age_min": ">="}`` holds from the age the param states.
    ops: dict[str, Op] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _equivalence_named(self) -> Trigger:
        if (self.equivalence is None) != (self.equivalent_daily_min is None):
            raise ValueError("equivalence and equivalent_daily_min are given together")
        if self.equivalence is not None and self.equivalence not in EQUIVALENCE_TABLES:
            raise ValueError(f"unknown equivalence table {self.equivalence!r}")
        return self

    @model_validator(mode="after")
    def _ops_stated(self) -> Trigger:
        given = {p for p in NUMERIC_PARTS if getattr(self, p) is not None}
        if set(self.ops) != given:
            missing, extra = sorted(given - set(self.ops)), sorted(set(self.ops) - given)
            raise ValueError(
                f"ops must state the comparison of exactly the numeric parts given "
                f"(missing {missing}, not given {extra})"
            )
        return self

    @field_validator("drugs", "absent_drugs", "bound_matches")
    @classmethod
    def _specs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _drug_specs(v)


class PointTemplate(_Strict):
    role: str
    stance: Literal["support", "attack"]
    text: str
    cites: tuple[str, ...] = ("a",)  # bindings whose FHIR refs the point cites
    evidence: tuple[str, ...] = ()
    severity: SeverityFactor | None = None  # overrides the criterion's factor for this point
    directness: Directness | None = None
    # The point's own basis when weaker than the facts bound (a speculation, "may loosen..."):
    # the lower of this and the binding's certainty is used.
    certainty: Literal["certain", "probable", "uncertain"] | None = None
    when: Trigger | None = None  # only made when this also holds
    # What the point is about (codes of ``data/themes.yaml``, checked at load) and, for an
    # objection, the concern it raises (answered when the option's ``answers`` names it): both
    # stated here, never read from the text.
    themes: tuple[str, ...] = ()
    concern: str | None = Field(default=None, pattern=r"^[a-z][a-z\-]*$")

    @field_validator("text")
    @classmethod
    def _numbers(cls, v: str) -> str:
        return _no_literal_numbers(v)


class PointUse(_Strict):
    """A reusable point of ``data/points.yaml``, by id, in place of a point spelled out."""

    use: str = Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")


class LibraryPoint(PointTemplate):
    """One reusable point: a point template with the stable id criteria name it by."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")


class PointLibrary(_Strict):
    description: str = ""
    points: tuple[LibraryPoint, ...]

    @model_validator(mode="after")
    def _unique(self) -> PointLibrary:
        ids = [p.id for p in self.points]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"reusable point ids {dup} are defined more than once")
        return self


# The reusable points criteria refer to by id (``{"use": id}``).
POINTS_FILE = DATA_DIR / "points.yaml"


@cache
def reusable_points() -> dict[str, dict[str, Any]]:
    """The reusable points by id, each as a criterion would spell it out (read once)."""
    lib = load_file(POINTS_FILE, PointLibrary)
    return {pt.id: pt.model_dump(exclude={"id"}, exclude_unset=True) for pt in lib.points}


class LabGroup(_Strict):
    """One action per laboratory problem, not one per drug: when the bindings of the
    criteria sharing this ``id`` (a template over the lab, e.g. "opt-lab-sodium-low") hold
    ``min_medicines`` or more distinct medicines, they become one activity whose ``title`` and
    ``description`` name them all (``{drugs}``: the drugs; ``{parts}``: each one's ``part``,
    what it contributes), carrying every drug's own points. A single medicine keeps the
    criterion's own per-drug option. A clinician writes one entry per problem ("low sodium:
    review the drugs that lower it and recheck"), as STOPP/START v3 (2023) frames these
    criteria by the abnormal result."""

    id: str
    title: str
    description: str
    part: str = "{a}"
    min_medicines: int = Field(default=2, ge=2)
    # Criteria (ids) whose action on one of the group's drugs joins the group when it forms:
    # their harm is the very result found (an ACE inhibitor with spironolactone when the
    # potassium is already high), so asking it apart would split one decision in two.
    absorbs_criteria: tuple[str, ...] = ()

    @field_validator("title", "description", "part")
    @classmethod
    def _numbers(cls, v: str) -> str:
        return _no_literal_numbers(v)


class OptionTemplate(_Strict):
    id: str
    title: str
    description: str
    code: tuple[str, str, str] | None = None
    acts_on: str | None = None  # binding whose MedicationRequest the activity changes
    # Title when the dose the criterion rests on is not stated (the activity is to verify it).
    verify_title: str = "Verify the daily dose of {a} (dose not stated)"
    # What the request to verify says in place of ``description``, which states the finding
    # the unknown dose may or may not make true.
    verify_description: str = (
        "The record does not state the daily dose of {a.text}: confirm it, then apply this "
        "check to the confirmed dose."
    )
    urgency: int = Field(default=1, ge=0, le=MAX_URGENCY)
    # How soon to act (``KIND_URGENCY`` and ``urgency_class_of`` when absent): routine for due
    # vaccinations, urgent for a recent high-stakes event the kind does not make urgent.
    urgency_class: UrgencyClass | None = None
    # The option's own priority class where its kind of action is more urgent than the
    # criterion's (stopping or tapering a drug for a harm: safety; starting a missing treatment
    # or a high-value referral: omission); the criterion's ``priority`` when absent.
    priority: Priority | None = None
    # Concerns (a point's ``concern``) the option's own design answers: a gradual taper answers
    # "abrupt-withdrawal", so an objection raising it loses its clash.
    answers: tuple[str, ...] = ()
    # A caveat that changes what to do (confirm the stroke was not a bleed, check calcium and
    # phosphate first): joined to the title, so every view of the activity states it, when
    # ``caveat_when`` holds (always when absent).
    caveat: str | None = None
    caveat_when: Trigger | None = None
    # Option ids (templates over this binding) of other actions on the same medicine that this
    # one settles (switching a drug settles its dose ceiling and the request to verify its
    # dose): when both are proposed they become this one activity, titled ``merged_title``,
    # with every point, fact, problem and criterion of both and the more urgent category,
    # priority and urgency. One medicine, one instruction (NICE NG5, 2015).
    absorbs: tuple[str, ...] = ()
    merged_title: str | None = None
    group: LabGroup | None = None
    # What the activity does (``service.core.model.ACTION_KINDS``), for an option whose id does
    # not say it (``data/actions.yaml`` reads the kind from the id otherwise).
    action: ActionKind | None = None

    @field_validator(
        "title", "description", "verify_title", "verify_description", "merged_title", "caveat"
    )
    @classmethod
    def _numbers(cls, v: str | None) -> str | None:
        return None if v is None else _no_literal_numbers(v)


class ProblemTemplate(_Strict):
    id: str
    display: str
    why: str
    domains: tuple[str, ...] = ("medication",)
    confidence: float = Field(default=0.8, ge=0, le=1)

    @field_validator("display", "why")
    @classmethod
    def _numbers(cls, v: str) -> str:
        return _no_literal_numbers(v)


class Variant(_Strict):
    """Option wording for one renal-band action (avoid, reduce, max-dose, review, monitor)."""

    id: str
    title: str
    category: Category
    priority: Priority
    action: ActionKind | None = None  # as ``OptionTemplate.action``

    @field_validator("title")
    @classmethod
    def _numbers(cls, v: str) -> str:
        return _no_literal_numbers(v)


class Factors(_Strict):
    """Strength factors (see ``inference.knowledge.strength``); certainty of the patient fact
    is read from the facts themselves at evaluation time."""

    severity: SeverityFactor
    grade: Grade
    directness: Directness = "direct"


def _trigger_params(t: Trigger) -> list[str]:
    """Every param name a trigger reads, its alternatives and negations included."""
    used = [
        x
        for x in (
            t.age_min,
            t.age_max,
            t.min_years_on,
            t.min_days_on,
            t.daily_mg_above,
            t.equivalent_daily_min,
            t.started_within,
            t.smoking_stopped_within,
            t.gestation_weeks_min,
            t.gestation_weeks_max,
            t.own_monitor_grace,
        )
        if x
    ]
    if t.vaccine is not None:
        used += [x for x in (t.vaccine.within_days, t.vaccine.doses, t.vaccine.final_at_age) if x]
    if t.weight_dose is not None:
        w = t.weight_dose
        used += [x for x in (w.per_dose, w.per_day, w.rounding, w.weight_days) if x]
    if t.above_weight_max is not None:
        used.append(t.above_weight_max.weight_days)
    if t.stroke_risk is not None:
        used += [t.stroke_risk.min_male, t.stroke_risk.min_female]
    if t.recent_event is not None:
        used.append(t.recent_event.days)
        if t.recent_event.min_events:
            used.append(t.recent_event.min_events)
    if t.recent_orders is not None:
        used.append(t.recent_orders.days)
    if t.stay is not None and t.stay.within_days:
        used.append(t.stay.within_days)
    if t.level is not None and t.level.days:
        used.append(t.level.days)
    if t.roles is not None and t.roles.stopped_within:
        used.append(t.roles.stopped_within)
    used += [lab.param for lab in t.labs]
    if t.monitor is not None:
        used.append(t.monitor.days)
    if t.count is not None:
        used.append(t.count.min)
        if t.count.min_medicines:
            used.append(t.count.min_medicines)
    for sub in (*t.any_of, *t.none_of):
        used += _trigger_params(sub)
    return used


Status = Literal["draft", "active", "retired"]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
# A knowledge version: year, month and the release within it (``2026.12-1``); sorts as text.
VERSION_PATTERN = r"^[0-9]{4}\.[0-9]{2}-[0-9]+$"


class Criterion(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9\-]*$")
    # Governance: only an ``active`` criterion fires (a ``draft`` one too where a site enables
    # drafts for testing, ``knowledge.drafts``); ``retired`` ones stay in the data, with their
    # history. ``version`` is the knowledge release (the change log's) that last changed it.
    status: Status
    version: str = Field(pattern=VERSION_PATTERN)
    last_reviewed: date
    reviewer_role: str = Field(pattern=r"^[a-z][a-z\-]*$")
    kind: Kind
    source: str
    source_id: str
    year: int = Field(ge=1990, le=2030)
    priority: Priority
    category: Category
    trigger: Trigger
    exceptions: tuple[Trigger, ...] = ()
    params: dict[str, float] = Field(default_factory=dict)
    option: OptionTemplate
    problem: ProblemTemplate | None = None
    points: tuple[PointTemplate, ...] = Field(min_length=1)
    evidence: tuple[str, ...] = Field(min_length=1)
    factors: Factors
    variants: dict[str, Variant] = Field(default_factory=dict)  # renal_table criteria only
    high_risk: bool = False  # counts toward the case's complexity
    negative_case: str = ""  # test hint: which exception the table-driven test exercises
    # Criteria that stand this one down: a firing whose medicines a firing of one of these
    # already names gives way to it, so no line is said twice (``stand_down.py``).
    yields_to: tuple[str, ...] = ()

    @field_validator("points", mode="before")
    @classmethod
    def _reused(cls, v: object) -> object:
        """Each ``{"use": id}`` point as the reusable point of that id (``data/points.yaml``);
        the loader has put them in place already, naming the place of a bad one."""
        if not isinstance(v, list | tuple):
            return v
        lib = reusable_points()
        out: list[object] = []
        for pt in v:
            if isinstance(pt, dict) and set(pt) == {"use"}:
                if pt["use"] not in lib:
                    raise ValueError(f"unknown reusable point {pt['use']!r}")
                out.append(dict(lib[pt["use"]]))
            else:
                out.append(pt)
        return out

    @model_validator(mode="after")
    def _params_named(self) -> Criterion:
        triggers = (self.trigger, *self.exceptions, *(p.when for p in self.points if p.when))
        if self.option.caveat_when is not None:
            triggers = (*triggers, self.option.caveat_when)
        used = [x for t in triggers for x in _trigger_params(t)]
        missing = sorted(set(used) - set(self.params))
        if missing:
            raise ValueError(f"params {missing} are used but not defined in 'params'")
        texts = [self.option.title, self.option.description, *(p.text for p in self.points)]
        texts += [self.option.caveat] if self.option.caveat else []
        if self.problem is not None:
            texts += [self.problem.display, self.problem.why]
        if self.option.group is not None:
            g = self.option.group
            texts += [g.title, g.description, g.part]
        for text in texts:
            for name in re.findall(r"\{param\.([a-z_0-9]+)\}", text):
                if name not in self.params:
                    raise ValueError(f"template uses {{param.{name}}} not defined in 'params'")
        return self


def urgency_class_of(c: Criterion) -> UrgencyClass:
    """How soon to act on ``c``'s activity: the option's own class, else by kind, lifted for
    the most urgent safety criteria (see ``KIND_URGENCY``)."""
    if c.option.urgency_class is not None:
        return c.option.urgency_class
    given = KIND_URGENCY[c.kind]
    if given == "resolve-first":
        return given
    if c.priority == "safety" and c.option.urgency >= MAX_URGENCY:
        return "urgent"
    if given == "routine" and c.priority in ("safety", "omission"):
        return "soon"
    return given


class CriteriaFile(_Strict):
    # The knowledge version comes from the change log (``data/changelog.yaml``); a site file may
    # still carry its own label here, which is not read.
    version: str | None = None
    description: str = ""
    criteria: tuple[Criterion, ...]
