"""Shared checks for produced FHIR: R4B model validation, the official R4 JSON schema, and
reference resolution inside a Bundle. The 3 MB schema is loaded once per test session."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from jsonschema import Draft6Validator

from fhir_mapping.r4 import get_model
from tests.conftest import FHIR_SCHEMA

__all__ = [
    "all_references",
    "assert_references_resolve",
    "assert_valid",
    "schema_errors",
]


@cache
def _validator() -> Draft6Validator:
    return Draft6Validator(json.loads(FHIR_SCHEMA.read_text(encoding="utf-8")))


def schema_errors(resource: Mapping[str, Any]) -> list[str]:
    return [
        f"{list(e.absolute_path)}: {e.message[:300]}" for e in _validator().iter_errors(resource)
    ]


def assert_valid(resource: Mapping[str, Any]) -> None:
    """R4B model + official R4 JSON schema, for the resource and each Bundle entry."""
    get_model(resource["resourceType"]).model_validate(dict(resource))
    assert schema_errors(resource) == []
    for e in resource.get("entry", ()):
        get_model(e["resource"]["resourceType"]).model_validate(e["resource"])


def all_references(node: object, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, reference) for every Reference.reference under ``node``."""
    if isinstance(node, Mapping):
        ref = node.get("reference")
        if isinstance(ref, str):
            yield path, ref
        for k, v in node.items():
            yield from all_references(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from all_references(v, f"{path}[{i}]")


def assert_references_resolve(bundle: Mapping[str, Any], inputs: Mapping[str, object]) -> None:
    """Every reference names a Bundle entry (``Type/id``, or ``Type/id/_history/v`` with a
    matching ``meta.versionId``) or one of the input's resources (``inputs`` keys)."""
    present: dict[str, str | None] = {}
    for e in bundle["entry"]:
        r = e["resource"]
        present[f"{r['resourceType']}/{r['id']}"] = (r.get("meta") or {}).get("versionId")
    for where, ref in all_references(bundle):
        base, _, version = ref.partition("/_history/")
        if base in present:
            assert not version or present[base] == version, f"{where}: {ref} version mismatch"
        else:
            assert base in inputs, f"{where}: {ref} resolves to nothing"
