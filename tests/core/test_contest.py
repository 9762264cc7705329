"""Contestation: each action a new version, recorded; recompute by the same propagation."""

from __future__ import annotations

import dataclasses

import pytest

from service.core import (
    AcceptArgument,
    AddArgument,
    DecideOption,
    DecideProblem,
    EditArgument,
    RejectArgument,
    apply,
    apply_all,
    evaluate,
)
from service.core.model import Edge
from service.errors import TaskError
from tests.core.builders import arg, deliberation, option, sample

WHO = {"actor": "Practitioner/123", "at": "2026-01-02T03:04:05Z"}


def test_accept_pins_and_records_who_when_why() -> None:
    d = sample()
    d2 = apply(d, AcceptArgument("a1"), task_id="t1", reason="well grounded", **WHO)
    assert d2.version == 2 and d.version == 1
    assert d2.options[0].arguments[0].status == "accepted"
    c = d2.contestations[-1]
    assert (c.id, c.action, c.target, c.actor, c.at, c.reason) == (
        "t1",
        "accept",
        "a1",
        "Practitioner/123",
        "2026-01-02T03:04:05Z",
        "well grounded",
    )
    # untouched options are shared, touched one is new
    assert d2.options[1] is d.options[1] and d2.options[0] is not d.options[0]
    assert evaluate(d2).options == evaluate(d).options  # pinning does not change scores


def test_same_task_twice_is_a_no_op() -> None:
    d2 = apply(sample(), RejectArgument("a2"), task_id="t1", **WHO)
    assert apply(d2, RejectArgument("a3"), task_id="t1", **WHO) is d2


def test_reject_removes_argument_edges_and_clashes() -> None:
    d = sample()
    d2 = apply(d, RejectArgument("a1"), task_id="t1", **WHO)
    assert d2.options[0].arguments[0].status == "rejected"
    # same as if a1 had never been there (its edge a3->a1 and its clash with a2 go with it)
    o = d.options[0]
    without = dataclasses.replace(
        o,
        arguments=o.arguments[1:],
        edges=tuple(e for e in o.edges if "a1" not in (e.source, e.target)),
        clashes=tuple(c for c in o.clashes if c.support != "a1"),
    )
    ref = evaluate(dataclasses.replace(d, options=(without, *d.options[1:])))
    assert evaluate(d2).option("o1").score == ref.option("o1").score
    assert evaluate(d2).option("o1").score < evaluate(d).option("o1").score


def test_accept_after_reject_restores_the_score_exactly() -> None:
    d = sample()
    d3 = apply(
        apply(d, RejectArgument("a2"), task_id="t1", **WHO),
        AcceptArgument("a2"),
        task_id="t2",
        **WHO,
    )
    assert evaluate(d3).option("o1").score == evaluate(d).option("o1").score
    assert d3.contestations[-1].payload["previous_status"] == "rejected"


def test_edit_tau_makes_strength_human_and_drops_its_clashes() -> None:
    d = sample()
    d2 = apply(d, EditArgument("a2", tau=0.6), task_id="t1", **WHO)
    a2 = d2.options[0].arguments[1]
    assert a2.tau == 0.6 and a2.tau_source == "human"
    r = evaluate(d2).option("o1")
    assert r.nodes["a2"].tau_calibrated == 0.6  # its lost clash no longer counts
    assert r.nodes["a1"].tau_calibrated == 0.7  # nor does the win of its opponent
    assert d2.contestations[-1].payload["previous_tau"] == 0.6


def test_edit_text_evidence_and_relations() -> None:
    d = sample()
    d2 = apply(
        d,
        EditArgument(
            "a4",
            text="new",
            evidence=("ev-9",),
            add_relations=(Edge("a4", "a1", "attack"),),
            remove_relations=(Edge("a4", "a3", "attack"),),
        ),
        task_id="t1",
        **WHO,
    )
    o = d2.options[0]
    assert o.arguments[3].text == "new" and o.arguments[3].evidence == ("ev-9",)
    assert Edge("a4", "a1", "attack") in o.edges and Edge("a4", "a3", "attack") not in o.edges
    assert evaluate(d2).option("o1").score != evaluate(d).option("o1").score
    assert d2.contestations[-1].payload["add_relations"] == [
        {"source": "a4", "target": "a1", "relation": "attack"}
    ]


def test_add_human_argument_with_automatic_option_edge() -> None:
    d = deliberation([option("o", [arg("s", "support", 1.0)])])
    new = arg("h1", "attack", 1.0, role="human")
    d2 = apply(d, AddArgument("o", new, (Edge("h1", "s", "attack"),)), task_id="t1", **WHO)
    o = d2.options[0]
    assert o.arguments[-1].origin == "human" and o.arguments[-1].tau_source == "human"
    assert Edge("h1", "o", "attack") in o.edges
    # sigma(s) = 1 - 1 * h(1) = 0.5 ; E(o) = 0.5 - 1.0 = -0.5 ; F = 0.5 - 0.5 * 0.2 = 0.4
    assert evaluate(d2).option("o").score == pytest.approx(0.4, rel=1e-12)


