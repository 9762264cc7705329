"""Hand-built, realistic deliberations for mapping tests (reusable by any test package).

``small_deliberation()`` is an older patient with falls, type 2 diabetes and insomnia on a
Z-drug: three options (deprescribe the hypnotic, HbA1c monitoring, a physiotherapy referral),
arguments from four roles citing the patient's resources, an argument -> argument support,
two arena clashes, and problems on each router path. Worked by hand (router delta 0.2,
beta 0.15): the deprescribing option scores about 0.73 and is included; rejecting its strongest
supporter ``arg-pharm-zdrug`` leaves one supporter (0.5) against one attacker (0.6), so its
score falls to about 0.495 and it drops out. The referral is excluded by score.
"""

from __future__ import annotations

from dataclasses import replace

from service.core import find_clashes
from service.core.model import (
    Argument,
    Clash,
    Deliberation,
    Edge,
    Finding,
    Meta,
    Option,
    Parameters,
    Problem,
    Vote,
)
from service.record.profile import PatientProfile

__all__ = [
    "PATIENT",
    "PLAN_ID",
    "PRACTITIONER",
    "deliberation_from_profile",
    "input_resources",
    "small_deliberation",
]

PLAN_ID = "plan-7f3a9c"
PATIENT = "Patient/pat-001"
PRACTITIONER = "Practitioner/prac-042"
LOINC = "http://loinc.org"

_REFS = (
    PATIENT,
    "Condition/cond-falls",
    "Condition/cond-t2dm",
    "Condition/cond-insomnia",
    "Condition/cond-obesity",
    "MedicationRequest/mr-zolpidem",
    "MedicationRequest/mr-metformin",
    "Observation/obs-hba1c",
    "Observation/obs-egfr",
    "Encounter/enc-1",
)


def input_resources() -> dict[str, dict[str, object]]:
    """The patient's resources the deliberation cites, as minimal R4 JSON (ref -> resource):
    what the EHR's input Bundle would hold, for reference-resolution checks."""
    out: dict[str, dict[str, object]] = {}
    for ref in _REFS:
        kind, rid = ref.split("/")
        out[ref] = {"resourceType": kind, "id": rid}
    return out


def _arg(
    aid: str, role: str, stance: str, text: str, tau: float, *, evidence=(), facts=()
) -> Argument:
    return Argument(
        id=aid,
        role=role,
        stance=stance,  # type: ignore[arg-type]
        text=text,
        evidence=tuple(evidence),
        facts=tuple(facts),
        tau=tau,
    )


