"""How a span of days and a UCUM unit read in the plan's text (the clinician summary, the
knowledge's wordings). Pure: values in, words out.
"""

from __future__ import annotations

__all__ = [
    "duration_words",
    "unit_words",
]


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
