"""The pipeline's orchestration on a scripted backend: routing, cost discipline, failures.

The numbers are worked out by hand from CANOE eq. 8 and 10-12 in the comments.
"""

from __future__ import annotations

import asyncio
import time
from datetime import date

import pytest

from inference.protocol import (
    Adjudicate,
    ArgumentDraft,
    Assessment,
    CandidateOption,
    CandidateProblem,
    PanelMember,
    ProblemVote,
    Relation,
)
from service.errors import BackendUnavailable, StepFailed
from service.pipeline import Planner, Progress
from service.record.profile import PatientProfile
from tests.fakes import ScriptedExperts, StaticEvidence

PROFILE = PatientProfile(
    ref="Patient/p1", sex="female", birth_date=date(1940, 1, 1), as_of=date(2021, 1, 1)
)


def _vote(pid: str, role: str, v: str) -> ProblemVote:
    return ProblemVote(pid, role, v, 0.8, "quoted fact", f"{role} on {pid}")  # type: ignore[arg-type]


def _arg(aid: str, oid: str, role: str, stance: str, tau: float) -> ArgumentDraft:
    return ArgumentDraft(aid, oid, role, stance, f"{role} says", (), ("Condition/c1",), tau)  # type: ignore[arg-type]


def scripted(**kw: object) -> ScriptedExperts:
    problems = (
        CandidateProblem("p1", "Diabetes", ("Condition/c1",), "accept", ""),
        CandidateProblem("p2", "Stale problem", ("Condition/c2",), "reject", ""),
        CandidateProblem("p3", "Out of scope", ("Condition/c3",), "reject", ""),
    )
    options = (
        CandidateOption("o1", "Taper diazepam", "medication", "slowly"),
        CandidateOption("o2", "Check HbA1c", "monitoring", "lab"),
    )
    panel = (
        PanelMember("gp", "all"),
        PanelMember("pharmacist", "meds"),
        PanelMember("nurse", "falls"),
    )
    votes = {
        # p1: k=2 r=0 n=1 -> strong consensus accept; p2: k=1 r=1 -> conflict;
        # p3: k=0 r=0 n=3 -> weak consensus -> attending's reject.
        "gp": (_vote("p1", "gp", "KEEP"), _vote("p2", "gp", "KEEP"), _vote("p3", "gp", "NEUTRAL")),
        "pharmacist": (
            _vote("p1", "pharmacist", "KEEP"),
            _vote("p2", "pharmacist", "REFUSE"),
            _vote("p3", "pharmacist", "NEUTRAL"),
        ),
        "nurse": (
            _vote("p1", "nurse", "NEUTRAL"),
            _vote("p2", "nurse", "NEUTRAL"),
            _vote("p3", "nurse", "NEUTRAL"),
        ),
    }
    arguments = {
        "pharmacist": (_arg("s1", "o1", "pharmacist", "support", 0.7),),
        "gp": (_arg("s2", "o1", "gp", "support", 0.9), _arg("s3", "o2", "gp", "support", 0.8)),
        "nurse": (_arg("a1", "o1", "nurse", "attack", 0.6),),
    }
    base = dict(
        assessment=Assessment("moderate", ("meds",), problems, options),
        panel=panel,
        votes=votes,
        arguments=arguments,
    )
    base.update(kw)
    return ScriptedExperts(**base)  # type: ignore[arg-type]


async def _plan(experts: ScriptedExperts, **kw: object):
    planner = Planner(experts, StaticEvidence(), **kw)  # type: ignore[arg-type]
    return await planner.plan(PROFILE, plan_id="plan-1", created="2021-01-01T00:00:00+00:00")


async def test_routing_arbitrates_only_the_conflict_and_adjudicates_only_near_ties() -> None:
    x = scripted()
    result = await _plan(x)
    ev = result.evaluation
    assert ev.problem("p1").path == "strong_consensus" and ev.problem("p1").decision == "accept"
    assert ev.problem("p2").path == "conflict" and ev.problem("p2").decision == "accept"
    assert ev.problem("p2").decided_by == "arbitration"
    assert ev.problem("p3").path == "weak_consensus" and ev.problem("p3").decision == "reject"
    # one conflict -> one arbitration; s1 (0.7) vs a1 (0.6) is the only pair with |diff| < 0.2
    # (s2 0.9 vs a1 0.6 differs by 0.3); only o1 has >= 2 arguments to relate.
    assert x.calls["arbitrate"] == 1
    assert x.calls["adjudicate"] == 1
    assert x.calls["relate"] == 1
    o1 = next(o for o in result.deliberation.options if o.id == "o1")
    assert [(c.support, c.attack, c.winner) for c in o1.clashes] == [("s1", "a1", "support")]


