"""When each action should happen (``data/timeframes.yaml``): each timeframe reached by a case and
missed by its neighbour, critical values at and around their thresholds, the harm score."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from inference.knowledge.timeframes import critical_finding, harm_score, timeframe_of
from service.record.profile import Observation, PatientProfile
from service.text.words import ranking_label, timeframe_words


def _tf(**kw: object) -> str:
    base: dict[str, object] = dict(
        option_id="opt-x",
        criteria=(),
        kinds=(),
        urgency_class="soon",
        action="review",
        priority="review",
    )
    base.update(kw)
    return timeframe_of(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reaching", "neighbour", "expected"),
    [
        # an urgent stop is today; an urgent review of the same medicine is within 72 hours
        ({"urgency_class": "urgent", "action": "stop-now"}, {"urgency_class": "urgent"}, "now"),
        # contradicting data to settle: 72h; the same item acted on soon is not
        ({"urgency_class": "resolve-first"}, {"priority": "omission"}, "72h"),
        # a post-discharge heart failure review: 7 days (cited); without the criterion, 4 weeks
        (
            {"criteria": ("transition-heart-failure-review",), "priority": "monitoring"},
            {"priority": "monitoring"},
            "7d",
        ),
        # a safety finding acted on soon: this week; an omission: within 4 weeks
        ({"priority": "safety"}, {"priority": "omission"}, "7d"),
        ({"priority": "omission"}, {"priority": "review"}, "4w"),
        # routine monitoring of a stable medicine waits; monitoring after a change does not
        (
            {"kinds": ("monitoring",), "priority": "monitoring"},
            {
                "kinds": ("monitoring",),
                "priority": "monitoring",
                "criteria": ("transition-electrolytes-after-change",),
            },
            "next-review",
        ),
    ],
)
def test_each_timeframe_is_reached_and_its_neighbour_is_not(
    reaching: dict[str, object], neighbour: dict[str, object], expected: str
) -> None:
    assert _tf(**reaching) == expected
    assert _tf(**neighbour) != expected


def _profile(loinc: str, value: float) -> PatientProfile:
    p = PatientProfile("Patient/1", "female", date(1950, 1, 1), date(2026, 11, 1))
    return replace(p, observations=(Observation("Observation/k", loinc, "", value, "", None),))


@pytest.mark.parametrize(
    ("loinc", "value", "critical"),
    [
        ("2823-3", 5.9, False),
        ("2823-3", 6.0, True),  # potassium >= 6.0 mmol/L
        ("2823-3", 6.1, True),
        ("8636-3", 499, False),
        ("8636-3", 500, True),  # QTc >= 500 ms
    ],
)
def test_critical_values_at_and_around_their_thresholds(
    loinc: str, value: float, critical: bool
) -> None:
    found = critical_finding(_profile(loinc, value), ("Observation/k",))
    assert (found is not None) is critical
    if found is not None:
        assert "today" in found.first_step
        assert _tf(critical=True) == "now"


def test_a_critical_value_not_cited_by_the_action_does_not_time_it() -> None:
    assert critical_finding(_profile("2823-3", 6.5), ("Observation/other",)) is None


def test_harm_is_severity_times_likelihood_the_worst_finding() -> None:
    assert harm_score([("drug-drug", "major")], "safety") == pytest.approx(2.4)
    assert harm_score([("monitoring", "minor")], "monitoring") < harm_score(
        [("drug-disease", "major")], "safety"
    )


def test_timeframe_words_and_the_ranking_label() -> None:
    words = [timeframe_words(t) for t in ("now", "72h", "7d", "4w", "next-review")]
    assert words == ["today", "within 3 days", "this week", "within 4 weeks", "at the next review"]
    assert ranking_label() == "Ranked by when to act"
