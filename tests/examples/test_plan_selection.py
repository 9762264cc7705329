"""Over every example bundle (the plan-hash set): no plan includes two incompatible actions on
one medicine, and a contestation that changes a plan's top activity leaves no synthesis that
says otherwise. The counts are ``tests.support.selection_counts`` and
``tests.support.contest_synthesis``, which print them."""

from __future__ import annotations

from tests.support import contest_synthesis, selection_counts


async def test_no_plan_includes_incompatible_actions_on_one_medicine() -> None:
    c = await selection_counts.count()
    assert c.plans > 100
    assert c.pairs_before > 0  # the rule has something to do in the examples
    assert (c.pairs_after, c.plans_after) == (0, [])


async def test_every_contested_version_has_a_true_synthesis() -> None:
    c = await contest_synthesis.count()
    assert len(c.flipped) > 100
    assert c.stale_first == [] and c.stale_after == []
    assert len(c.stale_before) > 0  # a carried-over text would have been untrue
