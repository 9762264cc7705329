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
- ``other_refs`` replaces ``source_refs``: only the references the record names nowhere else;
- every reference is a short alias (``Aliases``): ``C03`` for the third ``Condition/<uuid>`` in
  sorted order. A UUID costs a tokenizer 20 to 30 tokens, and a record names 60 or more of them.
  The aliases are a function of the profile alone, so every call of a plan shows the same record
  (the shared prompt prefix) and the same alias means the same fact in every step's inputs,
  schemas and answers; the step decoders map them back (``inference/_triton_steps.py``).

Apart from the rounding (and the aliases) the view is lossless (the order of ``source_refs``
aside, which nothing reads as ordered, and ``sources``, where each resource lives at the EHR,
which the FHIR output reads from the profile and a model never needs): the test models rebuild
the profile from it (``tests/support/triton_models.py``). This module knows the profile's types
only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from inference._triton_codec import encode
from service.record.profile import PatientProfile
from service.record.vocabulary import CVX, ICD10, LOINC, RXNORM, SNOMED

__all__ = [
    "CODED",
    "SIGNIFICANT_DIGITS",
    "SYSTEM_NAMES",
    "Aliases",
    "quantity",
    "record",
    "record_refs",
]

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


class Aliases:
    """Short, deterministic names for the references of one plan, and their inverse.

    A reference ``Type/id`` becomes the shortest prefix of ``Type`` that is a prefix of no other
    type in the plan (the whole name when there is none), then its 1-based rank among the
    references of that type in sorted order, zero-padded to one width per type:
    ``Condition/08fb...`` -> ``C01``, ``MedicationRequest/...`` -> ``M3``. Sorting aliases
    sorts them as their references sort, so whatever orders facts by reference orders them the
    same way by alias. A reference without a ``/`` keeps its name.

    Ids that end in a reference's id (``prob-<uuid>``, as a model or the embedded backend names a
    problem after its condition) are shortened the same way (``prob-c01``) by ``shorten`` and
    spelled out again by ``long_id``.

    >>> a = Aliases(["Condition/b-2", "Condition/a-1234567", "Patient/p", "Procedure/x", "urn:x"])
    >>> [a.short[r] for r in ("Condition/a-1234567", "Condition/b-2", "Patient/p", "Procedure/x")]
    ['C1', 'C2', 'Pa1', 'Pr1']
    >>> a.long["Pr1"], a.shorten({"refs": ["Condition/b-2", "urn:x"], "id": "prob-a-1234567"})
    ('Procedure/x', {'refs': ['C2', 'urn:x'], 'id': 'prob-c1'})
    >>> a.long_id("prob-c1"), a.long_id("prob-c9"), a.long_id("c1"), a.shorten("prob-b-2")
    ('prob-a-1234567', 'prob-c9', 'a-1234567', 'prob-b-2')
    """

    def __init__(self, refs: Iterable[str]) -> None:
        by_type: dict[str, list[str]] = {}
        for ref in sorted(set(refs)):
            if "/" in ref:
                by_type.setdefault(ref.rsplit("/", 1)[0], []).append(ref)
        self.short: dict[str, str] = {}
        for kind, members in by_type.items():
            prefix = _unique_prefix(kind, by_type)
            width = len(str(len(members)))
            for n, ref in enumerate(members, 1):
                self.short[ref] = f"{prefix}{n:0{width}d}"
        self.long: dict[str, str] = {a: r for r, a in self.short.items()}
        # the id part of a reference (lower case, as ids are slugs) <-> its alias in lower case;
        # only parts that name one reference and are long enough never to be a word of an id
        parts: dict[str, list[str]] = {}
        for ref in self.short:
            parts.setdefault(ref.rsplit("/", 1)[1].lower(), []).append(ref)
        self._id_short = {
            p: self.short[rs[0]].lower() for p, rs in parts.items() if len(rs) == 1 and len(p) >= 8
        }
        self._id_long = {a: p for p, a in self._id_short.items()}

    @classmethod
    def of(cls, profile: PatientProfile) -> Aliases:
        """The aliases of every reference the profile's record names."""
        return cls([*record_refs(encode(profile)), *profile.source_refs])

    def shorten(self, value: Any) -> Any:
        """``value`` (plain JSON) with every reference, and every id ending in a reference's id,
        written short."""
        if isinstance(value, str):
            if value in self.short:
                return self.short[value]
            return _swap_tail(value, self._id_short)
        if isinstance(value, list):
            return [self.shorten(v) for v in value]
        if isinstance(value, dict):
            return {k: self.shorten(v) for k, v in value.items()}
        return value

    def long_id(self, value: str) -> str:
        """An id as an answer wrote it, with a short tail spelled out (the inverse of
        ``shorten`` on ids); any other id as it is."""
        return _swap_tail(value, self._id_long)


def _swap_tail(value: str, table: Mapping[str, str]) -> str:
    """``value`` with its tail (the whole of it, or what follows one of its hyphens) replaced by
    ``table``'s entry for it, the longest tail first; an id numbered after such a tail (an
    argument's ``arg-<role>-<option id>-<n>``) has the tail before its number replaced, so an
    argument's id and its option's id are written short alike; ``value`` itself when no tail
    is a key."""
    swapped = _swap_exact_tail(value, table)
    if swapped != value:
        return swapped
    head, sep, number = value.rpartition("-")
    if sep and head and number.isdigit():
        short = _swap_exact_tail(head, table)
        if short != head:
            return f"{short}-{number}"
    return value


def _swap_exact_tail(value: str, table: Mapping[str, str]) -> str:
    for i in (0, *(k + 1 for k, c in enumerate(value) if c == "-")):
        if value[i:] in table:
            return value[:i] + table[value[i:]]
    return value


def _unique_prefix(kind: str, kinds: Iterable[str]) -> str:
    others = [k for k in kinds if k != kind]
    for n in range(1, len(kind) + 1):
        if not any(o.startswith(kind[:n]) for o in others):
            return kind[:n]
    return kind


def record(profile: PatientProfile, aliases: Aliases | None = None) -> dict[str, Any]:
    """The JSON of the ``<canoe-record>`` block (see the module docstring); ``aliases``: the
    profile's own (``Aliases.of(profile)``), passed where the caller has them already."""
    shown: dict[str, Any] = (aliases or Aliases.of(profile)).shorten(_record(profile))
    return shown


def _record(profile: PatientProfile) -> dict[str, Any]:
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
    data.pop("sources", None)  # where each resource lives at the EHR: nothing for a model
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
