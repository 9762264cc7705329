"""Every answer the embedded experts give on every shared fixture fits the Triton answer schemas
(narrowed per call) and decodes back to the same value: the schemas ask nothing a sound answer
cannot give, and the JSON form loses nothing."""

from __future__ import annotations

import json
from dataclasses import replace
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
        text = json.dumps(encode_answer(req.step, result, req.aliases))
        back = req.check(text)
        if req.step == "consult":  # argument ids are ours; the content must survive
            assert back.votes == result.votes
            key = [
                (a.option_id, a.stance, a.text, a.evidence, a.facts, a.tau, a.harm, a.concern)
                for a in result.arguments
            ]
            assert key == [
                (a.option_id, a.stance, a.text, a.evidence, a.facts, a.tau, a.harm, a.concern)
                for a in back.arguments
            ]
        elif req.step == "assess":
            # An option's safety findings, urgency class, action kind, timeframe, harm and the
            # problem it treats with others come from the knowledge by option id (the planner
            # fills them in for a model's options); the model's answer format (assess.v3)
            # carries none of them.
            assert all(o.urgency_class is None and o.treats is None for o in back.options)
            assert all(o.action is None and o.timeframe is None for o in back.options)
            options = tuple(
                replace(
                    o,
                    findings=(),
                    urgency_class=None,
                    treats=None,
                    action=None,
                    timeframe=None,
                    harm=None,
                    transition=False,
                )
                for o in result.options
            )
            assert back == replace(result, options=options)
        else:
            assert back == result
        self.steps.add(req.step)
        return result

    async def run(self, step: Any, ctx: Any) -> Any:
        return await self._check(steps.request_for(step), await self.ex.run(step, ctx))


@pytest.mark.parametrize("bundle", REALISTIC_BUNDLES, ids=lambda p: p.name.split("_")[0])
async def test_embedded_answers_fit_the_schemas(bundle: Any) -> None:
    checked = Checked()
    profile = ingest(bundle.read_bytes())
    result = await Planner(checked, EvidenceBase.load()).plan(
        profile, plan_id="p", created="2024-01-01T00:00:00Z"
    )
    assert result.deliberation.meta.missing == ()
    assert {"assess", "panel", "consult", "synthesize"} <= checked.steps