async def test_scores_match_hand_computation() -> None:
    result = await _plan(scripted())
    ev = result.evaluation
    # o1: s1 wins its one clash: tau~ = 0.7 + 0.15*(2*1-1) = 0.85; a1 loses: 0.6 - 0.15 = 0.45;
    # s2 in no clash keeps 0.9. Leaves: sigma = tau~. E(o1) = 0.85 + 0.9 - 0.45 = 1.3;
    # h(1.3) = 1.69 / 2.69; sigma(o1) = 0.5 + 0.5 * h = 0.8141263940520446.
    assert ev.option("o1").score == pytest.approx(0.5 + 0.5 * 1.69 / 2.69, abs=1e-12)
    assert ev.option("o1").nodes["s1"].tau_calibrated == pytest.approx(0.85)
    assert ev.option("o1").nodes["a1"].tau_calibrated == pytest.approx(0.45)
    # o2: E = 0.8, h = 0.64 / 1.64, sigma = 0.5 + 0.5 h.
    assert ev.option("o2").score == pytest.approx(0.5 + 0.5 * 0.64 / 1.64, abs=1e-12)
    assert ev.plan == ("o1", "o2")  # medication before monitoring


async def test_relations_between_arguments_become_edges() -> None:
    rel = {"o1": (Relation("s1", "s2", "support"), Relation("bogus", "s2", "attack"))}
    result = await _plan(scripted(relations=rel))
    o1 = next(o for o in result.deliberation.options if o.id == "o1")
    assert ("s1", "s2", "support") in {(e.source, e.target, e.relation) for e in o1.edges}
    assert all(e.source != "bogus" for e in o1.edges)  # edges to unknown ids are dropped


async def test_a_failed_member_loses_its_votes_and_arguments_and_the_plan_goes_on() -> None:
    x = scripted(fail_roles=frozenset({"nurse"}))
    result = await _plan(x)
    # One call per member (its votes and its arguments): one failed call, one missing entry.
    assert x.calls["consult"] == 3
    missing = result.deliberation.meta.missing
    assert [m.split(":")[0] for m in missing] == ["votes and arguments of nurse"]
    # Routed as if the nurse had not voted: p1 k=2 r=0 n=0 is still a strong consensus, p2
    # k=1 r=1 still a conflict (arbitrated), p3 k=r=0 n=2 still weak (the attending's reject).
    problems = {p.id: p for p in result.deliberation.problems}
    assert all(v.role != "nurse" for p in problems.values() for v in p.votes)
    assert {p: len(problems[p].votes) for p in problems} == {"p1": 2, "p2": 2, "p3": 2}
    ev = result.evaluation
    assert [ev.problem(p).path for p in ("p1", "p2", "p3")] == [
        "strong_consensus",
        "conflict",
        "weak_consensus",
    ]
    assert x.calls["arbitrate"] == 1
    o1 = next(o for o in result.deliberation.options if o.id == "o1")
    assert {a.id for a in o1.arguments} == {"s1", "s2"}


async def test_a_plan_needs_one_member_s_arguments() -> None:
    x = scripted(fail_roles=frozenset({"gp", "pharmacist", "nurse"}))
    with pytest.raises(StepFailed, match="no panel member contributed arguments") as exc:
        await _plan(x)
    assert exc.value.message.count("votes and arguments of") == 3
    assert x.calls["arbitrate"] == x.calls["relate"] == x.calls["synthesize"] == 0


