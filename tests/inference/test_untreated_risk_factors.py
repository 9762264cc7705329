"""Untreated cardiovascular risk factors: stop-smoking support from the latest
coded smoking status, confirmation of raised blood pressure with no hypertension recorded, and
a QRISK3 assessment with a statin discussion for primary prevention that names the factors
found and never states a risk. Each with the case it fires on and the near misses it must
leave alone."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, timedelta

from inference.knowledge.analysis import Output, Proposal
from inference.knowledge.facts import Facts
from inference.knowledge.registry import RULES, Case
from inference.knowledge.rules import analyse
from service.record.profile import Code, Condition, Medication, Observation, PatientProfile
from service.record.vocabulary import LOINC, RXNORM, SNOMED

AS_OF = date(2026, 11, 10)


def _born(age: int) -> date:
    return date(AS_OF.year - age - 1, 12, 31)


def status(i: str, code: str, when: date = AS_OF, system: str = SNOMED) -> Observation:
    return Observation(
        f"Observation/s{i}",
        "72166-2",
        "Tobacco smoking status",
        None,
        "",
        when,
        "status",
        value_codes=(Code(system, code, "status"),),
    )


def cond(i: str, text: str, code: str, **kw: object) -> Condition:
    base = Condition(
        f"Condition/{i}", text, (Code(SNOMED, code, text),), "active", "confirmed", date(2015, 1, 1)
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def med(i: str, text: str) -> Medication:
    return Medication(
        f"MedicationRequest/{i}",
        text,
        (Code(RXNORM, "", text),),
        "active",
        "order",
        date(2024, 1, 1),
    )


def bp(sys_dia: list[tuple[float, float]]) -> list[Observation]:
    out: list[Observation] = []
    for k, (s, d) in enumerate(sys_dia):
        when = AS_OF - timedelta(days=60 * (len(sys_dia) - 1 - k))
        out += [
            Observation(f"Observation/bp{k}", "8480-6", "sys", s, "mm[Hg]", when),
            Observation(f"Observation/bp{k}", "8462-4", "dia", d, "mm[Hg]", when),
        ]
    return out


def ldl(value: float, unit: str = "mg/dL") -> Observation:
    return Observation("Observation/ldl", "18262-6", "LDL", value, unit, AS_OF)


def profile(
    age: int = 60,
    problems: tuple[Condition, ...] = (),
    meds: tuple[Medication, ...] = (),
    obs: list[Observation] | None = None,
) -> PatientProfile:
    obs = obs or []
    latest: dict[str, Observation] = {}
    for o in sorted(obs, key=lambda o: o.effective or date.min):
        latest[o.loinc] = o
    return PatientProfile(
        "Patient/p",
        "male",
        _born(age),
        AS_OF,
        problems,
        meds,
        tuple(latest.values()),
        readings=tuple(sorted(obs, key=lambda o: o.effective or date.min)),
    )


HTN = cond("htn", "Essential hypertension (disorder)", "59621000")
DIABETES = cond("dm", "Diabetes mellitus type 2 (disorder)", "44054006")
CHD = cond("chd", "Coronary heart disease (disorder)", "53741008")
AMLODIPINE = med("aml", "amlodipine 5 MG Oral Tablet")
ATORVASTATIN = med("ator", "atorvastatin 20 MG Oral Tablet")
VARENICLINE = med("var", "varenicline 1 MG Oral Tablet")
DAILY, EX, NEVER, UNKNOWN = "449868002", "8517006", "266919005", "77176002"
RAISED = [(166.0, 98.0), (170.0, 94.0), (168.0, 96.0)]


def options(p: PatientProfile) -> dict[str, Proposal]:
    return {x.id: x for x in analyse(p).proposals}


def rule_options(p: PatientProfile, rule_id: str) -> list[Proposal]:
    o = Output()
    next(r.fn for r in RULES if r.id == rule_id)(Case(p), o)
    return o.proposals


# -- the smoking status fact ---------------------------------------------------------------


def test_smoking_status_is_the_latest_coded_one() -> None:
    older = AS_OF - timedelta(days=700)
    now_ex = Facts(profile(obs=[status("1", DAILY, older), status("2", EX)])).smoking
    assert now_ex is not None and now_ex.status == "former"
    now_smokes = Facts(profile(obs=[status("1", EX, older), status("2", DAILY)])).smoking
    assert now_smokes is not None and now_smokes.current
    assert Facts(profile(obs=[status("1", NEVER)])).smoking.status == "never"  # type: ignore[union-attr]
    # "Smoker, current status unknown" says nothing about now
    assert not Facts(profile(obs=[status("1", UNKNOWN)])).smoking.current  # type: ignore[union-attr]
    # a LOINC answer code reads the same as the SNOMED concept
    loinc = Facts(profile(obs=[status("1", "LA18976-3", system=LOINC)])).smoking
    assert loinc is not None and loinc.current


def test_a_smoking_condition_counts_and_its_resolution_means_stopped() -> None:
    smokes = cond("sm", "Smokes tobacco daily (finding)", DAILY, onset=date(2020, 1, 1))
    sm = Facts(profile(problems=(smokes,))).smoking
    assert sm is not None and sm.current and sm.refs == ("Condition/sm",)
    stopped = replace(smokes, clinical_status="resolved", abatement=date(2023, 5, 1))
    sm = Facts(profile(problems=(stopped,))).smoking
    assert sm is not None and sm.status == "former" and sm.day == date(2023, 5, 1)
    # a later Observation saying ex-smoker overrides an older active smoking Condition
    sm = Facts(profile(problems=(smokes,), obs=[status("1", EX)])).smoking
    assert sm is not None and sm.status == "former"


# -- stop-smoking support ------------------------------------------------------------------


def test_stop_smoking_support_for_a_current_smoker_only() -> None:
    yes = options(profile(obs=[status("1", DAILY)]))["opt-smoking-cessation"]
    assert "stop-smoking-support" in yes.criteria and yes.priority == "omission"
    assert "varenicline" in yes.description and "Observation/s1" in yes.refs
    assert "opt-smoking-cessation" not in options(profile(obs=[status("1", EX)]))
    assert "opt-smoking-cessation" not in options(profile(obs=[status("1", NEVER)]))
    assert "opt-smoking-cessation" not in options(profile())
    # already on a stop-smoking medicine: the support is under way
    assert "opt-smoking-cessation" not in options(
        profile(meds=(VARENICLINE,), obs=[status("1", DAILY)])
    )
    # an old current status followed by a newer former one: not a smoker now
    old = AS_OF - timedelta(days=900)
    assert "opt-smoking-cessation" not in options(
        profile(obs=[status("1", DAILY, old), status("2", EX)])
    )


# -- raised blood pressure with no diagnosis ------------------------------------------------


def test_repeated_raised_readings_without_a_diagnosis_are_confirmed() -> None:
    (p,) = rule_options(profile(obs=bp(RAISED)), "confirm-raised-blood-pressure")
    assert p.id == "opt-confirm-hypertension" and p.category == "monitoring"
    assert "ambulatory" in p.description and "start treatment" in p.description
    assert "168/96 mmHg" in p.title and "3 of 3 readings" in p.description
    # the review of treatment is not proposed: there is no diagnosis to treat against
    assert "opt-review-bp" not in options(profile(obs=bp(RAISED)))


def test_confirmation_is_not_asked_when_not_needed() -> None:
    rid = "confirm-raised-blood-pressure"
    # hypertension recorded: the existing treatment review takes it
    assert rule_options(profile(problems=(HTN,), obs=bp(RAISED)), rid) == []
    assert "opt-review-bp" in options(profile(problems=(HTN,), obs=bp(RAISED)))
    # on a blood-pressure medicine
    assert rule_options(profile(meds=(AMLODIPINE,), obs=bp(RAISED)), rid) == []
    # one raised reading among normal ones, or a normal latest reading
    assert rule_options(profile(obs=bp([(128, 78), (124, 80), (152, 88)])), rid) == []
    assert rule_options(profile(obs=bp([(150, 92), (152, 94), (128, 80)])), rid) == []


def test_a_single_severe_reading_is_assessed_now() -> None:
    (p,) = rule_options(profile(obs=bp([(186.0, 104.0)])), "confirm-raised-blood-pressure")
    assert p.category == "immediate-safety" and p.priority == "safety"
    assert "organ damage" in p.description and "without waiting" in p.description


# -- cardiovascular risk assessment ----------------------------------------------------------


def test_risk_assessment_names_the_factors_and_never_a_risk() -> None:
    p = profile(67, obs=[*bp(RAISED), status("1", DAILY), ldl(189)])
    (o,) = rule_options(p, "assess-cardiovascular-risk")
    assert o.id == "opt-assess-cv-risk" and o.priority == "omission"
    assert "QRISK3" in o.title and "statin" in o.title
    for factor in ("current smoker", "168/96 mmHg", "LDL cholesterol 189 mg/dL"):
        assert factor in o.description
    texts = [o.title, o.description, *(pt.text for pt in o.points)]
    assert not any("%" in t or re.search(r"\bper ?cent\b", t) for t in texts)
    assert {"Observation/s1", "Observation/ldl", "Observation/bp2"} <= set(o.refs)


def test_ldl_in_mmol_per_litre_is_converted() -> None:
    high = rule_options(profile(55, obs=[ldl(4.5, "mmol/L")]), "assess-cardiovascular-risk")
    assert high and "LDL cholesterol 4.5 mmol/L" in high[0].description
    assert rule_options(profile(55, obs=[ldl(3.0, "mmol/L")]), "assess-cardiovascular-risk") == []
    assert rule_options(profile(55, obs=[ldl(120)]), "assess-cardiovascular-risk") == []


def test_risk_assessment_near_misses() -> None:
    rid = "assess-cardiovascular-risk"
    smoker = [status("1", DAILY)]
    assert rule_options(profile(55, obs=smoker), rid)  # the case itself
    assert rule_options(profile(55, meds=(ATORVASTATIN,), obs=smoker), rid) == []
    assert rule_options(profile(55, problems=(DIABETES,), obs=smoker), rid) == []
    assert rule_options(profile(55, problems=(CHD,), obs=smoker), rid) == []
    assert rule_options(profile(35, obs=smoker), rid) == []
    assert rule_options(profile(86, obs=smoker), rid) == []
    assert rule_options(profile(55, obs=[status("1", EX)]), rid) == []  # no risk factor


def test_from_seventy_five_it_is_a_review_with_the_age_caution() -> None:
    (o,) = rule_options(profile(78, problems=(HTN,)), "assess-cardiovascular-risk")
    assert o.priority == "review"
    assert any(pt.role == "geriatrician" and pt.stance == "attack" for pt in o.points)
    assert "Essential hypertension" in o.description and "(disorder)" not in o.description
