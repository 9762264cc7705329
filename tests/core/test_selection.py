"""The plan's selection after scoring: the accepted problems gate the options (CAMP eq. 8) and
incompatible actions on one medicine are resolved by the final score (CANOE 4.5)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from service.core import evaluate, recompute_document, to_document
from service.core.contest import DecideOption, DecideProblem, apply
from service.core.selection import incompatible_pairs
from tests.core.builders import arg, deliberation, option, problem

WHO = {"actor": "Practitioner/1", "at": "2026-01-01T00:00:00Z"}


def strong(id: str, tau: float = 0.9, **kw: object) -> object:
    """An option whose score is above the threshold, growing with ``tau``."""
    return option(id, [arg(f"{id}-s", "support", tau)], **kw)


def test_an_option_treating_only_rejected_problems_is_excluded_with_that_reason() -> None:
    d = deliberation(
        [strong("o1", problem_ids=("p-r1", "p-r2")), strong("o2", problem_ids=("p-r1", "p-k"))],
        [problem("p-r1", "RRN"), problem("p-r2", "RRR"), problem("p-k", "KKN")],
    )
    ev = evaluate(d)
    gated, kept = ev.option("o1"), ev.option("o2")
    assert gated.score > d.parameters.threshold  # the score alone would include it
    assert (gated.decision, gated.decided_by) == ("exclude", "problems")
    assert gated.reason == "treats only problems the panel rejected: p-r1, p-r2"
    assert "o1" not in ev.plan
    # one accepted problem is enough to keep it, and the trace names how that one was decided
    assert (kept.decision, kept.problems) == ("include", (("p-k", "consensus"),))


@pytest.mark.parametrize(
    ("votes", "initial", "arbitration", "path"),
    [
        ("KKN", "reject", None, "consensus"),  # strong consensus
        ("KNN", "accept", None, "fallback"),  # weak consensus: the attending's y0
        ("KR", "reject", "accept", "arbitration"),  # conflict, arbitrated
    ],
)
def test_the_accepted_problems_decision_path_is_carried(
    votes: str, initial: str, arbitration: str | None, path: str
) -> None:
    p = problem("p", votes, initial, arbitration=arbitration)
    ev = evaluate(deliberation([strong("o", problem_ids=("p",))], [p]))
    assert ev.option("o").problems == (("p", path),)
    assert ev.option("o").decision == "include"


def test_a_pending_problem_does_not_gate_and_no_problem_means_no_gate() -> None:
    d = deliberation(
        [strong("o1", problem_ids=("p-c",)), strong("o2"), strong("o3", problem_ids=("other",))],
        [problem("p-c", "KR")],  # conflict, not arbitrated: pending
    )
    ev = evaluate(d)
    assert [ev.option(i).decision for i in ("o1", "o2", "o3")] == ["include"] * 3
    assert all(ev.option(i).problems == () for i in ("o1", "o2", "o3"))


def test_a_humans_decisions_gate_and_are_never_undone() -> None:
    d = deliberation([strong("o", problem_ids=("p",))], [problem("p", "KKN")])
    assert evaluate(d).option("o").decision == "include"
    rejected = apply(d, DecideProblem("p", "reject"), task_id="t1", **WHO)
    assert evaluate(rejected).option("o").decided_by == "problems"
    # the human includes the option itself: the gate leaves it included
    included = apply(rejected, DecideOption("o", "include"), task_id="t2", **WHO)
    assert (evaluate(included).option("o").decision, evaluate(included).option("o").decided_by) == (
        "include",
        "human",
    )


def med(id: str, tau: float, action: str, ref: str = "MedicationRequest/m1") -> object:
    return strong(id, tau, medication_ref=ref, action=action)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("lower", "switch"),
        ("stop-now", "lower"),
        ("taper", "raise"),
        ("stop-at-review", "switch"),
        ("end-course", "raise"),
    ],
)
def test_incompatible_actions_on_one_medicine_keep_the_higher_score(
    first: str, second: str
) -> None:
    d = deliberation([med("weaker", 0.6, first), med("stronger", 0.9, second)])
    ev = evaluate(d)
    assert ev.option("weaker").score < ev.option("stronger").score
    assert ev.option("stronger").decision == "include"
    lost = ev.option("weaker")
    assert (lost.decision, lost.decided_by) == ("exclude", "incompatibility")
    assert "stronger" in lost.reason and f"({first} vs {second})" in lost.reason
    assert incompatible_pairs(d.options, ev.options) == ()


@pytest.mark.parametrize(
    ("first", "second", "ref"),
    [
        ("hold", "restart", "MedicationRequest/m1"),  # sequenced: hold, then restart
        ("hold", "stop-at-review", "MedicationRequest/m1"),  # hold now, decide at review
        ("lower", "check", "MedicationRequest/m1"),
        ("stop-now", "review", "MedicationRequest/m1"),
        ("lower", "lower", "MedicationRequest/m1"),  # the same fate twice is no contradiction
        ("stop-now", "raise", "MedicationRequest/m2"),  # other medicines
    ],
)
def test_compatible_actions_both_stay(first: str, second: str, ref: str) -> None:
    ev = evaluate(deliberation([med("a", 0.6, first), med("b", 0.9, second, ref)]))
    assert [ev.option(i).decision for i in ("a", "b")] == ["include", "include"]


def test_a_humans_inclusion_outranks_the_score() -> None:
    d = deliberation([med("weaker", 0.6, "lower"), med("stronger", 0.9, "switch")])
    d = apply(d, DecideOption("weaker", "include"), task_id="t1", **WHO)
    ev = evaluate(d)
    assert ev.option("weaker").decided_by == "human"
    assert ev.option("stronger").decided_by == "incompatibility"
    assert "weaker" in ev.option("stronger").reason


def test_three_way_conflict_keeps_only_the_best() -> None:
    d = deliberation([med("a", 0.5, "lower"), med("b", 0.9, "switch"), med("c", 0.7, "stop-now")])
    ev = evaluate(d)
    assert ev.plan == ("b",)
    assert {ev.option(i).decided_by for i in ("a", "c")} == {"incompatibility"}


def test_the_selection_is_in_the_document_and_recomputes() -> None:
    d = deliberation(
        [
            med("weaker", 0.6, "lower"),
            replace(med("stronger", 0.9, "switch"), problem_ids=("p",)),  # type: ignore[type-var]
            strong("gated", problem_ids=("q",)),
        ],
        [problem("p", "KKN"), problem("q", "RRN")],
    )
    doc = to_document(d, evaluate(d))
    by_id = {o["id"]: o for o in doc["options"]}
    assert by_id["weaker"]["decided_by"] == "incompatibility" and by_id["weaker"]["reason"]
    assert by_id["gated"]["decided_by"] == "problems"
    assert by_id["stronger"]["problem_paths"] == [{"problem_id": "p", "decided_by": "consensus"}]
    assert recompute_document(doc) == doc


def test_an_incremental_recompute_reselects() -> None:
    """A reused option's result is its score alone: a contest that changes the other option of
    an incompatible pair changes who is excluded."""
    d = deliberation([med("a", 0.6, "lower"), med("b", 0.9, "switch")])
    ev = evaluate(d)
    assert ev.plan == ("b",)
    d2 = apply(d, DecideOption("b", "exclude"), task_id="t1", **WHO)
    ev2 = evaluate(d2, previous=ev)
    assert ev2 == evaluate(d2)
    assert ev2.plan == ("a",) and ev2.option("a").decided_by == "score"
