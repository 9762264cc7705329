"""CAMP hybrid router (eq. 4-8): the full truth table for panels of 0..7 and hand-picked rows."""

from __future__ import annotations

import pytest

from service.core import Route, route, route_counts
from tests.core.builders import vote


def paper(k: int, r: int, n: int, y0: str) -> tuple[str, str | None]:
    """The paper's conditions, restated independently of the implementation's order of tests:
    disagreement first; otherwise one side (or nobody) has an opinion, and it wins outright only
    with more votes than the abstentions."""
    if k > 0 and r > 0:
        return "conflict", None
    side, count = ("accept", k) if k > 0 else ("reject", r)
    if count > n:
        return "strong_consensus", side
    return "weak_consensus", y0


PANELS = [
    (k, r, size - k - r)
    for size in range(0, 8)
    for k in range(size + 1)
    for r in range(size - k + 1)
]


@pytest.mark.parametrize("y0", ["accept", "reject"])
@pytest.mark.parametrize(("k", "r", "n"), PANELS)
def test_truth_table(k: int, r: int, n: int, y0: str) -> None:
    path, decision = paper(k, r, n, y0)
    got = route_counts(k, r, n, y0)  # type: ignore[arg-type]
    assert (got.path, got.decision) == (path, decision)
    # and the literal conditions of eq. 5-6 hold for the path taken
    if got.path == "strong_consensus":
        assert (r == 0 and k > n) or (k == 0 and r > n)
    elif got.path == "weak_consensus":
        assert k * r == 0 and max(k, r) <= n
    else:
        assert k > 0 and r > 0


def test_table_covers_every_panel() -> None:
    assert len(PANELS) == sum((s + 1) * (s + 2) // 2 for s in range(8))  # 120 rows


@pytest.mark.parametrize(
    ("votes", "y0", "expected"),
    [
        ("", "reject", Route("weak_consensus", "reject")),  # nobody voted: attending's y0
        ("", "accept", Route("weak_consensus", "accept")),
        ("K", "reject", Route("strong_consensus", "accept")),
        ("R", "accept", Route("strong_consensus", "reject")),
        ("N", "accept", Route("weak_consensus", "accept")),
        ("KN", "reject", Route("weak_consensus", "reject")),  # k = n: not a strict majority
        ("KKN", "reject", Route("strong_consensus", "accept")),
        ("RRNN", "accept", Route("weak_consensus", "accept")),
        ("RRRNN", "accept", Route("strong_consensus", "reject")),
        ("KR", "accept", Route("conflict", None)),
        ("KKKKKKR", "accept", Route("conflict", None)),  # one dissent is still a conflict
        ("KRNNNNN", "reject", Route("conflict", None)),
    ],
)
def test_hand_picked_panels(votes: str, y0: str, expected: Route) -> None:
    names = {"K": "KEEP", "R": "REFUSE", "N": "NEUTRAL"}
    panel = [vote(names[c], f"r{i}") for i, c in enumerate(votes)]
    assert route(panel, y0) == expected  # type: ignore[arg-type]
    counts = (votes.count("K"), votes.count("R"), votes.count("N"))
    assert route(counts, y0) == expected  # type: ignore[arg-type]


def test_bad_votes_and_judgements_are_refused() -> None:
    with pytest.raises(ValueError, match="votes\\[1\\]"):
        route([vote("KEEP"), vote("MAYBE")], "accept")
    with pytest.raises(ValueError):
        route_counts(1, 0, 0, "maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        route_counts(-1, 0, 0, "accept")
