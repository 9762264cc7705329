"""The development Triton server's runtime part serves only a real model; the test suite's
scripted models and fault modes come in through its registration hook
(``tests/support/triton_models.py``). The real server is exercised in tests/integration."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

import tests.support.llm_server as llm_server
from fhir_mapping.ingest import ingest
from inference import _triton_steps as steps
from inference.embedded import EmbeddedExperts
from inference.protocol import AssemblePanel, Assess, CallContext, Consult
from inference.triton import TritonExperts, TritonSettings
from tests.conftest import REPO_ROOT, fixture_bundle
from tests.support import triton_models
from tests.support.llm_server import GenerationRequest
from tests.support.triton_models import DEFAULT_MODELS


def test_the_runtime_registers_only_the_llm() -> None:
    code = "import tests.support.llm_server as m; print(sorted(m.BEHAVIOURS))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["['llm']"]


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What ``serve`` would be called with; the registry restored afterwards."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr(llm_server, "serve", lambda **kw: seen.update(kw))
    monkeypatch.setattr(llm_server, "BEHAVIOURS", dict(llm_server.BEHAVIOURS))
    return seen


def test_unknown_behaviours_are_refused_naming_the_known_ones(
    served: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        llm_server.main(["--models", json.dumps({"m": "expert"})])
    assert exit_.value.code == 2
    assert "unknown behaviours ['expert'] (known: ['llm'])" in capsys.readouterr().err
    assert served == {}


def test_the_runtime_serves_gemma_by_default(served: dict[str, Any]) -> None:
    llm_server.main([])
    assert served["models"] == {llm_server.LLM_MODEL: "llm"}


def test_the_test_models_register_through_the_hook(served: dict[str, Any]) -> None:
    triton_models.main(["--latency", "0.25", "--grpc-port", "9001", "--llm"])
    assert served["grpc_port"] == 9001
    assert served["models"] == {**DEFAULT_MODELS, llm_server.LLM_MODEL: "llm"}
    assert set(DEFAULT_MODELS.values()) <= set(llm_server.BEHAVIOURS)
    sleepy = llm_server.BEHAVIOURS["sleepy"]()
    assert isinstance(sleepy, triton_models.Sleepy) and sleepy.latency_s == 0.25
    assert llm_server.BEHAVIOURS["expert_plain"]().contract == "plain"


async def test_the_expert_answers_a_real_prompt_within_its_token_budget() -> None:
    profile = ingest(fixture_bundle("thanh").read_bytes())
    ctx = CallContext()
    ex = EmbeddedExperts()
    assessment = await ex.run(Assess(profile, ()), ctx)
    member = (await ex.run(AssemblePanel(profile, assessment), ctx))[0]
    req = steps.request_for(Consult(profile, member, assessment.problems, assessment.options, ()))
    prompt = TritonExperts(TritonSettings()).render(req)

    full = await triton_models.Expert().generate(GenerationRequest(prompt, 10_000, {}, None))
    answer = req.check(full.text)  # the answer passes the schema and the decoder
    assert [v.problem_id for v in answer.votes] == [p.id for p in assessment.problems]
    assert full.input_tokens == triton_models.count_tokens(prompt) > 100

    cut = await triton_models.Expert().generate(GenerationRequest(prompt, 5, {}, None))
    assert triton_models.count_tokens(cut.text) == 5 and full.text.startswith(cut.text)

    half = await triton_models.TruncateOnce().generate(GenerationRequest(prompt, 10_000, {}, None))
    assert len(half.text) < len(full.text)
    with pytest.raises(json.JSONDecodeError):
        json.loads(half.text)


def _bounds(schema: Any, key: str) -> list[int]:
    """Every value of ``key`` anywhere in ``schema``."""
    if isinstance(schema, dict):
        own = [schema[key]] if key in schema else []
        return own + [b for v in schema.values() for b in _bounds(v, key)]
    if isinstance(schema, list):
        return [b for v in schema for b in _bounds(v, key)]
    return []


@pytest.mark.parametrize("step", ["assess", "panel", "consult", "relate", "synthesize"])
def test_the_grammar_keeps_only_the_bounds_llama_cpp_affords(step: str) -> None:
    from inference import schemas

    schema = schemas.load(step)
    friendly = llm_server._grammar_friendly(schema)
    assert not _bounds(friendly, "maxLength")
    assert _bounds(friendly, "minItems") == _bounds(schema, "minItems")
    assert _bounds(friendly, "maxItems") == [n for n in _bounds(schema, "maxItems") if n <= 4]
    # everything else (enums, required fields) is untouched; bounded numbers become enums
    assert _bounds(friendly, "required") == _bounds(schema, "required")
    assert _bounds(schema, "enum") == [
        e for e in _bounds(friendly, "enum") if not all(isinstance(x, float) for x in e)
    ]


def test_capped_grammars_are_tighter_than_the_schema_never_looser() -> None:
    from inference import schemas

    assess = llm_server._grammar_friendly(schemas.load("assess"), 1, 100)
    props = assess["properties"]
    assert props["problems"]["minItems"] == props["problems"]["maxItems"] == 1
    # no cap below a minItems: a code keeps its three elements
    code = props["options"]["items"]["properties"]["code"]["anyOf"][1]
    assert code["minItems"] == code["maxItems"] == 3
    assert max(_bounds(assess, "maxLength")) == 100
    # a string with no bound of its own gets one; ids (a pattern) and enums keep theirs
    assert props["problems"]["items"]["properties"]["id"].get("maxLength") is None

    argue = llm_server._grammar_friendly(schemas.load("consult"), 1, 100, {"arguments": 3})
    assert argue["properties"]["arguments"]["maxItems"] == 3
    item = argue["properties"]["arguments"]["items"]["properties"]
    assert item["evidence"]["maxItems"] == item["facts"]["maxItems"] == 1


def test_bounded_numbers_become_a_grid_the_grammar_can_enforce() -> None:
    from inference import schemas

    vote = llm_server._grammar_friendly(schemas.load("consult"))
    grid = vote["properties"]["votes"]["additionalProperties"]["properties"]["confidence"]["enum"]
    assert grid[0] == 0 and grid[-1] == 1 and len(grid) == 21 and 0.05 in grid


async def test_the_grammar_keeps_one_fixed_vote_per_problem() -> None:
    # consult's votes are an object with one required property per problem and no other, so
    # the grammar (llama.cpp writes required properties in order) votes each problem once;
    # caps and bounds must leave that shape alone
    profile = ingest(fixture_bundle("thanh").read_bytes())
    ctx, ex = CallContext(), EmbeddedExperts()
    a = await ex.run(Assess(profile, ()), ctx)
    member = (await ex.run(AssemblePanel(profile, a), ctx))[0]
    req = steps.request_for(Consult(profile, member, a.problems, a.options, ()))
    caps = (1, 100, {"arguments": 3, "problems": 2, "options": 2})
    votes = llm_server._grammar_friendly(req.schema, *caps)["properties"]["votes"]
    ids = [req.aliases.shorten(p.id) for p in a.problems]
    assert len(ids) >= 2 and list(votes["properties"]) == votes["required"] == ids
    assert votes["additionalProperties"] is False
    for v in votes["properties"].values():
        assert v["required"] == ["vote", "confidence", "quote", "rationale"]
        assert v["properties"]["quote"]["maxLength"] == 100
