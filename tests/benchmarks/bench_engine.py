"""Benchmark: the A-QBAF engine against its pure path, a plain numpy Jacobi and QBAF-Py, one run.

Every engine gets the same graphs and is timed as a user calls it: from string-id edges to final
strengths (``QBAF.from_edges`` + ``propagate``, whose Mapping of strengths the numpy engine fills
when first read: "engine + dict" reads it all; QBAF-Py's ``QBAFramework`` + ``final_strengths``).
The numpy Jacobi baseline is given ready-made index arrays, so its building is NOT in its time.
Run:

    .venv/bin/python -m tests.benchmarks.bench_engine [--repeat 5]

QBAF-Py (TimKam/Quantitative-Bipolar-Argumentation, a C extension, GPL-2) is never vendored: build
it outside the repository and point ``CANOE_QBAFPY`` at the folder holding its built ``qbaf``
module, e.g.::

    cd /tmp/qbafpy && python setup.py build_ext --inplace
    CANOE_QBAFPY=/tmp/qbafpy .venv/bin/python -m tests.benchmarks.bench_engine

Without it the QBAF-Py column says why it is missing. ``--before REV`` adds the engine as it was
at a git revision (e.g. ``--before main``), timed in turn with the current one and the numpy
baseline, so one run shows before and after. Also prints the full and incremental
recompute of the 20 options x 7 roles x 4 arguments plan of test_core_bench. Not a test: the
numbers go in the closing note.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from service.core import QBAF, RejectArgument, _vector, apply, evaluate, propagate
from service.core.qbaf import _Grouped

Edges = list[tuple[str, str, str]]


def graph(
    n_args: int, n_edges: int, *, cyclic: bool, seed: int = 11, layers: int = 0
) -> tuple[dict[str, float], Edges]:
    """An option ``o`` that every argument supports or attacks, the other edges between random
    arguments (from the higher to the lower number when acyclic); no pair repeats and no pair is
    both a support and an attack (QBAF-Py refuses those). ``layers`` > 0 makes a deep acyclic
    graph: the arguments in that many consecutive layers, each edge from one layer to the next
    one down, so the longest path has ``layers`` edges (the last into ``o``)."""
    rng = random.Random(seed)
    base = {"o": 0.5} | {f"a{i}": rng.random() for i in range(1, n_args + 1)}
    edges: Edges = [(f"a{i}", "o", rng.choice(("support", "attack"))) for i in range(1, n_args + 1)]
    width = -(-n_args // layers) if layers else 0
    if width and (n_args // width - 1) * width * width < n_edges - n_args:
        raise ValueError(f"{layers} layers of {n_args} arguments hold fewer than {n_edges} edges")
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < n_edges - n_args:
        s, t = rng.randrange(1, n_args + 1), rng.randrange(1, n_args + 1)
        if width:  # a node of the layer below s's (none below the first layer)
            t = ((s - 1) // width - 1) * width + 1 + rng.randrange(width)
        if s == t or t < 1:
            continue
        if not cyclic and s < t:
            s, t = t, s
        pairs.add((s, t))
    edges += [(f"a{s}", f"a{t}", rng.choice(("support", "attack"))) for s, t in sorted(pairs)]
    return base, edges


def ours(base: dict[str, float], edges: Edges, engine: Any = "auto") -> Mapping[str, float]:
    """What a user gets: the strengths as a Mapping (the numpy engine's makes its dict when
    first read; ``ours_read`` times reading every value too)."""
    return propagate(QBAF.from_edges(base, edges), engine=engine).sigma


def ours_read(base: dict[str, float], edges: Edges) -> dict[str, float]:
    return dict(ours(base, edges))


def numpy_jacobi_inputs(base: dict[str, float], edges: Edges) -> tuple[Any, ...]:
    index = {n: i for i, n in enumerate(base)}
    src = np.array([index[s] for s, _, _ in edges], dtype=np.intp)
    tgt = np.array([index[t] for _, t, _ in edges], dtype=np.intp)
    sign = np.array([1.0 if r == "support" else -1.0 for _, _, r in edges])
    return np.array(list(base.values())), src, tgt, sign


def numpy_jacobi(tau: Any, src: Any, tgt: Any, sign: Any, tol: float = 1e-12) -> Any:
    """The plain baseline: synchronous sweeps over all nodes until the largest change <= tol."""
    sigma = tau.copy()
    for _ in range(10_000):
        e = np.bincount(tgt, weights=sign * sigma[src], minlength=tau.size)
        zp, zn = np.maximum(e, 0.0), np.maximum(-e, 0.0)
        hp, hn = zp * zp / (1.0 + zp * zp), zn * zn / (1.0 + zn * zn)
        nxt = np.clip(tau + (1.0 - tau) * hp - tau * hn, 0.0, 1.0)
        delta = float(np.max(np.abs(nxt - sigma)))
        sigma = nxt
        if delta <= tol:
            break
    return sigma


def load_qbafpy() -> tuple[Any, str]:
    where = os.environ.get("CANOE_QBAFPY")
    if not where:
        return None, "skipped: CANOE_QBAFPY is not set (folder with QBAF-Py's built qbaf module)"
    sys.path.insert(0, where)
    try:
        return importlib.import_module("qbaf"), ""
    except ImportError as exc:
        return None, f"skipped: cannot import qbaf from {where}: {exc}"


def qbafpy_run(qbaf: Any, base: dict[str, float], edges: Edges) -> dict[str, float]:
    fw = qbaf.QBAFramework(
        list(base),
        list(base.values()),
        [(s, t) for s, t, r in edges if r == "attack"],
        [(s, t) for s, t, r in edges if r == "support"],
        semantics="QuadraticEnergy_model",
        allow_cycles=True,
        max_iterations=10_000,
        convergence_threshold=1e-12,
    )
    return dict(fw.final_strengths)


def best_ms(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(median wall, min CPU) time in ms over ``repeat`` calls. On a machine shared with other
    work the CPU time of the fastest call is the steadier figure; both are printed."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - t0) * 1000)
    return statistics.median(wall), min(cpu)


def numpy_jacobi_from_edges(base: dict[str, float], edges: Edges) -> Any:
    """The baseline as a user would call it: from string-id edges, building included."""
    return numpy_jacobi(*numpy_jacobi_inputs(base, edges))


def interleaved(
    fns: Mapping[str, Callable[[], object]], repeat: int
) -> dict[str, tuple[float, float]]:
    """``best_ms`` of several functions called in turn, so that a busy spell of a shared machine
    falls on all of them alike: (median wall, min CPU) ms each."""
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in fns}
    for _ in range(repeat):
        for key, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[key][1].append((time.process_time() - c0) * 1000)
            times[key][0].append((time.perf_counter() - t0) * 1000)
    return {k: (statistics.median(w), min(c)) for k, (w, c) in times.items()}


def load_before(rev: str) -> Any:
    """The engine (``qbaf.py`` and ``_vector.py``) as it was at git revision ``rev``, loaded
    beside the current one under other module names, for a before/after column in one run."""
    import subprocess
    import types

    def module(name: str, path: str, replace: tuple[str, str] = ("", "")) -> Any:
        text = subprocess.run(
            ["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
        ).stdout.replace(*replace)
        mod = types.ModuleType(name)
        sys.modules[name] = mod  # dataclasses look their module up while the class is made
        exec(compile(text, f"{rev}:{path}", "exec"), mod.__dict__)
        return mod

    module("canoe_before_vector", "service/core/_vector.py")
    return module(
        "canoe_before_qbaf",
        "service/core/qbaf.py",
        ("from service.core._vector import", "from canoe_before_vector import"),
    )


CASES = [
    ("28 arguments", 28, 37, 0),
    ("5k args / 25k edges", 5_000, 25_000, 0),
    ("10k args / 40k edges", 10_000, 40_000, 0),
    ("10k args / 50k edges", 10_000, 50_000, 0),
    ("10k/40k, 500 levels", 10_000, 40_000, 500),
]


def engines(repeat: int, before: str | None) -> None:
    qbaf, why = load_qbafpy()
    old = load_before(before) if before else None
    print(f"QBAF-Py: {'loaded from ' + os.environ['CANOE_QBAFPY'] if qbaf else why}")
    print(f"before: the engine at {before}" if before else "before: skipped (no --before REV)")
    print("times in ms, min CPU time over the repeats (median wall time in brackets);")
    print("'x np+b' is np-Jacobi+build's time over the engine's (above 1: the engine is faster)")
    print(
        f"{'graph':21s} {'kind':7s} {'engine':>16s} {'before':>16s} {'np-Jacobi+build':>16s}"
        f" {'x np+b':>6s} {'before':>6s} {'engine + dict':>16s}"
        f" {'engine (arrays)':>16s} {'pure':>16s} {'np-Jacobi':>16s} {'QBAF-Py':>16s}"
        f" {'vs QBAF-Py':>10s} {'|d| pure':>8s} {'|d| QBAF-Py':>11s}"
    )
    for label, n_args, n_edges, layers in CASES:
        for cyclic in (False, True) if not layers else (False,):
            base, edges = graph(n_args, n_edges, cyclic=cyclic, layers=layers)
            reps = repeat * 20 if n_args < 100 else repeat
            fast = ours(base, edges)
            ref = ours(base, edges, engine="pure")
            g = QBAF.from_edges(base, edges)
            arrays = _arrays(g)
            inputs = numpy_jacobi_inputs(base, edges)
            nan = (float("nan"), float("nan"))
            head = interleaved(
                {
                    "engine": lambda: ours(base, edges),  # noqa: B023
                    "np+build": lambda: numpy_jacobi_from_edges(base, edges),  # noqa: B023
                }
                | ({"before": lambda: _run(old, base, edges)} if old else {}),  # noqa: B023
                reps,
            )
            row = {k: head.get(k, nan) for k in ("engine", "before", "np+build")} | {
                "read": best_ms(lambda: ours_read(base, edges), reps),  # noqa: B023
                "arrays": best_ms(lambda: propagate_arrays(*arrays), reps),  # noqa: B023
                "pure": best_ms(lambda: ours(base, edges, "pure"), max(1, reps // 2)),  # noqa: B023
                "np": best_ms(lambda: numpy_jacobi(*inputs), reps),  # noqa: B023
            }
            d_pure = max(abs(fast[k] - ref[k]) for k in ref)
            row["qbafpy"], d_q = nan, float("nan")
            if qbaf is not None:
                other = qbafpy_run(qbaf, base, edges)
                d_q = max(abs(fast[k] - other[k]) for k in ref)
                row["qbafpy"] = best_ms(
                    lambda: qbafpy_run(qbaf, base, edges),  # noqa: B023
                    max(1, reps // 2),
                )
            cells = [f"{c:9.3f} ({w:5.1f})" for w, c in row.values()]
            speed = [row["np+build"][1] / row[k][1] for k in ("engine", "before")]
            cells[3:3] = [f"{x:5.2f}x" for x in speed]
            ratio = row["qbafpy"][1] / row["engine"][1]
            kind = "cyclic" if cyclic else "acyclic"
            print(
                f"{label:21s} {kind:7s} {' '.join(cells)} {ratio:9.1f}x {d_pure:8.1e} {d_q:11.1e}"
            )


def _run(module: Any, base: dict[str, float], edges: Edges) -> Mapping[str, float]:
    return module.propagate(module.QBAF.from_edges(base, edges)).sigma  # type: ignore[no-any-return]


def _arrays(g: QBAF) -> tuple[Any, ...]:
    """The engine's own input, as ``QBAF.from_edges`` leaves it for a large graph."""
    sup, att = g.supporters, g.attackers
    base = np.fromiter(g.nodes.values(), dtype=np.float64)
    if isinstance(sup, _Grouped) and isinstance(att, _Grouped):
        return base, (sup.src, sup.tgt), (att.src, att.tgt), 1e-12, 10_000
    index = {n: i for i, n in enumerate(g.nodes)}
    pairs = []
    for rel in (sup, att):
        src = [index[s] for n in g.nodes for s in rel[n]]
        tgt = [index[n] for n in g.nodes for _ in rel[n]]
        pairs.append((np.array(src, dtype=np.intp), np.array(tgt, dtype=np.intp)))
    return base, pairs[0], pairs[1], 1e-12, 10_000


