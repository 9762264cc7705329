"""The committed CodeSystems and StructureDefinitions: valid R4, and in step with the code."""

from __future__ import annotations

from importlib import resources

import pytest

from fhir_mapping.definitions import (
    CANOE_BASE,
    CODE_SYSTEMS,
    CS_ACTION,
    EXTENSIONS,
    definition_files,
    load_definition,
)
from service.core.model import Action
from tests.fhir_mapping.fhir_checks import assert_valid

COMMITTED = sorted(
    p.name
    for p in resources.files("fhir_mapping.definitions").iterdir()
    if p.name.endswith(".json")
)


def test_every_specified_definition_is_committed_and_nothing_else():
    assert sorted(definition_files()) == COMMITTED


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_definition_validates_and_matches_its_specification(name):
    committed = load_definition(name)
    assert_valid(committed)
    assert committed == definition_files()[name], "re-render with definitions._write_all()"
    assert committed["url"].startswith(f"{CANOE_BASE}/")


def test_action_code_system_covers_the_core_actions():
    cs = load_definition("CodeSystem-contestation-action.json")
    assert cs["url"] == CS_ACTION
    assert {c["code"] for c in cs["concept"]} == set(Action.__args__)


def test_structure_definition_slices_name_every_part():
    for spec in EXTENSIONS.values():
        sd = load_definition(f"StructureDefinition-{spec.id}.json")
        slices = {e["sliceName"] for e in sd["differential"]["element"] if "sliceName" in e}
        assert slices == {p.url for p in spec.parts}


def test_load_definition_returns_a_fresh_copy():
    a = load_definition("CodeSystem-contestation-input.json")
    a["concept"].clear()
    assert load_definition("CodeSystem-contestation-input.json")["concept"]
    assert CODE_SYSTEMS["contestation-input"].concepts
