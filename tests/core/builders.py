"""Small builders for core tests: deliberations from compact descriptions (no fixtures needed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from service.core.model import (
    Argument,
    Clash,
    Deliberation,
    Edge,
    Option,
    Parameters,
    Problem,
    Vote,
)


def arg(id: str, stance: str, tau: float, role: str = "nurse", **kw: object) -> Argument:
    return Argument(id, role, stance, f"text of {id}", ("ev-1",), (), tau, **kw)  # type: ignore[arg-type]


def option(
    id: str,
    args: Sequence[Argument],
    extra_edges: Iterable[tuple[str, str, str]] = (),
    clashes: Iterable[tuple[str, str, str | None]] = (),
    category: str = "medication",
    **kw: object,
) -> Option:
    """Each argument gets its stance edge to the option; ``extra_edges`` join arguments."""
    edges = [Edge(a.id, id, a.stance) for a in args]
    edges += [Edge(s, t, r) for s, t, r in extra_edges]  # type: ignore[arg-type]
    return Option(
        id,
        f"title {id}",
        category,
        f"description {id}",
        tuple(args),
        tuple(edges),
        tuple(Clash(s, a, w) for s, a, w in clashes),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def vote(v: str, role: str = "nurse") -> Vote:
    return Vote(role, v, 0.8, "a quote", "a rationale")  # type: ignore[arg-type]


def problem(id: str, votes: str, initial: str = "accept", **kw: object) -> Problem:
    """``votes`` as letters: K, R, N."""
    names = {"K": "KEEP", "R": "REFUSE", "N": "NEUTRAL"}
    return Problem(
        id,
        f"display {id}",
        initial,  # type: ignore[arg-type]
        tuple(vote(names[c], f"role{i}") for i, c in enumerate(votes)),
        **kw,  # type: ignore[arg-type]
    )


def deliberation(
    options: Sequence[Option],
    problems: Sequence[Problem] = (),
    parameters: Parameters | None = None,
) -> Deliberation:
    return Deliberation(
        "plan-1", 1, "Patient/p1", parameters or Parameters(), tuple(problems), tuple(options)
    )


def sample() -> Deliberation:
    """A small but complete deliberation: clashes, argument-to-argument edges, three problems."""
    o1 = option(
        "o1",
        [
            arg("a1", "support", 0.7, "pharmacist"),
            arg("a2", "attack", 0.6, "nurse"),
            arg("a3", "support", 0.5, "gp"),
            arg("a4", "attack", 0.3, "social-worker"),
        ],
        extra_edges=[("a3", "a1", "support"), ("a4", "a3", "attack")],
        clashes=[("a1", "a2", "support"), ("a3", "a2", None)],
        category="medication",
        refs=("MedicationRequest/m1",),
        problem_ids=("pr1",),
        code=("http://snomed.info/sct", "182836005", "Review of medication"),
        medication_ref="MedicationRequest/m1",
    )
    o2 = option(
        "o2",
        [arg("b1", "support", 0.9, "pt"), arg("b2", "attack", 0.2, "ot")],
        category="immediate-safety",
    )
    o3 = option("o3", [arg("c1", "attack", 0.8, "gp")], category="referral")
    return deliberation(
        [o1, o2, o3],
        [
            problem("pr1", "KKN"),
            problem("pr2", "KR", arbitration="reject", arbitration_rationale="why"),
            problem("pr3", "NNK", initial="reject"),
        ],
    )
