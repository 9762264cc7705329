"""Key facts and summary reasons that justify the action.

The governing kidney value's own observation is cited first (the creatinine when the estimate
computed from it is the lower); a point that applies only under its own ``when`` cites first
what that condition matched (the antiplatelet that makes an INR urgent); a role's several points
on one option are shown by the most specific (a recent event before a general interaction);
the GP names the vascular condition behind a secondary-prevention statin and says which
vaccines are due; an interaction that can slow the heart rate says "can".
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from inference.adjudication import fact_status
from inference.embedded import _argue
from inference.evidence import EvidenceBase
from inference.knowledge.analysis import Proposal
from inference.knowledge.criteria.loader import load
from inference.knowledge.facts import Facts
from inference.knowledge.rules import analyse
from inference.protocol import CandidateOption, PanelMember
from service.record.profile import PatientProfile

from .criteria_factory import AS_OF, Builder
from .test_registry import CLOPIDOGREL, WARFARIN, profile, thrombolysed

CRITERIA = Path(__file__).parents[2] / "inference" / "knowledge" / "criteria"


def _option(p: PatientProfile, oid: str) -> Proposal:
    return next(x for x in analyse(p).proposals if x.id == oid)


def _kidney(egfr: float, creatinine: float) -> tuple[Facts, Builder]:
    b = Builder(age=70, sex="male")
    b.lab("egfr", egfr)
    b.lab("creatinine", creatinine)
    return Facts(b.build()), b


# -- 1. the fact that justifies the action ---------------------------------------------------


def test_a_computed_kidney_value_that_governs_cites_its_creatinine_first() -> None:
    f, b = _kidney(37.2, 2.5)  # josue: reported 37.2, CKD-EPI 2021 from 2.5 mg/dL about 27
    assert f.kidney is not None and f.kidney.basis == "eGFR from creatinine"
    creatinine = next(o for o in b.obs if o.display == "creatinine")
    assert f.kidney.refs[0] == creatinine.ref


def test_a_reported_egfr_that_governs_or_ties_stays_first() -> None:
    f, b = _kidney(40.0, 0.9)  # creatinine implies a normal eGFR: the reported one governs
    assert f.kidney is not None and f.kidney.basis == "reported eGFR"
    egfr = next(o for o in b.obs if o.display == "egfr")
    assert f.kidney.refs[0] == egfr.ref


def test_the_inr_urgency_point_cites_the_antiplatelet_first() -> None:
    got = _option(profile(meds=(WARFARIN, CLOPIDOGREL)), "opt-monitor-inr")
    urgent = next(p for p in got.points if p.text.startswith("An antiplatelet is prescribed"))
    assert urgent.facts[0] == CLOPIDOGREL.ref and WARFARIN.ref in urgent.facts


def test_warfarin_alone_has_no_antiplatelet_point_and_cites_the_warfarin() -> None:
    got = _option(profile(meds=(WARFARIN,)), "opt-monitor-inr")
    assert not [p for p in got.points if p.text.startswith("An antiplatelet")]
    assert all(p.facts[0] == WARFARIN.ref for p in got.points)


# -- 3. a merged action leads with its recent event --------------------------------------------


def _pharmacist_on_review(p: PatientProfile) -> tuple[str, tuple[str, ...]]:
    a = analyse(p)
    prop = next(x for x in a.proposals if x.id == "opt-review-clopidogrel")
    option = CandidateOption(
        prop.id, prop.title, prop.category, prop.description, prop.refs, prop.problem_ids
    )
    docs = EvidenceBase.load().docs
    member = PanelMember("pharmacist", "", ("medication",))
    (arg,) = _argue(a, member, [option], docs, p.ref, fact_status(p))
    return arg.text, arg.facts


def test_a_recent_thrombolysis_leads_the_merged_review_over_the_standing_interaction() -> None:
    p = thrombolysed(70, WARFARIN, CLOPIDOGREL)
    points = [x for x in _option(p, "opt-review-clopidogrel").points if x.role == "pharmacist"]
    strongest = max(points, key=lambda x: x.tau)
    assert not strongest.recent  # the interaction line is the strongest point ...
    text, facts = _pharmacist_on_review(p)
    assert text.startswith("The event happened while")  # ... but the event speaks for the role
    assert facts[0] == "MedicationRequest/t1"  # the alteplase order first
    assert max(x.tau for x in points) == strongest.tau


def test_without_a_recent_event_the_strongest_point_speaks_for_the_role() -> None:
    text, facts = _pharmacist_on_review(thrombolysed(400, WARFARIN, CLOPIDOGREL))
    assert "additive bleeding risk" in text
    assert facts[0] == WARFARIN.ref


def test_a_point_citing_a_recent_event_is_marked_recent_and_one_without_is_not() -> None:
    b = Builder(age=50)
    b.encounter("overdose", "EMER", AS_OF - timedelta(days=40))
    got = _option(b.build(), "opt-overdose-relapse-prevention")
    assert got.points and all(p.recent for p in got.points if p.stance == "support")
    bone = Builder(age=80)
    bone.med("Alendronic acid 70 MG Oral Tablet", dose_mg=70)
    assert not [p for x in analyse(bone.build()).proposals for p in x.points if p.recent]


# -- 2. secondary prevention names the condition ------------------------------------------------


def test_the_gp_names_the_stroke_behind_a_secondary_prevention_statin() -> None:
    b = Builder(age=65)
    b.condition("stroke")
    b.condition("diabetes")
    got = _option(b.build(), "opt-start-statin")
    gp = [p for p in got.points if p.role == "gp"]
    best = max(gp, key=lambda p: p.tau)
    assert "high-intensity statin" in best.text and "stroke" in best.text.lower()
    assert "EB-CV-016" in best.evidence


def test_diabetes_without_vascular_disease_keeps_the_diabetes_reason() -> None:
    b = Builder(age=65)
    b.condition("diabetes")
    got = _option(b.build(), "opt-start-statin")
    assert not [p for p in got.points if "high-intensity" in p.text]
    assert any("in diabetes" in p.text for p in got.points if p.role == "gp")


# -- 4. the GP says which vaccines are due -------------------------------------------------------


def test_the_gp_states_the_vaccine_due_by_age_not_only_a_hedge() -> None:
    got = _option(Builder(age=78).build(), "opt-vaccinations-due")
    gp = [p.text for p in got.points if p.role == "gp"]
    assert any(t.startswith("influenza vaccine: due every season from age 65") for t in gp)
    assert not [t for t in gp if t.startswith("Confirm the")]


def test_the_risk_group_vaccine_names_the_condition() -> None:
    b = Builder(age=50)
    b.condition("diabetes")
    got = _option(b.build(), "opt-vaccinations-due")
    gp = next(p for p in got.points if p.role == "gp" and "influenza" in p.text)
    assert "with " in gp.text and len(gp.facts) >= 1


def test_under_the_age_and_with_no_risk_group_no_influenza_is_due() -> None:
    got = [x for x in analyse(Builder(age=40).build()).proposals if x.id == "opt-vaccinations-due"]
    assert not [p for x in got for p in x.points if "influenza" in p.text]


# -- 5. wording --------------------------------------------------------------------------------


def test_no_point_claims_a_slow_heart_rate_that_is_not_recorded() -> None:
    texts = [pt.text for c in load(CRITERIA) for pt in c.points]  # reusable points in place
    assert not [t for t in texts if t.startswith("Slow heart rate from")]
    assert [t for t in texts if "can slow the heart rate" in t]
