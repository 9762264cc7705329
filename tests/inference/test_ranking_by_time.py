"""Plans of real records ranked by when to act: after a stay the transition actions come before
routine monitoring of stable medicines; in any record a same-day item comes first whatever its
category."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inference.test_uncited_objections import _plan

ROOT = Path(__file__).resolve().parents[2]


def _ranked(bundle: str) -> list[dict[str, object]]:
    doc = _plan(ROOT / bundle)
    by_id = {o["id"]: o for o in doc["options"]}  # type: ignore[attr-defined]
    return [by_id[i] for i in doc["plan"]]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "bundle",
    [
        "examples/vignettes6/urosepsis_aki_drugs_held.json",
        "examples/vignettes6/cellulitis_duplicate_beta_blocker.json",
    ],
)
def test_after_a_stay_routine_monitoring_ranks_below_the_follow_up(bundle: str) -> None:
    ranked = _ranked(bundle)
    ids = [str(o["id"]) for o in ranked]
    routine = [n for n, i in enumerate(ids) if i.startswith("opt-monitor-")]
    timed = [n for n, o in enumerate(ranked) if o.get("timeframe") in ("now", "72h", "7d")]
    assert routine and timed
    assert max(timed) < min(routine)
    assert all(ranked[n]["timeframe"] == "next-review" for n in routine)


def test_a_same_day_item_comes_first_whatever_its_category() -> None:
    ranked = _ranked("examples/vignettes/levothyroxine_amiodarone.json")
    assert ranked[0]["timeframe"] == "now"
    # a medication-category item ahead of immediate-safety findings that can wait a day
    assert ranked[0]["category"] != "immediate-safety"
    assert any(o["category"] == "immediate-safety" for o in ranked[1:])


@pytest.mark.parametrize(
    "bundle",
    [
        "examples/vignettes2/hf_hyperkalaemia.json",
        "examples/vignettes5/lithium_toxicity_naproxen.json",
    ],
)
def test_in_a_stable_record_the_same_day_items_lead(bundle: str) -> None:
    ranked = _ranked(bundle)
    now = [n for n, o in enumerate(ranked) if o.get("timeframe") == "now"]
    assert now == list(range(len(now))) and now
