"""The Triton score step (CANOE Alg. 1 l. 13): every argument on one option in one call, keyed
by argument id, five dimensions each in [0, 1]; a garbage answer is refused, never guessed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inference import prompts
from inference._triton_steps import AnswerError, request_for
from inference.protocol import STRENGTH_DIMENSIONS, ArgumentDraft, ArgumentScore, Score
from inference.triton import TritonExperts, TritonSettings
from tests.inference.test_triton import DOCS, OPTIONS, PROFILE
from tests.support.triton_models import encode_answer

OPTION = OPTIONS[0]
ARGS = (
    ArgumentDraft(f"arg-pharmacist-{OPTION.id}-1", OPTION.id, "pharmacist", "support", "a", (), ()),
    ArgumentDraft(f"arg-gp-{OPTION.id}-2", OPTION.id, "gp", "attack", "b", ("ev-falls-1",), ()),
)
STEP = Score(PROFILE, OPTION, ARGS, DOCS)
DIMS = dict.fromkeys(STRENGTH_DIMENSIONS, 0.5)


def _answer(**per_arg: dict[str, Any]) -> str:
    return json.dumps({"scores": {g.id: DIMS | per_arg.get(g.id, {}) for g in ARGS}})


def test_every_argument_is_scored_once_by_id_and_tau_is_their_mean() -> None:
    req = request_for(STEP)
    keyed = req.schema["properties"]["scores"]
    assert keyed["required"] == [g.id for g in ARGS] and keyed["additionalProperties"] is False
    out = req.check(_answer(**{ARGS[0].id: {"appropriateness": 1.0, "consistency": 0.75}}))
    assert out == (
        ArgumentScore(ARGS[0].id, 1.0, 0.75, 0.5, 0.5, 0.5),
        ArgumentScore(ARGS[1].id, 0.5, 0.5, 0.5, 0.5, 0.5),
    )
    assert [s.tau for s in out] == [0.65, 0.5]


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        (json.dumps({"scores": {ARGS[0].id: DIMS}}), "required"),  # one argument left out
        (_answer(**{ARGS[1].id: {"feasibility": 1.3}}), "maximum"),
        (_answer(**{ARGS[1].id: {"specificity": -0.2}}), "minimum"),
        (_answer(**{ARGS[0].id: {"transparency": "strong"}}), "type"),
        (_answer(**{ARGS[0].id: {"tau": 0.9}}), "additionalProperties"),  # no tau of its own
    ],
)
def test_a_garbage_score_spoils_the_whole_answer(answer: str, rule: str) -> None:
    with pytest.raises(AnswerError, match=rule):
        request_for(STEP).check(answer)


def test_the_prompt_is_versioned_and_shares_the_consult_prefix() -> None:
    tri = TritonExperts(TritonSettings())
    req = request_for(STEP)
    text = tri.render(req)
    step, version, inputs = prompts.parse_input_block(text)
    assert (step, version) == ("score", "v1")
    # the arguments without their strength, option or role (their id names both)
    assert [sorted(a) for a in inputs["arguments"]] == [
        ["evidence", "facts", "id", "stance", "text"]
    ] * 2
    # the plan's evidence block, as consult sends it: a prefix cache computes it once
    assert "<canoe-evidence>" in text and inputs["evidence"]
    assert "tau" not in prompts.load_template("consult").sections[0][1].template.split("$inputs")[0]


def test_the_test_models_answer_round_trips_through_the_schema() -> None:
    req = request_for(STEP)
    scores = (ArgumentScore(ARGS[0].id, 1, 1, 0, 0, 0.5), ArgumentScore(ARGS[1].id, 0, 0, 0, 0, 0))
    assert req.check(json.dumps(encode_answer("score", scores, req.aliases))) == scores
