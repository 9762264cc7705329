"""A contested version gets a synthesis of its own: on a model backend, a new model call only
when the contestation changed an included option (its calls returned for the version's token
accounting); on the embedded backend, always, from the deliberation, with no call."""

from __future__ import annotations

from service.core import DecideOption, Evaluation, RejectArgument, apply, evaluate
from service.core.model import Deliberation
from service.pipeline import Planner, deterministic
from tests.fakes import ScriptedExperts, StaticEvidence
from tests.pipeline.test_pipeline import PROFILE, scripted

WHO = {"actor": "Practitioner/1", "at": "2026-01-01T00:00:00Z"}


async def _planned(experts: ScriptedExperts) -> tuple[Planner, Deliberation, Evaluation]:
    planner = Planner(experts, StaticEvidence(), coverage=None, knowledge=None, known=None)
    result = await planner.plan(PROFILE, plan_id="p", created="2026-01-01T00:00:00Z")
    return planner, result.deliberation, result.evaluation


async def test_a_model_backend_writes_again_only_when_an_included_option_changed() -> None:
    experts = scripted()
    planner, d, ev = await _planned(experts)
    assert not deterministic(experts)
    assert d.meta.synthesis == "2 included, 0 excluded"
    assert experts.calls["synthesize"] == 1

    # rejecting the attack on o1 raises its score: an included option changed
    d2 = apply(d, RejectArgument("a1"), task_id="t1", **WHO)
    ev2 = evaluate(d2, previous=ev)
    assert ev2.option("o1").score != ev.option("o1").score
    d2, calls = await planner.resynthesise(ev, d2, ev2)
    assert experts.calls["synthesize"] == 2
    assert [(c.step, c.input_tokens, c.output_tokens) for c in calls] == [("synthesize", 10, 5)]
    assert d2.meta.synthesis == "2 included, 0 excluded"

    # excluding o2 by hand: the narrative is written again, and says so
    d3 = apply(d2, DecideOption("o2", "exclude"), task_id="t2", **WHO)
    ev3 = evaluate(d3, previous=ev2)
    d3, calls = await planner.resynthesise(ev2, d3, ev3)
    assert d3.meta.synthesis == "1 included, 1 excluded" and len(calls) == 1

    # a change that leaves every included option and its score as they were: no call
    d4 = apply(d3, DecideOption("o2", "exclude"), task_id="t3", **WHO)
    ev4 = evaluate(d4, previous=ev3)
    same, calls = await planner.resynthesise(ev3, d4, ev4)
    assert calls == () and same.meta.synthesis == d3.meta.synthesis
    assert experts.calls["synthesize"] == 3


async def test_a_failed_model_synthesis_leaves_no_stale_text() -> None:
    experts = scripted()
    planner, d, ev = await _planned(experts)
    d2 = apply(d, RejectArgument("a1"), task_id="t1", **WHO)
    ev2 = evaluate(d2, previous=ev)
    experts.fail_roles = frozenset({""})  # the synthesis step has no role: it fails
    d2, calls = await planner.resynthesise(ev, d2, ev2)
    assert len(calls) == 1  # what the failed call cost is still counted
    assert d2.meta.synthesis == ""
    assert any(m.startswith("synthesis: ") for m in d2.meta.missing)
