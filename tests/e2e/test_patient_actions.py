"""The patient version says what the action kind says, over every fixture and vignette: a stop
today never says "keep taking", a switch names both medicines, a course end its date, a medicine
that must not be stopped suddenly is never stopped today, and a child's plan speaks to the
parent. The readability of the whole set is measured and reported."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from inference.knowledge.actions import action_kind, medicine_withdrawal_risk
from inference.knowledge.drugs import identify, named_in
from inference.knowledge.parameters import param_int
from inference.knowledge.transitions import changes_of, index_stay
from service.core.model import ACTION_KINDS, Option
from service.pipeline import PlanResult
from service.readability import MAX_PATIENT_GRADE, fkgl
from service.text.patient import patient_text
from tests.e2e.test_patient_version import CASES, ids
from tests.e2e.test_plan_end_to_end import plan_of


def _lines(r: PlanResult, option: Option) -> list[str]:
    return [
        t
        for w in r.deliberation.meta.patient_wordings
        if w.option_id == option.id
        for t in (w.text, w.watch)
        if t
    ]


def _medicine(r: PlanResult, option: Option) -> str:
    med = next((m for m in r.profile.medications if m.ref == option.medication_ref), None)
    return " and ".join(identify(med)) if med is not None else ""


def _included(r: PlanResult, kind: str) -> list[Option]:
    plan = set(r.evaluation.plan)
    return [o for o in r.deliberation.options if o.id in plan and o.action == kind]


def _child(r: PlanResult) -> bool:
    return r.profile.age is not None and r.profile.age < param_int("age.adult_years")


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_every_option_states_a_known_action_kind(path: Path) -> None:
    r = plan_of(path)
    assert all(o.action in ACTION_KINDS for o in r.deliberation.options)


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_a_stop_today_tells_what_to_do_today_never_keep_taking(path: Path) -> None:
    r = plan_of(path)
    for o in _included(r, "stop-now"):
        said = " ".join(_lines(r, o)).lower()
        assert "keep taking" not in said and "keep giving" not in said, said
        assert "today" in said and _medicine(r, o).split(" and ")[0] in said, said


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_a_medicine_that_must_not_be_stopped_suddenly_is_never_stopped_today(
    path: Path,
) -> None:
    r = plan_of(path)
    for o in r.deliberation.options:
        if medicine_withdrawal_risk(r.profile, o.medication_ref) is not None:
            assert o.action not in ("stop-now", "stop-at-review"), o.title
    for o in _included(r, "taper"):
        said = " ".join(_lines(r, o))
        assert "suddenly" in said and "keep taking" not in said.lower(), said


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_a_switch_names_both_medicines(path: Path) -> None:
    r = plan_of(path)
    for o in _included(r, "switch"):
        said = " ".join(_lines(r, o))
        medicine = _medicine(r, o)
        assert medicine and medicine in said, said
        # the target: a medicine the option names, or "another medicine" where it names none
        rest = said.replace(medicine, "")
        assert " to " in rest and (
            "another medicine" in rest or any(n in rest for n in _named(o, medicine))
        ), said


def _named(o: Option, medicine: str) -> set[str]:
    return set(named_in(f"{o.title} {o.description}")) - set(medicine.split(" and "))


@pytest.mark.parametrize("path", CASES, ids=ids)
def test_a_course_end_gives_its_date(path: Path) -> None:
    r = plan_of(path)
    ends = {
        c.med.ref: c.ends
        for c in changes_of(r.profile, index_stay(r.profile))
        if c.ends is not None
    }
    for o in _included(r, "end-course"):
        day = ends[o.medication_ref or ""]
        said = " ".join(_lines(r, o))
        assert f"{day.day} {day:%B} {day.year}" in said, said


@pytest.mark.parametrize("path", [p for p in CASES if "child" in p.stem or "teen" in p.stem])
def test_a_childs_plan_speaks_to_the_parent(path: Path) -> None:
    r = plan_of(path)
    text = patient_text(r.deliberation, r.evaluation)
    if not _child(r):
        pytest.skip("an adult by the knowledge's own age of majority")
    assert "This plan is for your child." in text
    for phrase in ("chest pain", "you take", "your dose", "Do not take your next"):
        assert phrase not in text, text


def test_the_kind_is_read_from_the_id_and_how_soon() -> None:
    assert action_kind("opt-stop-aspirin", "urgent") == "stop-now"
    assert action_kind("opt-stop-aspirin", "resolve-first") == "stop-now"
    assert action_kind("opt-stop-aspirin", "soon") == "stop-at-review"
    assert action_kind("opt-stop-colchicine", "urgent", "hold") == "hold"
    assert action_kind("opt-end-of-course-oxycodone", "routine") == "end-course"
    assert action_kind("opt-keep-naproxen-off", "soon") == "hold"


def test_the_patient_version_reads_at_grade_eight_or_below_and_reports_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    grades = [fkgl(patient_text(r.deliberation, r.evaluation)) for r in map(plan_of, CASES)]
    with capsys.disabled():
        print(
            f"\npatient version FKGL over {len(grades)} plans: "
            f"mean {statistics.mean(grades):.2f}, max {max(grades):.2f}"
        )
    assert max(grades) <= MAX_PATIENT_GRADE


def test_a_childs_patient_version_speaks_to_the_parent_in_every_heading() -> None:
    """Title, section headings and lines of a child's plan address the parent."""
    from tests.conftest import REPO_ROOT

    r = plan_of(REPO_ROOT / "examples/vignettes4/child_amoxicillin_no_weight.json")
    text = patient_text(r.deliberation, r.evaluation)
    first, *_ = text.splitlines()
    assert first == "Your child's care plan"
    assert "Changes to your child's medicines:" in text
    assert "Changes to your medicines" not in text
