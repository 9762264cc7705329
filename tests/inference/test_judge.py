"""The evaluation judge's request (``inference.judge``): its own prompt and system text, its
guided-JSON schema, and the decoder that refuses what is not a 1-5 score on all four
dimensions. The call itself against a real Triton server: tests/integration/test_triton_judge.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from fhir_mapping.ingest import ingest
from inference import prompts, schemas
from inference._triton_steps import AnswerError
from inference.judge import DIMENSIONS, JudgeVerdict, judge_request
from inference.protocol import EvidenceDoc
from inference.triton import TritonExperts, TritonSettings
from tests.conftest import REPO_ROOT
from tests.support.triton_models import judge_answer

BUNDLE = REPO_ROOT / "examples/metrics/bundles/m07_hypothyroid_statin_stable.json"
PROFILE = ingest(BUNDLE.read_bytes(), received=datetime(2026, 11, 30, 9, tzinfo=UTC))
DOCS = (
    EvidenceDoc("ev-thyroid-1", "thyroid", "Check TSH yearly on a stable dose.", "B", "NICE", 2019),
)
GENERATED = "Continue levothyroxine.\nCheck TSH in a year."
REFERENCE = "Continue levothyroxine and atorvastatin. TSH once a year."


def _answer(**scores: int) -> str:
    return json.dumps({d: {"score": scores.get(d, 4), "rationale": "why"} for d in DIMENSIONS})


def test_the_prompt_is_the_judges_own_with_the_record_evidence_and_both_plans() -> None:
    req = judge_request(PROFILE, DOCS, GENERATED, REFERENCE)
    prompt = TritonExperts(TritonSettings(chat_template="none")).render(req)
    assert prompt.startswith("You are an expert clinical evaluator")
    assert "member of a multidisciplinary care-planning panel" not in prompt
    step, version, inputs = prompts.parse_input_block(prompt)
    assert (step, version) == ("judge", prompts.VERSIONS["judge"])
    assert inputs["generated_plan"] == GENERATED and inputs["reference_plan"] == REFERENCE
    assert [d["id"] for d in inputs["evidence"]] == ["ev-thyroid-1"]
    assert [m["text"] for m in inputs["profile"]["medications"]] == [
        m.text for m in PROFILE.medications
    ]
    for d in DIMENSIONS:
        assert f"- {d}:" in prompt


def test_without_a_reference_the_prompt_says_null() -> None:
    req = judge_request(PROFILE, DOCS, GENERATED, None)
    assert req.inputs["reference_plan"] is None


def test_the_schema_asks_four_integer_scores_from_1_to_5_with_rationales() -> None:
    schema = schemas.load("judge")
    assert schema["$id"].endswith(f":judge:{schemas.VERSIONS['judge']}")
    assert tuple(schema["required"]) == DIMENSIONS
    for d in DIMENSIONS:
        score = schema["properties"][d]["properties"]["score"]
        assert (score["type"], score["minimum"], score["maximum"]) == ("integer", 1, 5)


def test_a_valid_answer_decodes_and_the_mean_is_computed_here() -> None:
    req = judge_request(PROFILE, DOCS, GENERATED, REFERENCE)
    verdict = req.check(_answer(completeness=2, validity=5, coherence=4, safety=3))
    assert verdict == JudgeVerdict((2, 5, 4, 3), ("why",) * 4)
    assert verdict.average == pytest.approx(3.5)
    assert verdict.score("safety") == 3


@pytest.mark.parametrize(
    "answer",
    [
        _answer(safety=6),
        _answer(validity=0),
        json.dumps({d: {"score": 3.5, "rationale": "r"} for d in DIMENSIONS}),
        json.dumps({d: {"score": 3, "rationale": "r"} for d in DIMENSIONS[:3]}),
        json.dumps({d: {"score": 3, "rationale": ""} for d in DIMENSIONS}),
        json.dumps({d: {"score": 3, "rationale": "r"} for d in DIMENSIONS} | {"average": 3}),
        "the plan is fine",
    ],
)
def test_an_answer_that_is_not_the_rubric_is_refused(answer: str) -> None:
    with pytest.raises(AnswerError):
        judge_request(PROFILE, DOCS, GENERATED, REFERENCE).check(answer)


def test_the_scripted_judge_answers_what_the_schema_accepts() -> None:
    req = judge_request(PROFILE, DOCS, GENERATED, None)
    prompt = TritonExperts(TritonSettings(chat_template="none")).render(req)
    inputs = prompts.parse_input_block(prompt)[2]
    verdict = req.check(json.dumps(judge_answer(inputs)))
    assert verdict.score("coherence") == 5  # no reference given
    assert verdict.score("completeness") == 1 + len(GENERATED.split()) % 5


def test_the_judge_runs_on_the_adjudicator_model_unless_a_site_names_one() -> None:
    s = TritonSettings(adjudicator_model="big")
    assert s.model_for("judge") == "big" and s.max_tokens_for("judge") > 0
    assert "big" in s.model_names and "judge" not in s.model_names
    assert TritonSettings(models=(("judge", "judge-llm"),)).model_for("judge") == "judge-llm"
    with pytest.raises(ValueError, match="unknown step kinds"):
        TritonSettings(models=(("jury", "x"),))
