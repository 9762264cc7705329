"""How a span of days, a UCUM unit and an action's timeframe read in the plan's text (the
clinician summary, the card, the CarePlan, the patient version, the knowledge's wordings), and
the one sentence that says how the plan is ranked. Pure: values in, words out.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "PATIENT_TIMEFRAME_WORDS",
    "RANKING_LABEL",
    "TIMEFRAME_WORDS",
    "duration_words",
    "ranking_label",
    "timeframe_words",
    "unit_words",
]

# When to act (``service.core.model.TIMEFRAMES``), as the clinician reads it.
TIMEFRAME_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "now": "today",
        "72h": "within 3 days",
        "7d": "this week",
        "4w": "within 4 weeks",
        "next-review": "at the next review",
    }
)
# The same, as the patient reads it: no number, so none is said that is not a fact of the record.
PATIENT_TIMEFRAME_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "now": "today",
        "72h": "in the next few days",
        "7d": "this week",
        "4w": "within a month",
        "next-review": "at your next check-up",
    }
)
# How every view says the plan is ordered: by when to act, then by the harm averted.
RANKING_LABEL = "Ranked by when to act"


def ranking_label() -> str:
    """The one sentence every view (CLI text, CarePlan narrative, Communication, review app,
    CDS card) uses to say how the plan is ranked, so that they cannot disagree.

    >>> ranking_label()
    'Ranked by when to act'
    """
    return RANKING_LABEL


def timeframe_words(timeframe: str | None, *, patient: bool = False) -> str:
    """An action's timeframe in words ("" for none, as in documents written before it).

    >>> timeframe_words("72h"), timeframe_words("72h", patient=True)
    ('within 3 days', 'in the next few days')
    """
    table = PATIENT_TIMEFRAME_WORDS if patient else TIMEFRAME_WORDS
    return table.get(timeframe or "", "")


def duration_words(days: int) -> str:
    """A span as a clinician says it: days under two weeks, weeks under two months, months
    under two years, then years.

    >>> [duration_words(d) for d in (1, 10, 20, 100, 400, 800, 12000)]
    ['1 day', '10 days', '3 weeks', '3 months', '13 months', '2 years', '32 years']
    """
    for unit, size, below in (("day", 1, 14), ("week", 7, 60), ("month", 30.44, 730)):
        if days < below:
            n = max(1, round(days / size))
            return f"{n} {unit}{'s' if n != 1 else ''}"
    n = int(days // 365.25)
    return f"{n} year{'s' if n != 1 else ''}"


# UCUM codes as a reader writes them (the code "mm[Hg]" is printed "mmHg").
_UNIT_WORDS = {"mm[Hg]": "mmHg", "mL/min/{1.73_m2}": "mL/min/1.73m2"}


def unit_words(unit: str | None) -> str:
    """A UCUM unit as text prints it; a bare annotation such as ``{INR}`` is a unitless number.

    >>> unit_words("mm[Hg]"), unit_words("{INR}"), unit_words("mg/dL"), unit_words(None)
    ('mmHg', '', 'mg/dL', '')
    """
    if not unit or (unit.startswith("{") and unit.endswith("}")):
        return ""
    return _UNIT_WORDS.get(unit, unit)