def small_deliberation(**changes: object) -> Deliberation:
    deprescribe = Option(
        id="opt-deprescribe-zolpidem",
        title="Taper and stop zolpidem",
        category="medication",
        description="Reduce zolpidem by 25% every two weeks; offer CBT for insomnia.",
        arguments=(
            _arg(
                "arg-pharm-zdrug",
                "pharmacist",
                "support",
                "Z-drugs raise fall and fracture risk in older adults.",
                0.7,
                evidence=("ev-beers-2023-zdrugs",),
                facts=("MedicationRequest/mr-zolpidem", "Condition/cond-falls"),
            ),
            _arg(
                "arg-nurse-falls",
                "nurse",
                "support",
                "Two falls at night in the last six months.",
                0.5,
                evidence=("ev-falls-nice",),
                facts=("Condition/cond-falls", "Encounter/enc-1"),
            ),
            _arg(
                "arg-gp-insomnia",
                "general practitioner",
                "attack",
                "Insomnia may rebound; the patient values sleep.",
                0.6,
                evidence=("ev-insomnia-cbt",),
                facts=("Condition/cond-insomnia",),
            ),
        ),
        edges=(
            Edge("arg-pharm-zdrug", "opt-deprescribe-zolpidem", "support"),
            Edge("arg-nurse-falls", "opt-deprescribe-zolpidem", "support"),
            Edge("arg-nurse-falls", "arg-pharm-zdrug", "support"),
            Edge("arg-gp-insomnia", "opt-deprescribe-zolpidem", "attack"),
        ),
        clashes=(Clash("arg-pharm-zdrug", "arg-gp-insomnia", "support"),),
        refs=("MedicationRequest/mr-zolpidem",),
        problem_ids=("prob-falls", "prob-insomnia"),
        medication_ref="MedicationRequest/mr-zolpidem",
        findings=(Finding("drug-age", "major", "beers-z-drugs"),),
    )
    monitoring = Option(
        id="opt-hba1c-monitoring",
        title="HbA1c every 3 months",
        category="monitoring",
        description="Check HbA1c every three months until two values are on target.",
        arguments=(
            _arg(
                "arg-gp-hba1c",
                "general practitioner",
                "support",
                "Last HbA1c 8.4% is above the individual target.",
                0.7,
                evidence=("ev-ada-older-adults",),
                facts=("Observation/obs-hba1c", "Condition/cond-t2dm"),
            ),
            _arg(
                "arg-pharm-metformin",
                "pharmacist",
                "support",
                "Metformin dose depends on eGFR; monitor together.",
                0.6,
                evidence=("ev-metformin-renal",),
                facts=("MedicationRequest/mr-metformin", "Observation/obs-egfr"),
            ),
        ),
        edges=(
            Edge("arg-gp-hba1c", "opt-hba1c-monitoring", "support"),
            Edge("arg-pharm-metformin", "opt-hba1c-monitoring", "support"),
        ),
        problem_ids=("prob-t2dm",),
        code=(LOINC, "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood"),
    )
    referral = Option(
        id="opt-pt-referral",
        title="Physiotherapy referral for balance training",
        category="rehabilitation",
        description="Refer to community physiotherapy for strength and balance training.",
        arguments=(
            _arg(
                "arg-pt-balance",
                "physiotherapist",
                "support",
                "Balance training reduces falls.",
                0.45,
                evidence=("ev-falls-nice",),
                facts=("Condition/cond-falls",),
            ),
            _arg(
                "arg-nurse-attends",
                "nurse",
                "attack",
                "Already attends a weekly falls-prevention class.",
                0.6,
                facts=("Encounter/enc-1",),
            ),
        ),
        edges=(
            Edge("arg-pt-balance", "opt-pt-referral", "support"),
            Edge("arg-nurse-attends", "opt-pt-referral", "attack"),
        ),
        clashes=(Clash("arg-pt-balance", "arg-nurse-attends", "attack"),),
        problem_ids=("prob-falls",),
    )
    problems = (
        Problem(
            id="prob-falls",
            display="Recurrent falls",
            initial="accept",
            votes=(
                Vote("pharmacist", "KEEP", 0.9, "two falls", "sedative load"),
                Vote("nurse", "KEEP", 0.8, "falls at night", "night-time falls"),
                Vote("general practitioner", "NEUTRAL", 0.5, "", "not my focus"),
            ),
            refs=("Condition/cond-falls",),
        ),
        Problem(
            id="prob-t2dm",
            display="Type 2 diabetes above target",
            initial="accept",
            votes=(
                Vote("general practitioner", "KEEP", 0.8, "HbA1c 8.4%", "above target"),
                Vote("nurse", "REFUSE", 0.4, "", "stable for years"),
            ),
            refs=("Condition/cond-t2dm", "Observation/obs-hba1c"),
            arbitration="accept",
            arbitration_rationale="The recent HbA1c is above the individual target.",
        ),
        Problem(
            id="prob-insomnia",
            display="Chronic insomnia",
            initial="accept",
            votes=(Vote("general practitioner", "NEUTRAL", 0.5, "", ""),),
            refs=("Condition/cond-insomnia",),
        ),
        Problem(
            id="prob-obesity",
            display="Obesity",
            initial="reject",
            votes=(
                Vote("pharmacist", "REFUSE", 0.6, "", "not relevant now"),
                Vote("nurse", "REFUSE", 0.6, "", "weight stable"),
            ),
            refs=("Condition/cond-obesity",),
        ),
    )
    d = Deliberation(
        plan_id=PLAN_ID,
        version=1,
        patient_ref=PATIENT,
        parameters=Parameters(),
        problems=problems,
        options=(deprescribe, monitoring, referral),
        meta=Meta(
            backend="embedded-experts/0.1",
            evidence_version="kb-2026.11",
            complexity="high",
            dimensions=("falls", "polypharmacy", "glycaemic control"),
            panel=(
                ("pharmacist", "fall-risk drugs"),
                ("nurse", "falls and daily function"),
                ("general practitioner", "diabetes and sleep"),
                ("physiotherapist", "mobility"),
            ),
            missing=("dietitian: no answer within the deadline",),
            synthesis="Reduce the sedative load first; keep diabetes monitoring going.",
            created="2026-11-30T09:00:00Z",
        ),
    )
    return _adjudicated(replace(d, **changes))  # type: ignore[arg-type]


