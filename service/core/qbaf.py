"""Quadratic-energy semantics for a quantitative bipolar argumentation framework (CANOE eq. 10-12).

``propagate(graph)`` is the one semantics: base strengths and support/attack edges in, final
strengths out. Acyclic graphs get one exact pass in topological order; cyclic graphs are iterated
synchronously (Jacobi: every node's new strength is computed from the previous sweep's strengths)
from the base strengths until the largest change is within ``tolerance`` or ``max_iterations``
sweeps have run, and ``converged`` says which. Pure: no I/O, no clock, no randomness, no mutation
of inputs.

Two engines compute the same thing. The pure one below is exact and the reference; graphs with
at least ``VECTOR_MIN_EDGES`` edges go to the numpy one in :mod:`service.core._vector` (acyclic:
level by level when the levels are known and few, else sweeps until nothing changes; cyclic:
Jacobi sweeps), where a few array operations per level or sweep replace one Python step per edge.
The plans the service makes stay far below the threshold.

Determinism: the pure engine sums energies with ``math.fsum`` (exactly rounded), so its result
does not depend on the order in which edges were listed; the Jacobi scheme does not depend on
node order either. The numpy engine sums each energy in a fixed order (its supports as listed,
then its attacks). Either way the same graph always gives bit-identical strengths; the engines
agree within 1e-12 (property tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from math import fsum
from operator import itemgetter
from types import MappingProxyType
from typing import Literal

import numpy as np

from service.core._vector import Floats, Ints, edges_from_lists, propagate_arrays

__all__ = ["QBAF", "VECTOR_MIN_EDGES", "Engine", "Strengths", "energy_update", "h", "propagate"]

Engine = Literal["auto", "pure", "vector"]
# From about this many edges the numpy engine is faster than the pure one (benchmarks in
# tests/benchmarks/bench_engine.py); below it the fixed cost of array set-up dominates.
VECTOR_MIN_EDGES = 1_000

_RELATIONS = ("support", "attack")


def h(z: float) -> float:
    """Impact function h(z) = max(z,0)^2 / (1 + max(z,0)^2), eq. 12.

    Written as ``1 - 1/(1 + z^2)`` because that form is monotone in floating point too (each
    step is a monotone rounded operation), which keeps "more support never lowers a score" true
    bit for bit, not only on paper.

    >>> h(-1.0), h(0.0), h(1.0)
    (0.0, 0.0, 0.5)
    """
    if z <= 0.0:
        return 0.0
    return 1.0 - 1.0 / (1.0 + z * z)


def energy_update(tau: float, e: float) -> float:
    """sigma = tau + (1 - tau) h(E) - tau h(-E), eq. 11 (at most one of the h terms is non-zero).

    >>> energy_update(0.5, 1.0)  # 0.5 + 0.5 * 0.5
    0.75
    >>> energy_update(0.5, -1.0)  # 0.5 - 0.5 * 0.5
    0.25
    """
    # h written out (same operations, so the same bits: (-e) * (-e) is e * e): the exact pass
    # calls this once per inner node, and a call more each is a tenth of a plan's propagation.
    if e > 0.0:
        s = tau + (1.0 - tau) * (1.0 - 1.0 / (1.0 + e * e))
    elif e < 0.0:
        s = tau - tau * (1.0 - 1.0 / (1.0 + e * e))
    else:
        s = tau
    # Rounding can never push the formula outside [0, 1] by more than an ulp; clamp it to be sure.
    return 0.0 if s < 0.0 else 1.0 if s > 1.0 else s


class _Grouped(Mapping[str, tuple[str, ...]]):
    """``supporters`` or ``attackers`` of a large graph built by ``QBAF.from_edges``: held as
    index arrays (sources, targets ascending, each target's sources in the order listed) that the
    numpy engine takes as they are; the tuples of ids are made only if somebody reads them."""

    __slots__ = ("_ids", "_made", "src", "tau", "tgt")

    def __init__(self, ids: Sequence[str], src: Ints, tgt: Ints, tau: Floats) -> None:
        self._ids = ids
        self.src = src
        self.tgt = tgt
        self.tau = tau  # the base strengths in node order, already checked to lie in [0, 1]
        self._made: dict[str, tuple[str, ...]] | None = None

    def _dict(self) -> dict[str, tuple[str, ...]]:
        if self._made is None:  # a memo of a value that never changes, not a mutation
            ids = self._ids
            ptr = np.searchsorted(self.tgt, np.arange(len(ids) + 1)).tolist()
            src = self.src.tolist()
            self._made = {
                n: tuple(ids[j] for j in src[ptr[i] : ptr[i + 1]]) for i, n in enumerate(ids)
            }
        return self._made

    def __getitem__(self, key: str) -> tuple[str, ...]:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


# A relation's code as the byte numpy reads back: supports 0, attacks 1.
_RELATION_CODE = {relation: bytes([code]) for code, relation in enumerate(_RELATIONS)}
_SOURCE, _TARGET, _KIND = itemgetter(0), itemgetter(1), itemgetter(2)


@dataclass(frozen=True, slots=True)
class QBAF:
    """A bipolar graph: ``nodes`` maps id -> base strength (insertion order is the node order);
    ``supporters[x]`` / ``attackers[x]`` are the ids whose strength adds to / subtracts from x."""

    nodes: Mapping[str, float]
    supporters: Mapping[str, tuple[str, ...]]
    attackers: Mapping[str, tuple[str, ...]]

    @classmethod
    def from_edges(cls, base: Mapping[str, float], edges: Iterable[tuple[str, str, str]]) -> QBAF:
        """Build from ``(source, target, "support" | "attack")`` triples.

        Relations are sets: a repeated triple counts once. Raises ``ValueError`` for an endpoint
        that is not a node, an unknown relation or a base strength outside [0, 1].
        """
        nodes = dict(base)
        triples = edges if isinstance(edges, list | tuple) else list(edges)
        if len(triples) >= VECTOR_MIN_EDGES:
            built = _from_edges_vector(nodes, triples)
            if built is not None:  # None: something is wrong; the loops below name it
                return cls(MappingProxyType(nodes), *built)
        for node, tau in nodes.items():
            if not 0.0 <= tau <= 1.0:  # also refuses NaN
                raise ValueError(f"base strength of {node!r} is {tau!r}, outside [0, 1]")
        sup: dict[str, list[str]] = {n: [] for n in nodes}
        att: dict[str, list[str]] = {n: [] for n in nodes}
        seen: set[tuple[str, str, str]] = set()
        for source, target, relation in triples:
            if source not in nodes:
                raise ValueError(f"edge source {source!r} is not a node")
            if target not in nodes:
                raise ValueError(f"edge target {target!r} is not a node")
            if relation not in _RELATIONS:
                raise ValueError(f"edge relation {relation!r} is not support/attack")
            key = (source, target, relation)
            if key in seen:
                continue
            seen.add(key)
            (sup if relation == "support" else att)[target].append(source)
        return cls(
            MappingProxyType(nodes),
            MappingProxyType({n: tuple(v) for n, v in sup.items()}),
            MappingProxyType({n: tuple(v) for n, v in att.items()}),
        )


def _from_edges_vector(
    nodes: dict[str, float], triples: Sequence[tuple[str, str, str]]
) -> tuple[_Grouped, _Grouped] | None:
    """Supporters and attackers as index arrays, every per-edge step in C; a target's sources
    come in node order. None when any triple is malformed or names an unknown node or relation.

    Each column is read on its own (``itemgetter`` over the triples) and looked up in a table
    whose values are raw bytes (a node's index as 4 bytes, a relation's code as 1), so
    ``b"".join`` packs a column into one buffer that numpy reads as it is: no Python int is made
    or converted per edge. A triple shorter than 3 raises ``IndexError``; with none shorter, a
    total length of 3 per triple means none is longer either.
    """
    if len(triples) < 2:  # _packed needs two keys or more
        return None
    count = len(triples)
    n = len(nodes)
    if n >= 1 << 31:
        return None
    try:
        tau = np.fromiter(nodes.values(), dtype=np.float64, count=n)
        # Written so that NaN fails it too.
        if n and not (float(tau.min()) >= 0.0 and float(tau.max()) <= 1.0):
            return None
        ids = list(nodes)
        index = dict(zip(ids, np.arange(n, dtype="<i4").view("V4").tolist(), strict=True))
        src, tgt = (
            np.frombuffer(_packed(index, map(column, triples)), dtype="<i4")
            for column in (_SOURCE, _TARGET)
        )
        rel = np.frombuffer(_packed(_RELATION_CODE, map(_KIND, triples)), "u1")
        if sum(map(len, triples)) != 3 * count:
            return None
    except (IndexError, KeyError, TypeError, ValueError):
        return None
    # One sort both drops repeats (relations are sets) and orders the edges by relation, then
    # target, then source: a 64-bit key per distinct triple (relation code in the top bits).
    key = np.unique(
        (rel.astype(np.int64) << 62) | (tgt.astype(np.int64) << 31) | src.astype(np.int64)
    )
    split = int(np.searchsorted(key, 1 << 62))
    low = np.int64((1 << 31) - 1)
    groups = (key[:split], key[split:] & ((1 << 62) - 1))
    sup, att = (
        _Grouped(ids, (k & low).astype(np.intp), (k >> 31).astype(np.intp), tau) for k in groups
    )
    return sup, att


def _packed(table: Mapping[str, bytes], keys: Iterable[str]) -> bytes:
    """``table[key]`` for every key (two or more), joined. ``itemgetter(*keys)`` looks them all
    up in one C loop, a tenth faster than ``map(table.__getitem__, keys)``, which makes a
    Python-level call per key; for two keys or more it returns a tuple."""
    return b"".join(itemgetter(*keys)(table))


@dataclass(frozen=True, slots=True)
class Strengths:
    """Final strengths. ``exact``: computed by the acyclic pass (``iterations`` is then 1).
    ``converged`` False means the step limit was hit and ``sigma`` is the last iterate, not a
    fixed point: callers must not present it as final."""

    sigma: Mapping[str, float]
    converged: bool
    iterations: int
    exact: bool


def propagate(
    graph: QBAF,
    *,
    tolerance: float = 1e-12,
    max_iterations: int = 10_000,
    engine: Engine = "auto",
) -> Strengths:
    """Strength of every node under quadratic-energy semantics. ``engine`` "auto" picks the numpy
    engine from ``VECTOR_MIN_EDGES`` edges on; "pure" / "vector" force one.

    >>> g = QBAF.from_edges({"o": 0.5, "a": 1.0}, [("a", "o", "support")])
    >>> propagate(g).sigma["o"]  # E = 1, h(1) = 0.5, sigma = 0.5 + 0.5 * 0.5
    0.75
    """
    if max_iterations < 1:
        raise ValueError("max_iterations must be >= 1")
    ids = list(graph.nodes)
    sup_g, att_g = graph.supporters, graph.attackers
    if (
        isinstance(sup_g, _Grouped)
        and isinstance(att_g, _Grouped)
        and engine != "pure"
        and (engine == "vector" or sup_g.src.size + att_g.src.size >= VECTOR_MIN_EDGES)
    ):
        tau = sup_g.tau
        arrays = [(sup_g.src, sup_g.tgt), (att_g.src, att_g.tgt)]
    else:
        sup_ids = [sup_g.get(n, ()) for n in ids]
        att_ids = [att_g.get(n, ()) for n in ids]
        index = dict(zip(ids, range(len(ids)), strict=True))
        if not _use_vector(engine, sup_ids, att_ids):
            sigma, converged, iterations, exact = propagate_indexed(
                [float(graph.nodes[n]) for n in ids],
                [[index[s] for s in sources] for sources in sup_ids],
                [[index[a] for a in sources] for sources in att_ids],
                tolerance=tolerance,
                max_iterations=max_iterations,
                engine="pure",
            )
            return Strengths(
                MappingProxyType(dict(zip(ids, sigma, strict=True))), converged, iterations, exact
            )
        arrays = []
        for lists in (sup_ids, att_ids):
            counts = np.fromiter(map(len, lists), dtype=np.intp, count=len(lists))
            flat = map(index.__getitem__, chain.from_iterable(lists))
            src = np.fromiter(flat, dtype=np.intp, count=int(counts.sum()))
            arrays.append((src, np.repeat(np.arange(len(ids), dtype=np.intp), counts)))
        tau = np.fromiter(graph.nodes.values(), dtype=np.float64, count=len(ids))
    values, converged, iterations, exact = propagate_arrays(
        tau, arrays[0], arrays[1], tolerance=tolerance, max_iterations=max_iterations
    )
    return Strengths(_Sigma(ids, values), converged, iterations, exact)


class _Sigma(Mapping[str, float]):
    """``Strengths.sigma`` of the numpy engine: the strengths array as it came out, turned into
    a dict of floats only when somebody reads it (a graph of 10,000 nodes whose caller wants
    one score need not pay for 10,000 dict entries). Equal to the dict it stands for."""

    __slots__ = ("_ids", "_made", "_values")

    def __init__(self, ids: Sequence[str], values: Floats) -> None:
        self._ids = ids
        self._values = values
        self._made: dict[str, float] | None = None

    def _dict(self) -> dict[str, float]:
        if self._made is None:  # a memo of a value that never changes, not a mutation
            self._made = dict(zip(self._ids, self._values.tolist(), strict=True))
        return self._made

    def __getitem__(self, key: str) -> float:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __eq__(self, other: object) -> bool:
        return self._dict() == (other._dict() if isinstance(other, _Sigma) else other)

    __hash__ = None  # type: ignore[assignment]  # like a dict

    def __repr__(self) -> str:
        return repr(self._dict())


def _use_vector(
    engine: Engine, sup: Sequence[Sequence[object]], att: Sequence[Sequence[object]]
) -> bool:
    if engine != "auto":
        return engine == "vector"
    return sum(map(len, sup)) + sum(map(len, att)) >= VECTOR_MIN_EDGES


def _inner_order(sup: Sequence[Sequence[int]], att: Sequence[Sequence[int]]) -> list[int] | None:
    """Kahn's algorithm over ``source -> target``, restricted to the nodes that have incoming
    edges (the others keep their base strength, so they need no place in the order); None when
    the graph has a cycle. Any topological order gives the same strengths."""
    inner = [t for t in range(len(sup)) if sup[t] or att[t]]
    is_inner = set(inner)
    order: list[int] = []  # first the nodes whose sources all keep their base strength
    pending = [0] * len(sup)  # the others: how many of their sources are not placed yet
    feeds: list[list[int]] = [[] for _ in sup]
    for t in inner:
        s, a = sup[t], att[t]
        if is_inner.isdisjoint(s) and is_inner.isdisjoint(a):
            order.append(t)
            continue
        for sources in (s, a):
            for j in sources:
                if j in is_inner:
                    pending[t] += 1
                    feeds[j].append(t)
    for j in order:  # grows while it is walked
        for t in feeds[j]:
            pending[t] -= 1
            if pending[t] == 0:
                order.append(t)
    return order if len(order) == len(inner) else None


def propagate_indexed(
    base: Sequence[float],
    sup: Sequence[Sequence[int]],
    att: Sequence[Sequence[int]],
    *,
    tolerance: float = 1e-12,
    max_iterations: int = 10_000,
    method: str = "auto",
    engine: Engine = "auto",
) -> tuple[list[float], bool, int, bool]:
    """The work behind :func:`propagate` on dense indices: ``(sigma, converged, iterations,
    exact)``. ``method`` "auto" uses the exact pass when acyclic; "iterate" forces Jacobi (used
    by tests to check both agree). ``engine`` as for :func:`propagate`."""
    if max_iterations < 1:
        raise ValueError("max_iterations must be >= 1")
    if _use_vector(engine, sup, att):
        values, converged, iterations, exact = propagate_arrays(
            np.asarray(base, dtype=np.float64),
            edges_from_lists(sup),
            edges_from_lists(att),
            tolerance=tolerance,
            max_iterations=max_iterations,
            iterate=method == "iterate",
        )
        return values.tolist(), converged, iterations, exact
    n = len(base)
    order = _inner_order(sup, att) if method == "auto" else None
    if order is not None:
        sigma = list(base)
        value = sigma.__getitem__
        for i in order:
            s, a = sup[i], att[i]
            # One term is its own exact sum: fsum is needed (and kept) from two terms on.
            e = (sigma[s[0]] if len(s) == 1 else fsum(map(value, s))) - (
                sigma[a[0]] if len(a) == 1 else fsum(map(value, a))
            )
            sigma[i] = energy_update(base[i], e)
        return sigma, True, 1, True

    prev = list(base)
    for iteration in range(1, max_iterations + 1):
        nxt = [0.0] * n
        delta = 0.0
        value = prev.__getitem__
        for i in range(n):
            s, a = sup[i], att[i]
            if s or a:
                e = fsum(map(value, s)) - fsum(map(value, a))
                v = energy_update(base[i], e)
            else:
                v = base[i]
            nxt[i] = v
            d = v - prev[i] if v > prev[i] else prev[i] - v
            if d > delta:
                delta = d
        prev = nxt
        if delta <= tolerance:
            return prev, True, iteration, False
    return prev, False, max_iterations, False
