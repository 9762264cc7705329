"""Speed and memory of the reasoning core (pytest-benchmark; disabled by default, so the normal
suite runs each once as a smoke check). Measure with:

    .venv/bin/pytest tests/benchmarks/test_core_bench.py --benchmark-enable -s

Targets (issue): recompute of a 20 options x 7 roles x 4 arguments plan after one contestation
under 1 ms median; one option graph of 10,000 arguments and 50,000 edges, acyclic and cyclic,
linear in edges per pass.
"""

from __future__ import annotations

import random
import tracemalloc

import pytest

from service.core import RejectArgument, apply, evaluate
from service.core.model import Argument, Clash, Deliberation, Edge, Option, Parameters
from service.core.qbaf import propagate_indexed

pytestmark = pytest.mark.benchmark

ROLES = ("gp", "nurse", "pharmacist", "psychiatrist", "physio", "ot", "social-worker")
WHO = {"actor": "Practitioner/1", "at": "2026-01-01T00:00:00Z"}


def plan(options: int = 20, per_role: int = 4) -> Deliberation:
    """A whole plan: every role argues 4 times on every option, with argument-to-argument edges
    (each third argument supports or attacks the one before), every near-tied pair adjudicated.
    """
    rng = random.Random(7)
    opts = []
    for i in range(options):
        oid = f"o{i}"
        args = [
            Argument(
                f"{oid}-{role}-{j}",
                role,
                "support" if rng.random() < 0.6 else "attack",
                "text",
                ("ev",),
                (),
                round(rng.uniform(0.2, 0.95), 3),
            )
            for role in ROLES
            for j in range(per_role)
        ]
        edges = [Edge(a.id, oid, a.stance) for a in args]
        edges += [
            Edge(args[k].id, args[k - 1].id, "support" if k % 2 else "attack")
            for k in range(1, len(args))
            if k % 3 == 0
        ]
        clashes = [
            Clash(s.id, a.id, rng.choice(("support", "attack", None)))
            for s in args
            if s.stance == "support"
            for a in args
            if a.stance == "attack" and abs(s.tau - a.tau) < 0.2
        ]
        opts.append(
            Option(oid, f"option {i}", "monitoring", "", tuple(args), tuple(edges), tuple(clashes))
        )
    return Deliberation("plan", 1, "Patient/1", Parameters(), (), tuple(opts))


def big_graph(
    n_args: int, n_edges: int, *, cyclic: bool
) -> tuple[list[float], list[list[int]], list[list[int]]]:
    """Node 0 is the option; every argument has its edge to it, the rest join random arguments
    (from higher to lower index when acyclic, any direction when cyclic)."""
    rng = random.Random(11)
    n = n_args + 1
    base = [0.5] + [rng.random() for _ in range(n_args)]
    sup: list[list[int]] = [[] for _ in range(n)]
    att: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        (sup if rng.random() < 0.5 else att)[0].append(i)
    for _ in range(n_edges - n_args):
        s, t = rng.randrange(1, n), rng.randrange(1, n)
        if s == t:
            t = 1 + (t % n_args)
        if not cyclic and s < t:
            s, t = t, s
        (sup if rng.random() < 0.5 else att)[t].append(s)
    return base, sup, att


def test_recompute_plan_after_one_contestation(benchmark) -> None:
    d = plan()
    ev = evaluate(d)
    victim = d.options[7].arguments[5].id

    def contest_and_recompute():
        d2 = apply(d, RejectArgument(victim), task_id="t1", reason="bench", **WHO)
        return evaluate(d2, previous=ev)

    ev2 = benchmark(contest_and_recompute)
    assert ev2 == evaluate(apply(d, RejectArgument(victim), task_id="t1", **WHO))
    assert len(ev2.options) == 20 and sum(len(o.arguments) for o in d.options) == 560


def test_full_evaluation_of_a_plan(benchmark) -> None:
    d = plan()
    ev = benchmark(evaluate, d)
    assert len(ev.options) == 20


@pytest.mark.parametrize("cyclic", [False, True], ids=["acyclic", "cyclic"])
def test_large_option_graph(benchmark, cyclic: bool) -> None:
    base, sup, att = big_graph(10_000, 50_000, cyclic=cyclic)
    assert sum(map(len, sup)) + sum(map(len, att)) == 50_000
    sigma, converged, iterations, exact = benchmark.pedantic(
        propagate_indexed, (base, sup, att), rounds=3 if benchmark.enabled else 1, iterations=1
    )
    assert exact is not cyclic and converged
    assert all(0.0 <= v <= 1.0 for v in sigma)
    tracemalloc.start()
    propagate_indexed(base, sup, att)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"\n{'cyclic' if cyclic else 'acyclic'}: {iterations} sweep(s), peak {peak / 2**20:.1f} MiB"
    )


def test_memory_is_linear_in_edges() -> None:
    peaks = []
    for scale in (1, 2):
        base, sup, att = big_graph(5_000 * scale, 25_000 * scale, cyclic=False)
        tracemalloc.start()
        propagate_indexed(base, sup, att)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert 1.5 < peaks[1] / peaks[0] < 2.5, peaks
