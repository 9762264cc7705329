"""The scoring step (CANOE Alg. 1 l. 13): every option's arguments scored in one call, apart
from their authors; a failed call loses that option's arguments, recorded, never made up."""

from __future__ import annotations

from dataclasses import replace

import pytest

from inference.protocol import ArgumentDraft, ArgumentScore, CandidateOption, Score
from service.errors import StepFailed
from service.pipeline import Planner
from service.scoring import apply_scores, score_requests
from tests.fakes import ScriptedExperts, StaticEvidence
from tests.pipeline.test_pipeline import PROFILE, scripted


async def _plan(x: ScriptedExperts):  # type: ignore[no-untyped-def]
    return await Planner(x, StaticEvidence()).plan(PROFILE, plan_id="p", created="t")


class _Scorer(ScriptedExperts):
    """Scores every argument 0.9, 0.8, 0.7, 0.6, 0.55 (mean 0.71), whatever its author said;
    records what each score call was sent."""

    sent: list[Score]

    async def run(self, step, ctx):  # type: ignore[no-untyped-def, override]
        if isinstance(step, Score):
            await self._enter(step.kind, ctx)
            self.sent.append(step)
            return tuple(ArgumentScore(g.id, 0.9, 0.8, 0.7, 0.6, 0.55) for g in step.arguments)
        return await super().run(step, ctx)


async def test_one_score_call_per_option_sets_every_strength() -> None:
    x = _Scorer(**vars(scripted()))
    x.sent = []
    result = await _plan(x)
    assert x.calls["score"] == 2  # o1 (three arguments) and o2 (one)
    assert sorted(len(s.arguments) for s in x.sent) == [1, 3]
    # the authors' own strengths (0.6 to 0.9) are gone: the scorer's mean stands for each
    taus = {a.id: a.tau for o in result.deliberation.options for a in o.arguments}
    assert taus == {"s1": 0.71, "s2": 0.71, "s3": 0.71, "a1": 0.71}
    assert not result.deliberation.meta.missing


async def test_a_failed_score_call_loses_that_option_s_arguments_only() -> None:
    x = scripted(fail_scores=frozenset({"o1"}))
    result = await _plan(x)
    by_option = {o.id: o for o in result.deliberation.options}
    assert by_option["o1"].arguments == ()  # none made up
    assert [a.id for a in by_option["o2"].arguments] == ["s3"]
    assert by_option["o2"].arguments[0].tau == 0.8
    missing = result.deliberation.meta.missing
    assert [m.split(":")[0] for m in missing] == ["strength of 3 argument(s) on Taper diazepam"]
    assert x.calls["adjudicate"] == 0  # o1's near-tied pair was never scored, so never judged


async def test_no_argument_scored_fails_the_plan() -> None:
    x = scripted(fail_scores=frozenset({"o1", "o2"}))
    with pytest.raises(StepFailed, match="no argument could be scored"):
        await _plan(x)
    assert x.calls["synthesize"] == 0


def _draft(aid: str, oid: str) -> ArgumentDraft:
    return ArgumentDraft(aid, oid, "gp", "support", "text", (), ())


def test_an_answer_that_skips_or_spoils_an_argument_loses_that_argument_alone() -> None:
    options = (CandidateOption("o1", "One", "medication", ""),)
    drafts = [_draft("a", "o1"), _draft("b", "o1"), _draft("c", "o1"), _draft("z", "o9")]
    asked = score_requests(PROFILE, options, drafts, ())
    assert [len(req.arguments) for _, req in asked] == [3]  # "z" is on no listed option
    answer = (
        ArgumentScore("a", 1.0, 0.75, 0.5, 0.25, 0.5),
        ArgumentScore("c", 1.2, 0.5, 0.5, 0.5, 0.5),  # out of range
        ArgumentScore("x", 1.0, 1.0, 1.0, 1.0, 1.0),  # asked about nothing
    )
    scored, missing = apply_scores(drafts, [req for _, req in asked], [answer])
    assert [(d.id, d.tau) for d in scored] == [("a", 0.6)]
    assert missing == [
        "strength of b: not scored",
        "strength of c: argument c: a strength dimension outside [0, 1]",
    ]


@pytest.mark.parametrize(
    ("dims", "tau"),
    [
        ((0.87, 0.87, 0.87, 0.87, 0.87), 0.87),
        ((0.67, 0.67, 0.67, 0.67, 0.67), 0.67),
        ((1.0, 0.75, 0.5, 0.25, 0.5), 0.6),
        ((0.1, 0.1, 0.1, 0.1, 0.125), 0.11),  # 0.105 rounds half up, in decimal
        ((0.0, 0.0, 0.0, 0.0, 0.0), 0.0),
    ],
)
def test_tau_is_the_mean_of_the_five_at_two_decimals(dims: tuple[float, ...], tau: float) -> None:
    assert ArgumentScore("a", *dims).tau == tau


def test_a_scored_draft_keeps_everything_but_its_strength() -> None:
    d = replace(_draft("a", "o1"), facts=("Condition/c1",), concern="x")
    req = score_requests(PROFILE, (CandidateOption("o1", "One", "medication", ""),), [d], ())
    scored, _ = apply_scores([d], [req[0][1]], [(ArgumentScore("a", 1, 1, 1, 1, 1),)])
    assert scored == [replace(d, tau=1.0)]
