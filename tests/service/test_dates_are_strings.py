"""A FHIR date, dateTime, instant or time is a JSON string: a number (which the models would
read as seconds since 1970, "since 1970-01-01") is refused over gRPC with INVALID_ARGUMENT and
an OperationOutcome naming the element, before anything is planned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.service.conftest import bundle_bytes, outcome_of, pb, serving


def _with(name: str, rtype: str, key: str, value: Any) -> tuple[bytes, str]:
    bundle = json.loads(bundle_bytes(name))
    for i, entry in enumerate(bundle["entry"]):
        if entry["resource"]["resourceType"] == rtype:
            entry["resource"][key] = value
            return json.dumps(bundle).encode(), f"Bundle.entry[{i}].resource.{key}"
    raise AssertionError(f"no {rtype} in {name}")


@pytest.mark.parametrize(
    ("rtype", "key", "value", "suffix"),
    [
        ("Condition", "onsetDateTime", 12345, ""),
        ("Condition", "onsetPeriod", {"start": 12345}, ".start"),
        ("Patient", "birthDate", 1950, ""),
        ("Condition", "note", [{"text": "x", "time": 1.5}], "[0].time"),
    ],
)
async def test_a_number_where_a_date_belongs_is_invalid_argument_naming_it(
    tmp_path: Path, rtype: str, key: str, value: Any, suffix: str
) -> None:
    raw, where = _with("adalberto", rtype, key, value)
    async with serving(tmp_path) as h:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.GeneratePlan(pb.GeneratePlanRequest(bundle_json=raw))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    issues = outcome_of(err.value)["issue"]
    assert [i["expression"] for i in issues] == [[where + suffix]]
    assert "must be a JSON string" in issues[0]["diagnostics"]
