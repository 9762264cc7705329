"""A point that holds only when no acute arterial event is recent (criteria ``none_of`` and
``recent_orders``): "beyond the first year after a vascular event, the anticoagulant alone"
must not lead a combination review ten weeks after a thrombolysis (trey's record) or a stroke.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from inference.knowledge.criteria.schema import Criterion
from inference.knowledge.rules import CRITERIA, analyse
from service.record.profile import PatientProfile

from .criteria_factory import AS_OF, Builder

FIRST_YEAR = "Beyond the first year after a vascular event"


def _combination(days_since_thrombolysis: int | None = None) -> Builder:
    b = Builder(age=80)
    b.med("warfarin")
    b.med("clopidogrel")
    if days_since_thrombolysis is not None:
        b.med("alteplase", authored=AS_OF - timedelta(days=days_since_thrombolysis))
    return b


def _first_year_point(profile: PatientProfile) -> bool:
    prop = analyse(profile).proposal("opt-review-clopidogrel")
    assert prop is not None, "the anticoagulant-antiplatelet review is proposed either way"
    return any(p.text.startswith(FIRST_YEAR) for p in prop.points)


def test_with_no_recent_event_the_anticoagulant_alone_is_argued() -> None:
    assert _first_year_point(_combination().build())


@pytest.mark.parametrize("days", [70, 364])
def test_a_thrombolysis_within_the_year_withholds_that_point(days: int) -> None:
    assert not _first_year_point(_combination(days).build())


def test_a_thrombolysis_over_a_year_ago_no_longer_does() -> None:
    assert _first_year_point(_combination(400).build())


def test_a_stroke_admission_within_the_year_withholds_that_point() -> None:
    b = _combination()
    b.encounter("stroke", "EMER", AS_OF - timedelta(days=90))
    assert not _first_year_point(b.build())


def test_a_negated_part_must_name_its_params() -> None:
    (shipped,) = [c for c in CRITERIA if c.id == "ddi-anticoagulant-antiplatelet"]
    data: dict[str, Any] = shipped.model_dump(mode="json", exclude_defaults=True)
    del data["params"]["event_days"]
    with pytest.raises(ValidationError, match="event_days"):
        Criterion.model_validate(data)
