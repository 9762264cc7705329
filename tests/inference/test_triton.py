"""The Triton backend's parts that need no server: settings, prompts, schemas, parsing, codec,
breaker, error mapping. The real server is exercised in tests/integration/test_triton*.py."""

from __future__ import annotations

import json
import sys
from datetime import date
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference import prompts, schemas
from inference._triton_codec import CodecError, decode, encode
from inference._triton_record import Aliases
from inference._triton_steps import (
    AnswerError,
    adjudicate_request,
    assess_request,
    consult_request,
    fact_refs,
    parse_json_answer,
    relate_request,
)
from inference.protocol import (
    Adjudicate,
    ArgumentDraft,
    Assess,
    CandidateOption,
    CandidateProblem,
    Consult,
    EvidenceDoc,
    PanelMember,
    Relate,
)
from inference.triton import TritonExperts, TritonSettings, _Breaker, _classify, _Retryable
from service.errors import BackendUnavailable, StepFailed
from service.record.profile import PatientProfile
from tests.conftest import fixture_bundle
from tests.support.triton_models import encode_answer, profile_from_record

PROFILE = ingest(fixture_bundle("adalberto").read_bytes())
ALIASES = Aliases.of(PROFILE)
DOCS = (
    EvidenceDoc("ev-falls-1", "falls", "Review fall-risk drugs.", "A", "Falls guideline", 2022),
    EvidenceDoc("ev-renal-1", "renal", "Adjust doses to eGFR.", "B", "Renal guideline", 2021),
)
OPTIONS = (
    CandidateOption("opt-taper", "Taper the sedative", "medication", "Slowly."),
    CandidateOption("opt-pt", "Physiotherapy", "rehabilitation", "Strength and balance."),
)
PROBLEMS = (
    CandidateProblem("prob-a", "A", (), "accept", ""),
    CandidateProblem("prob-b", "B", (), "reject", ""),
)
MEMBER = PanelMember("pharmacist", "medication safety", ("deprescribing",))
CONSULT = Consult(PROFILE, MEMBER, PROBLEMS, OPTIONS, DOCS)


def _arg(aid: str, stance: str, tau: float) -> ArgumentDraft:
    return ArgumentDraft(aid, "opt-taper", "nurse", stance, "t", ("ev-falls-1",), (), tau)  # type: ignore[arg-type]


# -- settings -----------------------------------------------------------------------------------


def test_settings_model_per_step() -> None:
    s = TritonSettings(
        agent_model="medgemma-4b",
        adjudicator_model="medgemma-27b",
        models=(("synthesize", "writer"),),
    )
    assert s.model_for("consult") == "medgemma-4b"
    assert s.model_for("adjudicate") == s.model_for("arbitrate") == "medgemma-27b"
    assert s.model_for("synthesize") == "writer"
    assert s.model_names == ("medgemma-27b", "medgemma-4b", "writer")


