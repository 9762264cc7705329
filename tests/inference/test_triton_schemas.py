"""Every answer the embedded experts give on every shared fixture fits the Triton answer schemas
(narrowed per call) and decodes back to the same value: the schemas ask nothing a sound answer
cannot give, and the JSON form loses nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference import _triton_steps as steps
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from service.pipeline import Planner
from tests.conftest import REALISTIC_BUNDLES
from tests.support.triton_models import encode_answer


class Checked:
    """Wraps the embedded experts; every answer goes through its step's schema and decoder."""

    name = "checked"

    def __init__(self) -> None:
        self.ex = EmbeddedExperts()
        self.steps: set[str] = set()

    async def is_ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None

    async def _check(self, req: steps.StepRequest[Any], result: Any) -> Any:
        text = json.dumps(encode_answer(req.step, result))
        back = req.check(text)
        if req.step == "argue":  # ids and roles are ours; the content must survive
            key = [(a.option_id, a.stance, a.text, a.evidence, a.facts, a.tau) for a in result]
            assert key == [
                (a.option_id, a.stance, a.text, a.evidence, a.facts, a.tau) for a in back
            ]
        else:
            assert back == result
        self.steps.add(req.step)
        return result

    async def assess(self, p: Any, ev: Any, c: Any) -> Any:
        return await self._check(steps.assess_request(p, ev), await self.ex.assess(p, ev, c))

    async def assemble_panel(self, p: Any, a: Any, c: Any) -> Any:
        req = steps.assemble_panel_request(p, a)
        return await self._check(req, await self.ex.assemble_panel(p, a, c))

    async def vote(self, p: Any, m: Any, probs: Any, c: Any) -> Any:
        req = steps.vote_request(p, m, probs)
        return await self._check(req, await self.ex.vote(p, m, probs, c))

    async def argue(self, p: Any, m: Any, opts: Any, ev: Any, c: Any) -> Any:
        req = steps.argue_request(p, m, opts, ev)
        return await self._check(req, await self.ex.argue(p, m, opts, ev, c))

    async def relate(self, p: Any, o: Any, args: Any, c: Any) -> Any:
        req = steps.relate_request(p, o, args)
        return await self._check(req, await self.ex.relate(p, o, args, c))

    async def adjudicate(self, p: Any, o: Any, s: Any, a: Any, ev: Any, c: Any) -> Any:
        req = steps.adjudicate_request(p, o, s, a, ev)
        return await self._check(req, await self.ex.adjudicate(p, o, s, a, ev, c))

    async def arbitrate(self, p: Any, prob: Any, votes: Any, c: Any) -> Any:
        req = steps.arbitrate_request(p, prob, votes)
        return await self._check(req, await self.ex.arbitrate(p, prob, votes, c))

    async def synthesize(self, p: Any, inc: Any, exc: Any, c: Any) -> Any:
        req = steps.synthesize_request(p, inc, exc)
        return await self._check(req, await self.ex.synthesize(p, inc, exc, c))


@pytest.mark.parametrize("bundle", REALISTIC_BUNDLES, ids=lambda p: p.name.split("_")[0])
async def test_embedded_answers_fit_the_schemas(bundle: Any) -> None:
    checked = Checked()
    profile = ingest(bundle.read_bytes())
    result = await Planner(checked, EvidenceBase.load()).plan(
        profile, plan_id="p", created="2024-01-01T00:00:00Z"
    )
    assert result.deliberation.meta.missing == ()
    assert {"assess", "panel", "vote", "argue", "synthesize"} <= checked.steps
