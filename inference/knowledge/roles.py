"""The agent pool (CANOE eq. 3): each role's expertise domains, priorities and style.

``order`` is the fixed tie-break when two roles are equally relevant to a case. Tables only.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.evaluation import CATEGORY_ORDER

__all__ = [
    "CATEGORY_RELEVANCE",
    "DOMAIN_ROLES",
    "POOL",
    "ROLE_BY_NAME",
    "SEVERE_GROUPS",
    "AgentProfile",
]


@dataclass(frozen=True, slots=True)
class AgentProfile:
    role: str
    title: str
    expertise: tuple[str, ...]  # problem domains this role votes on (others: NEUTRAL)
    priorities: tuple[str, ...]
    style: str
    order: int


POOL: tuple[AgentProfile, ...] = (
    AgentProfile(
        "gp",
        "general practitioner",
        (
            "general",
            "cardiovascular",
            "metabolic",
            "renal",
            "respiratory",
            "musculoskeletal",
            "endocrine",
            "mental",
            "cognition",
            "neuro",
            "medication",
            "oncology",
            "nutrition",
            "falls",
            "function",
        ),
        ("whole-person care", "continuity", "treatment burden"),
        "balances benefits against burden for this person",
        0,
    ),
    AgentProfile(
        "pharmacist",
        "clinical pharmacist",
        ("medication", "renal"),
        ("medication safety", "interactions", "renal dosing", "deprescribing"),
        "precise, cites drug and dose",
        1,
    ),
    AgentProfile(
        "nurse",
        "community nurse",
        ("general", "function", "falls", "metabolic", "cardiovascular", "respiratory"),
        ("monitoring", "self-management", "safety at home"),
        "practical, thinks about what happens at home",
        2,
    ),
    AgentProfile(
        "geriatrician",
        "geriatrician",
        (
            "general",
            "cognition",
            "falls",
            "function",
            "medication",
            "cardiovascular",
            "musculoskeletal",
            "neuro",
            "renal",
            "metabolic",
        ),
        ("frailty", "function", "goals of care", "time to benefit"),
        "weighs life expectancy and frailty",
        3,
    ),
    AgentProfile(
        "cardiologist",
        "cardiologist",
        ("cardiovascular",),
        ("thrombosis and bleeding", "rate and rhythm", "secondary prevention"),
        "risk-based, quantifies thrombotic against bleeding risk",
        4,
    ),
    AgentProfile(
        "nephrologist",
        "nephrologist",
        ("renal",),
        ("kidney protection", "renal dosing", "electrolytes"),
        "guards kidney function and potassium",
        5,
    ),
    AgentProfile(
        "endocrinologist",
        "endocrinologist",
        ("metabolic", "endocrine"),
        ("glycaemic control", "hypoglycaemia avoidance"),
        "individualises targets",
        6,
    ),
    AgentProfile(
        "psychiatrist",
        "old-age psychiatrist",
        ("mental", "cognition"),
        ("mood", "cognition", "psychotropic safety"),
        "attends to mood, behaviour and psychotropic harm",
        7,
    ),
    AgentProfile(
        "physiotherapist",
        "physiotherapist",
        ("musculoskeletal", "falls", "function", "respiratory"),
        ("mobility", "strength and balance", "pain self-management"),
        "activity-focused",
        8,
    ),
    AgentProfile(
        "occupational-therapist",
        "occupational therapist",
        ("function", "falls", "cognition"),
        ("home safety", "daily activities", "independence"),
        "environment-focused",
        9,
    ),
    AgentProfile(
        "social-worker",
        "social worker",
        ("social", "caregiver"),
        ("social needs", "safety", "caregiver capacity"),
        "advocates for the person's circumstances",
        10,
    ),
    AgentProfile(
        "dietitian",
        "dietitian",
        ("nutrition", "metabolic"),
        ("nutrition", "weight", "glycaemic diet"),
        "practical dietary advice",
        11,
    ),
    AgentProfile(
        "care-coordinator",
        "care coordinator",
        ("caregiver", "social"),
        ("coordination", "appointments", "treatment burden"),
        "thinks about how the plan is delivered",
        12,
    ),
    AgentProfile(
        "oncologist",
        "oncologist",
        ("oncology",),
        ("anticancer treatment", "treatment toxicity", "interactions with cancer therapy"),
        "weighs every change against the cancer treatment plan",
        13,
    ),
    AgentProfile(
        "addiction-psychiatrist",
        "addiction psychiatrist",
        ("mental", "medication"),
        ("overdose prevention", "withdrawal management", "relapse prevention"),
        "attends to dependence, overdose risk and safe prescribing",
        14,
    ),
)

# Roles a domain present in the record puts on the panel, whatever the complexity (the
# configured sizes are a floor, never a cap that removes a needed role). Condition groups are
# ``inference.knowledge.conditions`` keys; the other triggers are evaluated in
# ``inference.embedded`` (medication criterion or >= 5 medicines, age >= 75, eGFR < 30).
DOMAIN_ROLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cardiologist", ("heart-failure", "af", "chd")),
    ("physiotherapist", ("copd",)),
    ("oncologist", ("cancer",)),
    ("addiction-psychiatrist", ("overdose",)),
)

# Condition groups counted as severe by the complexity floor of ``inference.embedded``.
SEVERE_GROUPS: frozenset[str] = frozenset(
    {"heart-failure", "copd", "stroke", "ckd", "diabetic-kidney", "cancer", "dementia", "af"}
)

ROLE_BY_NAME: dict[str, AgentProfile] = {a.role: a for a in POOL}

# How relevant each role's view is to each plan category (0-3); used only to break near-ties
# in clash adjudication, after safety, grade and specificity.
CATEGORY_RELEVANCE: dict[str, dict[str, int]] = {
    "gp": dict.fromkeys(CATEGORY_ORDER, 2),
    "pharmacist": {"immediate-safety": 3, "medication": 3, "monitoring": 2},
    "nurse": {"monitoring": 3, "immediate-safety": 2, "rehabilitation": 2, "follow-up": 2},
    "geriatrician": {
        "medication": 2,
        "rehabilitation": 2,
        "follow-up": 2,
        "immediate-safety": 2,
        "mental-health": 2,
        "referral": 2,
    },
    "cardiologist": {"immediate-safety": 3, "medication": 2, "monitoring": 2},
    "nephrologist": {"medication": 2, "monitoring": 3, "referral": 3},
    "endocrinologist": {"medication": 2, "monitoring": 3},
    "psychiatrist": {"mental-health": 3, "medication": 1},
    "physiotherapist": {"rehabilitation": 3},
    "occupational-therapist": {"rehabilitation": 3, "caregiver-support": 1},
    "social-worker": {"caregiver-support": 3, "referral": 2},
    "dietitian": {"monitoring": 1, "rehabilitation": 1},
    "care-coordinator": {"caregiver-support": 2, "follow-up": 3, "referral": 2},
    "oncologist": {"medication": 2, "referral": 2},
    "addiction-psychiatrist": {"immediate-safety": 3, "medication": 2, "mental-health": 3},
}
