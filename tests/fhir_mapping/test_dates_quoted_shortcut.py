"""The shortcut that skips the walk for unquoted dates (``ingest._dates_quoted``) never skips a
resource the walk would refuse: on every resource of the realistic fixtures, with each of its
date-typed elements (nested ones included) replaced by a number, true, an object or an array."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from fhir_mapping import r4
from fhir_mapping.ingest import _dates_quoted, _unquoted_dates
from tests.conftest import REALISTIC_BUNDLES

_NOT_STRINGS: tuple[Any, ...] = (12345, -1.5, True, {"start": "2020"}, [1])


def _resources() -> list[dict[str, Any]]:
    return [e["resource"] for p in REALISTIC_BUNDLES for e in json.loads(p.read_bytes())["entry"]]


def _canonical(resource: dict[str, Any]) -> bytes:
    rest = {k: v for k, v in resource.items() if k != "id"}
    return orjson.dumps(rest, option=orjson.OPT_SORT_KEYS)


def _date_strings(value: object, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of every string that reads as a date (a year first) anywhere in ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _date_strings(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _date_strings(v, (*path, i))
    elif isinstance(value, str) and len(value) >= 4 and value[:4].isdigit() and path:
        yield path


def _replaced(resource: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(resource))
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


RESOURCES = _resources()


def test_the_fixtures_take_the_shortcut() -> None:
    quick = [r for r in RESOURCES if _dates_quoted(r4.get_model(r["resourceType"]), _canonical(r))]
    assert len(quick) > len(RESOURCES) * 0.9


@pytest.mark.parametrize("value", _NOT_STRINGS, ids=repr)
def test_no_unquoted_date_is_skipped(value: Any) -> None:
    checked = 0
    for resource in RESOURCES:
        model = r4.get_model(resource["resourceType"])
        for path in _date_strings(resource):
            if path == ("id",):
                continue
            bad = _replaced(resource, path, value)
            if list(_unquoted_dates(model, bad, "x")):
                checked += 1
                assert not _dates_quoted(model, _canonical(bad)), path
    assert checked > 1000
