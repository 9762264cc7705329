"""The clinician summary's lines on real records: one line per medicine, the deciding values
kept in a cut reason, no generic medication review that specific actions already cover."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fhir_mapping.ingest import ingest
from service.app import request_time
from service.backends import build_planner
from service.core.evaluation import Evaluation
from service.core.model import Deliberation
from service.pipeline import new_plan_id
from service.render import render_plan
from service.settings import load_settings
from service.text.summary import summarise, summary_text

CREATED = "2026-11-30T09:00:00+00:00"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _plan(path: Path) -> tuple[Deliberation, Evaluation]:
    settings = load_settings(environ={})
    bundle = path.read_bytes()
    profile = ingest(bundle, received=request_time(CREATED), clock_skew=settings.fhir.clock_skew)
    planner = build_planner(settings)
    plan = asyncio.run(planner.plan(profile, plan_id=new_plan_id(bundle), created=CREATED))
    return plan.deliberation, plan.evaluation


def test_two_actions_on_aspirin_share_one_line() -> None:
    d, ev = _plan(next(EXAMPLES.glob("vignettes*/af_aspirin_only.json")))
    s = summarise(d, ev)
    aspirin = [line for line in s.lines if "aspirin" in line.action.lower()]
    assert len(aspirin) == 1 and aspirin[0].also
    assert "consider stopping aspirin" in aspirin[0].text()
    assert aspirin[0].label == "this week"  # the sooner of the two
    # every included action is on a line or counted as more
    assert sum(1 + len(line.also) for line in s.lines) + s.more == len(ev.plan)


def test_actions_on_different_medicines_keep_their_own_lines() -> None:
    d, ev = _plan(next(EXAMPLES.glob("vignettes*/af_aspirin_only.json")))
    lines = summarise(d, ev).lines
    assert any("anticoagulation" in line.action for line in lines)
    assert all(not line.also for line in lines if "aspirin" not in line.action.lower())


def test_a_cut_reason_keeps_the_creatinine_based_egfr() -> None:
    d, ev = _plan(EXAMPLES / "fixtures/fhir/ali_herman_d00b080d.json")
    lines = summarise(d, ev).lines
    # the record ends five years before the plan: confirming it comes first, today
    assert lines[0].action.startswith("Confirm current medicines and results first")
    assert lines[0].label == "today"
    repeat = next(line.text() for line in lines if "Repeat creatinine" in line.action)
    assert "reported eGFR 9.85" in repeat and "from creatinine 23.9)" in repeat
    assert f"in {len(lines)} lines shown" in summary_text(d, ev)


def test_actions_for_one_problem_share_one_line() -> None:
    """Blood-pressure review and an ACE inhibitor/ARB for blood pressure in diabetes treat one
    problem (the knowledge's ``treats``): one line, the more urgent first, the other named."""
    d, ev = _plan(EXAMPLES / "fixtures/fhir/renea_quigley_ab4e7a7d.json")
    s = summarise(d, ev)
    bp = [line for line in s.lines if "blood pressure" in line.action.lower()]
    assert len(bp) == 1
    assert bp[0].action.startswith("Review blood pressure treatment")
    assert bp[0].also == ("Add an ACE inhibitor or ARB for blood pressure in diabetes",)
    assert bp[0].label == "within 3 days"
    # nothing is lost: every included action is on a line or counted as more
    assert sum(1 + len(line.also) for line in s.lines) + s.more == len(ev.plan)


def test_two_problems_of_one_condition_keep_two_lines() -> None:
    """A statin and an SGLT2 inhibitor both answer diabetes but treat different problems
    (cardiovascular risk, kidney disease): two lines, neither folded into the other."""
    d, ev = _plan(EXAMPLES / "fixtures/fhir/renea_quigley_ab4e7a7d.json")
    lines = summarise(d, ev).lines
    statin = [line for line in lines if line.action == "Start a statin"]
    sglt2 = [line for line in lines if "SGLT2" in line.action]
    assert len(statin) == 1 and len(sglt2) == 1
    assert not statin[0].also and not sglt2[0].also
    vaccines = [line for line in lines if "vaccinations" in line.action]
    assert len(vaccines) <= 1 and not any(line.also for line in vaccines)


def test_the_key_fact_is_the_event_that_decided_the_action() -> None:
    """Glimepiride after an emergency visit for hypoglycaemia: the visit decided the line, not
    the glimepiride it changes (the visit was not worded before, so the line fell back on it)."""
    d, ev = _plan(EXAMPLES / "vignettes/diabetes_hypo.json")
    first = summarise(d, ev).lines[0]
    assert "glimepiride" in first.action
    assert "Hypoglycemia" in first.fact and "2026-10-05" in first.fact
    assert "glimepiride" not in first.fact.lower()


def test_official_drug_and_lab_names_shortened_in_the_summary_only() -> None:
    """The summary names a medicine by ingredient and strength and a result by what a clinician
    calls it; the detailed view keeps the record's full names."""
    d, ev = _plan(EXAMPLES / "fixtures/fhir/ali_herman_d00b080d.json")
    text = summary_text(d, ev)
    assert "DOCEtaxel 20 mg/mL" in text and "Injection" not in text
    assert " — eGFR 9.85" in text and "sq M.predicted" not in text
    assert "(disorder)" not in text
    assert "1 ML DOCEtaxel 20 MG/ML Injection" in render_plan(d, ev)


def test_a_medicine_the_line_names_is_not_repeated_as_its_key_fact() -> None:
    """'Stop chlorpheniramine' whose reason opens on chlorpheniramine needs no key fact saying
    chlorpheniramine again; a line whose key fact is another medicine (the leuprolide behind a
    bone-density check) keeps it."""
    d, ev = _plan(EXAMPLES / "fixtures/fhir/ali_herman_d00b080d.json")
    lines = {line.action: line for line in summarise(d, ev).lines}
    stop = lines["Stop chlorpheniramine and use a non-sedating alternative"]
    assert stop.fact == "" and "Key fact" not in stop.text()
    bone = lines["Assess fracture risk and bone density on leuprolide"]
    assert bone.fact.startswith("Leuprolide Acetate 30 mg/mL (prescribed 2020-06-08)")
