"""Quadratic-energy semantics (CANOE eq. 10-12) against values worked out by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.core import QBAF, energy_update, h, propagate
from service.core.qbaf import propagate_indexed

REL = 1e-12


def f(base: dict[str, float], edges: list[tuple[str, str, str]]) -> dict[str, float]:
    s = propagate(QBAF.from_edges(base, edges))
    assert s.exact and s.converged and s.iterations == 1
    return dict(s.sigma)


@pytest.mark.parametrize(
    ("z", "expected"),
    [
        (-3.0, 0.0),  # max(z, 0) = 0
        (0.0, 0.0),
        (0.5, 0.2),  # 0.25 / 1.25
        (1.0, 0.5),  # 1 / 2
        (2.0, 0.8),  # 4 / 5
        (0.6, 0.36 / 1.36),
    ],
)
def test_impact_function(z: float, expected: float) -> None:
    assert h(z) == pytest.approx(expected, rel=REL, abs=1e-15)


def test_energy_update_has_neutral_point_and_saturates() -> None:
    assert energy_update(0.3, 0.0) == 0.3
    assert energy_update(0.3, 1e9) == pytest.approx(1.0)
    assert energy_update(0.3, -1e9) == pytest.approx(0.0)


@given(
    st.floats(min_value=0.0, max_value=1.0),
    st.floats(allow_nan=False) | st.sampled_from([0.0, -0.0, 1e-200, -1e-200, 1e300, -1e300]),
)
def test_energy_update_is_eq_11_written_with_h_bit_for_bit(tau: float, e: float) -> None:
    # energy_update computes h in place for speed; it must stay eq. 11 on h exactly.
    if e > 0.0:
        s = tau + (1.0 - tau) * h(e)
    elif e < 0.0:
        s = tau - tau * h(-e)
    else:
        s = tau
    expected = 0.0 if s < 0.0 else 1.0 if s > 1.0 else s
    assert energy_update(tau, e).hex() == expected.hex()


def test_option_alone_keeps_its_prior() -> None:
    assert f({"o": 0.5}, []) == {"o": 0.5}


def test_single_supporter() -> None:
    # E(o) = 1.0; h(1) = 1/2; sigma(o) = 0.5 + (1 - 0.5) * 0.5 = 0.75
    assert f({"o": 0.5, "s": 1.0}, [("s", "o", "support")])["o"] == pytest.approx(0.75, rel=REL)


def test_single_weaker_supporter() -> None:
    # E(o) = 0.6; h = 0.36 / 1.36 = 0.264705882352941...
    # sigma = 0.5 + 0.5 * h = 0.632352941176470...
    got = f({"o": 0.5, "s": 0.6}, [("s", "o", "support")])["o"]
    assert got == pytest.approx(0.6323529411764706, rel=REL)


def test_single_attacker() -> None:
    # E(o) = -1.0; h(-E) = h(1) = 0.5; sigma = 0.5 - 0.5 * 0.5 = 0.25
    assert f({"o": 0.5, "a": 1.0}, [("a", "o", "attack")])["o"] == pytest.approx(0.25, rel=REL)


def test_supporter_and_attacker_of_equal_strength_cancel() -> None:
    # E = 0.7 - 0.7 = 0 -> sigma = tau = 0.5 exactly
    got = f({"o": 0.5, "s": 0.7, "a": 0.7}, [("s", "o", "support"), ("a", "o", "attack")])
    assert got["o"] == 0.5


def test_chain_of_supports() -> None:
    # sigma(c) = 0.5 (no parents)
    # E(b) = 0.5; h = 0.25/1.25 = 0.2; sigma(b) = 0.5 + 0.5 * 0.2 = 0.6
    # E(o) = 0.6; sigma(o) = 0.5 + 0.5 * 0.36/1.36 = 0.6323529411764706
    got = f({"o": 0.5, "b": 0.5, "c": 0.5}, [("b", "o", "support"), ("c", "b", "support")])
    assert got["b"] == pytest.approx(0.6, rel=REL)
    assert got["o"] == pytest.approx(0.6323529411764706, rel=REL)


def test_argument_to_argument_attack_weakens_a_supporter() -> None:
    # sigma(a) = 1.0; E(b) = -1; sigma(b) = 0.8 - 0.8 * h(1) = 0.8 - 0.4 = 0.4
    # E(o) = 0.4; h = 0.16 / 1.16 = 0.13793103448275862
    # sigma(o) = 0.5 + 0.5 * h = 0.5689655172413793
    got = f({"o": 0.5, "b": 0.8, "a": 1.0}, [("b", "o", "support"), ("a", "b", "attack")])
    assert got["b"] == pytest.approx(0.4, rel=REL)
    assert got["o"] == pytest.approx(0.5689655172413793, rel=REL)


def test_argument_to_argument_support_of_an_attacker() -> None:
    # A pharmacist's warning p (0.5) supports a nurse's concern a (0.9) that attacks o.
    # sigma(a) = 0.9 + 0.1 * h(0.5) = 0.9 + 0.1 * 0.2 = 0.92
    # E(o) = -0.92; h(0.92) = 0.8464 / 1.8464 = 0.45840554592720967
    # sigma(o) = 0.5 - 0.5 * 0.45840554592720967 = 0.27079722703639515
    got = f({"o": 0.5, "a": 0.9, "p": 0.5}, [("a", "o", "attack"), ("p", "a", "support")])
    assert got["a"] == pytest.approx(0.92, rel=REL)
    assert got["o"] == pytest.approx(0.27079722703639515, rel=REL)


def test_mixed() -> None:
    # s1 = 0.8, s2 = 0.6 support o; a1 = 0.9 attacks o; p = 0.5 supports a1; q = 1.0 attacks s2.
    # sigma(a1) = 0.9 + 0.1 * h(0.5) = 0.92
    # sigma(s2) = 0.6 - 0.6 * h(1) = 0.3
    # E(o) = 0.8 + 0.3 - 0.92 = 0.18; h = 0.0324 / 1.0324 = 0.031383184812088335
    # sigma(o) = 0.5 + 0.5 * 0.031383184812088335 = 0.5156915924060442
    base = {"o": 0.5, "s1": 0.8, "s2": 0.6, "a1": 0.9, "p": 0.5, "q": 1.0}
    edges = [
        ("s1", "o", "support"),
        ("s2", "o", "support"),
        ("a1", "o", "attack"),
        ("p", "a1", "support"),
        ("q", "s2", "attack"),
    ]
    got = f(base, edges)
    assert got["s2"] == pytest.approx(0.3, rel=REL)
    assert got["a1"] == pytest.approx(0.92, rel=REL)
    assert got["o"] == pytest.approx(0.5156915924060442, rel=REL)


def test_zero_base_strength_is_lifted_only_by_support() -> None:
    # tau = 0: sigma = 0 + 1 * h(E) for E > 0, and 0 - 0 * h(-E) = 0 for E < 0
    got = f({"o": 0.5, "x": 0.0, "s": 1.0}, [("x", "o", "support"), ("s", "x", "support")])
    assert got["x"] == pytest.approx(0.5, rel=REL)
    got = f({"o": 0.5, "x": 0.0, "a": 1.0}, [("x", "o", "support"), ("a", "x", "attack")])
    assert got["x"] == 0.0


def test_repeated_edge_counts_once() -> None:
    once = f({"o": 0.5, "s": 1.0}, [("s", "o", "support")])
    twice = f({"o": 0.5, "s": 1.0}, [("s", "o", "support"), ("s", "o", "support")])
    assert once == twice


def test_cycle_is_iterated_to_a_fixed_point() -> None:
    # a and b attack each other; a supports o. No closed form needed: the answer must be a fixed
    # point of eq. 11 within the tolerance, reached in a bounded number of sweeps.
    base = {"o": 0.5, "a": 0.8, "b": 0.6}
    edges = [("a", "o", "support"), ("a", "b", "attack"), ("b", "a", "attack")]
    s = propagate(QBAF.from_edges(base, edges))
    assert not s.exact and s.converged and 1 < s.iterations < 10_000
    sig = s.sigma
    assert sig["a"] == pytest.approx(energy_update(0.8, -sig["b"]), abs=1e-11)
    assert sig["b"] == pytest.approx(energy_update(0.6, -sig["a"]), abs=1e-11)
    assert sig["o"] == pytest.approx(energy_update(0.5, sig["a"]), abs=1e-11)


def test_step_limit_is_reported_not_hidden() -> None:
    base = {"o": 0.5, "a": 0.8, "b": 0.6}
    edges = [("a", "o", "support"), ("a", "b", "attack"), ("b", "a", "attack")]
    s = propagate(QBAF.from_edges(base, edges), max_iterations=2)
    assert not s.converged and s.iterations == 2 and not s.exact


def test_self_support_cycle_with_zero_base_stays_at_zero() -> None:
    # sigma(x) = 0 + h(sigma(x)) has the fixed point 0, which Jacobi reaches at once.
    s = propagate(
        QBAF.from_edges({"o": 0.5, "x": 0.0}, [("x", "o", "support"), ("x", "x", "support")])
    )
    assert s.converged and s.sigma["x"] == 0.0 and s.sigma["o"] == 0.5


def test_exact_pass_and_jacobi_agree_bitwise_on_a_dag() -> None:
    base = [0.5, 0.8, 0.6, 0.9, 0.5, 1.0]
    sup = [[1, 2], [], [], [4], [], []]
    att = [[3], [], [5], [], [], []]
    exact = propagate_indexed(base, sup, att)
    it = propagate_indexed(base, sup, att, method="iterate")
    assert exact[3] and not it[3] and it[1]
    assert exact[0] == it[0]


@pytest.mark.parametrize(
    ("base", "edges", "message"),
    [
        ({"o": 0.5}, [("x", "o", "support")], "source"),
        ({"o": 0.5, "s": 1.0}, [("s", "y", "support")], "target"),
        ({"o": 0.5, "s": 1.0}, [("s", "o", "neutral")], "relation"),
        ({"o": 1.5}, [], "outside"),
        ({"o": float("nan")}, [], "outside"),
    ],
)
def test_bad_graphs_are_refused(base: dict[str, float], edges: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        QBAF.from_edges(base, edges)


def test_input_order_does_not_change_a_single_bit() -> None:
    base = {"o": 0.5, "s1": 0.1, "s2": 0.7, "s3": 0.3333333333333333, "a": 0.45}
    edges = [
        ("s1", "o", "support"),
        ("s2", "o", "support"),
        ("s3", "o", "support"),
        ("a", "o", "attack"),
    ]
    fwd = f(base, edges)
    rev = f(dict(reversed(base.items())), list(reversed(edges)))
    assert fwd == rev
