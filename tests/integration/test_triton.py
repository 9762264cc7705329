"""The Triton backend against a real tritonserver (pytriton, CPU): every step, a full plan, the
plain infer path, stage concurrency, and each failure mode ending in a clear error or a plan that
records what is missing, never a hang."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from fhir_mapping.ingest import ingest
from inference.protocol import (
    Adjudicate,
    Arbitrate,
    AssemblePanel,
    Assess,
    Assessment,
    CallContext,
    Consult,
    EvidenceDoc,
    ModelCall,
    Relate,
    Score,
    Synthesize,
)
from inference.triton import TritonExperts, TritonSettings
from service.errors import BackendTimeout, BackendUnavailable, StepFailed
from service.pipeline import Planner, PlanResult, UsageLog
from service.record.profile import PatientProfile
from tests.conftest import fixture_bundle
from tests.integration.conftest import SLEEPY_LATENCY_S
from tests.support.triton_models import ServerHandle, free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

PROFILE = ingest(fixture_bundle("adalberto").read_bytes())


def _embedded() -> Any:
    from inference.embedded import EmbeddedExperts

    return EmbeddedExperts()


def _evidence() -> Any:
    from inference.evidence import EvidenceBase

    return EvidenceBase.load()


def settings(server: ServerHandle, **kw: Any) -> TritonSettings:
    base: dict[str, Any] = {
        "url": server.url,
        "agent_model": "canoe-agent",
        "adjudicator_model": "canoe-adjudicator",
        "backoff_s": 0.05,
    }
    return TritonSettings(**(base | kw))


def docs(profile: PatientProfile = PROFILE) -> tuple[EvidenceDoc, ...]:
    return tuple(_evidence().retrieve(profile, k=24))


async def plan(experts: Any, *, deadline_s: float = 60.0, **kw: Any) -> PlanResult:
    planner = Planner(experts, _evidence(), call_deadline_s=deadline_s, **kw)
    return await planner.plan(PROFILE, plan_id="plan-1", created="2024-05-01T00:00:00Z")


def scores(result: PlanResult) -> dict[str, float]:
    return {r.option_id: round(r.score, 9) for r in result.evaluation.options}


def ok_calls(calls: Sequence[ModelCall]) -> list[ModelCall]:
    return [c for c in calls if c.ok]


async def test_ready_only_when_server_and_every_model_are(triton_server: ServerHandle) -> None:
    good = TritonExperts(settings(triton_server))
    missing = TritonExperts(settings(triton_server, adjudicator_model="no-such-model"))
    try:
        assert await good.is_ready()
        assert not await missing.is_ready()
    finally:
        await good.aclose()
        await missing.aclose()


def _stated(a: Assessment) -> Assessment:
    """What a model's assessment states: no safety findings, urgency class, action kind,
    timeframe, harm or problem treated with others (the planner takes them from the knowledge
    by option id, ``tests/pipeline/test_findings.py``)."""
    bare = tuple(
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
        for o in a.options
    )
    return replace(a, options=bare)


async def test_every_step_through_triton_equals_the_expert_behind_it(
    triton_server: ServerHandle,
) -> None:
    """The prompt carries the inputs faithfully and the answer comes back intact: the same
    expert answers each step directly and through prompt -> Triton stream -> schema -> decode."""
    ex, tri, log = _embedded(), TritonExperts(settings(triton_server)), UsageLog()
    ctx, direct = CallContext(recorder=log), CallContext()
    ev = docs()
    try:
        a = await tri.run(Assess(PROFILE, ev), ctx)
        assert a == _stated(await ex.run(Assess(PROFILE, ev), direct))
        panel = await tri.run(AssemblePanel(PROFILE, a), ctx)
        assert panel == await ex.run(AssemblePanel(PROFILE, a), direct)
        m = panel[0]
        consult = Consult(PROFILE, m, a.problems, a.options, ev)
        got, ref = await tri.run(consult, ctx), await ex.run(consult, direct)
        votes, args = got.votes, got.arguments
        assert votes == ref.votes and votes

        def content(xs: Sequence[Any]) -> list[tuple[Any, ...]]:
            return [(x.option_id, x.role, x.stance, x.text, x.evidence, x.facts, x.tau) for x in xs]

        assert content(args) == content(ref.arguments) and args
        option = next(o for o in a.options if o.id == args[0].option_id)
        mine = tuple(g for g in args if g.option_id == option.id)
        scored = await tri.run(Score(PROFILE, option, mine, ev), ctx)
        assert scored == await ex.run(Score(PROFILE, option, mine, ev), direct)
        assert [s.argument_id for s in scored] == [g.id for g in mine]
        assert await tri.run(Relate(PROFILE, a.options, args), ctx) == await ex.run(
            Relate(PROFILE, a.options, args), direct
        )
        arb = await tri.run(Arbitrate(PROFILE, a.problems[0], votes), ctx)
        assert arb == await ex.run(Arbitrate(PROFILE, a.problems[0], votes), direct)
        text = await tri.run(
            Synthesize(PROFILE, [(a.options[0], 0.8)], [(a.options[-1], 0.2)]), ctx
        )
        assert text == await ex.run(
            Synthesize(PROFILE, [(a.options[0], 0.8)], [(a.options[-1], 0.2)]), direct
        )
    finally:
        await tri.aclose()
    assert all(c.ok and c.input_tokens > 0 and c.output_tokens > 0 for c in log.calls)
    assert {c.model for c in log.calls} == {"canoe-agent", "canoe-adjudicator"}


async def test_full_plan_through_triton_matches_the_embedded_plan(
    triton_server: ServerHandle,
) -> None:
    tri = TritonExperts(settings(triton_server))
    try:
        result = await plan(tri)
    finally:
        await tri.aclose()
    reference = await plan(_embedded())
    assert result.deliberation.meta.missing == ()
    assert result.deliberation.meta.backend == "triton:canoe-agent"
    assert scores(result) == scores(reference) and scores(result)
    calls = ok_calls(result.calls)
    assert len(calls) == len(result.calls)
    # The same calls, but the synthesis: the embedded backend writes it from the deliberation
    # with no call (service.text.synthesis), a model backend is asked once.
    assert sorted(c.step for c in calls if c.step != "synthesize") == sorted(
        c.step for c in reference.calls
    )
    assert [c.step for c in calls].count("synthesize") == 1
    assert {c.step for c in calls} >= {"assess", "panel", "consult", "score", "synthesize"}


async def test_plain_infer_protocol_for_non_decoupled_models(triton_server: ServerHandle) -> None:
    tri = TritonExperts(settings(triton_server, protocol="infer", agent_model="canoe-plain"))
    log = UsageLog()
    try:
        a = await tri.run(Assess(PROFILE, docs()), CallContext(recorder=log))
    finally:
        await tri.aclose()
    assert a == _stated(await _embedded().run(Assess(PROFILE, docs()), CallContext()))
    assert log.calls[0].ok and log.calls[0].input_tokens > 0  # estimated: no counts served


async def test_stage_calls_run_concurrently_under_the_cap(triton_server: ServerHandle) -> None:
    """Fixed latency per call: wall time follows the dependent stages, not the call count."""
    tri = TritonExperts(
        settings(triton_server, agent_model="canoe-sleepy", adjudicator_model="canoe-sleepy")
    )
    t0 = time.perf_counter()
    try:
        result = await plan(tri, concurrency=16)
    finally:
        await tri.aclose()
    wall = time.perf_counter() - t0
    calls = ok_calls(result.calls)
    sequential = len(calls) * SLEEPY_LATENCY_S
    assert result.deliberation.meta.missing == ()
    print(
        f"\ncalls={len(calls)} wall={wall:.2f}s sequential={sequential:.2f}s "
        f"ratio={sequential / wall:.1f}x stages*latency={wall / SLEEPY_LATENCY_S:.1f}"
    )
    # assess, panel, consultation, arbitration||relations, clashes, synthesis: at most ~8
    # dependent rounds of one latency each, plus the experts' own CPU time.
    assert wall < 8 * SLEEPY_LATENCY_S + 4.0
    # the members' calls ran at once: their stage took about one latency, not one per member
    members = len(result.deliberation.meta.panel)
    assert members >= 4
    assert result.timings["consultation"] < members * SLEEPY_LATENCY_S / 2


async def test_cap_bounds_calls_in_flight(triton_server: ServerHandle) -> None:
    tri = TritonExperts(
        settings(
            triton_server,
            agent_model="canoe-sleepy",
            adjudicator_model="canoe-sleepy",
            concurrency=2,
        )
    )
    ev = docs()
    try:
        a = await _embedded().run(Assess(PROFILE, ev), CallContext())
        members = await _embedded().run(AssemblePanel(PROFILE, a), CallContext())
        t0 = time.perf_counter()
        await asyncio.gather(
            *(
                tri.run(Consult(PROFILE, m, a.problems, a.options, ev), CallContext())
                for m in members
            )
        )
        wall = time.perf_counter() - t0
    finally:
        await tri.aclose()
    rounds = -(-len(members) // 2)
    assert wall >= rounds * SLEEPY_LATENCY_S * 0.9


async def test_invalid_json_gets_one_repair_then_fails_the_step(
    triton_server: ServerHandle,
) -> None:
    tri = TritonExperts(settings(triton_server, adjudicator_model="canoe-invalid"))
    log = UsageLog()
    a = await _embedded().run(Assess(PROFILE, docs()), CallContext())
    try:
        with pytest.raises(StepFailed, match="after one repair: answer is not valid JSON"):
            await tri.run(Arbitrate(PROFILE, a.problems[0], ()), CallContext(recorder=log))
    finally:
        await tri.aclose()
    assert [c.ok for c in log.calls] == [True, True]  # the call and its one repair


async def test_a_member_s_invalid_answer_loses_its_votes_and_arguments_only(
    triton_server: ServerHandle,
) -> None:
    """One call per member: the pharmacist's answer is broken (and so is its repair), so its
    votes and its arguments are both recorded missing; the other members' count as ever."""
    tri = TritonExperts(settings(triton_server, agent_model="canoe-invalid-pharmacist"))
    try:
        result = await plan(tri)
    finally:
        await tri.aclose()
    d = result.deliberation
    roles = [r for r, _ in d.meta.panel]
    assert "pharmacist" in roles and len(roles) > 1
    assert [m.split(":")[0] for m in d.meta.missing] == ["votes and arguments of pharmacist"]
    assert "after one repair" in d.meta.missing[0]
    consults = [c for c in result.calls if c.step == "consult"]
    assert len(consults) == len(roles) + 1  # the pharmacist's call was repaired once
    voters = {v.role for p in d.problems for v in p.votes}
    arguers = {a.role for o in d.options for a in o.arguments}
    assert "pharmacist" not in voters | arguers and voters and arguers
    assert scores(result)


