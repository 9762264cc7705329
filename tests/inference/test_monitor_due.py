"""A monitoring line appears only when the test is due by its interval from the last result.

For every active criterion that monitors a test (``trigger.monitor``), on a record built to
satisfy the rest of its trigger: a result taken on the plan day, under any code of the test's
group or only by its name, is not due; one a day past the interval is; with no result it is.
(The exact edge of each interval is tested in ``test_threshold_edges``.)
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from inference.knowledge.criteria import load
from inference.knowledge.criteria.interpret import evaluate
from inference.knowledge.criteria.schema import Criterion
from inference.knowledge.facts import Facts
from service.record.profile import Observation, PatientProfile
from service.record.vocabulary import LOINC_GROUPS
from tests.inference.criteria_factory import AS_OF, Builder, _excluded, _satisfy

MONITORS = tuple(c for c in load() if c.status == "active" and c.trigger.monitor is not None)


def _alone(c: Criterion) -> Criterion:
    return c.model_copy(update={"exceptions": ()})


def _fires(c: Criterion, p: PatientProfile) -> bool:
    return any(f.criterion.id == c.id for f in evaluate([_alone(c)], Facts(p)))


def _record(c: Criterion, *results: Observation) -> PatientProfile:
    b = Builder()
    _satisfy(b, c.trigger, c.params, set(_excluded(c)))
    b.obs.extend(results)
    return b.build()


def _result(loinc: str, days_ago: int, name: str = "") -> Observation:
    when = AS_OF - timedelta(days=days_ago)
    return Observation(f"Observation/r{loinc}{days_ago}", loinc, name, 5.0, "", when)


def test_every_monitored_test_is_checked() -> None:
    assert len(MONITORS) >= 20, len(MONITORS)
    assert "review-depression" in {c.id for c in MONITORS}


@pytest.mark.parametrize("c", MONITORS, ids=[c.id for c in MONITORS])
def test_a_test_is_due_only_by_its_interval_from_the_last_result(c: Criterion) -> None:
    m = c.trigger.monitor
    assert m is not None
    interval = int(c.params[m.days])
    codes = LOINC_GROUPS[m.quantity]
    assert _fires(c, _record(c)), f"{c.id}: no result on record, yet not due"
    assert _fires(c, _record(c, _result(codes[0], interval + 1))), f"{c.id}: past its interval"
    for code in codes:
        assert not _fires(c, _record(c, _result(code, 0))), f"{c.id}: {code} taken today"
    # a newer result counts whatever the order the record lists them in
    old, today = _result(codes[0], interval + 1), _result(codes[-1], 0)
    assert not _fires(c, _record(c, old, today)), c.id
    assert not _fires(c, _record(c, today, old)), c.id


def test_a_score_recorded_today_under_a_local_code_is_not_due() -> None:
    """A PHQ-9 scored today that the site codes its own way, beside a coded one from long
    ago: today's score is the last result, so neither the follow-up nor the check is due."""
    chosen = [c for c in MONITORS if c.trigger.monitor and c.trigger.monitor.quantity == "phq9"]
    assert {c.id for c in chosen} >= {"review-depression", "monitor-phq9"}
    for c in chosen:
        m = c.trigger.monitor
        assert m is not None
        old = _result(LOINC_GROUPS["phq9"][0], int(c.params[m.days]) + 30)
        local = _result("local-phq", 0, name="PHQ-9 depression score")
        assert _fires(c, _record(c, old)), c.id
        assert not _fires(c, _record(c, old, local)), c.id
