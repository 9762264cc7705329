"""Quadratic-energy semantics for a quantitative bipolar argumentation framework (CANOE eq. 10-12).

``propagate(graph)`` is the one semantics: base strengths and support/attack edges in, final
strengths out. Acyclic graphs get one exact pass in topological order; cyclic graphs are iterated
synchronously (Jacobi: every node's new strength is computed from the previous sweep's strengths)
from the base strengths until the largest change is within ``tolerance`` or ``max_iterations``
sweeps have run, and ``converged`` says which. Pure: no I/O, no clock, no randomness, no mutation
of inputs.

Determinism: energies are summed with ``math.fsum`` (exactly rounded), so the result does not
depend on the order in which edges were listed; the Jacobi scheme does not depend on node order
either. The same graph therefore always gives bit-identical strengths.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import fsum
from types import MappingProxyType

__all__ = ["QBAF", "Strengths", "energy_update", "h", "propagate"]

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
    if e > 0.0:
        s = tau + (1.0 - tau) * h(e)
    elif e < 0.0:
        s = tau - tau * h(-e)
    else:
        s = tau
    # Rounding can never push the formula outside [0, 1] by more than an ulp; clamp it to be sure.
    return 0.0 if s < 0.0 else 1.0 if s > 1.0 else s


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
        for node, tau in nodes.items():
            if not 0.0 <= tau <= 1.0:  # also refuses NaN
                raise ValueError(f"base strength of {node!r} is {tau!r}, outside [0, 1]")
        sup: dict[str, list[str]] = {n: [] for n in nodes}
        att: dict[str, list[str]] = {n: [] for n in nodes}
        seen: set[tuple[str, str, str]] = set()
        for source, target, relation in edges:
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


@dataclass(frozen=True, slots=True)
class Strengths:
    """Final strengths. ``exact``: computed by the acyclic pass (``iterations`` is then 1).
    ``converged`` False means the step limit was hit and ``sigma`` is the last iterate, not a
    fixed point: callers must not present it as final."""

    sigma: Mapping[str, float]
    converged: bool
    iterations: int
    exact: bool


def propagate(graph: QBAF, *, tolerance: float = 1e-12, max_iterations: int = 10_000) -> Strengths:
    """Strength of every node under quadratic-energy semantics.

    >>> g = QBAF.from_edges({"o": 0.5, "a": 1.0}, [("a", "o", "support")])
    >>> propagate(g).sigma["o"]  # E = 1, h(1) = 0.5, sigma = 0.5 + 0.5 * 0.5
    0.75
    """
    ids = list(graph.nodes)
    index = {n: i for i, n in enumerate(ids)}
    base = [float(graph.nodes[n]) for n in ids]
    sup = [[index[s] for s in graph.supporters.get(n, ())] for n in ids]
    att = [[index[a] for a in graph.attackers.get(n, ())] for n in ids]
    sigma, converged, iterations, exact = propagate_indexed(
        base, sup, att, tolerance=tolerance, max_iterations=max_iterations
    )
    return Strengths(
        MappingProxyType(dict(zip(ids, sigma, strict=True))), converged, iterations, exact
    )


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
) -> tuple[list[float], bool, int, bool]:
    """The work behind :func:`propagate` on dense indices: ``(sigma, converged, iterations,
    exact)``. ``method`` "auto" uses the exact pass when acyclic; "iterate" forces Jacobi (used
    by tests to check both agree)."""
    if max_iterations < 1:
        raise ValueError("max_iterations must be >= 1")
    n = len(base)
    order = _inner_order(sup, att) if method == "auto" else None
    if order is not None:
        sigma = list(base)
        for i in order:
            s, a = sup[i], att[i]
            # One term is its own exact sum: fsum is needed (and kept) from two terms on.
            e = (sigma[s[0]] if len(s) == 1 else fsum([sigma[j] for j in s])) - (
                sigma[a[0]] if len(a) == 1 else fsum([sigma[j] for j in a])
            )
            sigma[i] = energy_update(base[i], e)
        return sigma, True, 1, True

    prev = list(base)
    for iteration in range(1, max_iterations + 1):
        nxt = [0.0] * n
        delta = 0.0
        for i in range(n):
            s, a = sup[i], att[i]
            if s or a:
                e = fsum([prev[j] for j in s]) - fsum([prev[j] for j in a])
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
