"""evaluate(): calibration + propagation per option, router per problem, plan selection."""

from __future__ import annotations

import pytest

from service.core import CATEGORY_ORDER, QBAF, evaluate, propagate
from service.core.model import Parameters
from tests.core.builders import arg, deliberation, option, problem, sample


def test_option_score_is_the_propagated_option_node() -> None:
    # single supporter of tau 1.0: F = 0.75 (see test_qbaf), included since 0.75 > 0.5
    ev = evaluate(deliberation([option("o", [arg("s", "support", 1.0)])]))
    r = ev.option("o")
    assert r.score == pytest.approx(0.75) and r.decision == "include" and r.decided_by == "score"
    assert r.nodes["o"].tau == 0.5 and r.nodes["s"].sigma == 1.0
    assert ev.plan == ("o",)


def test_calibrated_strengths_feed_the_graph() -> None:
    # clash s (0.6) vs a (0.7), s wins: tau~(s) = 0.75, tau~(a) = 0.55
    # E(o) = 0.75 - 0.55 = 0.2; h = 0.04 / 1.04 = 0.038461538461538464
    # F = 0.5 + 0.5 * h = 0.5192307692307693
    o = option(
        "o", [arg("s", "support", 0.6), arg("a", "attack", 0.7)], clashes=[("s", "a", "support")]
    )
    r = evaluate(deliberation([o])).option("o")
    assert r.nodes["s"].tau_calibrated == pytest.approx(0.75)
    assert r.nodes["a"].tau_calibrated == pytest.approx(0.55)
    assert r.score == pytest.approx(0.5192307692307693, rel=1e-12)
    assert r.borderline  # |0.519 - 0.5| <= 0.05


def test_same_as_direct_propagation_on_the_sample() -> None:
    d = sample()
    ev = evaluate(d)
    o1 = d.options[0]
    # a1 wins its clash with a2: 0.7 + 0.15 = 0.85, a2 0.6 - 0.15 = 0.45; (a3, a2) has no winner
    base = {"o1": 0.5, "a1": 0.85, "a2": 0.6 - 0.15, "a3": 0.5, "a4": 0.3}
    g = QBAF.from_edges(base, [(e.source, e.target, e.relation) for e in o1.edges])
    assert ev.option("o1").score == pytest.approx(propagate(g).sigma["o1"], rel=1e-15)


def test_borderline_band_is_configurable() -> None:
    o = option(
        "o", [arg("s", "support", 0.6), arg("a", "attack", 0.7)], clashes=[("s", "a", "support")]
    )
    assert not evaluate(deliberation([o], parameters=Parameters(band=0.01))).option("o").borderline


def test_threshold_is_strict() -> None:
    # equal support and attack: F = 0.5 exactly, not > 0.5
    o = option("o", [arg("s", "support", 0.4), arg("a", "attack", 0.4)])
    r = evaluate(deliberation([o])).option("o")
    assert r.score == 0.5 and r.decision == "exclude" and r.borderline


def test_human_decision_overrides_score() -> None:
    inc = option("i", [arg("a", "attack", 1.0)], human_decision="include")
    exc = option("e", [arg("s", "support", 1.0)], human_decision="exclude")
    ev = evaluate(deliberation([inc, exc]))
    assert ev.option("i").decision == "include" and ev.option("i").decided_by == "human"
    assert ev.option("e").decision == "exclude" and ev.plan == ("i",)


def test_non_converged_option_is_never_included_by_score() -> None:
    o = option(
        "o",
        [arg("a", "support", 0.9), arg("b", "attack", 0.6)],
        extra_edges=[("a", "b", "attack"), ("b", "a", "attack")],
    )
    r = evaluate(deliberation([o], parameters=Parameters(max_iterations=1))).option("o")
    assert not r.converged and r.decision == "exclude" and r.borderline
    r2 = evaluate(deliberation([o])).option("o")
    assert r2.converged and r2.iterations > 1


def test_rejected_arguments_are_out_of_the_graph() -> None:
    o = option(
        "o",
        [arg("s", "support", 1.0), arg("a", "attack", 1.0, status="rejected")],
        extra_edges=[("a", "s", "attack")],
    )
    r = evaluate(deliberation([o])).option("o")
    assert r.score == pytest.approx(0.75) and r.nodes["a"].sigma is None


def test_human_weighed_arguments_take_part_in_no_clash() -> None:
    o = option(
        "o",
        [arg("s", "support", 0.6, origin="human", tau_source="human"), arg("a", "attack", 0.7)],
        clashes=[("s", "a", "support")],
    )
    r = evaluate(deliberation([o])).option("o")
    assert r.nodes["s"].tau_calibrated == 0.6 and r.nodes["a"].tau_calibrated == 0.7


def test_plan_order_category_then_score_then_id() -> None:
    opts = [
        option("z-ref", [arg("z1", "support", 1.0)], category="referral"),
        option("unknown", [arg("u1", "support", 1.0)], category="something-else"),
        option("m-weak", [arg("m1", "support", 0.8)], category="medication"),
        option("m-strong", [arg("m2", "support", 1.0)], category="medication"),
        option("b-safe", [arg("b1", "support", 0.9)], category="immediate-safety"),
        option("a-safe", [arg("a1", "support", 0.9)], category="immediate-safety"),
        option("out", [arg("x1", "attack", 1.0)], category="immediate-safety"),
    ]
    ev = evaluate(deliberation(opts))
    assert ev.plan == ("a-safe", "b-safe", "m-strong", "m-weak", "z-ref", "unknown")
    assert CATEGORY_ORDER[0] == "immediate-safety" and CATEGORY_ORDER[-1] == "follow-up"


def test_problem_decisions_by_path() -> None:
    d = deliberation(
        [],
        [
            problem("strong", "KKN", initial="reject"),
            problem("weak", "NNK", initial="reject"),
            problem("arb", "KR", arbitration="reject"),
            problem("pending", "KRN"),
            problem("human", "KR", human_decision="accept"),
        ],
    )
    ev = evaluate(d)
    got = {p.problem_id: (p.path, p.decision, p.decided_by) for p in ev.problems}
    assert got == {
        "strong": ("strong_consensus", "accept", "consensus"),
        "weak": ("weak_consensus", "reject", "fallback"),
        "arb": ("conflict", "reject", "arbitration"),
        "pending": ("conflict", None, "pending"),
        "human": ("conflict", "accept", "human"),
    }
    with pytest.raises(KeyError):
        ev.problem("nope")


def test_evaluation_is_repeatable_bit_for_bit() -> None:
    d = sample()
    assert evaluate(d) == evaluate(d)


def test_node_scores_built_without_init_equal_the_dataclass_ones() -> None:
    # evaluate builds NodeScores through the slots' setters (speed): same value, still frozen.
    from dataclasses import FrozenInstanceError, fields

    from service.core.evaluation import NodeScore, _node_score

    assert tuple(f.name for f in fields(NodeScore)) == NodeScore.__slots__
    for row in (("a", 0.25, 0.5, None), ("o", 0.5, 0.5, 0.75)):
        fast, slow = _node_score(*row), NodeScore(*row)
        assert fast == slow and repr(fast) == repr(slow) and hash(fast) == hash(slow)
        with pytest.raises(FrozenInstanceError):
            fast.tau = 1.0  # type: ignore[misc]
