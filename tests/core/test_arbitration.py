"""CAMP eq. 7 as the built-in attending applies it: every vote an argument (confidence times the
weight of its evidence), each side as strong as its strongest argument, a near tie to y0. Values
worked out by hand in the comments (weights: confirmed 1.0, recorded 0.8, unverified 0.4,
none 0.25; near tie 0.05)."""

from __future__ import annotations

import pytest

from service.core.arbitration import VoteArgument, arbitrate


def va(role: str, vote: str, confidence: float, grounding: str) -> VoteArgument:
    return VoteArgument(role, vote, confidence, grounding)  # type: ignore[arg-type]


def test_one_direct_finding_outweighs_two_arguments_from_absence() -> None:
    """CAMP 6.4 (mastitis): KEEP 0.8 x 1.0 = 0.80; each REFUSE 0.9 x 0.25 = 0.225. A vote count
    weighted by confidence alone would reject (1.8 against 0.8); the arguments accept."""
    args = [
        va("infectious-disease", "KEEP", 0.8, "confirmed"),
        va("surgeon", "REFUSE", 0.9, "none"),
        va("radiologist", "REFUSE", 0.9, "none"),
    ]
    v = arbitrate(args, "reject")
    assert v.decision == "accept" and not v.tie
    assert v.keep == pytest.approx(0.80) and v.refuse == pytest.approx(0.225)
    assert (v.keep_by, v.refuse_by) == ("infectious-disease", "radiologist")  # first by role
    assert v.rationale() == (
        "strongest KEEP 0.80 (infectious-disease), strongest REFUSE 0.23 (radiologist): "
        "accept on the stronger argument"
    )


@pytest.mark.parametrize(
    ("args", "initial", "keep", "refuse", "decision", "tie"),
    [
        # a quoted confirmed finding against an unverifiable quote: 0.95 vs 0.95 x 0.4 = 0.38
        (
            [("gp", "REFUSE", 0.95, "confirmed"), ("nurse", "KEEP", 0.95, "unverified")],
            "accept",
            0.38,
            0.95,
            "reject",
            False,
        ),
        # three refusals do not add up: 0.9 x 0.8 = 0.72 vs 0.85 x 0.8 = 0.68, 0.04 apart: a tie
        (
            [
                ("gp", "KEEP", 0.9, "recorded"),
                ("a", "REFUSE", 0.85, "recorded"),
                ("b", "REFUSE", 0.85, "recorded"),
                ("c", "REFUSE", 0.85, "recorded"),
            ],
            "accept",
            0.72,
            0.68,
            "accept",
            True,
        ),
        (
            [
                ("gp", "KEEP", 0.9, "recorded"),
                ("a", "REFUSE", 0.85, "recorded"),
                ("b", "REFUSE", 0.85, "recorded"),
                ("c", "REFUSE", 0.85, "recorded"),
            ],
            "reject",
            0.72,
            0.68,
            "reject",
            True,
        ),
        # exactly 0.05 apart is a tie however the floats round: 0.85 - 0.8 = 0.04999...,
        # 0.55 - 0.5 = 0.05000...04
        (
            [("gp", "KEEP", 0.85, "confirmed"), ("nurse", "REFUSE", 0.8, "confirmed")],
            "reject",
            0.85,
            0.8,
            "reject",
            True,
        ),
        (
            [("gp", "KEEP", 0.55, "confirmed"), ("nurse", "REFUSE", 0.5, "confirmed")],
            "reject",
            0.55,
            0.5,
            "reject",
            True,
        ),
        # 0.06 apart: the stronger side wins against y0
        (
            [("gp", "KEEP", 0.86, "confirmed"), ("nurse", "REFUSE", 0.8, "confirmed")],
            "reject",
            0.86,
            0.8,
            "accept",
            False,
        ),
        # a neutral vote is no argument, however strong its quote; confidence is clamped to 1:
        # 1.3 -> 1.0 x 0.25 = 0.25 vs 0.5 x 0.8 = 0.40
        (
            [
                ("gp", "NEUTRAL", 1.0, "confirmed"),
                ("nurse", "REFUSE", 1.3, "none"),
                ("pharmacist", "KEEP", 0.5, "recorded"),
            ],
            "reject",
            0.40,
            0.25,
            "accept",
            False,
        ),
    ],
)
def test_worked_values(
    args: list[tuple[str, str, float, str]],
    initial: str,
    keep: float,
    refuse: float,
    decision: str,
    tie: bool,
) -> None:
    v = arbitrate([va(*a) for a in args], initial)  # type: ignore[arg-type]
    assert v.keep == pytest.approx(keep) and v.refuse == pytest.approx(refuse)
    assert (v.decision, v.tie) == (decision, tie)
    assert ("initial judgement" in v.rationale()) == tie


def test_a_side_without_arguments_is_zero() -> None:
    v = arbitrate([va("gp", "KEEP", 0.1, "none")], "reject")  # 0.025 vs 0: a tie, y0
    assert (v.refuse, v.refuse_by, v.decision, v.tie) == (0.0, "", "reject", True)
    assert "strongest REFUSE 0.00 (none)" in v.rationale()
