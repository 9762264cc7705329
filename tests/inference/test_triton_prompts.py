"""The prompts of one whole plan, as the Triton backend renders them: one byte-identical
prefix for every call, each step's own part carrying only the facts it may cite, and a plan
through the prompts (answers derived from the embedded backend reading only what the prompts
say) equal to the embedded plan on every realistic fixture. Plus the prefix-cache arithmetic on
a hand-computed example."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference import _triton_steps as steps
from inference._triton_record import Aliases
from inference.embedded import EmbeddedExperts
from inference.evidence import EvidenceBase
from inference.protocol import Step
from inference.triton import TritonExperts, TritonSettings
from service.pipeline import Planner, PlanResult
from tests.conftest import REALISTIC_BUNDLES, fixture_bundle
from tests.support.token_costs import common_prefix, stand_in, uncached
from tests.support.triton_models import expert_answer

RENDERER = TritonExperts(TritonSettings())
_REF = re.compile(r"\b[A-Z][A-Za-z]+/[0-9a-f][0-9a-f-]{7,}")
_ALIAS = re.compile(r'"([A-Z][a-z]*[0-9]+)"')


class ThroughPrompts:
    """Every step answered as the scripted Triton model answers it: from the rendered prompt
    alone (``expert_answer``), then validated and decoded by the step's narrowed schema."""

    name = "through-prompts"

    def __init__(self) -> None:
        self.sent: list[tuple[Step[Any], steps.StepRequest[Any], str]] = []

    async def run(self, step: Any, ctx: Any) -> Any:
        req = steps.request_for(step)
        prompt = RENDERER.render(req)
        self.sent.append((step, req, prompt))
        return req.check(await expert_answer(prompt))

    async def is_ready(self) -> bool:
        return True

    async def aclose(self) -> None:
        return None


async def _plan(experts: Any, name: str) -> PlanResult:
    profile = ingest(fixture_bundle(name).read_bytes())
    return await Planner(experts, EvidenceBase.load()).plan(
        profile, plan_id="p", created="2026-01-01T00:00:00Z"
    )


def _comparable(r: PlanResult) -> Any:
    """The plan up to argument ids (ours in the Triton decoder, the rule's in the embedded)."""
    meta = r.deliberation.meta
    options = [
        (
            o.id,
            [(a.role, a.stance, a.text, a.evidence, a.facts, a.tau) for a in o.arguments],
            [c.winner for c in o.clashes],
            len(o.edges),
        )
        for o in r.deliberation.options
    ]
    ranked = [(x.option_id, round(x.score, 9), x.decision) for x in r.evaluation.options]
    # not the synthesis: the embedded backend writes it from the deliberation, a model from the
    # options' outline it is sent
    return r.deliberation.problems, options, ranked, meta.missing, meta.panel


@pytest.mark.parametrize("bundle", REALISTIC_BUNDLES, ids=lambda p: p.name.split("_")[0])
async def test_a_plan_through_the_prompts_equals_the_embedded_plan(bundle: Any) -> None:
    name = bundle.name.rsplit("_", 1)[0]
    through = ThroughPrompts()
    got = await _plan(through, name)
    want = await _plan(EmbeddedExperts(), name)
    assert _comparable(got) == _comparable(want)
    assert got.deliberation.meta.synthesis and want.deliberation.meta.synthesis
    # the same calls, and the synthesis the embedded backend writes without one
    assert len(through.sent) == len(want.calls) + 1
    assert through.sent[-1][0].kind == "synthesize"