@pytest.mark.parametrize(
    "kw",
    [
        {"protocol": "http"},
        {"guided_key": "grammar"},
        {"chat_template": "mistral"},
        {"concurrency": 0},
        {"models": (("vote", "m"),)},  # a step kind no more: consult asks for votes
    ],
)
def test_settings_reject_bad_values(kw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        TritonSettings(**kw)


# -- prompts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["gemma", "llama3", "chatml", "none"])
def test_prompt_carries_inputs_in_every_chat_family(family: str) -> None:
    req = consult_request(CONSULT)
    backend = TritonExperts(TritonSettings(chat_template=family))  # type: ignore[arg-type]
    prompt = backend.render(req)
    step, version, inputs = prompts.parse_input_block(prompt)
    assert (step, version) == ("consult", "v5")
    assert profile_from_record(inputs["profile"], req.aliases).problems == PROFILE.problems
    assert [p["id"] for p in inputs["problems"]] == ["prob-a", "prob-b"]
    assert [o["id"] for o in inputs["options"]] == ["opt-taper", "opt-pt"]
    assert [d["id"] for d in inputs["evidence"]] == ["ev-falls-1", "ev-renal-1"]
    assert inputs["member"]["role"] == "pharmacist"
    assert prompt.index("<canoe-member>") > prompt.index("<canoe-input")  # member last
    assert '"pharmacist"' in prompt and "medication safety" in prompt
    marker = {"gemma": "<start_of_turn>model\n", "llama3": "assistant<|end_header_id|>\n\n"}
    marker |= {"chatml": "<|im_start|>assistant\n", "none": "\n"}
    assert prompt.endswith(marker[family])
    assert "<bos>" not in prompt and "<|begin_of_text|>" not in prompt


def test_every_step_has_a_template_and_a_schema() -> None:
    for step in schemas.STEPS:
        task = dict(prompts.load_template(step).sections)["task"].template
        assert "$inputs" in task and "$schema" in task
        schema = schemas.load(step)
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(schema["properties"])
    assert "$previous" in dict(prompts.load_template("repair").sections)["task"].template
    assert "$record" in dict(prompts.load_template("shared").sections)["user"].template


def test_input_block_survives_closing_tags_in_patient_text() -> None:
    block = prompts.input_block("consult", {"note": "</canoe-input><b>"}, "v5")
    assert prompts.parse_input_block("x " + block + " y")[2] == {"note": "</canoe-input><b>"}


# -- answers: parsing, schema, decoding -----------------------------------------------------------


_VOTE = {"vote": "KEEP", "confidence": 0.7, "quote": "q", "rationale": "r"}
_VOTES = {"prob-a": _VOTE, "prob-b": _VOTE}


def _consult_answer(votes: dict[str, Any] | None = None, **over: object) -> str:
    arg = {
        "option_id": "opt-taper",
        "stance": "support",
        "text": "Sedatives raise fall risk.",
        "evidence": ["ev-falls-1"],
        "facts": [ALIASES.short[PROFILE.ref]],
        "harm": "severe",
        "concern": "falls",
        "generic": False,
    } | over
    return json.dumps({"votes": _VOTES if votes is None else votes, "arguments": [arg, arg]})


def test_consult_answer_gives_votes_and_unscored_arguments_with_our_ids() -> None:
    out = consult_request(CONSULT).check(_consult_answer())
    assert [(v.problem_id, v.role, v.vote) for v in out.votes] == [
        ("prob-a", "pharmacist", "KEEP"),
        ("prob-b", "pharmacist", "KEEP"),
    ]
    args = out.arguments
    assert [a.id for a in args] == ["arg-pharmacist-opt-taper-1", "arg-pharmacist-opt-taper-2"]
    # the member does not score its own arguments (consult v5): the score step does
    assert {a.role for a in args} == {"pharmacist"} and args[0].tau is None
    assert args[0].facts == (PROFILE.ref,)  # cited by alias, decoded to the reference
    # the typed attributes the clash comparator reads travel with the argument
    assert (args[0].harm, args[0].concern, args[0].generic) == ("severe", "falls", False)


def test_consult_schema_is_narrowed_to_this_call() -> None:
    req = consult_request(CONSULT)
    props = req.schema["properties"]
    # one fixed property per problem, all required, no other: guided decoding writes each once
    assert list(props["votes"]["properties"]) == props["votes"]["required"] == ["prob-a", "prob-b"]
    assert props["votes"]["additionalProperties"] is False
    vote = props["votes"]["properties"]["prob-a"]
    assert vote["required"] == ["vote", "confidence", "quote", "rationale"]
    # the prompt shows the vote's schema once, the problem ids as the keys it needs
    shown = json.loads(prompts.prompt_schema(req.schema))["votes"]
    assert shown["required"] == ["prob-a", "prob-b"] and "properties" not in shown
    assert shown["additionalProperties"] == vote
    arg = props["arguments"]["items"]["properties"]
    assert arg["option_id"] == {"enum": ["opt-pt", "opt-taper"]}
    assert arg["evidence"]["items"] == {"enum": ["ev-falls-1", "ev-renal-1"]}
    assert set(arg["facts"]["items"]["enum"]) == {ALIASES.short[r] for r in fact_refs(PROFILE)}
    # nothing to argue about: the argument list must stay empty, the votes are still asked for
    bare = consult_request(Consult(PROFILE, MEMBER, PROBLEMS, (), DOCS))
    assert bare.schema["properties"]["arguments"]["maxItems"] == 0
    assert bare.check(json.dumps({"votes": _VOTES, "arguments": []})).arguments == ()


@pytest.mark.parametrize(
    ("over", "rule"),
    [
        ({"tau": 0.8}, "additionalProperties"),
        ({"evidence": ["ev-invented"]}, "enum"),
        ({"facts": ["Condition/not-in-record"]}, "enum"),
        ({"option_id": "opt-unknown"}, "enum"),
        ({"stance": "neutral"}, "enum"),
        ({"harm": "catastrophic"}, "enum"),
        ({"concern": "Abrupt Withdrawal"}, "pattern"),
    ],
)
def test_consult_argument_out_of_range_or_uncitable_spoils_the_answer(
    over: dict[str, Any], rule: str
) -> None:
    with pytest.raises(AnswerError, match=rule):
        consult_request(CONSULT).check(_consult_answer(**over))


def test_consult_votes_must_cover_each_problem_once() -> None:
    # a bad vote spoils the whole answer, arguments included: repaired (or failed) as one call
    req = consult_request(CONSULT)
    with pytest.raises(AnswerError, match="required"):
        req.check(_consult_answer(votes={"prob-a": _VOTE}))
    with pytest.raises(AnswerError, match="additionalProperties"):
        req.check(_consult_answer(votes=_VOTES | {"prob-z": _VOTE}))
    with pytest.raises(AnswerError, match="maximum"):
        req.check(_consult_answer(votes=_VOTES | {"prob-a": _VOTE | {"confidence": 1.5}}))
    with pytest.raises(AnswerError, match="required"):
        req.check(_consult_answer(votes={"prob-a": _VOTE, "prob-b": {"vote": "KEEP"}}))
    with pytest.raises(AnswerError, match="'type' at votes"):  # the v3 form, a list of votes
        req.check(_consult_answer(votes=[_VOTE | {"problem_id": "prob-a"}]))  # type: ignore[arg-type]
    # the decoder checks coverage too, for a request whose schema was not enforced
    with pytest.raises(AnswerError, match="exactly once"):
        req.decode({"votes": {"prob-a": _VOTE}, "arguments": []})
    with pytest.raises(AnswerError, match="required"):
        req.check(json.dumps({"votes": _VOTES}))  # the arguments section is not optional


def test_answer_errors_are_safe_to_log() -> None:
    secret = "Condition/not-in-record"
    with pytest.raises(AnswerError) as info:
        consult_request(CONSULT).check(_consult_answer(facts=[secret]))
    assert secret not in str(info.value) and secret in info.value.detail


def test_parse_json_answer_tolerates_fences_and_chatter_but_not_truncation() -> None:
    assert parse_json_answer('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_answer('Sure! {"a": 1} Hope this helps.') == {"a": 1}
    with pytest.raises(AnswerError, match="truncated"):
        parse_json_answer('{"a": [1, 2')
    with pytest.raises(AnswerError, match="no JSON object"):
        parse_json_answer("I cannot answer that.")


def test_relations_only_between_given_arguments_of_one_option_never_to_self() -> None:
    other = ArgumentDraft("b1", "opt-pt", "nurse", "support", "t", (), (), 0.5)
    args = (_arg("a1", "support", 0.5), _arg("a2", "attack", 0.5), other)
    req = relate_request(Relate(PROFILE, OPTIONS, args))
    edge = {"source": "a1", "target": "a2", "relation": "attack"}
    assert len(req.check(json.dumps({"relations": [edge, edge]}))) == 1
    with pytest.raises(AnswerError, match="itself"):
        req.check(json.dumps({"relations": [edge | {"target": "a1"}]}))
    with pytest.raises(AnswerError, match="different options"):
        req.check(json.dumps({"relations": [edge | {"target": "b1"}]}))
    with pytest.raises(AnswerError, match="enum"):
        req.check(json.dumps({"relations": [edge | {"target": "a9"}]}))


def _verdicts(*vs: tuple[str, str, str | None]) -> str:
    return json.dumps(
        {"verdicts": [{"support": s, "attack": a, "winner": w, "rationale": "r"} for s, a, w in vs]}
    )


def test_adjudication_never_defaults_to_a_side() -> None:
    pairs = ((_arg("s", "support", 0.5), _arg("a", "attack", 0.5)),)
    req = adjudicate_request(Adjudicate(PROFILE, OPTIONS[0], pairs, DOCS))
    assert [v.winner for v in req.check(_verdicts(("s", "a", "attack")))] == ["attack"]
    for bad in (_verdicts(("s", "a", "both")), '{"verdicts": [{"support": "s"', "{}"):
        with pytest.raises(AnswerError):
            req.check(bad)


def test_batched_adjudication_judges_each_pair_once_and_is_checked_as_a_whole() -> None:
    s1, s2 = _arg("s1", "support", 0.5), _arg("s2", "support", 0.6)
    a1 = _arg("a1", "attack", 0.55)
    req = adjudicate_request(Adjudicate(PROFILE, OPTIONS[0], ((s1, a1), (s2, a1)), DOCS))
    verdicts = req.schema["properties"]["verdicts"]
    assert verdicts["minItems"] == verdicts["maxItems"] == 2
    assert verdicts["items"]["properties"]["support"] == {"enum": ["s1", "s2"]}
    assert verdicts["items"]["properties"]["attack"] == {"enum": ["a1"]}
    # answered in any order, returned in the order asked; null leaves only that pair undecided
    out = req.check(_verdicts(("s2", "a1", None), ("s1", "a1", "support")))
    assert [(v.support_id, v.winner) for v in out] == [("s1", "support"), ("s2", None)]
    # one pair judged twice (the other left out) spoils the whole answer: repaired as one call
    with pytest.raises(AnswerError, match="exactly once"):
        req.check(_verdicts(("s1", "a1", "support"), ("s1", "a1", "attack")))
    with pytest.raises(AnswerError, match="minItems"):
        req.check(_verdicts(("s1", "a1", "support")))
    # only the statements the two arguments cite travel to the adjudicator
    assert [d["id"] for d in req.inputs["evidence"]] == ["ev-falls-1"]


def test_assess_schema_narrows_refs_to_the_record() -> None:
    req = assess_request(Assess(PROFILE, DOCS))
    refs = req.schema["properties"]["problems"]["items"]["properties"]["refs"]["items"]["enum"]
    assert set(refs) == {ALIASES.short[r] for r in fact_refs(PROFILE)} and "P1" in refs
    # an unknown alias is an unknown fact, and so is the reference it stands for
    for bad in ("C999", PROFILE.ref):
        with pytest.raises(AnswerError, match="enum"):
            req.check(_assess_answer(["problem-1"]).replace('"P1"', json.dumps(bad)))


def test_aliases_in_answers_are_decoded_to_references_and_ids() -> None:
    cond, med = PROFILE.problems[0].ref, PROFILE.medications[0].ref
    short_cond, short_med = ALIASES.short[cond], ALIASES.short[med]
    pid = "prob-" + cond.rsplit("/", 1)[1]  # a problem named after its condition
    req = assess_request(Assess(PROFILE, DOCS))
    answer = json.loads(_assess_answer(["problem-1"]))
    answer["problems"][0] |= {"id": f"prob-{short_cond.lower()}", "refs": [short_cond]}
    answer["options"][0] |= {"medication_ref": short_med, "refs": [short_med]}
    out = req.check(json.dumps(answer))
    assert out.problems[0].id == pid and out.problems[0].refs == (cond,)
    assert out.options[0].refs == (med,) and out.options[0].medication_ref == med
    assert out.options[0].problem_ids == (pid,)
    # the next steps show that problem by its short id, and decode votes on it back
    problem = CandidateProblem(pid, "d", (cond,), "accept", "")
    consult = consult_request(Consult(PROFILE, MEMBER, (problem,), OPTIONS, DOCS))
    assert consult.inputs["problems"][0] == {
        "display": "d",
        "id": f"prob-{short_cond.lower()}",
        "initial": "accept",
        "rationale": "",
        "refs": [short_cond],
    }
    votes = {f"prob-{short_cond.lower()}": _VOTE}
    assert consult.check(_consult_answer(votes=votes)).votes[0].problem_id == pid
    assert pid not in consult.schema["properties"]["votes"]["required"]
    assert cond not in json.dumps([consult.inputs, consult.schema, consult.record])


def _assess_answer(addresses: list[str], n_problems: int = 2) -> str:
    problem = {"display": "d", "refs": ["P1"], "initial": "accept", "rationale": "r"}
    option = {
        "id": "opt-1",
        "title": "t",
        "category": "monitoring",
        "description": "d",
        "refs": [],
        "addresses": addresses,
        "code": None,
        "medication_ref": None,
        "priority": "monitoring",
        "answers": [],
    }
    return json.dumps(
        {
            "complexity": "low",
            "dimensions": [],
            "problems": [problem | {"id": f"prob-{i}"} for i in "xyz"[:n_problems]],
            "options": [option],
        }
    )


def test_assess_options_name_their_problems_by_position() -> None:
    req = assess_request(Assess(PROFILE, DOCS))
    item = req.schema["properties"]["options"]["items"]["properties"]["addresses"]["items"]
    n = req.schema["properties"]["problems"]["maxItems"]
    assert item["enum"] == [f"problem-{i}" for i in range(1, n + 1)]
    # the prompt says what a position is instead of pointing to ids given above
    assert "problem-1 is the first" in prompts.prompt_schema(req.schema)
    out = req.check(_assess_answer(["problem-2", "problem-1"]))
    assert out.options[0].problem_ids == ("prob-y", "prob-x")
    assert out.problems[0].refs == (PROFILE.ref,)
    # a well-formed position past the end of the list is an unknown problem
    with pytest.raises(AnswerError, match="addresses problem-3, but only 2 problems"):
        req.check(_assess_answer(["problem-3"]))
    # an id the model made up cannot stand for a position
    with pytest.raises(AnswerError, match="enum"):
        req.check(_assess_answer(["prob-x"]))


def test_encode_answer_round_trips_through_the_schema() -> None:
    out = consult_request(CONSULT).check(_consult_answer())
    req_c = consult_request(CONSULT)
    again = req_c.check(json.dumps(encode_answer("consult", out, req_c.aliases)))
    assert again == out
    req = assess_request(Assess(PROFILE, DOCS))
    assessed = req.check(_assess_answer(["problem-2", "problem-1"], 3))
    assert req.check(json.dumps(encode_answer("assess", assessed, req.aliases))) == assessed


# -- codec --------------------------------------------------------------------------------------


def test_codec_round_trips_an_ingested_profile() -> None:
    data = json.loads(json.dumps(encode(PROFILE)))
    assert decode(PatientProfile, data) == PROFILE
    with pytest.raises(CodecError, match="unknown fields"):
        decode(PatientProfile, data | {"extra": 1})
    with pytest.raises(CodecError, match="birth_date"):
        decode(PatientProfile, data | {"birth_date": "yesterday"})
    assert decode(date, "2020-02-29") == date(2020, 2, 29)


# -- breaker, errors, optional dependency --------------------------------------------------------


def test_breaker_opens_after_threshold_then_half_opens() -> None:
    now = [0.0]
    b = _Breaker(threshold=3, cooldown_s=10.0, clock=lambda: now[0])
    for _ in range(2):
        b.failure()
        b.check()
    b.failure()
    with pytest.raises(BackendUnavailable, match="circuit open"):
        b.check()
    now[0] = 10.5
    b.check()  # cool-down over: one trial call goes through
    b.success()
    assert b.failures == 0


def test_classify_retries_only_unavailable_and_exhausted() -> None:
    class Rpc(Exception):
        def __init__(self, code: str) -> None:
            self._code = code

        def code(self) -> str:
            return self._code

        def details(self) -> str:
            return "d"

    assert isinstance(_classify(Rpc("StatusCode.UNAVAILABLE")), _Retryable)
    assert isinstance(_classify(Rpc("StatusCode.RESOURCE_EXHAUSTED")), _Retryable)
    assert not isinstance(_classify(Rpc("StatusCode.INVALID_ARGUMENT")), _Retryable)
    assert not isinstance(_classify(Rpc("StatusCode.DEADLINE_EXCEEDED")), _Retryable)


def test_missing_tritonclient_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tritonclient.grpc.aio", None)
    with pytest.raises(BackendUnavailable, match=r"extra 'triton'.*canoe-careplan\[triton\]"):
        TritonExperts(TritonSettings())


async def test_unusable_answer_without_repair_fails_the_step() -> None:
    class OneShot(TritonExperts):
        async def _call(self, *a: object, **k: object) -> str:
            self.calls = getattr(self, "calls", 0) + 1
            return '{"winner": "both", "rationale": "r"}'

    from inference.protocol import CallContext

    backend = OneShot(TritonSettings(repair_attempts=0))
    with pytest.raises(StepFailed, match="adjudicate"):
        await backend.run(
            Adjudicate(
                PROFILE, OPTIONS[0], ((_arg("s", "support", 0.5), _arg("a", "attack", 0.5)),), DOCS
            ),
            CallContext(),
        )
    assert backend.calls == 1


@pytest.mark.parametrize("second_ok", [True, False])
async def test_a_bad_consult_answer_gets_one_repair_then_fails_as_one_call(
    second_ok: bool,
) -> None:
    from inference.protocol import CallContext

    # votes that miss a problem: the whole answer (arguments too) is unusable
    bad = _consult_answer(votes={"prob-a": _VOTE})
    answers = [bad, _consult_answer() if second_ok else bad]

    class Scripted(TritonExperts):
        prompts: list[str]

        async def _call(self, step: str, model: str, prompt: str, *a: object) -> str:  # type: ignore[override]
            self.prompts = [*getattr(self, "prompts", []), prompt]
            return answers[len(self.prompts) - 1]

    backend = Scripted(TritonSettings())
    if second_ok:
        out = await backend.run(CONSULT, CallContext())
        assert len(out.votes) == 2 and len(out.arguments) == 2
    else:
        with pytest.raises(StepFailed, match=r"consult: unusable answer .* after one repair"):
            await backend.run(CONSULT, CallContext())
    first, repair = backend.prompts
    assert "<previous-answer>" in repair and "'prob-b' is a required property" in repair
    # the repair keeps the shared prefix and the original task, member included
    assert repair.startswith(backend.prefix(consult_request(CONSULT)))
    assert first[: first.index("<end_of_turn>")] in repair


# -- the generic step protocol ------------------------------------------------------------------


async def test_every_step_kind_has_one_request_type_and_both_backends_dispatch_it() -> None:
    from dataclasses import dataclass
    from typing import ClassVar

    from inference import embedded
    from inference._triton_steps import _BUILDERS
    from inference.protocol import STEP_KINDS, STEP_TYPES, CallContext, Step

    assert tuple(t.kind for t in STEP_TYPES) == STEP_KINDS
    assert set(embedded._HANDLERS) == set(STEP_TYPES) == set(_BUILDERS)

    @dataclass(frozen=True)
    class Unknown(Step[int]):
        kind: ClassVar[str] = "assess"  # type: ignore[misc]

    with pytest.raises(StepFailed, match="Unknown"):
        await embedded.EmbeddedExperts().run(Unknown(), CallContext())
    with pytest.raises(StepFailed, match="Unknown"):
        await TritonExperts(TritonSettings()).run(Unknown(), CallContext())
