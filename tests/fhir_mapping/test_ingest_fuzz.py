"""Ingest fuzzing (hypothesis, bounded): whatever arrives, ``ingest`` returns a profile or raises
one of the project's input errors (BundleError / LimitError, both mapped to clean refusals),
never anything else: no RecursionError, KeyError, TypeError or pydantic error escaping as an
INTERNAL / HTTP 500.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fhir_mapping.ingest import ingest
from service.errors import InputError, LimitError
from service.record.profile import PatientProfile
from tests.conftest import FHIR_FIXTURES, load_json

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

_KEYS = st.sampled_from(
    [
        "resourceType",
        "id",
        "type",
        "entry",
        "resource",
        "fullUrl",
        "subject",
        "reference",
        "code",
        "coding",
        "system",
        "valueQuantity",
        "value",
        "unit",
        "effectiveDateTime",
        "birthDate",
        "status",
        "clinicalStatus",
        "medicationCodeableConcept",
        "extension",
        "url",
    ]
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["Bundle", "Patient", "Observation", "Condition", "collection", "urn:uuid:x"])
)
JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_KEYS | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)
BASE = load_json(FHIR_FIXTURES / "adalberto_hartmann_ba18818d.json")


def _check(raw: bytes | str | dict[str, Any]) -> None:
    try:
        out = ingest(raw, max_resources=5000)
    except (InputError, LimitError) as err:
        assert err.issues and all(i.diagnostics for i in err.issues)
        return
    assert isinstance(out, PatientProfile)


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    _check(data)


@FUZZ
@given(JSON)
def test_random_json_documents(doc: Any) -> None:
    _check(json.dumps(doc).encode())


@FUZZ
@given(
    entry=st.integers(min_value=0, max_value=len(BASE["entry"]) - 1),
    key=_KEYS,
    value=JSON,
    drop=st.booleans(),
)
def test_a_real_bundle_with_one_field_broken(entry: int, key: str, value: Any, drop: bool) -> None:
    """The typical attack and the typical EHR bug: one field of one resource replaced by
    something arbitrary (or removed)."""
    doc = copy.deepcopy(BASE)
    res = doc["entry"][entry]["resource"]
    if drop:
        res.pop(key, None)
    else:
        res[key] = value
    _check(json.dumps(doc).encode())


@FUZZ
@given(depth=st.integers(min_value=1, max_value=3000), shape=st.sampled_from(["[", '{"a":']))
def test_any_nesting_depth(depth: int, shape: str) -> None:
    close = "]" if shape == "[" else "}"
    inner = "1" if shape != "[" else ""
    text = json.dumps(BASE)[:-1] + ', "x": ' + shape * depth + inner + close * depth + "}"
    _check(text.encode())