async def test_a_garbage_score_loses_the_arguments_it_was_to_score_never_guessed(
    triton_server: ServerHandle,
) -> None:
    """Every score answer (and its one repair) puts words where the five numbers belong: no
    argument gets a strength, each option's call is recorded missing, and with nothing scored
    the plan fails rather than deliberate on made-up strengths."""
    tri = TritonExperts(settings(triton_server, models=(("score", "canoe-garbage-score"),)))
    log = UsageLog()
    try:
        with pytest.raises(StepFailed, match="no argument could be scored") as exc:
            await Planner(tri, _evidence(), call_deadline_s=60.0).plan(
                PROFILE, plan_id="plan-1", created="2024-05-01T00:00:00Z"
            )
        ev = docs()
        a = await _embedded().run(Assess(PROFILE, ev), CallContext())
        m = (await _embedded().run(AssemblePanel(PROFILE, a), CallContext()))[0]
        args = (
            await _embedded().run(Consult(PROFILE, m, a.problems, a.options, ev), CallContext())
        ).arguments
        option = next(o for o in a.options if o.id == args[0].option_id)
        with pytest.raises(StepFailed, match="after one repair"):
            await tri.run(Score(PROFILE, option, args[:1], ev), CallContext(recorder=log))
    finally:
        await tri.aclose()
    assert "strength of" in exc.value.message and "score: unusable answer" in exc.value.message
    assert [c.step for c in log.calls] == ["score", "score"]  # the call and its one repair


