"""Rule tables: interactions, renal dose limits, monitoring windows, LOINC codes.

Plain data read by ``inference.knowledge.rules``. Specs name a drug (``drug:warfarin``) or a
class (``class:nsaid``, see ``drugs.CLASS_LABELS``). Evidence ids refer to
``inference/evidence_base.json``. Windows are in days before ``PatientProfile.as_of``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EGFR_LOINCS",
    "INTERACTIONS",
    "LOINC_BMI",
    "LOINC_DBP",
    "LOINC_MMSE",
    "LOINC_POTASSIUM",
    "LOINC_SBP",
    "LOINC_UACR",
    "MONITORING",
    "RENAL_LIMITS",
    "SIMVASTATIN_CEILINGS",
    "Interaction",
    "MonitoringRule",
    "RenalLimit",
]

EGFR_LOINCS = ("33914-3", "62238-1", "98979-8", "48642-3", "48643-1", "88293-6", "88294-4")
LOINC_BMI = "39156-5"
LOINC_SBP = "8480-6"
LOINC_DBP = "8462-4"
LOINC_POTASSIUM = ("6298-4", "2823-3")
LOINC_UACR = ("14959-1", "9318-7")
LOINC_MMSE = ("72106-8",)


@dataclass(frozen=True, slots=True)
class Interaction:
    """A pair of active drugs that should not run together unchecked. ``change`` is the side
    whose MedicationRequest the option acts on; ``action`` the option verb (stop, review,
    reduce, taper), combined with that drug's name into the option id."""

    key: str
    a: str
    b: str
    severity: str  # high | moderate
    effect: str
    action: str
    change: str  # "a" | "b"
    evidence: tuple[str, ...]
    domains: tuple[str, ...] = ("medication",)


INTERACTIONS: tuple[Interaction, ...] = (
    Interaction(
        "anticoag-nsaid",
        "class:anticoagulant",
        "class:nsaid",
        "high",
        "a large rise in the risk of gastrointestinal and other major bleeding",
        "stop",
        "b",
        ("EB-DDI-001", "EB-MEDSAFE-006"),
    ),
    Interaction(
        "anticoag-antiplatelet",
        "class:anticoagulant",
        "class:antiplatelet",
        "high",
        "additive bleeding risk from an anticoagulant and an antiplatelet together",
        "review",
        "b",
        ("EB-DDI-002", "EB-CV-005"),
        ("medication", "cardiovascular"),
    ),
    Interaction(
        "anticoag-ssri",
        "class:anticoagulant",
        "class:ssri",
        "moderate",
        "more bleeding because SSRIs impair platelet function",
        "review",
        "b",
        ("EB-DDI-003",),
    ),
    Interaction(
        "vka-amiodarone",
        "class:vka",
        "class:amiodarone",
        "high",
        "a rise in INR and bleeding risk",
        "review",
        "b",
        ("EB-DDI-004",),
    ),
    Interaction(
        "vka-antibiotic",
        "class:vka",
        "class:interacting-antibiotic",
        "high",
        "a rise in INR and bleeding risk",
        "review",
        "b",
        ("EB-DDI-004",),
    ),
    Interaction(
        "digoxin-ratelimiting",
        "class:cardiac-glycoside",
        "class:rate-limiting-ccb",
        "high",
        "higher digoxin levels and additive slowing of the heart rate",
        "reduce",
        "a",
        ("EB-DDI-005", "EB-RENAL-003"),
        ("medication", "cardiovascular"),
    ),
    Interaction(
        "digoxin-amiodarone",
        "class:cardiac-glycoside",
        "class:amiodarone",
        "high",
        "digoxin levels that can double, with bradycardia and toxicity",
        "reduce",
        "a",
        ("EB-DDI-005",),
        ("medication", "cardiovascular"),
    ),
    Interaction(
        "ras-acei-ksparing",
        "class:acei",
        "class:potassium-sparing",
        "high",
        "hyperkalaemia, worse with reduced kidney function",
        "review",
        "b",
        ("EB-DDI-006", "EB-CKD-002"),
        ("medication", "renal"),
    ),
    Interaction(
        "ras-arb-ksparing",
        "class:arb",
        "class:potassium-sparing",
        "high",
        "hyperkalaemia, worse with reduced kidney function",
        "review",
        "b",
        ("EB-DDI-006", "EB-CKD-002"),
        ("medication", "renal"),
    ),
    Interaction(
        "ras-acei-ksupp",
        "class:acei",
        "class:potassium-supplement",
        "high",
        "hyperkalaemia",
        "review",
        "b",
        ("EB-DDI-006",),
        ("medication", "renal"),
    ),
    Interaction(
        "opioid-benzo",
        "class:opioid",
        "class:benzodiazepine",
        "high",
        "respiratory depression, oversedation and overdose",
        "taper",
        "b",
        ("EB-DDI-007", "EB-MEDSAFE-001"),
    ),
    Interaction(
        "antiplatelet-nsaid",
        "class:antiplatelet",
        "class:nsaid",
        "moderate",
        "gastrointestinal bleeding",
        "stop",
        "b",
        ("EB-DDI-010", "EB-MEDSAFE-006"),
    ),
    Interaction(
        "ssri-nsaid",
        "class:ssri",
        "class:nsaid",
        "moderate",
        "gastrointestinal bleeding",
        "stop",
        "b",
        ("EB-DDI-010",),
    ),
    Interaction(
        "ache-ratelimiting",
        "class:cholinesterase-inhibitor",
        "class:rate-limiting-ccb",
        "moderate",
        "bradycardia, dizziness and syncope",
        "review",
        "a",
        ("EB-MEDSAFE-010",),
        ("medication", "cardiovascular", "falls"),
    ),
    Interaction(
        "ache-digoxin",
        "class:cholinesterase-inhibitor",
        "class:cardiac-glycoside",
        "moderate",
        "bradycardia, dizziness and syncope",
        "review",
        "a",
        ("EB-MEDSAFE-010",),
        ("medication", "cardiovascular", "falls"),
    ),
    Interaction(
        "ache-betablocker",
        "class:cholinesterase-inhibitor",
        "class:beta-blocker",
        "moderate",
        "bradycardia, dizziness and syncope",
        "review",
        "a",
        ("EB-MEDSAFE-010",),
        ("medication", "cardiovascular", "falls"),
    ),
)

