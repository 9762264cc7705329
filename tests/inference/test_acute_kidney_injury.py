"""Acute kidney injury by the KDIGO 2012 creatinine criteria (``Facts.aki``) at their edges, and
what it changes: a line to withhold the medicines a source names, and no dose reduction of them
from an unsteady creatinine."""

from __future__ import annotations

from datetime import timedelta

import pytest

from inference.knowledge.criteria.interpret import Firing, evaluate
from inference.knowledge.facts import Facts
from inference.knowledge.rules import CRITERIA

from .criteria_factory import AS_OF, Builder


def _record(before: float, after: float, days: int, *, ago: int = 0, med: str = "") -> Builder:
    b = Builder(age=78)
    if med:
        b.med(med, dose_mg=10)
    b.lab("creatinine", before, AS_OF - timedelta(days=days + ago))
    b.lab("creatinine", after, AS_OF - timedelta(days=ago))
    return b


@pytest.mark.parametrize(
    ("before", "after", "days", "ago", "acute"),
    [
        (1.0, 1.3, 2, 0, True),  # 0.3 mg/dL (26.5 umol/L) within 48 hours
        (1.0, 1.29, 2, 0, False),  # just under the rise
        (1.0, 1.3, 3, 0, False),  # the rise over three days, under 1.5 times
        (1.0, 1.5, 7, 0, True),  # 1.5 times within 7 days
        (1.0, 1.49, 7, 0, False),  # just under 1.5 times
        (1.0, 1.5, 8, 0, False),  # baseline older than 7 days
        (1.0, 2.0, 2, 8, False),  # the rise is not recent
    ],
)
def test_kdigo_creatinine_edges(
    before: float, after: float, days: int, ago: int, acute: bool
) -> None:
    assert (Facts(_record(before, after, days, ago=ago).build()).aki is not None) is acute


def test_micromoles_read_the_same() -> None:
    b = Builder(age=78)
    b.lab("creatinine", 1.0, AS_OF - timedelta(days=1))
    b.obs[-1] = b.obs[-1].__class__(**{**_fields(b.obs[-1]), "value": 88.0, "unit": "umol/L"})
    b.lab("creatinine", 1.3, AS_OF)
    b.obs[-1] = b.obs[-1].__class__(**{**_fields(b.obs[-1]), "value": 115.0, "unit": "umol/L"})
    aki = Facts(b.build()).aki
    assert aki is not None and aki.rise_umol_l == pytest.approx(27.0)


def _fields(o: object) -> dict[str, object]:
    return {s: getattr(o, s) for s in o.__slots__}  # type: ignore[attr-defined]


def _fired(b: Builder) -> list[Firing]:
    return list(evaluate(CRITERIA, Facts(b.build())))


def test_withhold_line_replaces_the_dose_band_in_aki() -> None:
    fired = _fired(_record(1.0, 2.4, 2, med="ramipril"))
    ids = {(x.criterion.id, x.binding.names.get("a")) for x in fired}
    assert ("acute-kidney-injury-medicines", "ramipril") in ids
    assert ("renal-dose-table", "ramipril") not in ids
    line = next(x for x in fired if x.criterion.id == "acute-kidney-injury-medicines")
    assert "rose to 2.4 mg/dL 2 days later" in line.proposal.description
    assert "not reliable" in line.proposal.description


def test_same_kidney_function_without_the_rise_keeps_the_dose_band() -> None:
    fired = _fired(_record(2.4, 2.4, 2, med="ramipril"))
    ids = {(x.criterion.id, x.binding.names.get("a")) for x in fired}
    assert ("acute-kidney-injury-medicines", "ramipril") not in ids
    assert ("renal-dose-table", "ramipril") in ids


def test_aki_without_a_named_medicine_says_nothing_of_medicines() -> None:
    fired = _fired(_record(1.0, 2.4, 2, med="atorvastatin"))
    assert not [x for x in fired if x.criterion.id == "acute-kidney-injury-medicines"]
