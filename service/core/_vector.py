"""The vectorised (numpy) twin of the pure quadratic-energy pass in :mod:`service.core.qbaf`.

Used above a size threshold, where one Python step per edge costs more than a handful of numpy
calls per level or sweep. The graph is held as edge arrays (source index, target index), one pair
for supports and one for attacks. Acyclic graphs are solved exactly: level by level in
topological order (a level is every node whose sources are all final) when they have few levels,
else by sweeps over all edges until not one bit changes, which is the same result bit for bit.
Cyclic graphs get Jacobi sweeps over all edges at once. Same formula, same clamp, same stopping
rule as the pure path.

Determinism: energies are summed with ``np.bincount``, which adds the weights in edge order, so
the same arrays always give bit-identical strengths. The pure path sums with ``math.fsum``
(exactly rounded); the two differ by a few ulps of an energy, far inside 1e-12 (property tests).
Pure: no I/O, no clock, no randomness, inputs are never written to.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
from numpy.typing import NDArray

__all__ = ["LEVEL_PASS_MAX_LEVELS", "edges_from_lists", "energy_update_array", "propagate_arrays"]

Floats = NDArray[np.float64]
Ints = NDArray[np.intp]


def _weighted_sums(slot: Ints, weights: Floats, minlength: int) -> Floats:
    """``np.bincount`` with weights: float64 sums per slot, in edge order. (The numpy the image
    runs types every bincount as integers; the asarray only restates the dtype, without a copy.)"""
    return np.asarray(np.bincount(slot, weights=weights, minlength=minlength), dtype=np.float64)


def edges_from_lists(sources: Sequence[Sequence[int]]) -> tuple[Ints, Ints]:
    """``(source, target)`` arrays from per-target source lists, targets ascending, each target's
    sources in the order listed; the iteration runs in C (``fromiter`` over ``chain``)."""
    counts = np.fromiter(map(len, sources), dtype=np.intp, count=len(sources))
    total = int(counts.sum())
    src = np.fromiter(chain.from_iterable(sources), dtype=np.intp, count=total)
    tgt = np.repeat(np.arange(len(sources), dtype=np.intp), counts)
    return src, tgt


def energy_update_array(tau: Floats, e: Floats) -> Floats:
    """``energy_update`` elementwise, bit for bit with the scalar form: h is computed from
    ``e * e`` (the same square as ``(-e) * (-e)``), the factor is ``1 - tau`` or ``0 - tau``
    (exactly ``-tau``), and ``tau + (-tau) * h`` is exactly ``tau - tau * h``; h(0) = 0 leaves
    tau as it is. (No ``np.where``: with a random mask it costs more than all the rest.)"""
    h = e * e
    h += 1.0
    np.divide(1.0, h, out=h)
    np.subtract(1.0, h, out=h)
    factor = np.greater(e, 0.0).astype(np.float64)
    factor -= tau
    h *= factor
    h += tau
    # The clamp as two ufuncs: np.clip's argument handling costs more than the work here.
    np.maximum(h, 0.0, out=h)
    return np.minimum(h, 1.0, out=h)


def _levels(m: int, src: Ints, tgt: Ints, limit: int | None = None) -> list[Ints] | None:
    """Kahn's algorithm a whole frontier at a time over the edges ``src -> tgt`` between the ``m``
    inner nodes; the frontiers in order (each sorted), or None when there is a cycle or more than
    ``limit`` frontiers. Each step is a few numpy calls on the frontier's own edges, none on all
    ``m`` nodes, but a deep graph has as many frontiers as its longest path has edges."""
    indeg = np.bincount(tgt, minlength=m)
    # Group the edges by source; for 16-bit keys numpy's stable sort is a linear radix sort.
    keys = src.astype(np.uint16) if m <= 1 << 16 else src
    out_dst = tgt[np.argsort(keys, kind="stable" if m <= 1 << 16 else "quicksort")]
    out_n = np.bincount(src, minlength=m)
    out_start = np.cumsum(out_n) - out_n
    frontier = np.flatnonzero(indeg == 0)
    levels: list[Ints] = []
    placed = 0
    while frontier.size:
        if len(levels) == limit:
            return None
        levels.append(frontier)
        placed += frontier.size
        lens = out_n[frontier]
        ends = lens.cumsum()
        total = int(ends[-1])
        if total == 0:
            break
        # The out-edges of the whole frontier as one index array: concatenated ranges.
        at = (out_start[frontier] - ends + lens).repeat(lens)
        at += np.arange(total)
        dst = out_dst[at]
        np.subtract.at(indeg, dst, 1)
        done = dst[indeg[dst] == 0]  # a node once per source it had in this frontier
        done.sort()
        first = np.ones(done.size, dtype=bool)
        np.not_equal(done[1:], done[:-1], out=first[1:])
        frontier = done[first]
    return levels if placed == m else None


def _by_target(src: Ints, tgt: Ints) -> tuple[Ints, Ints]:
    if tgt.size > 1 and bool(np.any(tgt[1:] < tgt[:-1])):
        order = np.argsort(tgt, kind="stable")
        return src[order], tgt[order]
    return src, tgt


# Acyclic graphs with more levels than this are solved by sweeps (bit for bit the same): a level
# costs some twenty small numpy calls, a sweep a few large ones, and the sweeps settle within
# depth + 1 and in practice after a few dozen (each level passes on a fraction of a change).
LEVEL_PASS_MAX_LEVELS = 48


def propagate_arrays(
    base: Floats,
    sup: tuple[Ints, Ints],
    att: tuple[Ints, Ints],
    *,
    tolerance: float,
    max_iterations: int,
    iterate: bool = False,
    max_levels: int = LEVEL_PASS_MAX_LEVELS,
) -> tuple[Floats, bool, int, bool]:
    """``(sigma, converged, iterations, exact)`` for the graph whose support and attack edges are
    ``(source, target)`` index arrays (best sorted by target: they are sorted stably if not);
    ``iterate`` forces Jacobi on an acyclic graph too. Acyclic graphs with at most ``max_levels``
    levels get the level pass, deeper ones sweeps that stop when no bit changes: both give the
    same strengths bit for bit."""
    n = base.shape[0]
    sup_src, sup_tgt = _by_target(*sup)
    att_src, att_tgt = _by_target(*att)
    # Per node: how many supports / attacks come in, and where they start (CSR by target).
    sup_n = np.bincount(sup_tgt, minlength=n)
    att_n = np.bincount(att_tgt, minlength=n)
    sup_ptr = np.cumsum(sup_n) - sup_n
    att_ptr = np.cumsum(att_n) - att_n
    # Only nodes with incoming edges ("inner") ever change.
    is_inner = (sup_n + att_n) > 0
    inner = np.flatnonzero(is_inner)
    m = inner.size
    if m == 0:
        return base.copy(), True, 1, not iterate

    levels: list[Ints] | None = None
    acyclic = False
    if not iterate:
        acyclic, levels = _acyclic(n, inner, (sup_src, sup_tgt), (att_src, att_tgt), max_levels)
    perm = np.concatenate(levels) if levels is not None else np.arange(m, dtype=np.intp)

    # Strengths live in x: the inner nodes in ``perm`` order (so each level is one slice), then
    # the others, which keep their base strength.
    node_at = np.concatenate((inner[perm], np.flatnonzero(~is_inner)))
    pos = np.empty(n, dtype=np.intp)
    pos[node_at] = np.arange(n, dtype=np.intp)
    x = base[node_at]
    tau = x[:m].copy()
    # Incoming edges as 2m segments in x order: node p's supports, then its attacks. A target's
    # sources keep the order they were given in, so the sums have a fixed order.
    at = inner[perm]
    starts = np.stack((sup_ptr[at], att_ptr[at] + sup_src.size), axis=1).ravel()
    lens = np.stack((sup_n[at], att_n[at]), axis=1).ravel()
    cum = np.zeros(2 * m + 1, dtype=np.intp)
    np.cumsum(lens, out=cum[1:])
    flat = np.repeat(starts - cum[:-1], lens) + np.arange(cum[-1], dtype=np.intp)
    src = pos[np.concatenate((sup_src, att_src))[flat]]
    slot = np.repeat(np.arange(2 * m, dtype=np.intp), lens)

    if levels is not None:
        _level_pass(x, tau, src, slot, cum, levels)
        return x[pos], True, 1, True
    if acyclic:
        # Sweeps until not one bit changes. On an acyclic graph, sweep k leaves every node whose
        # longest incoming path has fewer than k edges at its final value, computed by the same
        # operations as the level pass; so a sweep that changes nothing has every node final,
        # bit for bit the level pass's strengths. That takes at most depth + 1 sweeps, and on
        # deep graphs far fewer: each level passes on only a fraction of a change.
        _sweeps(x, tau, src, slot, tolerance=0.0, max_iterations=m + 1)
        return x[pos], True, 1, True
    converged, iterations = _sweeps(x, tau, src, slot, tolerance, max_iterations)
    return x[pos], converged, iterations, False


def _acyclic(
    n: int, inner: Ints, sup: tuple[Ints, Ints], att: tuple[Ints, Ints], max_levels: int
) -> tuple[bool, list[Ints] | None]:
    """Whether the graph is acyclic, and its levels when the level pass should be used.

    Edges only from later nodes to earlier ones (or only the other way) prove the graph acyclic
    in one comparison, and graphs are often listed so; then its levels are only looked for up to
    ``max_levels``. Otherwise Kahn's algorithm has to run to the end to decide."""
    m = inner.size
    compact = np.full(n, -1, dtype=np.intp)
    compact[inner] = np.arange(m, dtype=np.intp)
    inner_src = compact[np.concatenate((sup[0], att[0]))]
    inner_tgt = compact[np.concatenate((sup[1], att[1]))]
    keep = inner_src >= 0
    inner_src, inner_tgt = inner_src[keep], inner_tgt[keep]
    ordered = bool(np.all(inner_src > inner_tgt)) or bool(np.all(inner_src < inner_tgt))
    levels = _levels(m, inner_src, inner_tgt, max_levels if ordered else None)
    if levels is None:
        return ordered, None
    return True, levels if len(levels) <= max_levels else None


