"""A dose written only as text, read when the whole phrase says one dose and one frequency.

The words are data (``dose_words.json``): frequency phrases as administrations in so many days,
the forms a count of units is written in, the units. A phrase is read only when it is, whole,
an optional verb, an amount ("15 mg", "500mg", "2 tablets of 500 mg"), an optional route and a
frequency; anything else (a range "1-2 tablets", "as directed", "as needed", two frequencies)
reads as no dose. Pure: no I/O after import.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = ["TextDose", "read_dose"]

_WORDS: Final[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("dose_words.json")).read_text(encoding="utf-8")
)


@dataclass(frozen=True, slots=True)
class TextDose:
    """``value`` ``unit`` per administration, ``per_day`` administrations a day (a weekly dose:
    one seventh)."""

    value: float
    unit: str
    per_day: float


def _alternatives(words: Any) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_NUMBER = r"\d+(?:\.\d+)?"
_EVERY = "|".join(
    re.escape(p).replace(re.escape("{n}"), r"(?P<hours{}>\d+)").format(k)
    for k, p in enumerate(_WORDS["every_hours"])
)
_PHRASE: Final = re.compile(
    rf"(?:(?:{_alternatives(_WORDS['verbs'])}) )?"
    rf"(?:(?P<count>{_NUMBER}|{_alternatives(_WORDS['counts'])}) ?"
    rf"(?:{_alternatives(_WORDS['forms'])}) (?:of |x )?)?"
    rf"(?P<value>{_NUMBER}) ?(?P<unit>{_alternatives(_WORDS['units'])})"
    rf"(?: (?:{_alternatives(_WORDS['routes'])}))?"
    rf" (?:(?P<freq>{_alternatives(_WORDS['frequencies'])})|{_EVERY})"
    rf"(?: (?:{_alternatives(_WORDS['routes'])}))?"
)


def _count(word: str | None) -> float:
    if word is None:
        return 1.0
    counts: dict[str, float] = _WORDS["counts"]
    return float(counts[word]) if word in counts else float(word)


def _per_day(m: re.Match[str]) -> float | None:
    if m["freq"] is not None:
        times, days = _WORDS["frequencies"][m["freq"]]
        return float(times) / float(days)
    hours = next(int(v) for k, v in m.groupdict().items() if k.startswith("hours") and v)
    return None if hours == 0 or 24 % hours else 24.0 / hours


def read_dose(text: str) -> TextDose | None:
    """The dose ``text`` states, or None unless the whole of it reads as one.

    >>> read_dose("15 mg once weekly")
    TextDose(value=15.0, unit='mg', per_day=0.14285714285714285)
    >>> read_dose("Take 2 tablets of 500 mg twice daily.")
    TextDose(value=1000.0, unit='mg', per_day=2.0)
    >>> read_dose("1-2 tablets as needed") is None
    True
    """
    phrase = " ".join(text.lower().replace(",", " ").split()).rstrip(".")
    m = _PHRASE.fullmatch(phrase)
    if m is None:
        return None
    per_day = _per_day(m)
    if per_day is None:
        return None
    value = _count(m["count"]) * float(m["value"])
    return TextDose(value, _WORDS["units"][m["unit"]], per_day)