async def test_every_call_of_a_plan_starts_with_the_same_prefix_holding_the_record() -> None:
    through = ThroughPrompts()
    result = await _plan(through, "adalberto_hartmann")
    prompts = [p for _, _, p in through.sent]
    assert {s.kind for s, _, _ in through.sent} >= {
        "assess",
        "panel",
        "consult",
        "relate",
        "adjudicate",
        "synthesize",
    }
    prefix = RENDERER.prefix(through.sent[0][1])
    assert "<canoe-record>" in prefix and prefix.rstrip().endswith("</canoe-record>")
    assert all(p.startswith(prefix) for p in prompts)
    # the record is rendered once, in the prefix, and nowhere in a step's own part
    assert all(p.count("<canoe-record>") == 1 for p in prompts)
    # one consult call per member; they share everything up to the member block, and with the
    # assessment the evidence block right after the record
    consults = [p for s, _, p in through.sent if s.kind == "consult"]
    assert len(consults) == len(result.deliberation.meta.panel) > 1
    shared = min(common_prefix(consults[0], c) for c in consults[1:])
    member = consults[0].index("<canoe-member>")
    assert member < shared < consults[0].index("</canoe-member>")
    assert "</canoe-input>" in consults[0][len(prefix) : member]
    assess = next(p for s, _, p in through.sent if s.kind == "assess")
    assert common_prefix(assess, consults[0]) > consults[0].index("</canoe-evidence>")


async def test_each_step_part_carries_only_the_facts_it_may_cite() -> None:
    through = ThroughPrompts()
    await _plan(through, "josue_sipes")
    shown: set[str] = set()
    for step, req, prompt in through.sent:
        own = prompt[len(RENDERER.prefix(req)) :]
        # the prompt names facts by their aliases only (C03, not Condition/<uuid>)
        assert _REF.findall(prompt) == [], step.kind
        aliases = Aliases.of(step.profile)
        refs = {aliases.long[a] for a in _ALIAS.findall(own) if a in aliases.long}
        shown |= refs
        if step.kind in ("panel", "relate", "synthesize"):
            # the panel reads an outline, relate the arguments' words, synthesis the titles
            assert refs == set(), step.kind
        elif step.kind == "consult":
            # the refs of the problems voted on and of the options argued about
            allowed = {r for o in step.options for r in (*o.refs, o.medication_ref) if r}
            assert refs <= allowed | {r for p in step.problems for r in p.refs}
        elif step.kind == "adjudicate":
            assert refs <= {r for pair in step.pairs for g in pair for r in g.facts} | {
                r for r in (*step.option.refs, step.option.medication_ref) if r
            }
        # the answer schema may name only facts of the record (by alias), evidence that was
        # retrieved
        schema = json.dumps(req.schema)
        assert _REF.findall(schema) == []
        named = {aliases.long[a] for a in _ALIAS.findall(schema) if a in aliases.long}
        assert named <= set(steps.fact_refs(step.profile))
    assert shown  # the steps' own parts do name facts (by alias)


def test_long_enums_are_pointed_at_not_repeated_in_the_prompt() -> None:
    through_schema = {
        "properties": {
            "facts": {
                "type": "array",
                "items": {"enum": [f"Condition/{i:08x}" for i in range(20)]},
            },
            "stance": {"enum": ["support", "attack"]},
        }
    }
    from inference.prompts import prompt_schema

    shown = json.loads(prompt_schema(through_schema))
    assert shown["facts"]["items"] == {"type": "string", "description": "an id given above"}
    assert shown["stance"] == {"enum": ["support", "attack"]}


def test_uncached_tokens_on_a_hand_computed_example() -> None:
    tok = stand_in()
    calls = [
        "system record assess",  # 3 tokens, nothing before it: 3
        "system record consult gp",  # shares "system record" (2) with call 1: 4 - 2 = 2
        "system record consult nurse",  # shares "system record consult" (3) with call 2: 1
        "other system record",  # shares nothing with any earlier call: 3
    ]
    tokens = [tok.tokenize(c) for c in calls]
    assert [len(t) for t in tokens] == [3, 4, 4, 3]
    assert uncached(tokens) == [3, 2, 1, 3]
    assert common_prefix([1, 2, 3], [1, 2]) == 2 and common_prefix([], [1]) == 0