async def test_no_votes_at_all_leave_each_problem_to_the_attending() -> None:
    # Every member answers with arguments and no votes: k = r = n = 0 on every problem, a weak
    # consensus that keeps the attending's initial judgement; nothing to arbitrate.
    x = scripted(votes={})
    result = await _plan(x)
    ev = result.evaluation
    assert all(not p.votes for p in result.deliberation.problems)
    assert {p: (ev.problem(p).path, ev.problem(p).decision) for p in ("p1", "p2", "p3")} == {
        "p1": ("weak_consensus", "accept"),
        "p2": ("weak_consensus", "reject"),
        "p3": ("weak_consensus", "reject"),
    }
    assert x.calls["arbitrate"] == 0 and not result.deliberation.meta.missing


async def test_backend_down_fails_the_plan_clearly() -> None:
    with pytest.raises(BackendUnavailable):
        await _plan(scripted(down=True))


async def test_independent_calls_run_concurrently() -> None:
    x = scripted(delay_s=0.1)
    t0 = time.perf_counter()
    result = await _plan(x)
    wall = time.perf_counter() - t0
    n_calls = sum(x.calls.values())
    # assess, panel, 3 consult, 2 score (one per option with arguments), arbitrate, relate,
    # adjudicate, synthesize; dependent stages: assess, panel, consult, score, (arbitrate ||
    # relate), adjudicate, synthesize.
    assert n_calls == 11 and x.calls["score"] == 2
    assert wall < 0.1 * 9, f"{wall:.2f}s for {n_calls} calls of 0.1s"
    assert x.max_in_flight >= 3
    assert len(result.calls) == n_calls


async def test_progress_reports_every_stage_and_counts_calls() -> None:
    events: list[Progress] = []
    planner = Planner(scripted(), StaticEvidence())
    await planner.plan(PROFILE, plan_id="p", created="t", progress=events.append)
    stages = [e.stage for e in events if e.state == "finished"]
    for stage in (
        "evidence",
        "assessment",
        "panel",
        "consultation",
        "scoring",
        "votes",
        "arena",
        "propagation",
        "synthesis",
    ):
        assert stage in stages
    last = events[-1]
    assert last.calls_done == last.calls_total


async def test_cancelling_stops_outstanding_calls() -> None:
    x = scripted(delay_s=0.5)
    task = asyncio.ensure_future(_plan(x))
    await asyncio.sleep(0.7)  # a call is in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert x.in_flight == 0
    assert x.calls["synthesize"] == 0


class _PartialAdjudicator(ScriptedExperts):
    """Adjudicates only the first pair it is asked about, or fails the whole call."""

    fail: bool = False

    async def run(self, step, ctx):  # type: ignore[no-untyped-def, override]
        answer = await super().run(step, ctx)
        if isinstance(step, Adjudicate):
            if self.fail:
                raise StepFailed("adjudicate: unusable answer after one repair")
            return answer[:1]
        return answer


@pytest.mark.parametrize("fail", [False, True])
async def test_near_tied_pairs_of_one_option_go_in_one_call_each_judged_on_its_own(
    fail: bool,
) -> None:
    arguments = {
        "pharmacist": (
            _arg("s1", "o1", "pharmacist", "support", 0.7),
            _arg("s4", "o1", "pharmacist", "support", 0.65),
        ),
        "nurse": (_arg("a1", "o1", "nurse", "attack", 0.6),),
        "gp": (_arg("s3", "o2", "gp", "support", 0.8), _arg("a3", "o2", "gp", "attack", 0.75)),
    }
    x = _PartialAdjudicator(**vars(scripted(arguments=arguments)))
    x.fail = fail
    result = await _plan(x)
    # o1: (s1, a1) and (s4, a1) near-tied -> one call; o2: (s3, a3) -> one call; relations
    # for both options in one call.
    assert x.calls["adjudicate"] == 2 and x.calls["relate"] == 1
    clashes = {
        (c.support, c.attack): c.winner for o in result.deliberation.options for c in o.clashes
    }
    missing = [m for m in result.deliberation.meta.missing if m.startswith("adjudication")]
    if fail:  # a failed call leaves every pair of it undecided, one missing entry per call
        assert clashes == {("s1", "a1"): None, ("s4", "a1"): None, ("s3", "a3"): None}
        assert len(missing) == 2 and all("after one repair" in m for m in missing)
    else:  # a pair the answer left out counts for nobody and is recorded on its own
        assert clashes == {("s1", "a1"): "support", ("s4", "a1"): None, ("s3", "a3"): "support"}
        assert missing == ["adjudication s4 vs a1: no verdict for this pair"]
