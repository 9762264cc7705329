"""A dose written only as text is read when the whole phrase states one dose and one frequency,
and never when it leaves either open (a range, "as directed", "as needed")."""

from __future__ import annotations

import pytest

from service.record.dose_text import TextDose, read_dose


@pytest.mark.parametrize(
    ("text", "value", "unit", "per_day"),
    [
        ("15 mg once weekly", 15.0, "mg", 1 / 7),
        ("2 tablets of 500 mg twice daily", 1000.0, "mg", 2.0),
        ("500mg bd", 500.0, "mg", 2.0),
        ("1 g four times a day", 1.0, "g", 4.0),
        ("Take 10 mg at night.", 10.0, "mg", 1.0),
        ("5 mg every 8 hours", 5.0, "mg", 3.0),
        ("one tablet of 20 mg three times a day", 20.0, "mg", 3.0),
        ("50 micrograms once daily", 50.0, "mcg", 1.0),
    ],
)
def test_a_whole_dose_phrase_gives_the_dose_and_its_frequency(
    text: str, value: float, unit: str, per_day: float
) -> None:
    assert read_dose(text) == TextDose(value, unit, pytest.approx(per_day))


@pytest.mark.parametrize(
    "text",
    [
        "1-2 tablets twice daily",
        "500 mg 1-2 times a day",
        "as directed",
        "500 mg as needed",
        "500 mg twice daily when required",
        "500 mg every 5 hours",  # not a whole number of doses a day
        "500 mg twice daily or three times a day",
        "twice daily",
        "500 mg",
    ],
)
def test_a_phrase_that_leaves_the_dose_open_gives_none(text: str) -> None:
    assert read_dose(text) is None
