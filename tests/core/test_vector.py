"""The numpy engine against the pure one (the reference): same strengths within 1e-12 on acyclic
graphs, within the tolerance on cyclic ones, same flags; the elementwise update bit for bit; the
vectorised ``QBAF.from_edges`` builds the same graph and refuses the same bad edges."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.core._vector import (
    _most_first,
    edges_from_lists,
    energy_update_array,
    propagate_arrays,
)
from service.core.qbaf import QBAF, VECTOR_MIN_EDGES, energy_update, propagate, propagate_indexed
from tests.core.test_properties import dags, graphs, qbaf, relations

finite = st.floats(min_value=-50.0, max_value=50.0, allow_nan=False)
taus = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def lists(
    base: list[float], edges: list[tuple[int, int, str]]
) -> tuple[list[list[int]], list[list[int]]]:
    sup: list[list[int]] = [[] for _ in base]
    att: list[list[int]] = [[] for _ in base]
    for s, t, r in dict.fromkeys(edges):
        (sup if r == "support" else att)[t].append(s)
    return sup, att


@given(st.lists(st.tuples(taus, finite), min_size=1, max_size=50))
@settings(max_examples=200, deadline=None)
def test_elementwise_update_is_the_scalar_update_bit_for_bit(pairs: list[tuple[float, float]]):
    tau = np.array([t for t, _ in pairs])
    e = np.array([x for _, x in pairs])
    got = energy_update_array(tau, e).tolist()
    assert got == [energy_update(t, x) for t, x in pairs]


@given(dags(max_args=30))
@settings(max_examples=200, deadline=None)
def test_engines_agree_within_1e_12_on_acyclic_graphs(g) -> None:
    base, edges = g
    sup, att = lists(base, edges)
    pure = propagate_indexed(base, sup, att, engine="pure")
    fast = propagate_indexed(base, sup, att, engine="vector")
    assert fast[1:] == pure[1:] == (True, 1, True)
    assert max(abs(a - b) for a, b in zip(fast[0], pure[0], strict=True)) <= 1e-12


@given(graphs())
@settings(max_examples=300, deadline=None)
def test_engines_agree_within_the_tolerance_on_any_graph(g) -> None:
    base, edges = g
    graph = qbaf(base, edges)
    pure = propagate(graph, engine="pure", max_iterations=2_000)
    fast = propagate(graph, engine="vector", max_iterations=2_000)
    assert fast.exact == pure.exact
    if pure.exact:
        assert fast.converged and fast.iterations == 1
        bound = 1e-12
    else:
        assert fast.converged == pure.converged
        bound = 1e-9  # two Jacobi runs stopped by |change| <= 1e-12, rounding apart
    assert all(0.0 <= v <= 1.0 for v in fast.sigma.values())
    assert max(abs(fast.sigma[k] - pure.sigma[k]) for k in pure.sigma) <= bound


def random_graph(seed: int, n: int, m: int, *, cyclic: bool) -> tuple[dict[str, float], list]:
    rng = random.Random(seed)
    base = {f"n{i}": rng.random() for i in range(n)}
    edges = []
    for _ in range(m):
        s, t = rng.randrange(n), rng.randrange(n)
        if not cyclic:
            if s == t:
                continue
            s, t = max(s, t), min(s, t)
        edges.append((f"n{s}", f"n{t}", rng.choice(("support", "attack"))))
    return base, edges


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cyclic", [False, True], ids=["acyclic", "cyclic"])
def test_engines_agree_on_graphs_above_the_threshold(seed: int, cyclic: bool) -> None:
    base, edges = random_graph(seed, 600, 3 * VECTOR_MIN_EDGES, cyclic=cyclic)
    edges += edges[:50]  # repeats count once
    graph = QBAF.from_edges(base, edges)
    auto = propagate(graph)
    pure = propagate(graph, engine="pure")
    assert auto == propagate(graph, engine="vector")  # auto picks the numpy engine here
    assert (auto.exact, auto.converged) == (pure.exact, pure.converged) == (not cyclic, True)
    bound = 1e-9 if cyclic else 1e-12
    assert max(abs(auto.sigma[k] - pure.sigma[k]) for k in base) <= bound
    assert propagate(graph) == auto  # deterministic


def test_vectorised_from_edges_builds_the_same_relations() -> None:
    base, edges = random_graph(5, 300, 2 * VECTOR_MIN_EDGES, cyclic=True)
    edges += edges[:40]
    big = QBAF.from_edges(base, edges)
    small: dict[tuple[str, str], set[str]] = {}  # what the relations must hold
    for s, t, r in dict.fromkeys(edges):
        small.setdefault((t, r), set()).add(s)
    for n in base:
        assert set(big.supporters[n]) == small.get((n, "support"), set())
        assert set(big.attackers[n]) == small.get((n, "attack"), set())
        assert len(big.supporters[n]) == len(set(big.supporters[n]))
    assert len(big.supporters) == len(base) and list(big.attackers) == list(base)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (("ghost", "n1", "support"), "source 'ghost'"),
        (("n1", "ghost", "attack"), "target 'ghost'"),
        (("n1", "n2", "neutral"), "relation 'neutral'"),
        (("support", "n2", "attack"), "source 'support'"),
        (("n1", "attack", "attack"), "target 'attack'"),
        (("n1", "n2", "n3"), "relation 'n3'"),
        (("n1", "n2"), "not enough values"),
        (("n1", "n2", "support", "attack"), "too many values"),
    ],
)
def test_large_edge_lists_are_refused_with_the_same_errors(bad: tuple, message: str) -> None:
    base, edges = random_graph(1, 100, VECTOR_MIN_EDGES + 10, cyclic=False)
    edges.insert(VECTOR_MIN_EDGES // 2, bad)
    with pytest.raises(ValueError, match=message):
        QBAF.from_edges(base, edges)


def test_triples_of_wrong_lengths_that_line_up_when_flattened_are_refused() -> None:
    base, edges = random_graph(2, 100, VECTOR_MIN_EDGES + 10, cyclic=False)
    edges[10:12] = [("n1", "n2", "support", "n3"), ("n4", "attack")]  # 4 + 2 = 3 + 3 items
    with pytest.raises(ValueError, match="too many values"):
        QBAF.from_edges(base, edges)


@pytest.mark.parametrize("tau", [float("nan"), -0.1, 1.5])
def test_large_graphs_refuse_base_strengths_outside_0_1_first(tau: float) -> None:
    base, edges = random_graph(3, 100, VECTOR_MIN_EDGES + 10, cyclic=False)
    base["n7"] = tau
    edges.append(("ghost", "n1", "support"))  # the strength is named, as on small graphs
    with pytest.raises(ValueError, match="base strength of 'n7'"):
        QBAF.from_edges(base, edges)


def test_large_graphs_may_name_nodes_like_the_relations() -> None:
    base, edges = random_graph(4, 300, 2 * VECTOR_MIN_EDGES, cyclic=True)
    renamed = {"n0": "support", "n1": "attack"}
    base = {renamed.get(k, k): v for k, v in base.items()}
    edges = [(renamed.get(s, s), renamed.get(t, t), r) for s, t, r in edges]
    graph = QBAF.from_edges(base, edges)
    auto, pure = propagate(graph), propagate(graph, engine="pure")
    assert auto.converged and pure.converged
    assert max(abs(auto.sigma[k] - pure.sigma[k]) for k in base) <= 1e-9
    for t in ("support", "attack"):
        assert set(graph.supporters[t]) == {s for s, tt, r in edges if tt == t and r == "support"}


def test_strengths_of_the_numpy_engine_read_as_a_dict() -> None:
    base, edges = random_graph(6, 400, 2 * VECTOR_MIN_EDGES, cyclic=False)
    sigma = propagate(QBAF.from_edges(base, edges)).sigma
    plain = dict(sigma)
    assert list(sigma) == list(base) and len(sigma) == len(base)
    assert sigma == plain and plain == sigma and sigma != {**plain, "n0": -1.0}
    assert all(type(v) is float for v in plain.values())
    assert sigma["n3"] == plain["n3"] and "ghost" not in sigma
    assert repr(sigma) == repr(plain)


def test_indexed_lists_above_the_threshold_use_the_numpy_engine_and_agree() -> None:
    base_d, edges = random_graph(9, 800, 2 * VECTOR_MIN_EDGES, cyclic=False)
    ids = {k: i for i, k in enumerate(base_d)}
    base = list(base_d.values())
    sup, att = lists(base, [(ids[s], ids[t], r) for s, t, r in edges])
    auto = propagate_indexed(base, sup, att)
    assert auto == propagate_indexed(base, sup, att, engine="vector")
    pure = propagate_indexed(base, sup, att, engine="pure")
    assert max(abs(a - b) for a, b in zip(auto[0], pure[0], strict=True)) <= 1e-12
    forced = propagate_indexed(base, sup, att, method="iterate", engine="vector")
    assert forced[1] and not forced[3]
    assert max(abs(a - b) for a, b in zip(forced[0], pure[0], strict=True)) <= 1e-9


@st.composite
def shuffled_graphs(draw: st.DrawFn) -> tuple[dict[str, float], list[tuple[str, str, str]], bool]:
    """Graphs of up to 150 nodes listed in any order, acyclic ones often deep (a chain with side
    edges makes a path of up to 149 edges), cyclic ones with a few back edges."""
    n = draw(st.integers(2, 150))
    rank = draw(st.permutations(range(n)))  # node i's place in a hidden topological order
    cyclic = draw(st.booleans())
    pairs = [(i, i + 1) for i in range(n - 1) if draw(st.booleans())]  # part of a long chain
    pairs += draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    edges = []
    for a, b in pairs:
        if a == b:
            continue
        if not cyclic:
            a, b = min(a, b), max(a, b)
        rel = draw(relations)
        edges.append((f"n{rank[a]}", f"n{rank[b]}", rel))
    order = draw(st.permutations(range(n)))
    base = {f"n{i}": draw(taus) for i in order}
    return base, edges, cyclic


@given(shuffled_graphs())
@settings(max_examples=300, deadline=None)
def test_numpy_paths_agree_with_the_reference_on_random_graphs(g) -> None:
    """The numpy engine's three ways (level pass, sweeps until nothing changes, Jacobi) against
    the pure engine, on graphs listed in any order: same flags, strengths within 1e-12 when
    acyclic (the tolerance's reach when cyclic); the level pass and the sweeps bit for bit."""
    base, edges, cyclic = g
    graph = QBAF.from_edges(base, edges)
    pure = propagate(graph, engine="pure")
    fast = propagate(graph, engine="vector")
    assert (fast.exact, fast.converged) == (pure.exact, pure.converged)
    assert fast.iterations == pure.iterations or not pure.exact
    bound = 1e-12 if pure.exact else 1e-9  # two Jacobi runs stopped by |change| <= 1e-12
    assert max(abs(fast.sigma[k] - pure.sigma[k]) for k in base) <= bound
    if cyclic and not pure.exact:
        return
    ids = {k: i for i, k in enumerate(base)}
    sup, att = lists(list(base.values()), [(ids[s], ids[t], r) for s, t, r in edges])
    tau = np.array(list(base.values()))
    arrays = [edges_from_lists(x) for x in (sup, att)]
    for width in (None, 1, 2, 4, 10**6):  # every term pairwise ... every term one by one
        runs = [
            propagate_arrays(
                tau,
                *arrays,
                tolerance=1e-12,
                max_iterations=10_000,
                max_levels=k,
                ordered_max_levels=k,
                width=width,
            )
            for k in (0, 1, 10**6)  # sweeps only, sweeps past one level, always the level pass
        ]
        assert runs[0][1:] == runs[1][1:] == runs[2][1:] == (True, 1, True)
        assert runs[0][0].tolist() == runs[1][0].tolist() == runs[2][0].tolist()
        assert max(abs(a - pure.sigma[k]) for a, k in zip(runs[0][0], base, strict=True)) <= 1e-12


@pytest.mark.parametrize("top", [9, 70_000])  # a 16-bit radix sort, and past it
def test_nodes_for_sweeps_come_most_terms_first_in_a_stable_order(top: int) -> None:
    counts = np.array([3, top, 0, 3, 1, top, 2], dtype=np.intp)
    assert _most_first(counts).tolist() == [1, 5, 0, 3, 6, 4, 2]