# Simvastatin dose ceilings with interacting drugs (mg/day): above them myopathy risk rises.
SIMVASTATIN_CEILINGS: tuple[tuple[str, float], ...] = (
    ("class:rate-limiting-ccb", 10.0),
    ("class:amiodarone", 20.0),
    ("drug:amlodipine", 20.0),
)


@dataclass(frozen=True, slots=True)
class RenalLimit:
    """Below ``below`` mL/min/1.73m2 the drug needs ``action`` (stop | reduce | review)."""

    spec: str
    below: float
    action: str
    advice: str
    evidence: tuple[str, ...]
    urgent: bool = False


RENAL_LIMITS: tuple[RenalLimit, ...] = (
    RenalLimit(
        "drug:metformin",
        30.0,
        "stop",
        "metformin is contraindicated below eGFR 30 (lactic acidosis)",
        ("EB-RENAL-001",),
        urgent=True,
    ),
    RenalLimit(
        "drug:metformin",
        45.0,
        "reduce",
        "below eGFR 45 metformin should not exceed about 1000 mg a day and kidney "
        "function needs checking every 3-6 months",
        ("EB-RENAL-001",),
    ),
    RenalLimit(
        "class:nsaid",
        30.0,
        "stop",
        "NSAIDs should be avoided below eGFR 30",
        ("EB-MEDSAFE-007", "EB-CKD-005"),
        urgent=True,
    ),
    RenalLimit(
        "drug:digoxin",
        50.0,
        "reduce",
        "digoxin is cleared by the kidney; with reduced function the dose should be "
        "lower and levels checked",
        ("EB-RENAL-003",),
    ),
    RenalLimit(
        "class:bisphosphonate",
        35.0,
        "stop",
        "alendronate is not recommended below a clearance of about 35",
        ("EB-RENAL-004",),
    ),
    RenalLimit(
        "drug:rivaroxaban", 50.0, "review", "rivaroxaban needs a lower dose", ("EB-RENAL-005",)
    ),
    RenalLimit(
        "drug:dabigatran",
        30.0,
        "stop",
        "dabigatran should be avoided",
        ("EB-RENAL-005",),
        urgent=True,
    ),
    RenalLimit(
        "drug:gabapentin", 60.0, "reduce", "gabapentin needs a lower dose", ("EB-RENAL-002",)
    ),
    RenalLimit(
        "class:potassium-sparing",
        30.0,
        "stop",
        "potassium-sparing diuretics risk hyperkalaemia",
        ("EB-RENAL-002",),
        urgent=True,
    ),
    RenalLimit(
        "drug:glyburide",
        60.0,
        "stop",
        "glyburide risks prolonged hypoglycaemia",
        ("EB-RENAL-002", "EB-MEDSAFE-005"),
    ),
)


