"""The quick path of ingest (complex elements validated once per distinct content within a
bundle) yields exactly what validating every resource whole yields, and falls back to whole
validation, with its exact issues, whenever anything is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fhir_mapping import r4
from fhir_mapping.ingest import _Shared, _validate_resource, build_profile, parse_bundle
from tests.conftest import FHIR_FIXTURES, REALISTIC_BUNDLES

BUNDLES = [*REALISTIC_BUNDLES, FHIR_FIXTURES / "bad_huge_many_conditions_2mb.json"]


@pytest.mark.parametrize("path", BUNDLES, ids=lambda p: p.stem)
def test_every_resource_equals_its_whole_validation(path: Path) -> None:
    raw = path.read_bytes()
    parsed = parse_bundle(raw, max_resources=100_000)
    doc = json.loads(raw)
    for e in parsed.entries:
        # A resource's own extensions are checked shallowly and not modelled (nothing reads them).
        resource = {k: v for k, v in doc["entry"][e.index]["resource"].items() if k != "extension"}
        whole = r4.get_model(resource["resourceType"]).model_validate(resource)
        assert type(e.resource) is type(whole)
        assert e.resource.model_dump() == whole.model_dump()
    assert build_profile(parsed) == build_profile(parse_bundle(doc, max_resources=100_000))


def test_repeated_elements_are_validated_once_and_shared() -> None:
    path = FHIR_FIXTURES / "bad_huge_many_conditions_2mb.json"
    parsed = parse_bundle(path.read_bytes(), max_resources=100_000)
    conditions = [e for e in parsed.entries if e.resource_type == "Condition"]
    assert len(conditions) > 1000
    statuses = {id(c.resource.clinicalStatus) for c in conditions}  # type: ignore[attr-defined]
    assert len(statuses) < 5


def test_a_refused_element_falls_back_to_whole_validation_with_its_issues() -> None:
    shared = _Shared()
    good = {"resourceType": "Condition", "id": "c", "subject": {"reference": "Patient/p"}}
    bad = {**good, "code": {"coding": [{"system": 7}]}, "note": [{"text": []}]}
    _validate_resource(r4.Condition, good, shared)
    with pytest.raises(Exception) as quick:
        _validate_resource(r4.Condition, bad, shared)
    with pytest.raises(Exception) as whole:
        r4.Condition.model_validate(bad)
    assert str(quick.value) == str(whole.value)
    assert "code.coding.0.system" in str(quick.value) and "note.0.text" in str(quick.value)


def test_resources_differing_only_by_id_are_validated_once_each_id_on_its_own() -> None:
    from service.errors import BundleError
    from tests.support.large_records import repeated_orders, to_bytes

    bundle = repeated_orders(30)
    parsed = parse_bundle(to_bytes(bundle), max_resources=1000)
    orders = [e for e in parsed.entries if e.resource_type == "MedicationRequest"]
    assert len({e.resource.id for e in orders}) == 30  # each keeps its own id
    # One list of reasons per distinct order (validated whole, each list is the resource's own).
    assert len({id(e.resource.reasonReference) for e in orders}) == 3  # type: ignore[attr-defined]
    # The same content under an id FHIR refuses: the issue names that entry's id.
    k = next(i for i, e in enumerate(bundle["entry"]) if e["resource"]["id"].endswith("0029"))
    bundle["entry"][k]["resource"]["id"] = "not an id!"
    with pytest.raises(BundleError) as err:
        parse_bundle(to_bytes(bundle), max_resources=1000)
    assert [x for i in err.value.issues for x in i.expression] == [f"Bundle.entry[{k}].resource.id"]
