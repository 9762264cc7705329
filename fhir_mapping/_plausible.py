"""Plausibility of what a record states: numeric observations per LOINC code, and dates.

A value outside its range is not a fact about the patient but a recording error (a negative eGFR,
an MMSE of -250): ingest refuses it as a fact and lists it as unusable, so no recommendation can
rest on it. Ranges are deliberately wide (the limits of survivable physiology or of the scale),
so a true extreme value is never discarded. Where a quantity is reported in two unit families
(creatinine in mg/dL or umol/L) the unit picks the range.

Dates likewise: a clinical date after the request (beyond ``clock_skew``, for an EHR whose clock
runs ahead of ours), before the patient's birth, or a birth date that is in the future or makes
the patient older than ``MAX_AGE_YEARS`` cannot be true. ``DateWindow`` says why, and ingest
lists the date as unusable instead of computing ages, durations or the record date from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from service.record.profile import MAX_AGE_YEARS, years_between

__all__ = ["DateWindow", "implausible"]

# LOINC -> (low, high) inclusive, for the default unit family.
_RANGES: dict[str, tuple[float, float]] = {
    # kidney function (eGFR, mL/min/1.73m2)
    **dict.fromkeys(
        ("33914-3", "62238-1", "48642-3", "48643-1", "98979-8", "88293-6", "88294-4"),
        (0.5, 200.0),
    ),
    **dict.fromkeys(("2160-0", "38483-4", "14682-9", "59826-8"), (0.1, 25.0)),  # creatinine mg/dL
    **dict.fromkeys(("6298-4", "2823-3"), (1.5, 10.0)),  # potassium mmol/L
    **dict.fromkeys(("2951-2", "2947-0"), (100.0, 185.0)),  # sodium mmol/L
    "4548-4": (3.0, 20.0),  # HbA1c %
    **dict.fromkeys(("6301-6", "34714-6"), (0.5, 15.0)),  # INR
    "8480-6": (50.0, 300.0),  # systolic mmHg
    "8462-4": (20.0, 200.0),  # diastolic mmHg
    "8867-4": (20.0, 300.0),  # heart rate /min
    "29463-7": (1.0, 400.0),  # body weight kg
    "8302-2": (30.0, 250.0),  # body height cm
    "39156-5": (8.0, 120.0),  # BMI kg/m2
    "72106-8": (0.0, 30.0),  # MMSE total
    "72172-0": (0.0, 30.0),  # MoCA total
    "44261-6": (0.0, 27.0),  # PHQ-9 total
    "70274-6": (0.0, 21.0),  # GAD-7 total
    **dict.fromkeys(("14959-1", "9318-7"), (0.0, 50_000.0)),  # urine albumin/creatinine
    "718-7": (2.0, 25.0),  # haemoglobin g/dL
    "3016-3": (0.0, 200.0),  # TSH mIU/L
    **dict.fromkeys(("18262-6", "2089-1", "13457-7"), (0.0, 1000.0)),  # LDL mg/dL
    **dict.fromkeys(("2339-0", "2345-7"), (10.0, 2000.0)),  # glucose mg/dL
}
# Same quantities in SI units.
_SI_RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys(
        ("2160-0", "38483-4", "14682-9", "59826-8"), (9.0, 2200.0)
    ),  # creatinine umol/L
    **dict.fromkeys(("2339-0", "2345-7"), (0.5, 110.0)),  # glucose mmol/L
    **dict.fromkeys(("18262-6", "2089-1", "13457-7"), (0.0, 26.0)),  # LDL mmol/L
    "718-7": (20.0, 250.0),  # haemoglobin g/L
    "29463-7": (2.0, 900.0),  # weight in pounds
    # HbA1c in IFCC mmol/mol (3 to 20 % by the NGSP/IFCC master equation: about 9 to 195)
    "4548-4": (9.0, 200.0),
}


def _si(loinc: str, unit: str) -> bool:
    u = unit.lower()
    if loinc == "29463-7":
        return "lb" in u
    if loinc == "718-7":
        return u.strip() == "g/l"
    return "mol" in u


def implausible(loinc: str, value: float, unit: str) -> str | None:
    """Why ``value`` cannot be a real result of ``loinc`` (None when plausible or unknown)."""
    bounds = (_SI_RANGES if _si(loinc, unit) else _RANGES).get(loinc) or _RANGES.get(loinc)
    if bounds is None:
        return None
    low, high = bounds
    if low <= value <= high:
        return None
    shown = f"{value:g} {unit}".rstrip()
    return f"implausible value {shown} (plausible range {low:g} to {high:g})"


@dataclass(frozen=True, slots=True)
class DateWindow:
    """The days a record's dates may fall on, and why one outside them cannot be a fact.
    ``received`` is the day the request arrived (None: not known, no bound from the clock),
    ``latest`` that day plus the clock-skew allowance."""

    received: date | None = None
    latest: date | None = None

    @classmethod
    def of(cls, received: datetime | None, clock_skew: timedelta) -> DateWindow:
        if received is None:
            return cls()
        try:
            latest = (received + clock_skew).date()
        except OverflowError:
            latest = date.max
        return cls(received.date(), latest)

    def after(self, day: date) -> str | None:
        """Why a clinical date ``day`` is too late to be true (None when it is not)."""
        if self.latest is not None and day > self.latest:
            return f"dated {day}, after the request ({self.received}; {self._allowance()})"
        return None

    def earliest(self, born: date | None) -> date | None:
        """The first day a clinical date may fall on: the usable birth date, else
        ``MAX_AGE_YEARS`` before the request (None when neither is known)."""
        if born is not None:
            return born
        return None if self.received is None else _years_before(self.received, MAX_AGE_YEARS)

    @staticmethod
    def before(day: date, born: date | None) -> str:
        """Why a clinical date before ``earliest(born)`` cannot be true."""
        if born is not None:
            return f"dated {day}, before the patient's birth date ({born})"
        return f"dated {day}, more than {MAX_AGE_YEARS} years before the request"

    def birth(self, born: date, record_day: date | None) -> str | None:
        """Why ``born`` cannot be the birth date of a record whose latest usable date is
        ``record_day``: after the request, after every usable fact, or an age above
        ``MAX_AGE_YEARS`` on that day."""
        if self.latest is not None and born > self.latest:
            return f"birth date {born} is after the request ({self.received}; {self._allowance()})"
        if record_day is None:
            return None
        if born > record_day:
            return f"birth date {born} is after the record's latest usable date ({record_day})"
        return _too_old(born, record_day)

    def _allowance(self) -> str:
        return f"dates up to {self.latest} are accepted for clock differences"


def _too_old(born: date, on: date) -> str | None:
    age = years_between(born, on)
    if age <= MAX_AGE_YEARS:
        return None
    return (
        f"birth date {born} implies an age of {age} on the record's latest usable date ({on}; "
        f"plausible maximum {MAX_AGE_YEARS} years)"
    )


def _years_before(day: date, years: int) -> date:
    if day.year <= years:
        return date.min
    try:
        return day.replace(year=day.year - years)
    except ValueError:  # 29 February in a year that has none
        return day.replace(year=day.year - years, day=28)