def deliberation_from_profile(
    profile: PatientProfile, *, plan_id: str = "plan-real"
) -> Deliberation:
    """A deliberation over a real ingested profile: its active problems, one review option per
    active medication (citing the MedicationRequest, a problem and the latest observation) and a
    follow-up option, with deterministic strengths so some options clear the threshold and some
    do not. The reasoning is hand-made; every reference is the profile's own."""
    problems = tuple(
        Problem(
            id=f"prob-{k}",
            display=p.text or p.ref,
            initial="accept" if k % 3 else "reject",
            votes=(
                Vote("pharmacist", ("KEEP", "REFUSE", "NEUTRAL")[k % 3], 0.7, "", "r"),
                Vote("nurse", "KEEP", 0.6, "", "r"),
            ),
            refs=(p.ref,),
            arbitration="accept" if k % 3 == 1 else None,
        )
        for k, p in enumerate(profile.active_problems[:6])
    )
    obs = tuple(o.ref for o in profile.observations[:1])
    cond = tuple(p.ref for p in profile.active_problems[:1])
    options: list[Option] = []
    for k, m in enumerate(profile.active_medications[:4]):
        oid = f"opt-med-{k}"
        sup, att = f"arg-{k}-s", f"arg-{k}-a"
        options.append(
            Option(
                id=oid,
                title=f"Review {m.text or m.ref}",
                category="medication",
                description="Check indication, dose and interactions.",
                arguments=(
                    _arg(
                        sup,
                        "pharmacist",
                        "support",
                        "Interaction risk.",
                        0.55 + 0.1 * k,
                        evidence=("ev-1",),
                        facts=(m.ref, *cond),
                    ),
                    _arg(
                        att,
                        "general practitioner",
                        "attack",
                        "Stable for years.",
                        0.6,
                        facts=(m.ref, *obs),
                    ),
                ),
                edges=(Edge(sup, oid, "support"), Edge(att, oid, "attack")),
                clashes=(Clash(sup, att, "support"),) if k % 2 == 0 else (),
                refs=(m.ref,),
                problem_ids=tuple(p.id for p in problems[:1]),
                medication_ref=m.ref,
            )
        )
    options.append(
        Option(
            id="opt-follow-up",
            title="Follow-up visit in 4 weeks",
            category="follow-up",
            description="Review the changes.",
            arguments=(_arg("arg-fu", "nurse", "support", "Changes need review.", 0.8, facts=obs),),
            edges=(Edge("arg-fu", "opt-follow-up", "support"),),
        )
    )
    return _adjudicated(
        Deliberation(
            plan_id=plan_id,
            version=1,
            patient_ref=profile.ref,
            parameters=Parameters(),
            problems=problems,
            options=tuple(options),
            meta=Meta(
                backend="hand-built",
                evidence_version="kb-test",
                panel=(("pharmacist", "meds"), ("nurse", "falls"), ("general practitioner", "all")),
                created="2026-11-30T09:00:00Z",
            ),
        )
    )


def _adjudicated(d: Deliberation) -> Deliberation:
    """As the pipeline records it: every near-tied opposing pair went to the adjudicator. Pairs
    the hand-built options leave out get a failed verdict (winner None), which counts for nobody,
    so the scores worked out by hand above do not change."""
    options = []
    for o in d.options:
        have = {(c.support, c.attack) for c in o.clashes}
        missing = [
            Clash(s, a, None)
            for s, a in find_clashes(o.arguments, d.parameters.delta)
            if (s, a) not in have
        ]
        options.append(replace(o, clashes=(*o.clashes, *missing)) if missing else o)
    return replace(d, options=tuple(options))
