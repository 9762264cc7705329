"""The vectorised (numpy) twin of the pure quadratic-energy pass in :mod:`service.core.qbaf`.

Used above a size threshold, where one Python step per edge costs more than a handful of numpy
calls per level or sweep. The graph is held as edge arrays (source index, target index), one pair
for supports and one for attacks. Acyclic graphs are solved exactly: level by level in
topological order (a level is every node whose sources are all final) when their levels are
known and few, else by sweeps over all edges until not one bit changes, which is the same result
bit for bit. Cyclic graphs get Jacobi sweeps over all edges at once. Same formula, same clamp,
same stopping rule as the pure path.

Determinism: a node's energy is one sum in a fixed order, its supports' strengths then its
attacks' negated strengths as listed: added one by one (``np.bincount`` in the level pass,
column by column in a sweep: the same additions) or, for a node with many more terms than most
(``_column_count``), pairwise by ``np.add.reduceat`` in both. So the same arrays always give
bit-identical strengths. The pure path sums with ``math.fsum`` (exactly rounded); the two differ
by a few ulps of an energy, far inside 1e-12 (property tests). Pure: no I/O, no clock, no
randomness, inputs are never written to.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import chain

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "LEVEL_PASS_MAX_LEVELS",
    "ORDERED_MAX_LEVELS",
    "edges_from_lists",
    "energy_update_array",
    "propagate_arrays",
]

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


def energy_update_array(
    tau: Floats, e: Floats, out: Floats | None = None, factor: Floats | None = None
) -> Floats:
    """``energy_update`` elementwise, bit for bit with the scalar form: h is computed from
    ``e * e`` (the same square as ``(-e) * (-e)``), the factor is ``1 - tau`` or ``0 - tau``
    (exactly ``-tau``), and ``tau + (-tau) * h`` is exactly ``tau - tau * h``; h(0) = 0 leaves
    tau as it is. (No ``np.where``: with a random mask it costs more than all the rest.) Written
    into ``out`` when given, which may be ``e`` itself; ``factor`` is a scratch array."""
    factor = np.greater(e, 0.0, out=np.empty(e.shape) if factor is None else factor)
    h = np.multiply(e, e, out=out)
    h += 1.0
    np.divide(1.0, h, out=h)
    np.subtract(1.0, h, out=h)
    factor -= tau
    h *= factor
    h += tau
    # Only the upper clamp can act: 0 <= h < 1 makes tau * h <= tau (rounding is monotone and
    # tau itself representable), so tau - tau * h >= 0, and tau + (1 - tau) * h >= tau >= 0.
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
# costs some twenty small numpy calls on its own nodes, a sweep as many on all of them, and the
# sweeps settle within depth + 1 and in practice after a few dozen (each level passes on a
# fraction of a change).
LEVEL_PASS_MAX_LEVELS = 48
# A graph whose edges all run one way through the node order is acyclic by one comparison; its
# levels would have to be found one by one (Kahn's algorithm, about as dear per level as a
# sweep), so by default it is swept at once (0: look for no level).
ORDERED_MAX_LEVELS = 0


def propagate_arrays(
    base: Floats,
    sup: tuple[Ints, Ints],
    att: tuple[Ints, Ints],
    *,
    tolerance: float,
    max_iterations: int,
    iterate: bool = False,
    max_levels: int = LEVEL_PASS_MAX_LEVELS,
    ordered_max_levels: int = ORDERED_MAX_LEVELS,
    width: int | None = None,
) -> tuple[Floats, bool, int, bool]:
    """``(sigma, converged, iterations, exact)`` for the graph whose support and attack edges are
    ``(source, target)`` index arrays (best sorted by target: they are sorted stably if not);
    ``iterate`` forces Jacobi on an acyclic graph too. Acyclic graphs with at most ``max_levels``
    levels (``ordered_max_levels`` when the node order alone proves them acyclic) get the level
    pass, the others sweeps that stop when no bit changes: both give the same strengths bit for
    bit. ``width``: the most terms an energy may have and still be summed one by one (None: the
    cheapest, ``_column_count``); tests set it to reach both ways of summing."""
    n = base.shape[0]
    sup_src, sup_tgt = _by_target(*sup)
    att_src, att_tgt = _by_target(*att)
    # Per node: how many supports / attacks come in (the edges are grouped by target).
    sup_n = np.bincount(sup_tgt, minlength=n)
    att_n = np.bincount(att_tgt, minlength=n)
    # Only nodes with incoming edges ("inner") ever change.
    incoming = sup_n + att_n
    inner = np.flatnonzero(incoming)
    m = inner.size
    if m == 0:
        return base.copy(), True, 1, not iterate

    levels: list[Ints] | None = None
    acyclic = False
    if not iterate:
        acyclic, levels = _acyclic(
            n, inner, (sup_src, sup_tgt), (att_src, att_tgt), (max_levels, ordered_max_levels)
        )
    # The inner nodes in level order (each level one slice) or, for sweeps, most terms first.
    at = inner[np.concatenate(levels) if levels is not None else _most_first(incoming[inner])]
    node_at = np.concatenate((at, np.flatnonzero(incoming == 0)))
    pos = np.empty(n, dtype=np.intp)
    pos[node_at] = np.arange(n, dtype=np.intp)
    # Strengths live in the first half of xx in ``node_at`` order, their negatives in the second
    # half, where the attacks read them: an energy is one sum of terms (the supports, then the
    # negated attacks), whose fixed order gives fixed bits.
    xx = np.concatenate((base[node_at], -base[node_at]))
    tau = xx[:m].copy()
    src, cum = _terms(at, (sup_src, sup_n), (att_src, att_n), pos)
    # Slots of more terms than this are summed pairwise (``_long_sums``), the others in order.
    width = _column_count(np.diff(cum)) if width is None else width

    if levels is not None:
        _level_pass(xx, tau, src, cum, levels, width)
        return xx[pos], True, 1, True
    energies = _SlotSums(src, cum, 2 * n, width)
    if acyclic:
        # Sweeps until not one bit changes. On an acyclic graph, sweep k leaves every node whose
        # longest incoming path has fewer than k edges at its final value, computed by the same
        # operations as the level pass; so a sweep that changes nothing has every node final,
        # bit for bit the level pass's strengths. That takes at most depth + 1 sweeps, and on
        # deep graphs far fewer: each level passes on only a fraction of a change.
        xx, _, _ = _sweeps(xx, tau, energies, tolerance=0.0, max_iterations=m + 1)
        return xx[pos], True, 1, True
    xx, converged, iterations = _sweeps(xx, tau, energies, tolerance, max_iterations)
    return xx[pos], converged, iterations, False


def _most_first(counts: Ints) -> Ints:
    """The indices of ``counts`` ordered by count, largest first (stable); a linear radix sort
    when the counts fit 16 bits."""
    top = int(counts.max())
    if top < 1 << 16:
        return np.argsort((top - counts).astype(np.uint16), kind="stable")
    return np.argsort(-counts, kind="stable")


def _terms(
    at: Ints, sup: tuple[Ints, Ints], att: tuple[Ints, Ints], pos: Ints
) -> tuple[Ints, Ints]:
    """``(src, cum)``: the terms of the energy of inner node ``at[p]`` are
    ``xx[src[cum[p]:cum[p + 1]]]``, its supports' strengths in the order given, then its
    attacks' negated strengths (read from the second half of xx, ``n`` on)."""
    (sup_src, sup_n), (att_src, att_n) = sup, att
    n = pos.size
    starts = np.stack(
        ((np.cumsum(sup_n) - sup_n)[at], (np.cumsum(att_n) - att_n)[at] + sup_src.size), axis=1
    ).ravel()
    lens = np.stack((sup_n[at], att_n[at]), axis=1).ravel()
    signed = np.concatenate((pos[sup_src], pos[att_src]))
    signed[sup_src.size :] += n
    src = signed[_ranges(starts, lens)]
    cum = np.zeros(at.size + 1, dtype=np.intp)
    np.cumsum(lens[0::2] + lens[1::2], out=cum[1:])
    return src, cum


