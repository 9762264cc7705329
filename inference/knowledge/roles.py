"""The agent pool (CANOE eq. 3): each role's expertise domains, priorities and style.

``order`` is the fixed tie-break when two roles are equally relevant to a case. Tables only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = [
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
    order: int = 0  # its place in ``POOL``


_ROLES: tuple[AgentProfile, ...] = (
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
    ),
    AgentProfile(
        "pharmacist",
        "clinical pharmacist",
        ("medication", "renal"),
        ("medication safety", "interactions", "renal dosing", "deprescribing"),
        "precise, cites drug and dose",
    ),
    AgentProfile(
        "nurse",
        "community nurse",
        ("general", "function", "falls", "metabolic", "cardiovascular", "respiratory"),
        ("monitoring", "self-management", "safety at home"),
        "practical, thinks about what happens at home",
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
    ),
    AgentProfile(
        "cardiologist",
        "cardiologist",
        ("cardiovascular",),
        ("thrombosis and bleeding", "rate and rhythm", "secondary prevention"),
        "risk-based, quantifies thrombotic against bleeding risk",
    ),
    AgentProfile(
        "nephrologist",
        "nephrologist",
        ("renal",),
        ("kidney protection", "renal dosing", "electrolytes"),
        "guards kidney function and potassium",
    ),
    AgentProfile(
        "endocrinologist",
        "endocrinologist",
        ("metabolic", "endocrine"),
        ("glycaemic control", "hypoglycaemia avoidance"),
        "individualises targets",
    ),
    AgentProfile(
        "psychiatrist",
        "old-age psychiatrist",
        ("mental", "cognition"),
        ("mood", "cognition", "psychotropic safety"),
        "attends to mood, behaviour and psychotropic harm",
    ),
    AgentProfile(
        "physiotherapist",
        "physiotherapist",
        ("musculoskeletal", "falls", "function", "respiratory"),
        ("mobility", "strength and balance", "pain self-management"),
        "activity-focused",
    ),
    AgentProfile(
        "occupational-therapist",
        "occupational therapist",
        ("function", "falls", "cognition"),
        ("home safety", "daily activities", "independence"),
        "environment-focused",
    ),
    AgentProfile(
        "social-worker",
        "social worker",
        ("social", "caregiver"),
        ("social needs", "safety", "caregiver capacity"),
        "advocates for the person's circumstances",
    ),
    AgentProfile(
        "dietitian",
        "dietitian",
        ("nutrition", "metabolic"),
        ("nutrition", "weight", "glycaemic diet"),
        "practical dietary advice",
    ),
    AgentProfile(
        "care-coordinator",
        "care coordinator",
        ("caregiver", "social"),
        ("coordination", "appointments", "treatment burden"),
        "thinks about how the plan is delivered",
    ),
    AgentProfile(
        "oncologist",
        "oncologist",
        ("oncology",),
        ("anticancer treatment", "treatment toxicity", "interactions with cancer therapy"),
        "weighs every change against the cancer treatment plan",
    ),
    AgentProfile(
        "addiction-psychiatrist",
        "addiction psychiatrist",
        ("mental", "medication"),
        ("overdose prevention", "withdrawal management", "relapse prevention"),
        "attends to dependence, overdose risk and safe prescribing",
    ),
)
# ``order`` is each role's place in the list above.
POOL: tuple[AgentProfile, ...] = tuple(replace(a, order=i) for i, a in enumerate(_ROLES))


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