def _level_pass(
    x: Floats, tau: Floats, src: Ints, slot: Ints, cum: Ints, levels: list[Ints]
) -> None:
    """The exact pass, one level at a time, into ``x`` (the inner nodes in level order first)."""
    bounds = cum.tolist()
    lo = 0
    for nodes in levels:
        hi = lo + nodes.size
        a, b = bounds[2 * lo], bounds[2 * hi]
        sums = _weighted_sums(slot[a:b] - 2 * lo, x[src[a:b]], 2 * (hi - lo))
        x[lo:hi] = energy_update_array(tau[lo:hi], sums[0::2] - sums[1::2])
        lo = hi


def _sweeps(
    x: Floats, tau: Floats, src: Ints, slot: Ints, tolerance: float, max_iterations: int
) -> tuple[bool, int]:
    """Jacobi sweeps over the first ``m = tau.size`` entries of ``x`` in place, until the largest
    change is within ``tolerance``: ``(converged, iterations)``."""
    m = tau.size
    # The segments numbered supports first (0..m-1), then attacks (m..2m-1), so that a sweep's
    # two sums are contiguous halves; the order of the additions within a slot is kept.
    slot = (slot >> 1) + (slot & 1) * m
    gathered = np.empty(src.size)
    change = np.empty(m)
    for iteration in range(1, max_iterations + 1):
        sums = _weighted_sums(slot, np.take(x, src, out=gathered), 2 * m)
        nxt = energy_update_array(tau, np.subtract(sums[:m], sums[m:], out=sums[:m]))
        np.subtract(x[:m], nxt, out=change)
        x[:m] = nxt  # every gather of this sweep is done: still Jacobi
        if float(np.max(np.abs(change, out=change))) <= tolerance:
            return True, iteration
    return False, max_iterations