def _acyclic(
    n: int,
    inner: Ints,
    sup: tuple[Ints, Ints],
    att: tuple[Ints, Ints],
    max_levels: tuple[int, int],
) -> tuple[bool, list[Ints] | None]:
    """Whether the graph is acyclic, and its levels when the level pass should be used: when it
    has at most ``max_levels[0]`` levels, or ``max_levels[1]`` when its order proves it acyclic.

    Edges only from later nodes to earlier ones (or only the other way) prove the graph acyclic
    in one comparison, and graphs are often listed so; then its levels are only looked for up to
    ``max_levels[1]``. Otherwise Kahn's algorithm has to run to the end to decide."""
    src, tgt = np.concatenate((sup[0], att[0])), np.concatenate((sup[1], att[1]))
    if max_levels[1] == 0 and _one_way(src, tgt):
        return True, None
    m = inner.size
    compact = np.full(n, -1, dtype=np.intp)
    compact[inner] = np.arange(m, dtype=np.intp)
    inner_src, inner_tgt = compact[src], compact[tgt]
    keep = inner_src >= 0  # edges from nodes that keep their base strength order nothing
    inner_src, inner_tgt = inner_src[keep], inner_tgt[keep]
    ordered = _one_way(inner_src, inner_tgt)
    levels = _levels(m, inner_src, inner_tgt, max_levels[1] if ordered else None)
    if levels is None:
        return ordered, None
    limit = max_levels[1] if ordered else max_levels[0]
    return True, levels if len(levels) <= limit else None