@dataclass(frozen=True, slots=True)
class MonitoringRule:
    """A test due when any trigger (condition group or drug/class spec) is present and no
    result of ``loincs`` falls within ``window_days`` before the profile's ``as_of``."""

    key: str
    test: str
    loincs: tuple[str, ...]
    window_days: int
    conditions: tuple[str, ...]
    drugs: tuple[str, ...]
    evidence: tuple[str, ...]
    roles: tuple[str, ...]  # first: the role who argues it most strongly
    why: str


MONITORING: tuple[MonitoringRule, ...] = (
    MonitoringRule(
        "hba1c",
        "HbA1c",
        ("4548-4", "17856-6"),
        183,
        ("diabetes",),
        (),
        ("EB-DM-001", "EB-DM-002"),
        ("nurse", "endocrinologist", "gp"),
        "glycaemic control and hypoglycaemia risk cannot be judged without it",
    ),
    MonitoringRule(
        "uacr",
        "urine albumin-creatinine ratio",
        LOINC_UACR,
        365,
        ("diabetes", "ckd"),
        (),
        ("EB-DM-003", "EB-CKD-004"),
        ("nephrologist", "nurse", "gp"),
        "albuminuria stages kidney risk and guides kidney-protective treatment",
    ),
    MonitoringRule(
        "egfr",
        "eGFR (creatinine)",
        EGFR_LOINCS,
        365,
        ("diabetes", "ckd", "heart-failure"),
        ("drug:metformin", "class:acei", "class:arb", "drug:digoxin", "class:doac"),
        ("EB-CKD-004", "EB-RENAL-002"),
        ("nephrologist", "pharmacist", "gp"),
        "doses of kidney-cleared drugs and CKD staging depend on a current eGFR",
    ),
    MonitoringRule(
        "potassium",
        "potassium",
        LOINC_POTASSIUM,
        365,
        (),
        ("class:acei", "class:arb", "class:potassium-sparing", "class:loop-diuretic"),
        ("EB-CKD-002", "EB-CV-008"),
        ("pharmacist", "nephrologist", "nurse"),
        "these drugs shift potassium and need periodic checks",
    ),
    MonitoringRule(
        "inr",
        "INR",
        ("6301-6", "34714-6"),
        84,
        (),
        ("class:vka",),
        ("EB-CV-006",),
        ("pharmacist", "nurse", "cardiologist"),
        "warfarin needs INR checks at least every 12 weeks even when stable",
    ),
    MonitoringRule(
        "bp",
        "blood pressure",
        (LOINC_SBP, "55284-4", "85354-9"),
        365,
        ("hypertension",),
        (),
        ("EB-CV-002", "EB-CV-001"),
        ("nurse", "gp"),
        "treatment cannot be titrated without a current reading",
    ),
    MonitoringRule(
        "weight",
        "body weight",
        ("29463-7",),
        90,
        ("heart-failure",),
        (),
        ("EB-CV-008",),
        ("nurse", "cardiologist", "dietitian"),
        "weight gain is the earliest sign of fluid overload in heart failure",
    ),
    MonitoringRule(
        "tsh",
        "TSH",
        ("3016-3",),
        365,
        ("hypothyroidism",),
        ("class:thyroid-hormone",),
        ("EB-CV-010",),
        ("gp", "endocrinologist"),
        "levothyroxine dosing needs a yearly TSH once stable",
    ),
    MonitoringRule(
        "cognition",
        "cognitive assessment (MMSE or equivalent)",
        ("72106-8", "72172-0"),
        365,
        ("dementia",),
        (),
        ("EB-COG-002",),
        ("geriatrician", "psychiatrist", "occupational-therapist"),
        "dementia care plans need a yearly review of cognition and function",
    ),
    MonitoringRule(
        "phq9",
        "depression score (PHQ-9)",
        ("44261-6",),
        183,
        ("depression",),
        (),
        ("EB-MOOD-001",),
        ("psychiatrist", "gp"),
        "response to depression treatment should be measured, not assumed",
    ),
)
