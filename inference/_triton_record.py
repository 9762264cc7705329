"""The patient record as every Triton prompt shows it: the ``<canoe-record>`` block's JSON.

The profile's own JSON (``_triton_codec.encode``) repeats a lot that a tokenizer pays for in
every plan: measured quantities with 15 digits (Synthea's; a tokenizer that splits digits, as
Gemma's does, pays one token each), the code-system URL with every code, a code's display
repeating its fact's text, every numeric observation twice (in ``observations`` and in
``readings``) and every reference twice (with its fact and in ``source_refs``). This view keeps
the facts and drops the repetition:

- a measured value (``Observation.value``) has 4 significant digits (more where 4 would round it
  onto a threshold or a halfway point, see ``quantity``), an integral one none; doses and
  frequencies keep their own precision (they are exact ratios, not measurements);
- code systems are named (``SNOMED``, ``ICD-10-CM``, ``RxNorm``, ``LOINC``, ``CVX``); a code
  without ``display`` is named by its fact's text (``"display": ""`` when it has none);
- ``readings`` lists every numeric reading, oldest first; ``"latest": true`` marks one that is
  also the current value of its code, which ``observations`` then leaves out (it keeps the other
  current findings);
- ``other_refs`` replaces ``source_refs``: only the references the record names nowhere else.

Apart from the rounding the view is lossless (the order of ``source_refs`` aside, which nothing
reads as ordered): the test models rebuild the profile from it
(``tests/support/triton_models.py``). This module knows the profile's types only.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from inference._triton_codec import encode
from service.core.profile import CVX, ICD10, LOINC, RXNORM, SNOMED, PatientProfile

__all__ = ["CODED", "SIGNIFICANT_DIGITS", "SYSTEM_NAMES", "quantity", "record", "record_refs"]

SIGNIFICANT_DIGITS = 4
# Code-system URL -> the name the record uses (any other system is written as it is).
SYSTEM_NAMES: Mapping[str, str] = MappingProxyType(
    {SNOMED: "SNOMED", ICD10: "ICD-10-CM", RXNORM: "RxNorm", LOINC: "LOINC", CVX: "CVX"}
)
# Fact group -> (its coded fields, the field whose text names an undisplayed code).
CODED: Mapping[str, tuple[tuple[str, ...], str]] = MappingProxyType(
    {
        "problems": (("codes",), "text"),
        "medications": (("codes",), "text"),
        "allergies": (("codes",), "substance"),
        "immunizations": (("codes",), "text"),
        "encounters": (("types",), "kind"),
        "observations": (("value_codes",), "value_text"),
    }
)


def quantity(value: float) -> float | int:
    """A measured value at ``SIGNIFICANT_DIGITS`` significant digits, an integral one as an int;
    with more digits where the rounded value would land on a rounder number than it is (one
    ending in 0 or 5 at that precision: a possible threshold or a display's halfway point), so
    that the rendered value compares with any threshold of fewer digits, and rounds for display
    to fewer digits, exactly as the measured value does.

    >>> quantity(76.615915282844), quantity(0.12307110211019534), quantity(120.0)
    (76.62, 0.1231, 120)
    >>> quantity(29.99996), quantity(114.50041), quantity(7.4996)  # not 30, 114.5 or 7.5
    (29.99996, 114.5004, 7.4996)
    """
    if not math.isfinite(value):
        return value
    digits = SIGNIFICANT_DIGITS
    while True:
        text = f"{value:.{digits}g}"
        rounded = float(text)
        mantissa = text.split("e")[0].replace("-", "").replace(".", "").lstrip("0")
        if rounded == value or (len(mantissa) == digits and mantissa[-1] != "5"):
            break
        digits += 1
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


def record(profile: PatientProfile) -> dict[str, Any]:
    """The JSON of the ``<canoe-record>`` block (see the module docstring)."""
    data: dict[str, Any] = encode(profile)
    for group, (fields, owner) in CODED.items():
        for fact in data.get(group, ()):
            for f in fields:
                if f in fact:
                    fact[f] = [_code(c, fact.get(owner, "")) for c in fact[f]]
    for enc in data.get("encounters", ()):
        if "reasons" in enc:
            enc["reasons"] = [_code(c, enc.get("reason_text", "")) for c in enc["reasons"]]
    # A current value that is also a reading is shown once, as the reading marked latest (the
    # last equal one, should Synthea repeat a result).
    current = set(profile.observations)
    latest = {obs: i for i, obs in enumerate(profile.readings) if obs in current}
    readings = data.pop("readings", [])
    for i in latest.values():
        readings[i]["latest"] = True
    if readings:
        data["readings"] = [_measured(r) for r in readings]
    observations = [
        _measured(raw)
        for obs, raw in zip(profile.observations, data.pop("observations", []), strict=True)
        if obs not in latest
    ]
    if observations:
        data["observations"] = observations
    named = set(record_refs(data))
    data.pop("source_refs", None)
    other = [r for r in profile.source_refs if r not in named]
    if other:
        data["other_refs"] = other
    return data


def record_refs(data: Mapping[str, Any]) -> Iterator[str]:
    """Every reference a record names (the patient's, each fact's, folded duplicates, encounter
    reasons, unused facts, ``other_refs``), in the order they appear."""
    yield data["ref"]
    for group in (
        "problems",
        "medications",
        "observations",
        "readings",
        "allergies",
        "encounters",
        "social",
        "unused",
        "immunizations",
    ):
        for fact in data.get(group, ()):
            yield fact["ref"]
            yield from fact.get("duplicates", ())
            yield from fact.get("reason_refs", ())
    yield from data.get("other_refs", ())


def _code(raw: dict[str, Any], owner_text: str) -> dict[str, Any]:
    out = dict(raw)
    out["system"] = SYSTEM_NAMES.get(out.get("system", ""), out.get("system", ""))
    if not out["system"]:
        del out["system"]
    display = out.get("display", "")
    if display == owner_text:
        out.pop("display", None)
    else:
        out["display"] = display
    return out


def _measured(raw: dict[str, Any]) -> dict[str, Any]:
    if isinstance(raw.get("value"), float):
        raw["value"] = quantity(raw["value"])
    return raw