def _one_way(src: Ints, tgt: Ints) -> bool:
    """Whether every edge runs from a later node to an earlier one, or every edge the other way."""
    return bool(np.all(src > tgt)) or bool(np.all(src < tgt))


def _level_pass(
    xx: Floats, tau: Floats, src: Ints, cum: Ints, levels: list[Ints], width: int
) -> None:
    """The exact pass, one level at a time, into ``xx`` (strengths, then their negatives; the
    inner nodes in level order first). Slots of more than ``width`` terms are summed again by
    ``_long_sums``, as the sweeps sum them, so that both give the same bits."""
    n = xx.size // 2
    x, negated = xx[:n], xx[n:]
    bounds = cum.tolist()
    lens = np.diff(cum)
    slot = np.repeat(np.arange(lens.size, dtype=np.intp), lens)
    long = np.flatnonzero(lens > width).tolist()
    lo = 0
    for nodes in levels:
        hi = lo + nodes.size
        a, b = bounds[lo], bounds[hi]
        terms = xx[src[a:b]]
        e = _weighted_sums(slot[a:b] - lo, terms, hi - lo)
        here = long[bisect_left(long, lo) : bisect_left(long, hi)]
        if here:
            e[np.subtract(here, lo)] = _long_sums(*_segments(terms, cum[here] - a, lens[here]))
        energy_update_array(tau[lo:hi], e, out=x[lo:hi])
        np.negative(x[lo:hi], out=negated[lo:hi])
        lo = hi


def _sweeps(
    xx: Floats, tau: Floats, energies: _SlotSums, tolerance: float, max_iterations: int
) -> tuple[Floats, bool, int]:
    """Jacobi sweeps over the first ``m = tau.size`` strengths in ``xx`` (strengths, then their
    negatives) until the largest change is within ``tolerance``: ``(xx, converged,
    iterations)``. Two buffers take turns (a sweep reads one and writes the other), and every
    view and scratch array is made once, before the first sweep."""
    m, n = tau.size, xx.size // 2
    nxt = xx.copy()
    turns = [(b, a[:m], b[:m], b[n : n + m]) for a, b in ((xx, nxt), (nxt, xx))]
    factor, change = np.empty(m), np.empty(m)
    read = xx
    for iteration in range(1, max_iterations + 1):
        written, old, new, negated = turns[(iteration - 1) & 1]
        energy_update_array(tau, energies(read), out=new, factor=factor)
        np.negative(new, out=negated)
        read = written
        if _settled(old, new, change, tolerance):
            return written, True, iteration
    return read, False, max_iterations


def _settled(old: Floats, new: Floats, change: Floats, tolerance: float) -> bool:
    """Whether no strength moved by more than ``tolerance`` (``change`` is scratch)."""
    if tolerance == 0.0:  # sweeps to the exact fixpoint: cheaper to ask whether any moved
        return not bool(np.not_equal(old, new).any())
    np.subtract(new, old, out=change)
    return float(np.max(np.abs(change, out=change))) <= tolerance


