"""Arena clash resolution (CANOE 4.3.1, eq. 7-8) on hand-worked examples."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest

from service.core import calibrate, find_clashes
from service.core.arena import exact, is_near_tie
from service.core.model import Clash
from tests.core.builders import arg


def test_near_tied_opposing_pairs_clash_in_input_order() -> None:
    args = [
        arg("s1", "support", 0.6),
        arg("s2", "support", 0.9),
        arg("a1", "attack", 0.7),  # |0.6-0.7| = 0.1 < 0.2 ; |0.9-0.7| = 0.2 is not < 0.2
        arg("a2", "attack", 0.75),  # |0.6-0.75| = 0.15 ; |0.9-0.75| = 0.15
    ]
    assert find_clashes(args, 0.2) == (("s1", "a1"), ("s1", "a2"), ("s2", "a2"))


def test_difference_equal_to_delta_is_not_a_clash() -> None:
    # 0.5 - 0.25 = 0.25 exactly in binary floating point
    args = [arg("s", "support", 0.5), arg("a", "attack", 0.25)]
    assert find_clashes(args, 0.25) == ()
    assert find_clashes(args, 0.2500001) == (("s", "a"),)


# Pairs whose stated strengths are exactly 0.2 apart. As binary floats, 0.87 - 0.67, 0.6 - 0.4,
# 0.75 - 0.55, 0.7 - 0.5 and 0.95 - 0.75 come out just below 0.2 and 0.9 - 0.7, 0.8 - 0.6 just
# above; 0.45 - 0.25 and 0.65 - 0.45 exactly 0.2. A float test therefore called 5 of these 9
# pairs clashes; on exact decimals none is.
EXACT_DELTA_PAIRS = [
    (0.87, 0.67),
    (0.6, 0.4),
    (0.9, 0.7),
    (0.75, 0.55),
    (0.45, 0.25),
    (0.8, 0.6),
    (0.7, 0.5),
    (0.95, 0.75),
    (0.65, 0.45),
]


def test_float_subtraction_disagrees_on_pairs_exactly_delta_apart() -> None:
    # The premise of the exact rule: the naive float test splits these equal differences.
    naive = [abs(s - a) < 0.2 for s, a in EXACT_DELTA_PAIRS]
    assert any(naive) and not all(naive)


@pytest.mark.parametrize(("high", "low"), EXACT_DELTA_PAIRS)
def test_pairs_exactly_delta_apart_never_clash_whichever_side_is_stronger(
    high: float, low: float
) -> None:
    for s, a in ((high, low), (low, high)):
        assert not is_near_tie(s, a, 0.2)
        assert find_clashes([arg("s", "support", s), arg("a", "attack", a)], 0.2) == ()


@pytest.mark.parametrize(("high", "low"), EXACT_DELTA_PAIRS)
def test_pairs_a_hundredth_inside_delta_always_clash(high: float, low: float) -> None:
    closer = round(high - 0.01, 2)
    assert is_near_tie(closer, low, 0.2)
    assert find_clashes([arg("s", "support", low), arg("a", "attack", closer)], 0.2) == (
        ("s", "a"),
    )


def test_exact_decimal_of_a_stated_strength() -> None:
    assert exact(0.87) == Decimal("0.87")
    assert exact(0.87) - exact(0.67) == Decimal("0.20")
    # a computed float keeps its own exact decimal: it was not stated as 0.3
    assert exact(0.1 + 0.2) == Decimal("0.30000000000000004")
    assert is_near_tie(0.1 + 0.2, 0.5, 0.2)  # 0.19999999999999996 apart as stated


def test_same_stance_pairs_never_clash_and_rejected_or_excluded_take_no_part() -> None:
    args = [
        arg("s1", "support", 0.5),
        arg("s2", "support", 0.5),
        arg("a1", "attack", 0.5, status="rejected"),
        arg("a2", "attack", 0.5),
    ]
    assert find_clashes(args, 0.2) == (("s1", "a2"), ("s2", "a2"))
    assert find_clashes(args, 0.2, exclude={"s1"}) == (("s2", "a2"),)


def test_single_clash_winner_and_loser() -> None:
    # winner: w = 1 -> tau + 0.15 * (2 - 1) = 0.6 + 0.15 = 0.75
    # loser:  w = 0 -> tau + 0.15 * (0 - 1) = 0.7 - 0.15 = 0.55
    args = [arg("s", "support", 0.6), arg("a", "attack", 0.7)]
    tau = calibrate(args, [Clash("s", "a", "support")], 0.15)
    assert tau["s"] == pytest.approx(0.75) and tau["a"] == pytest.approx(0.55)


def test_win_rate_over_several_clashes() -> None:
    # s: wins 1 of 2 -> w = 0.5 -> delta tau = 0 -> keeps 0.6 exactly
    # a1: loses its only clash -> 0.65 - 0.15 = 0.5 ; a2: wins -> 0.55 + 0.15 = 0.7
    # s2 wins 2 of 3 -> w = 2/3 -> 0.5 + 0.15 * (4/3 - 1) = 0.5 + 0.05 = 0.55
    args = [
        arg("s", "support", 0.6),
        arg("s2", "support", 0.5),
        arg("a1", "attack", 0.65),
        arg("a2", "attack", 0.55),
        arg("a3", "attack", 0.45),
    ]
    clashes = [
        Clash("s", "a1", "support"),
        Clash("s", "a2", "attack"),
        Clash("s2", "a3", "support"),
        Clash("s2", "a2", "support"),
        Clash("s2", "a1", "attack"),
    ]
    tau = calibrate(args, clashes, 0.15)
    assert tau["s"] == 0.6
    assert tau["s2"] == pytest.approx(0.55, rel=1e-12)
    # a1: 1 win (vs s2), 1 loss (vs s) -> keeps 0.65; a2: 1 win, 1 loss -> keeps 0.55
    assert tau["a1"] == 0.65 and tau["a2"] == 0.55
    assert tau["a3"] == pytest.approx(0.45 - 0.15, rel=1e-12)


def test_calibration_is_clipped_to_the_unit_interval() -> None:
    # 0.95 + 0.15 = 1.1 -> 1.0 ; 0.1 - 0.15 = -0.05 -> 0.0
    args = [arg("s", "support", 0.95), arg("a", "attack", 0.1)]
    tau = calibrate(args, [Clash("s", "a", "support")], 0.15)
    assert tau == {"s": 1.0, "a": 0.0}


def test_clash_without_winner_counts_for_nobody() -> None:
    # s: one decided win and one undecided clash -> w = 1/1 -> 0.6 + 0.15
    # a2: its only clash has no winner -> keeps tau
    args = [arg("s", "support", 0.6), arg("a1", "attack", 0.7), arg("a2", "attack", 0.5)]
    tau = calibrate(args, [Clash("s", "a1", "support"), Clash("s", "a2", None)], 0.15)
    assert tau["s"] == pytest.approx(0.75) and tau["a2"] == 0.5
    assert tau["a1"] == pytest.approx(0.55)


def test_no_clash_keeps_tau_and_beta_zero_changes_nothing() -> None:
    args = [arg("s", "support", 0.6), arg("a", "attack", 0.7)]
    assert calibrate(args, [], 0.15) == {"s": 0.6, "a": 0.7}
    assert calibrate(args, [Clash("s", "a", "attack")], 0.0) == {"s": 0.6, "a": 0.7}


def test_order_of_clashes_cannot_matter() -> None:
    args = [
        arg("s1", "support", 0.6),
        arg("s2", "support", 0.62),
        arg("a1", "attack", 0.65),
        arg("a2", "attack", 0.58),
    ]
    clashes = [
        Clash("s1", "a1", "attack"),
        Clash("s1", "a2", "support"),
        Clash("s2", "a1", "support"),
        Clash("s2", "a2", None),
    ]
    results = {
        tuple(calibrate(args, list(p), 0.15).items()) for p in itertools.permutations(clashes)
    }
    assert len(results) == 1


def test_clashes_with_arguments_outside_the_given_set_are_ignored() -> None:
    # the caller leaves out rejected / human-weighed arguments; their clashes count for nobody
    args = [arg("s", "support", 0.6)]
    assert calibrate(args, [Clash("s", "gone", "support")], 0.15) == {"s": 0.6}