def test_decide_option_and_problem() -> None:
    d = sample()
    d2 = apply(d, DecideOption("o3", "include"), task_id="t1", **WHO)
    d3 = apply(d2, DecideProblem("pr1", "reject"), task_id="t2", **WHO)
    ev = evaluate(d3)
    assert "o3" in ev.plan and ev.option("o3").decided_by == "human"
    assert ev.problem("pr1").decision == "reject" and ev.problem("pr1").decided_by == "human"
    assert d3.version == 3 and [c.payload["on"] for c in d3.contestations] == ["option", "problem"]


@pytest.mark.parametrize(
    ("action", "code", "field"),
    [
        (AcceptArgument("nope"), "not-found", "argument_id"),
        (RejectArgument("nope"), "not-found", "argument_id"),
        (EditArgument("a1", tau=1.5), "value", "tau"),
        (EditArgument("a1", tau=float("nan")), "value", "tau"),
        (EditArgument("a1"), "invalid", "argument_id"),
        (
            EditArgument("a1", add_relations=(Edge("a1", "zz", "support"),)),
            "not-found",
            "add_relations[0].target",
        ),
        (
            EditArgument("a1", add_relations=(Edge("a1", "o1", "support"),)),
            "invalid",
            "add_relations[0].target",
        ),
        (
            EditArgument("a1", add_relations=(Edge("a3", "a4", "support"),)),
            "invalid",
            "add_relations[0]",
        ),
        (
            EditArgument("a3", add_relations=(Edge("a3", "a1", "support"),)),
            "invalid",
            "add_relations[0]",
        ),
        (
            EditArgument("a1", remove_relations=(Edge("a1", "a2", "support"),)),
            "not-found",
            "remove_relations[0]",
        ),
        (AddArgument("nope", arg("h", "support", 0.5)), "not-found", "option_id"),
        (AddArgument("o1", arg("a1", "support", 0.5)), "invalid", "argument.id"),
        (AddArgument("o1", arg("h", "support", -0.1)), "value", "argument.tau"),
        (AddArgument("o1", arg("h", "neutral", 0.5)), "value", "argument.stance"),
        (DecideOption("nope", "include"), "not-found", "option_id"),
        (DecideOption("o1", "maybe"), "value", "decision"),  # type: ignore[arg-type]
        (DecideProblem("nope", "accept"), "not-found", "problem_id"),
    ],
)
def test_bad_actions_name_the_field(action: object, code: str, field: str) -> None:
    with pytest.raises(TaskError) as info:
        apply(sample(), action, task_id="t1", **WHO)  # type: ignore[arg-type]
    issue = info.value.issues[0]
    assert issue.code == code and issue.expression == (field,)


def test_apply_all_is_atomic_with_one_version() -> None:
    d = sample()
    ok = apply_all(
        d,
        [
            (RejectArgument("a2"), "t1", "Practitioner/1", "2026-01-01T00:00:00Z", "unsafe"),
            (DecideOption("o3", "include"), "t2", "Practitioner/1", "2026-01-01T00:00:01Z", ""),
            (RejectArgument("a4"), "t1", "Practitioner/1", "2026-01-01T00:00:02Z", "replay"),
        ],
    )
    assert ok.version == 2 and [c.id for c in ok.contestations] == ["t1", "t2"]
    with pytest.raises(TaskError) as info:
        apply_all(
            d,
            [
                (RejectArgument("a2"), "t1", "P/1", "2026-01-01T00:00:00Z", ""),
                (EditArgument("a1", tau=2.0), "t2", "P/1", "2026-01-01T00:00:00Z", ""),
            ],
        )
    assert info.value.issues[0].expression == ("actions[1].tau",)
    assert d.contestations == () and d.options[0].arguments[1].status == "active"
    assert apply_all(ok, [(RejectArgument("a2"), "t1", "P/1", "x", "")]) is ok


def test_missing_actor_or_time_is_refused() -> None:
    with pytest.raises(TaskError) as info:
        apply(sample(), RejectArgument("a1"), task_id="t1", actor="", at="2026-01-01")
    assert info.value.issues[0].expression == ("actor",)


def test_incremental_recompute_equals_full_recompute() -> None:
    d = sample()
    ev = evaluate(d)
    d2 = apply(d, RejectArgument("b2"), task_id="t1", **WHO)
    inc = evaluate(d2, previous=ev)
    assert inc == evaluate(d2)
    assert inc.inputs is not None and ev.inputs is not None
    assert inc.inputs[2][0] is ev.inputs[2][0]  # o1 untouched: its scored result reused
    assert inc.option("o2") != ev.option("o2")