async def test_a_garbage_score_for_one_option_loses_that_option_s_arguments_only(
    triton_server: ServerHandle,
) -> None:
    """The score model answers garbage for one option's call only (scripted by routing that
    step kind to it for one call): the plan goes on, that option's arguments are missing."""
    good = TritonExperts(settings(triton_server))
    bad = TritonExperts(settings(triton_server, models=(("score", "canoe-garbage-score"),)))
    spoiled: list[str] = []

    class OneBadScore:
        name = good.name

        async def is_ready(self) -> bool:
            return True

        async def run(self, step: Any, ctx: CallContext) -> Any:
            if isinstance(step, Score) and not spoiled:
                spoiled.append(step.option.id)
                return await bad.run(step, ctx)
            return await good.run(step, ctx)

        async def aclose(self) -> None:
            await good.aclose()
            await bad.aclose()

    experts = OneBadScore()
    try:
        result = await plan(experts)
    finally:
        await experts.aclose()
    d = result.deliberation
    by_id = {o.id: o for o in d.options}
    assert spoiled and by_id[spoiled[0]].arguments == ()  # none given a made-up strength
    (missing,) = d.meta.missing
    assert missing.startswith("strength of ") and "score: unusable answer" in missing
    assert by_id[spoiled[0]].title in missing
    # every other option deliberates on the strengths the embedded plan gives it
    reference = {o.id: o for o in (await plan(_embedded())).deliberation.options}
    others = [o for o in d.options if o.id != spoiled[0]]
    # (argument ids are numbered per call on Triton, per knowledge point on the embedded one)
    got = {o.id: [(g.role, g.stance, g.tau) for g in o.arguments] for o in others}
    assert others and got == {
        o.id: [(g.role, g.stance, g.tau) for g in reference[o.id].arguments] for o in others
    }


