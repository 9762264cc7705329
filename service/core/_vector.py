"""The vectorised (numpy) twin of the pure quadratic-energy pass in :mod:`service.core.qbaf`.

Used above a size threshold, where one Python step per edge costs more than a handful of numpy
calls per level or sweep. The graph is held as edge arrays (source index, target index), one pair
for supports and one for attacks. Acyclic graphs are solved exactly, level by level in
topological order (a level is every node whose sources are all final); cyclic graphs by Jacobi
sweeps over all edges at once. Same formula, same clamp, same stopping rule as the pure path.

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

__all__ = ["edges_from_lists", "energy_update_array", "propagate_arrays"]

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
    return np.clip(h, 0.0, 1.0, out=h)


def _levels(m: int, src: Ints, tgt: Ints) -> list[Ints] | None:
    """Kahn's algorithm a whole frontier at a time over the edges ``src -> tgt`` between the ``m``
    inner nodes; the frontiers in order (each sorted), or None when there is a cycle."""
    indeg = np.bincount(tgt, minlength=m)
    # Group the edges by source; for 16-bit keys numpy's stable sort is a linear radix sort.
    keys = src.astype(np.uint16) if m <= 1 << 16 else src
    out_dst = tgt[np.argsort(keys, kind="stable" if m <= 1 << 16 else "quicksort")]
    out_ptr = np.zeros(m + 1, dtype=np.intp)
    np.cumsum(np.bincount(src, minlength=m), out=out_ptr[1:])
    frontier = np.flatnonzero(indeg == 0)
    levels: list[Ints] = []
    placed = 0
    while frontier.size:
        levels.append(frontier)
        placed += frontier.size
        starts = out_ptr[frontier]
        lens = out_ptr[frontier + 1] - starts
        total = int(lens.sum())
        if total == 0:
            break
        # The out-edges of the whole frontier as one index array: concatenated ranges.
        dst = out_dst[np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total)]
        np.subtract.at(indeg, dst, 1)
        frontier = np.unique(dst[indeg[dst] == 0])
    return levels if placed == m else None


def _by_target(src: Ints, tgt: Ints) -> tuple[Ints, Ints]:
    if tgt.size > 1 and bool(np.any(tgt[1:] < tgt[:-1])):
        order = np.argsort(tgt, kind="stable")
        return src[order], tgt[order]
    return src, tgt


def propagate_arrays(
    base: Floats,
    sup: tuple[Ints, Ints],
    att: tuple[Ints, Ints],
    *,
    tolerance: float,
    max_iterations: int,
    iterate: bool = False,
) -> tuple[Floats, bool, int, bool]:
    """``(sigma, converged, iterations, exact)`` for the graph whose support and attack edges are
    ``(source, target)`` index arrays (best sorted by target: they are sorted stably if not);
    ``iterate`` forces Jacobi on an acyclic graph too."""
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

    levels = None
    if not iterate:
        compact = np.full(n, -1, dtype=np.intp)
        compact[inner] = np.arange(m, dtype=np.intp)
        inner_src = compact[np.concatenate((sup_src, att_src))]
        inner_tgt = compact[np.concatenate((sup_tgt, att_tgt))]
        keep = inner_src >= 0
        levels = _levels(m, inner_src[keep], inner_tgt[keep])
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
        lo = 0
        for nodes in levels:
            hi = lo + nodes.size
            a, b = cum[2 * lo], cum[2 * hi]
            sums = _weighted_sums(slot[a:b] - 2 * lo, x[src[a:b]], 2 * (hi - lo))
            x[lo:hi] = energy_update_array(tau[lo:hi], sums[0::2] - sums[1::2])
            lo = hi
        return x[pos], True, 1, True

    for iteration in range(1, max_iterations + 1):
        sums = _weighted_sums(slot, x[src], 2 * m)
        nxt = energy_update_array(tau, sums[0::2] - sums[1::2])
        change = x[:m] - nxt
        x[:m] = nxt  # every gather of this sweep is done: still Jacobi
        if float(np.max(np.abs(change, out=change))) <= tolerance:
            return x[pos], True, iteration, False
    return x[pos], False, max_iterations, False
