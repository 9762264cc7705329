"""Synthetic large records built from a committed fixture, for the scaling benchmark and tests.

``repeated_orders(n)`` is a realistic patient (conditions, labs, encounters) whose active
medicine orders are three interacting medicines repeated until there are ``n`` orders, each with
its own id: the shape that made planning grow faster than the record. ``many_extensions(n)`` is
the same patient with ``n`` extensions on the Patient resource.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.conftest import fixture_bundle

__all__ = ["many_extensions", "repeated_orders", "to_bytes"]

# Three medicines of the base patient that the knowledge argues about together (an NSAID, an
# antiplatelet and a thiazide): repeated, they multiply findings, not just resources.
_REPEATED = ("Naproxen", "Clopidogrel", "Hydrochlorothiazide")


def _base() -> dict[str, Any]:
    bundle: dict[str, Any] = json.loads(fixture_bundle("gayla_ferry").read_text(encoding="utf-8"))
    return bundle


def repeated_orders(n: int) -> dict[str, Any]:
    """The base patient with exactly ``n`` active medicine orders, the three medicines in turn."""
    bundle = _base()
    entries = bundle["entry"]
    orders = [
        e
        for e in entries
        if e["resource"]["resourceType"] == "MedicationRequest"
        and e["resource"]["medicationCodeableConcept"]["text"].startswith(_REPEATED)
    ]
    others = [e for e in entries if e["resource"]["resourceType"] != "MedicationRequest"]
    copies = []
    for i in range(n):
        entry = copy.deepcopy(orders[i % len(orders)])
        rid = f"00000000-0000-4000-8000-{i:012d}"
        entry["fullUrl"] = f"urn:uuid:{rid}"
        entry["resource"]["id"] = rid
        copies.append(entry)
    bundle["entry"] = others + copies
    return bundle


def many_extensions(n: int) -> dict[str, Any]:
    """The base patient with ``n`` simple extensions added to its Patient resource."""
    bundle = _base()
    patient = next(
        e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Patient"
    )
    patient["extension"] = [
        *patient.get("extension", []),
        *(
            {"url": f"http://example.org/fhir/StructureDefinition/note-{i}", "valueString": f"n{i}"}
            for i in range(n)
        ),
    ]
    return bundle


def to_bytes(bundle: dict[str, Any]) -> bytes:
    return json.dumps(bundle, separators=(",", ":")).encode()