async def test_every_member_s_invalid_answer_fails_the_plan(triton_server: ServerHandle) -> None:
    tri = TritonExperts(settings(triton_server, models=(("consult", "canoe-invalid"),)))
    try:
        with pytest.raises(StepFailed, match="no panel member contributed arguments") as exc:
            await plan(tri)
    finally:
        await tri.aclose()
    assert "votes and arguments of pharmacist: consult: unusable answer" in exc.value.message


async def test_truncated_answer_is_repaired_once(triton_server: ServerHandle) -> None:
    tri = TritonExperts(settings(triton_server, agent_model="canoe-truncate-once"))
    log = UsageLog()
    try:
        a = await tri.run(Assess(PROFILE, docs()), CallContext(recorder=log))
    finally:
        await tri.aclose()
    assert a == _stated(await _embedded().run(Assess(PROFILE, docs()), CallContext()))
    assert len(log.calls) == 2


async def test_out_of_range_values_never_reach_the_plan(triton_server: ServerHandle) -> None:
    tri = TritonExperts(
        settings(
            triton_server,
            models=(("adjudicate", "canoe-out-of-range"), ("consult", "canoe-out-of-range")),
        )
    )
    ev = docs()
    try:
        a = await _embedded().run(Assess(PROFILE, ev), CallContext())
        m = (await _embedded().run(AssemblePanel(PROFILE, a), CallContext()))[0]
        consult = Consult(PROFILE, m, a.problems, a.options, ev)
        with pytest.raises(StepFailed, match="maximum"):
            await tri.run(consult, CallContext())
        args = (await _embedded().run(consult, CallContext())).arguments
        with pytest.raises(StepFailed, match="enum"):  # winner "both" favours nobody
            await tri.run(
                Adjudicate(PROFILE, a.options[0], ((args[0], args[-1]),), ev), CallContext()
            )
    finally:
        await tri.aclose()


