"""``canoe eval`` over the shipped clinical review cases (examples/eval).

``expectations.json`` holds what today's plans already get right and must keep; it must pass.
``known_gaps.json`` holds what a clinically right plan must (not) contain but today's plans do not
meet: every one of its checks must still fail, so a change that closes a gap fails this test until
the case is moved into ``expectations.json`` (where it is then kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REALISTIC_BUNDLES, REPO_ROOT
from tests.e2e import evalcases

CASES = REPO_ROOT / "examples" / "eval"


def _file(name: str) -> dict[str, Any]:
    return evalcases.load(CASES, name)


@pytest.mark.parametrize("name", ["expectations.json", "known_gaps.json"])
def test_every_expectation_states_its_clinical_reason_and_source(name: str) -> None:
    evalcases.assert_reasons_and_sources(CASES, name)


def test_the_reviewed_cases_cover_every_realistic_fixture() -> None:
    named = {
        Path(c["bundle"]).name
        for name in ("expectations.json", "known_gaps.json")
        for c in _file(name)["cases"]
    }
    assert named == {p.name for p in REALISTIC_BUNDLES}
    assert {Path(c["bundle"]).name for c in _file("expectations.json")["cases"]} == named


def test_todays_plans_meet_every_kept_expectation() -> None:
    evalcases.assert_every_kept_expectation_met(CASES)


def test_every_known_gap_is_still_open() -> None:
    evalcases.assert_every_known_gap_still_open(CASES)
