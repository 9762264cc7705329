"""Panels as the papers say (issue 41, item 5): CAMP's k = 3 by default, the size band for the
assessed complexity and the required roles enforced on both backends (embedded: checked before a
panel is returned; Triton: the answer schema narrowed to them and the decoder refusing a panel
that breaks them). The real Triton path is tests/integration/test_triton_panel.py."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from fhir_mapping.ingest import ingest
from inference import _triton_steps as steps
from inference.embedded import EmbeddedExperts, required_roles
from inference.evidence import EvidenceBase
from inference.panel_sizes import DEFAULT_PANEL_SIZES, band, panel_faults
from inference.protocol import AssemblePanel, Assess, Assessment, CallContext, PanelMember
from tests.conftest import REALISTIC_BUNDLES
from tests.support.triton_models import encode_answer


def test_default_k_is_camps_three_for_low_and_moderate_complexity() -> None:
    assert band(DEFAULT_PANEL_SIZES, "low") == (3, 3)
    assert band(DEFAULT_PANEL_SIZES, "moderate") == (3, 3)
    assert band(DEFAULT_PANEL_SIZES, "high") == (4, 5)
    assert band(DEFAULT_PANEL_SIZES, "very high") == (6, 7)


def test_required_roles_widen_the_band_never_cut() -> None:
    required = ("gp", "pharmacist", "cardiologist", "geriatrician")
    assert band(DEFAULT_PANEL_SIZES, "low", required) == (4, 4)
    assert band(DEFAULT_PANEL_SIZES, "high", required) == (4, 5)


def test_panel_faults_name_each_rule_broken() -> None:
    ok = ["gp", "pharmacist", "nurse"]
    assert panel_faults(ok, "low", DEFAULT_PANEL_SIZES, ("gp", "pharmacist")) == []
    assert panel_faults(ok[:2], "low", DEFAULT_PANEL_SIZES) == [
        "a low-complexity panel has 3 members, not 2"
    ]
    assert panel_faults(
        ["nurse", "pharmacist", "dietitian"], "low", DEFAULT_PANEL_SIZES, ("gp",)
    ) == ["required roles missing: gp"]
    assert panel_faults(["gp", "gp", "nurse"], "low", DEFAULT_PANEL_SIZES) == [
        "roles named twice: gp"
    ]
    assert len(panel_faults(ok, "high", DEFAULT_PANEL_SIZES)) == 1  # 3 is below high's 4


async def _assessed(bundle: Any) -> tuple[Any, Assessment, EmbeddedExperts]:
    profile = ingest(bundle.read_bytes())
    ex = EmbeddedExperts()
    a = await ex.run(Assess(profile, EvidenceBase.load().retrieve(profile)), CallContext())
    return profile, a, ex


@pytest.mark.parametrize("bundle", REALISTIC_BUNDLES, ids=lambda p: p.name.split("_")[0])
async def test_embedded_panel_lies_in_its_band_with_every_required_role(bundle: Any) -> None:
    profile, a, ex = await _assessed(bundle)
    roles = [m.role for m in await ex.run(AssemblePanel(profile, a), CallContext())]
    required = required_roles(profile)
    lo, hi = band(DEFAULT_PANEL_SIZES, a.complexity, required)
    assert lo <= len(roles) <= hi
    assert len(roles) >= 3  # CAMP's k = 3 is the floor of every default band
    assert roles[: len(required)] == list(required)
    assert roles[0] == "gp"


async def test_embedded_refuses_a_configuration_its_rules_cannot_fill() -> None:
    """A band no pool can fill ends in StepFailed naming the rule, not a smaller panel."""
    profile, a, _ = await _assessed(REALISTIC_BUNDLES[0])
    huge = {c: (40, 40) for c in ("low", "moderate", "high", "very high")}
    with pytest.raises(Exception, match="members, not"):
        await EmbeddedExperts(panel_sizes=huge).run(AssemblePanel(profile, a), CallContext())


async def test_triton_panel_schema_holds_the_band_and_required_roles_first() -> None:
    profile, a, ex = await _assessed(REALISTIC_BUNDLES[0])
    req = steps.request_for(AssemblePanel(profile, a))
    members = req.schema["properties"]["members"]
    required = required_roles(profile)
    assert (members["minItems"], members["maxItems"]) == band(
        DEFAULT_PANEL_SIZES, a.complexity, required
    )
    assert [p["properties"]["role"] for p in members["prefixItems"]] == [
        {"const": r} for r in required
    ]
    jsonschema.Draft202012Validator.check_schema(req.schema)
    panel = await ex.run(AssemblePanel(profile, a), CallContext())
    good = json.dumps(encode_answer("panel", panel, req.aliases))
    assert req.check(good) == panel


def _answer(members: list[PanelMember]) -> str:
    return json.dumps(encode_answer("panel", tuple(members)))


async def test_triton_panel_answer_breaking_the_rules_is_refused() -> None:
    profile, a, ex = await _assessed(REALISTIC_BUNDLES[0])
    req = steps.request_for(AssemblePanel(profile, a))
    panel = list(await ex.run(AssemblePanel(profile, a), CallContext()))
    extra = [PanelMember(f"extra_role_{k}", "focus", ()) for k in range(8)]
    for bad in (panel[1:], panel + extra, [panel[1], panel[0], *panel[2:]]):
        with pytest.raises(steps.AnswerError):
            req.check(_answer(bad))
    # The decoder's own check, for a server that does not guide by the schema.
    unguided = steps.StepRequest(
        "panel", req.record, req.inputs, {"type": "object"}, req.decode, aliases=req.aliases
    )
    with pytest.raises(steps.AnswerError, match="required roles missing: gp"):
        unguided.check(_answer(panel[1:] + extra[:1]))