async def test_unparseable_adjudications_leave_clashes_undecided(
    triton_server: ServerHandle,
) -> None:
    tri = TritonExperts(settings(triton_server, adjudicator_model="canoe-invalid"))
    try:
        result = await plan(tri)
    finally:
        await tri.aclose()
    clashes = [c for o in result.deliberation.options for c in o.clashes]
    if not clashes:
        pytest.skip("this fixture produced no near-tied pair")
    assert all(c.winner is None for c in clashes)
    assert any(m.startswith("adjudication") for m in result.deliberation.meta.missing)


async def test_slow_model_passes_its_deadline_and_is_recorded_missing(
    triton_server: ServerHandle,
) -> None:
    tri = TritonExperts(settings(triton_server, models=(("synthesize", "canoe-slow"),)))
    t0 = time.perf_counter()
    try:
        result = await plan(tri, deadline_s=3.0)
    finally:
        await tri.aclose()
    assert time.perf_counter() - t0 < 30
    assert [m.split(":")[0] for m in result.deliberation.meta.missing] == ["synthesis"]
    assert "deadline" in result.deliberation.meta.missing[0]
    with pytest.raises(BackendTimeout):
        tri2 = TritonExperts(settings(triton_server, agent_model="canoe-slow"))
        try:
            await tri2.run(Assess(PROFILE, docs()), CallContext(deadline_s=1.0))
        finally:
            await tri2.aclose()


async def test_schema_travels_under_the_configured_key(triton_server: ServerHandle) -> None:
    # The test server expects "structured_outputs"; an old-style key is refused by it.
    tri = TritonExperts(settings(triton_server, guided_key="guided_decoding"))
    try:
        with pytest.raises(StepFailed, match="structured_outputs"):
            await tri.run(Assess(PROFILE, docs()), CallContext())
    finally:
        await tri.aclose()


async def test_max_tokens_budget_cuts_the_answer_and_fails_cleanly(
    triton_server: ServerHandle,
) -> None:
    tri = TritonExperts(settings(triton_server, max_tokens=(("assess", 40),)))
    try:
        with pytest.raises(StepFailed, match="truncated"):
            await tri.run(Assess(PROFILE, docs()), CallContext())
    finally:
        await tri.aclose()


async def test_triton_down_at_start_is_a_clear_error_not_a_hang() -> None:
    url = f"127.0.0.1:{free_port()}"
    tri = TritonExperts(TritonSettings(url=url, backoff_s=0.05, breaker_threshold=2))
    t0 = time.perf_counter()
    try:
        assert not await tri.is_ready()
        with pytest.raises(BackendUnavailable, match="unavailable"):
            await plan(tri)
        with pytest.raises(BackendUnavailable):
            await plan(tri)
        with pytest.raises(BackendUnavailable, match="circuit open"):
            await tri.run(Assess(PROFILE, ()), CallContext())
    finally:
        await tri.aclose()
    assert time.perf_counter() - t0 < 10


async def test_triton_killed_mid_plan_fails_fast(own_triton_server: ServerHandle) -> None:
    tri = TritonExperts(
        TritonSettings(
            url=own_triton_server.url,
            agent_model="canoe-sleepy",
            adjudicator_model="canoe-sleepy",
            backoff_s=0.05,
            breaker_threshold=2,
        )
    )
    task = asyncio.ensure_future(plan(tri))
    await asyncio.sleep(2.5)  # assess and panel done, the members' calls in flight
    t0 = time.perf_counter()
    own_triton_server.kill()
    try:
        with pytest.raises(BackendUnavailable):
            await asyncio.wait_for(task, 30)
        assert time.perf_counter() - t0 < 15
        # Calls cancelled with the plan did not all count: the breaker opens within its
        # threshold of further failures, and then answers at once.
        for _ in range(3):
            t1 = time.perf_counter()
            try:
                await tri.run(Assess(PROFILE, ()), CallContext())
            except BackendUnavailable as exc:
                if "circuit open" in exc.message:
                    break
        else:
            pytest.fail("the circuit never opened")
        assert time.perf_counter() - t1 < 0.5
        assert not await tri.is_ready()
    finally:
        await tri.aclose()
