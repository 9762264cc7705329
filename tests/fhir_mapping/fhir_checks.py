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
    "resolve_by_bundle_rules",
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
    matching ``meta.versionId``) or one of the input's resources (``inputs`` keys), also when
    it names it by an absolute URL at the source. Where each lands by the Bundle rules is
    ``resolve_by_bundle_rules``'s job."""
    present: dict[str, str | None] = {}
    for e in bundle["entry"]:
        r = e["resource"]
        present[f"{r['resourceType']}/{r['id']}"] = (r.get("meta") or {}).get("versionId")
    for where, ref in all_references(bundle):
        base, _, version = ref.partition("/_history/")
        if base.startswith(("http://", "https://")):  # the record at the EHR: its Type/id
            base = "/".join(base.split("/")[-2:])
        if base in present:
            assert not version or present[base] == version, f"{where}: {ref} version mismatch"
        else:
            assert base in inputs, f"{where}: {ref} resolves to nothing"


# ------------------------------------------------------------------ the Bundle resolution rules

_OWN = frozenset({"CarePlan", "Provenance", "Binary", "Device", "DetectedIssue", "Task"})


def _server_base(full_url: str) -> str | None:
    """The RESTful base of an entry's fullUrl (``.../Type/id``), else None (a URN, or none)."""
    if not full_url.startswith(("http://", "https://")):
        return None
    parts = full_url.rstrip("/").split("/")
    return "/".join(parts[:-2]) if len(parts) >= 4 else None


def resolve_by_bundle_rules(
    bundle: Mapping[str, Any], *, service_base: str, source_mark: str
) -> list[tuple[str, str, str]]:
    """(where, reference, outcome) for every reference of every entry, resolved as R4's Bundle
    rules say (bundle.html#references): an absolute reference (URL or URN) matches an entry's
    fullUrl; a relative ``Type/id`` is read against the RESTful base of the referring entry's
    fullUrl; a version-specific one (``/_history/v``) must also match the entry's
    ``meta.versionId``. Outcomes:

    - ``bundle``: it names an entry of this Bundle (and its version where it states one);
    - ``source``: an absolute URL outside the service's base, or a reference carrying
      ``source_mark`` (the source system's record, whose base the service was not told);
    - ``service``: a resource of a type the service writes, not in this Bundle (an earlier plan
      version), at the service's base;
    - ``version-mismatch``, ``nowhere`` (an unmatched URN) or ``wrong-server`` (the patient's
      record read against the service's base): failures.
    """
    by_url: dict[str, str | None] = {}
    for e in bundle.get("entry", ()):
        r = e["resource"]
        by_url[e["fullUrl"]] = (r.get("meta") or {}).get("versionId")
    out: list[tuple[str, str, str]] = []
    for i, e in enumerate(bundle.get("entry", ())):
        base = _server_base(e.get("fullUrl", ""))
        for where, node in _reference_nodes(e["resource"], f"Bundle.entry[{i}].resource"):
            ref = node["reference"]
            out.append((where, ref, _outcome(node, ref, base, by_url, service_base, source_mark)))
    return out


def _reference_nodes(node: object, path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if isinstance(node, Mapping):
        if isinstance(node.get("reference"), str):
            yield path, node
        for k, v in node.items():
            yield from _reference_nodes(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _reference_nodes(v, f"{path}[{i}]")


def _outcome(
    node: Mapping[str, Any],
    ref: str,
    base: str | None,
    by_url: Mapping[str, str | None],
    service_base: str,
    source_mark: str,
) -> str:
    target, _, version = ref.partition("/_history/")
    marked = any(x.get("url") == source_mark for x in node.get("extension", ()))
    if target.startswith(("http://", "https://", "urn:")):
        absolute = target
    elif base is not None:
        absolute = f"{base}/{target}"
    else:
        absolute = target  # a relative reference in an entry with a URN fullUrl
    if absolute in by_url:
        return "bundle" if not version or by_url[absolute] == version else "version-mismatch"
    if marked:
        return "source"
    if target.startswith("urn:"):
        return "nowhere"
    if absolute.startswith(("http://", "https://")) and not absolute.startswith(service_base + "/"):
        return "source"
    return "service" if target.split("/")[-2 if "://" in target else 0] in _OWN else "wrong-server"