def _propagate_arrays(base: Any, sup: Any, att: Any, tol: float, steps: int) -> Any:
    return _vector.propagate_arrays(base, sup, att, tolerance=tol, max_iterations=steps)


propagate_arrays = _propagate_arrays


def recompute(repeat: int) -> None:
    from tests.benchmarks.test_core_bench import WHO, plan

    d = plan()
    ev = evaluate(d)
    victim = d.options[7].arguments[5].id
    full = best_ms(lambda: evaluate(d), repeat * 50)
    print("20 options x 7 roles x 4 arguments (560 arguments), median wall / min CPU ms:")
    d2 = apply(d, RejectArgument(victim), task_id="t1", reason="bench", **WHO)
    incremental = best_ms(lambda: evaluate(d2, previous=ev), repeat * 50)
    both = best_ms(
        lambda: evaluate(
            apply(d, RejectArgument(victim), task_id="t1", reason="bench", **WHO), previous=ev
        ),
        repeat * 50,
    )
    print(f"  full evaluate                 {full[0]:.3f} / {full[1]:.3f}")
    print(f"  incremental evaluate          {incremental[0]:.3f} / {incremental[1]:.3f}")
    print(f"  contest (apply) + incremental {both[0]:.3f} / {both[1]:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--before", metavar="REV", help="also time the engine at this git revision (e.g. main)"
    )
    args = ap.parse_args()
    engines(args.repeat, args.before)
    recompute(args.repeat)


if __name__ == "__main__":
    main()
