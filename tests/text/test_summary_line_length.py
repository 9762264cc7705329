"""A summary line's deciding fact adds what its action does not say (a presenting problem's
date, not its name again), and no line is longer than ``LINE_MAX``, the fact always whole."""

from __future__ import annotations

from service.text.summary import LINE_MAX, SummaryLine, _unsaid

_LONG = (
    "Suspected microbial keratitis: painful red left eye with photophobia and blurred vision, "
    "soft contact lens wearer who swims in them, seen again after a week of drops elsewhere"
)


def _line(action: str, fact: str, reason: str = "Assess it and record a plan.") -> SummaryLine:
    return SummaryLine(1, action, "review", reason, fact, ("gp",), False, timeframe="now")


def test_a_problem_the_action_names_leaves_only_its_date_as_the_fact() -> None:
    action = f"Not addressed by this plan: {_LONG} (since 30 November 2026)"
    assert _unsaid(f"{_LONG} (since 2026-11-30)", action) == "since 2026-11-30"


def test_a_contact_whose_reason_the_action_names_keeps_its_kind_and_date() -> None:
    action = f"Not addressed by this plan: {_LONG} (the reason for the contact of 30 November)"
    fact = f"Outpatient clinic review for {_LONG} on 2026-11-30"
    assert _unsaid(fact, action) == "Outpatient clinic review on 2026-11-30"


def test_a_fact_the_action_does_not_say_is_kept_whole() -> None:
    fact = "Headache (since 2026-11-30)"
    assert _unsaid(fact, "Not addressed by this plan: Migraine (since 30 November 2026)") == fact
    contact = "Outpatient clinic review for Cough on 2026-11-30"
    assert _unsaid(contact, "Check blood pressure") == contact


def test_a_line_whose_action_alone_is_too_long_is_cut_in_its_action_not_its_fact() -> None:
    action = f"Not addressed by this plan: {_LONG} {_LONG} (since 30 November 2026)"
    fact = "Outpatient clinic review on 2026-11-30"
    text = _line(action, fact).text()
    assert len(action) > LINE_MAX
    assert len(text) <= LINE_MAX
    assert fact in text and "…" in text


def test_a_line_that_fits_keeps_its_action_whole() -> None:
    action = "Not addressed by this plan: Headache (since 30 November 2026)"
    text = _line(action, "since 2026-11-30").text()
    assert text.startswith(f"1. {action} — ") and "since 2026-11-30" in text
    assert "…" not in text