class _SlotSums:
    """The energies of the first ``m`` strengths, the way a sweep needs them thousands of times:
    slot ``p``'s terms are ``xx[src[cum[p]:cum[p + 1]]]``, and the slots come with the most
    terms first.

    A slot of at most ``width`` terms is summed term by term in the order listed, as
    ``np.bincount`` sums it in the level pass: the same bits. The work goes a column at a time:
    column k adds the k-th term of every slot that has one, a prefix of the slots, with one
    contiguous ``np.add``. The longer slots (an option that every argument feeds), first of all,
    are summed by ``_long_sums``, as in the level pass. Every view is made here once, so a call
    only gathers and adds."""

    __slots__ = ("_adds", "_gathered", "_long", "_sources", "_sums")

    def __init__(self, src: Ints, cum: Ints, size: int, width: int) -> None:
        lens = np.diff(cum)
        width = min(width, int(lens.max(initial=0)))  # one column per term of the longest
        long = int(np.count_nonzero(lens > width))  # the first ``long`` slots
        counts = [int(np.count_nonzero(lens[long:] > k)) for k in range(width)]
        parts = [src[cum[long : long + c] + k] for k, c in enumerate(counts)]
        parts.append(src[: cum[long]])  # the long slots' terms, one slot after another
        self._sources = np.concatenate(parts)
        if self._sources.size and int(self._sources.max()) >= size:
            raise ValueError("a source lies outside the strengths array")
        self._gathered = np.empty(self._sources.size)
        self._sums = np.zeros(lens.size)  # slots without terms stay 0
        ends = np.cumsum([0, *counts]).tolist()
        short = self._sums[long:]
        self._adds = [
            (short[: ends[k + 1] - ends[k]], self._gathered[ends[k] : ends[k + 1]])
            for k in range(width)
        ]
        self._long = (self._gathered[ends[-1] :], cum[:long], self._sums[:long]) if long else None

    def __call__(self, xx: Floats) -> Floats:
        """The energies for strengths ``xx``, in a buffer that the next call overwrites."""
        # mode="wrap" never wraps (every source was checked to lie inside xx) and is the fastest
        # mode: "raise", the default, checks each index again and takes twice as long.
        np.take(xx, self._sources, out=self._gathered, mode="wrap")
        if self._adds:
            np.copyto(*self._adds[0])
        for total, column in self._adds[1:]:
            np.add(total, column, out=total)
        if self._long is not None:
            _long_sums(*self._long)
        return self._sums


def _segments(terms: Floats, starts: Ints, lens: Ints) -> tuple[Floats, Ints, None]:
    """The arguments of ``_long_sums`` for the segments of ``terms`` at ``starts``."""
    return terms[_ranges(starts, lens)], np.cumsum(lens) - lens, None


def _long_sums(terms: Floats, starts: Ints, out: Floats | None) -> Floats:
    """The sums of the long slots, whose terms lie one slot after another in ``terms`` from
    ``starts``: ``np.add.reduceat``, which sums each slot pairwise, one call for all of them."""
    return np.add.reduceat(terms, starts, out=out)


def _column_count(lens: Ints) -> int:
    """How many terms a slot may have and still be summed term by term (by columns): the count
    k that makes k column additions plus the longer slots' share of one ``reduceat`` least.
    A column costs about as much as ``reduceat`` on some 250 slots."""
    longest = int(lens.max()) if lens.size else 0
    if longest == 0:
        return 0
    # longer[k]: how many slots have more than k terms.
    longer = lens.size - np.cumsum(np.bincount(lens, minlength=longest + 1))
    cost = np.arange(longest + 1) + longer / 250
    return int(np.argmin(cost[1:])) + 1


def _ranges(starts: Ints, lens: Ints) -> Ints:
    """The indices ``starts[i] .. starts[i] + lens[i] - 1`` of every i, one after another."""
    ends = np.cumsum(lens)
    at = np.repeat(starts - ends + lens, lens)
    at += np.arange(int(ends[-1]) if ends.size else 0, dtype=np.intp)
    return at
