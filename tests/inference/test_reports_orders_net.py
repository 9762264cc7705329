"""The nets under the criteria for reports, orders and presenting problems: each with a record
where it fires and a neighbour where the record (or a line of the plan) already closes it; the
recommendation phrases as data; the quoted conclusion escaped in the CarePlan, which the shared
validators check."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from inference.embedded import known_options
from inference.knowledge import analyse
from inference.knowledge.analysis import Output, Proposal
from inference.knowledge.claims import OrderOutstanding, ReportToFollow, check
from inference.knowledge.presenting import name_unaddressed
from inference.knowledge.registry import Case
from inference.knowledge.reports_orders import quote, recommends
from service.cli import main
from service.pipeline import knowledge_coverage
from service.record.profile import Observation, PatientProfile
from tests.conftest import SHARED
from tests.inference.reports_orders_bundles import (
    SNOMED,
    bundle,
    condition,
    order,
    profile,
    report,
    result,
)

NODULE = "New 8 mm nodule in the right upper lobe. CT chest in 3 months is recommended."


def _lines(p: object, prefix: str) -> list[str]:
    return [x.title for x in analyse(p).proposals if x.id.startswith(prefix)]  # type: ignore[arg-type]


# -- reports ------------------------------------------------------------------------------------


def test_a_report_recommending_a_test_is_followed_up_with_its_conclusion_quoted() -> None:
    p = profile(report("cxr", NODULE, "2026-11-20"))
    (line,) = _lines(p, "opt-follow-up-report-")
    assert line == f'Follow up the chest X-ray of 20 November 2026: "{NODULE}"'
    assert p.reports[0].conclusion == NODULE  # kept as written


def test_a_report_released_after_the_last_contact_is_followed_up() -> None:
    p = profile(report("ecg", "Sinus rhythm, normal ECG.", "2026-11-28", name="12-lead ECG"))
    (line,) = _lines(p, "opt-follow-up-report-")
    assert line.startswith("Follow up the 12-lead ECG of 28 November 2026")
    (prop,) = [x for x in analyse(p).proposals if x.id.startswith("opt-follow-up-report-")]
    assert "released after the last contact" in prop.description


def test_a_record_with_no_contact_does_not_call_a_report_unseen() -> None:
    # a CDS client that sent no Encounter: nothing says when the patient was last seen
    p = profile(report("ecg", "Sinus rhythm, normal ECG.", "2026-11-28"), seen=None)
    assert _lines(p, "opt-follow-up-report-") == []
    assert len(_lines(profile(report("cxr", NODULE, "2026-11-20"), seen=None), "opt-follow")) == 1


@pytest.mark.parametrize(
    "resources",
    [
        # an order names the report: the recommended CT was ordered
        (
            report("cxr", NODULE, "2026-11-20"),
            order("ct", "2026-11-21", name="CT chest", reason="cxr"),
        ),
        # seen at a later contact, and its conclusion asks for nothing further
        (report("cxr", "No further imaging is recommended.", "2026-11-20"),),
        # not released
        (report("cxr", NODULE, "2026-11-28", status="preliminary"),),
        # older than the look-back: history, not a result to follow
        (report("cxr", NODULE, "2024-01-10"),),
    ],
    ids=["ordered", "declined", "preliminary", "old"],
)
def test_a_report_already_followed_or_not_released_makes_no_line(resources: tuple) -> None:  # type: ignore[type-arg]
    assert _lines(profile(*resources), "opt-follow-up-report-") == []


def test_the_report_claim_fails_once_an_order_names_it() -> None:
    p = profile(report("cxr", NODULE, "2026-11-20"))
    claim = ReportToFollow("DiagnosticReport/cxr")
    assert check(claim, p, p.plan_day) is None
    acted = profile(report("cxr", NODULE, "2026-11-20"), order("ct", "2026-11-21", reason="cxr"))
    assert check(claim, acted, acted.plan_day) == "the report needs no follow-up"


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        (NODULE, True),
        ("Findings suggestive of pneumonia.", False),  # "suggestive" is not "suggested"
        ("Further imaging with MRI is advised.", True),
        ("Follow-up CT in 6 weeks to confirm resolution.", True),
        ("Referral to the breast clinic.", True),
        ("Not recommended to repeat imaging.", False),
        ("No follow-up imaging required.", False),
        ("Stable appearances.", False),
        ("Review in 6 months.", False),  # a review of the condition, not a further test
    ],
)
def test_recommendation_phrases(text: str, asks: bool) -> None:
    assert recommends(text) is asks


def test_control_characters_do_not_reach_the_quote() -> None:
    assert quote("Nodule\x00 seen.\x1b[31m") == "Nodule seen. [31m"


def test_a_long_conclusion_is_cut_at_a_word_not_reworded() -> None:
    text = "word " * 60
    cut = quote(text)
    assert cut.endswith("…") and len(cut) <= 141
    assert text.startswith(cut[:-1])


# -- orders -------------------------------------------------------------------------------------


def test_an_order_past_its_window_with_no_result_is_chased() -> None:
    p = profile(order("pth", "2026-10-01"))
    assert _lines(p, "opt-chase-order-") == ["Chase parathyroid hormone ordered 1 October 2026"]
    assert check(OrderOutstanding("ServiceRequest/pth"), p, p.plan_day) is None


@pytest.mark.parametrize(
    "resources",
    [
        (order("pth", "2026-10-01"), result("o1", "2731-8", 9.1, "2026-10-08")),  # same code
        (order("pth", "2026-10-01", code=None), result("o1", "2731-8", 9.1, "2026-10-08", "pth")),
        (
            order("pth", "2026-10-01", code=None),
            report("r", "Normal.", "2026-10-09", based_on="pth"),
        ),
        (order("pth", "2026-11-25"),),  # ordered 5 days ago: within its window
        (order("op", "2026-09-01", name="Hip replacement", code=None, due="2026-12-21"),),
        (order("pth", "2026-10-01", status="completed"),),
        (order("pth", "2026-10-01", intent="proposal"),),
    ],
    ids=["resulted", "based-on", "reported", "not-due", "scheduled", "completed", "proposal"],
)
def test_an_order_resulted_or_not_yet_due_is_not_chased(resources: tuple) -> None:  # type: ignore[type-arg]
    assert _lines(profile(*resources), "opt-chase-order-") == []


def test_an_order_without_a_code_waits_the_longer_window() -> None:
    # a non-laboratory order: 42 days (data) before it is chased
    early = profile(order("abpi", "2026-10-25", name="Ankle-brachial pressure index", code=None))
    late = profile(order("abpi", "2026-10-01", name="Ankle-brachial pressure index", code=None))
    assert _lines(early, "opt-chase-order-") == []
    assert _lines(late, "opt-chase-order-") == [
        "Chase ankle-brachial pressure index ordered 1 October 2026"
    ]


def test_observation_flags_notes_and_orders_are_read() -> None:
    p = profile(order("pth", "2026-10-01"), result("o1", "2731-8", 9.1, "2026-10-08", "pth"))
    o = p.latest("2731-8")
    assert o is not None and o.based_on == ("ServiceRequest/pth",)
    assert [c.code for c in o.interpretation] == ["H"] and o.note == "Repeat advised."


# -- presenting problems ------------------------------------------------------------------------


def test_a_new_problem_no_line_addresses_is_named_and_counted_in_coverage() -> None:
    p = profile(condition("ha", "Headache", "25064002", "2026-11-20"))
    assert _lines(p, "opt-presenting-problem-") == [
        "Not addressed by this plan: Headache (since 20 November 2026)"
    ]
    gaps = [g for g in knowledge_coverage(p).gaps if g.kind == "unaddressed"]
    assert [g.label for g in gaps] == [
        "problem no line addresses: Headache (since 20 November 2026)"
    ]
    assert not any(g.high_risk for g in gaps)


def test_a_contact_reason_is_a_presenting_problem() -> None:
    visit = {
        "resourceType": "Encounter",
        "id": "tremor-visit",
        "status": "finished",
        "class": {"code": "AMB"},
        "subject": {"reference": "Patient/p"},
        "period": {"start": "2026-11-27T09:00:00Z"},
        "reasonCode": [{"text": "Tremor", "coding": [{"system": SNOMED, "code": "26079004"}]}],
    }
    assert _lines(profile(visit), "opt-presenting-problem-") == [
        "Not addressed by this plan: Tremor (the reason for the contact of 27 November 2026)"
    ]


def test_a_contact_is_never_said_to_be_when_its_problem_began_and_todays_is_for_today() -> None:
    """The reason for a visit is dated as the visit, not as an onset (a follow-up of a
    ten-year-old problem did not start at the visit), and the reason for a contact of the plan
    day is for today (``presenting.today_days``)."""
    from inference.knowledge.analysis import Output as _Output
    from inference.knowledge.registry import Case as _Case

    visit = {
        "resourceType": "Encounter",
        "id": "oa-visit",
        "status": "finished",
        "class": {"code": "AMB"},
        "subject": {"reference": "Patient/p"},
        "period": {"start": "2026-11-30T09:00:00Z"},
        "reasonCode": [{"text": "Osteoarthritis follow-up"}],
    }
    p = profile(visit)
    (title,) = _lines(p, "opt-presenting-problem-")
    assert "since" not in title and "the reason for the contact of 30 November 2026" in title
    c = _Case(p)
    out = _Output()
    name_unaddressed(c, out)
    (line,) = out.proposals
    assert line.criteria == ("net-presenting-problem-today",)
    assert known_options(p)[line.id].timeframe == "now"


def test_a_problem_a_medicine_was_ordered_for_is_care_in_place() -> None:
    sumatriptan = {
        "resourceType": "MedicationRequest",
        "id": "suma",
        "status": "active",
        "intent": "order",
        "medicationCodeableConcept": {
            "text": "sumatriptan 50 MG Oral Tablet",
            "coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "313192"}],
        },
        "subject": {"reference": "Patient/p"},
        "authoredOn": "2026-11-21",
        "reasonReference": [{"reference": "Condition/ha"}],
    }
    p = profile(condition("ha", "Headache", "25064002", "2026-11-20"), sumatriptan)
    assert p.medications[0].reasons == ("Condition/ha",)
    assert _lines(p, "opt-presenting-problem-") == []


def test_an_old_problem_is_not_presenting() -> None:
    p = profile(condition("ha", "Headache", "25064002", "2026-06-01"))
    assert _lines(p, "opt-presenting-problem-") == []


def test_a_problem_a_line_addresses_is_not_named() -> None:
    p = profile(condition("ha", "Headache", "25064002", "2026-11-20"))
    a = analyse(p)
    c = Case(p)
    c.base = tuple(x for x in a.problems if x.kind != "derived")
    named = Output()
    name_unaddressed(c, named)
    assert [x.title for x in named.proposals] == [
        "Not addressed by this plan: Headache (since 20 November 2026)"
    ]
    line = Proposal(
        "opt-assess-headache", "Assess headache", "follow-up", "", ("Condition/ha",), (), ()
    )
    addressed = Output(proposals=[line])
    name_unaddressed(c, addressed)
    assert addressed.proposals == [line]


def _inr_visit(reason: str) -> tuple[PatientProfile, Case]:
    visit = {
        "resourceType": "Encounter",
        "id": "inr-visit",
        "status": "finished",
        "class": {"code": "AMB"},
        "subject": {"reference": "Patient/p"},
        "period": {"start": "2026-11-27T09:00:00Z"},
        "reasonCode": [{"text": reason}],
    }
    inr = result("inr", "6301-6", 6.4, "2026-11-27T09:00:00Z")
    p = profile(visit, inr)
    c = Case(p)
    c.base = tuple(x for x in analyse(p).problems if x.kind != "derived")
    return p, c


@pytest.mark.parametrize(
    ("reason", "answered"),
    [("Anticoagulation clinic: INR 6.4, gums bleeding", True), ("Sore throat", False)],
)
def test_a_contact_whose_words_name_a_result_a_line_acts_on_is_answered(
    reason: str, answered: bool
) -> None:
    """A blind review found "Not addressed by this plan: <INR clinic>" beside the line on that
    very INR. A contact's reason that names a test whose result of that day a line cites is
    answered; a reason that names none is still said, whatever the line."""
    _, c = _inr_visit(reason)
    line = Proposal(
        "opt-recheck-inr", "Recheck INR", "monitoring", "", ("Observation/inr",), (), ()
    )
    out = Output(proposals=[line])
    name_unaddressed(c, out)
    assert (out.proposals == [line]) is answered


def test_a_problem_answered_through_a_contact_of_its_group_is_not_named() -> None:
    """A hypoglycaemia Condition beside the line on the hypoglycaemia visit is answered."""
    visit = {
        "resourceType": "Encounter",
        "id": "hypo-visit",
        "status": "finished",
        "class": {"code": "EMER"},
        "subject": {"reference": "Patient/p"},
        "period": {"start": "2026-11-21T09:00:00Z"},
        "reasonCode": [{"text": "Hypoglycaemia"}],
    }
    hypo = condition("hy", "Hypoglycaemia with impaired awareness", "302866003", "2026-11-20")
    p = profile(visit, hypo)
    c = Case(p)
    c.base = tuple(x for x in analyse(p).problems if x.kind != "derived")
    line = Proposal(
        "opt-reduce-insulin", "Reduce insulin", "medication", "", ("Encounter/hypo-visit",), (), ()
    )
    out = Output(proposals=[line])
    name_unaddressed(c, out)
    assert out.proposals == [line]
    alone = Output()
    name_unaddressed(c, alone)
    assert any("Hypoglycaemia with impaired awareness" in x.title for x in alone.proposals)


@pytest.mark.parametrize(
    ("problem", "display", "answered"),
    [
        ("Neutropenia", "Neutrophils [#/volume] in Blood", True),
        ("Hypokalemia", "Potassium [Moles/volume] in Serum or Plasma", True),
        ("Neutropenia", "Potassium [Moles/volume] in Serum or Plasma", False),
    ],
)
def test_a_problem_named_after_a_result_is_answered_by_a_line_on_that_result(
    problem: str, display: str, answered: bool
) -> None:
    """A blind review found "problem no line addresses: Neutropenia" beside the line withholding
    azathioprine for neutrophils 0.8 (``data/problem_results.yaml``)."""
    p = profile(condition("np", problem, "165517008", "2026-11-28"))
    c = Case(p)
    c.base = tuple(x for x in analyse(p).problems if x.kind != "derived")
    obs = Observation("Observation/r", "", display, 0.8, "10*9/L", date(2026, 11, 28))
    c.p = replace(p, observations=(*p.observations, obs))
    line = Proposal("opt-withhold", "Withhold it", "medication", "", ("Observation/r",), (), ())
    out = Output(proposals=[line])
    name_unaddressed(c, out)
    assert (out.proposals == [line]) is answered


@pytest.mark.parametrize(
    ("kind", "answered"),
    [("Annual chronic disease review (COPD, diabetes)", True), ("Annual review", False)],
)
def test_a_contact_naming_conditions_lines_act_on_is_answered(kind: str, answered: bool) -> None:
    """A review of two named conditions was "Not addressed by this plan" at the top of a CDS
    card beside the lines on those conditions: a contact whose type or reason names a condition
    a line cites is answered; one that names none is still said."""
    visit = {
        "resourceType": "Encounter",
        "id": "review",
        "status": "finished",
        "class": {"code": "AMB"},
        "type": [{"text": kind}],
        "subject": {"reference": "Patient/p"},
        "period": {"start": "2026-11-27T09:00:00Z"},
        "reasonCode": [{"text": "Annual review"}],
    }
    copd = condition("copd", "Chronic obstructive lung disease", "13645005", "2016-04-12")
    p = profile(visit, copd)
    c = Case(p)
    c.base = tuple(x for x in analyse(p).problems if x.kind != "derived")
    line = Proposal("opt-copd", "Inhaler review", "follow-up", "", ("Condition/copd",), (), ())
    out = Output(proposals=[line])
    name_unaddressed(c, out)
    assert (out.proposals == [line]) is answered


# -- output -------------------------------------------------------------------------------------


def _careplan(tmp_path: Path) -> Path:
    """The CarePlan bundle ``canoe plan --format fhir`` writes for a record with a hostile
    conclusion (markup in it) and an overdue order."""
    hostile = "Mass <script>alert(1)</script> & nodule. CT chest is recommended."
    source = tmp_path / "in.json"
    source.write_text(
        json.dumps(bundle(report("cxr", hostile, "2026-11-20"), order("pth", "2026-10-01"))),
        encoding="utf-8",
    )
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        args = ["plan", "--format", "fhir", "--created", "2026-11-30T10:00:00Z", str(source)]
        assert main([*args, "--no-progress"]) == 0
    out = tmp_path / "plan.json"
    out.write_text(buf.getvalue(), encoding="utf-8")
    return out


def test_the_lines_are_careplan_activities_with_the_conclusion_escaped(tmp_path: Path) -> None:
    plan = json.loads(_careplan(tmp_path).read_text(encoding="utf-8"))
    (cp,) = [e["resource"] for e in plan["entry"] if e["resource"]["resourceType"] == "CarePlan"]
    titles = [a["detail"]["code"]["text"] for a in cp["activity"] if "detail" in a]
    assert any("Chase parathyroid hormone ordered 1 October 2026" in t for t in titles)
    assert any("Follow up the chest X-ray of 20 November 2026" in t for t in titles)
    assert "<script>" not in cp["text"]["div"] and "&lt;script&gt;" in cp["text"]["div"]


@pytest.mark.parametrize("tool", ["fhir-validate", "fhir-validate-medplum"])
def test_the_careplan_passes_the_shared_validators(tool: str, tmp_path: Path) -> None:
    path = SHARED / "tools" / tool
    if shutil.which("node") is None or not path.exists():
        pytest.skip(f"{tool} cannot run here")
    plan = json.loads(_careplan(tmp_path).read_text(encoding="utf-8"))
    (cp,) = [e["resource"] for e in plan["entry"] if e["resource"]["resourceType"] == "CarePlan"]
    file = tmp_path / "careplan.json"
    file.write_text(json.dumps(cp), encoding="utf-8")
    args = [str(path), *(["--strict"] if tool.endswith("medplum") else []), str(file)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if out.returncode == 2 and "npm" in out.stderr:
        pytest.skip(f"{tool} could not install its validator")
    assert out.returncode == 0, out.stdout + out.stderr


def test_plan_day_is_the_request_day() -> None:
    assert profile().plan_day == date(2026, 11, 30)
