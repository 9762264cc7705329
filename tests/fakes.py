"""A scripted Experts backend for unit tests of one piece (never proof that the whole works).

Answers are scripted per step; a step can be told to fail for given roles, or to sleep, so that
tests can check the pipeline's routing, cost discipline, concurrency and failure recording.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from inference.protocol import (
    Adjudicate,
    Arbitrate,
    Arbitration,
    ArgumentDraft,
    ArgumentScore,
    AssemblePanel,
    Assess,
    Assessment,
    CallContext,
    ClashVerdict,
    Consult,
    Consultation,
    EvidenceDoc,
    ModelCall,
    PanelMember,
    ProblemVote,
    Relate,
    Relation,
    Score,
    Step,
    Synthesize,
)
from service.errors import BackendUnavailable, StepFailed
from service.record.profile import PatientProfile

R = TypeVar("R")


@dataclass
class ScriptedExperts:
    assessment: Assessment
    panel: tuple[PanelMember, ...]
    votes: dict[str, tuple[ProblemVote, ...]]  # role -> votes
    arguments: dict[str, tuple[ArgumentDraft, ...]]  # role -> arguments
    relations: dict[str, tuple[Relation, ...]] = field(default_factory=dict)  # option -> edges
    clash_winner: str = "support"
    arbitration: str = "accept"
    fail_roles: frozenset[str] = frozenset()  # consult calls of these roles raise StepFailed
    fail_scores: frozenset[str] = frozenset()  # score calls of these option ids raise StepFailed
    down: bool = False
    delay_s: float = 0.0
    name: str = "scripted/1"
    calls: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0

    async def _enter(self, step: str, ctx: CallContext) -> None:
        if self.down:
            raise BackendUnavailable("scripted backend is down")
        self.calls[step] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        if ctx.recorder is not None:
            ctx.recorder.record(ModelCall(step, self.name, 10, 5, self.delay_s * 1000, True))  # type: ignore[arg-type]

    async def is_ready(self) -> bool:
        return not self.down

    async def run(self, step: Step[R], ctx: CallContext) -> R:
        await self._enter(step.kind, ctx)
        if step.role in self.fail_roles:  # the consult calls of these roles
            raise StepFailed(f"{step.role} answered invalid JSON twice")
        if isinstance(step, Score) and step.option.id in self.fail_scores:
            raise StepFailed("score: unusable answer after one repair")
        answer: Any = self._answer(step)
        return cast(R, answer)

    def _answer(self, step: Step[Any]) -> Any:
        match step:
            case Assess():
                return self.assessment
            case AssemblePanel():
                return self.panel
            case Consult(member=m):
                return Consultation(self.votes.get(m.role, ()), self.arguments.get(m.role, ()))
            case Score(arguments=args):
                # the scripted strength on all five dimensions: its mean is that strength
                return tuple(ArgumentScore(g.id, *([g.tau or 0.0] * 5)) for g in args)
            case Relate(options=opts):
                return tuple(r for o in opts for r in self.relations.get(o.id, ()))
            case Adjudicate(pairs=pairs):
                return tuple(
                    ClashVerdict(s.id, a.id, self.clash_winner, "scripted")  # type: ignore[arg-type]
                    for s, a in pairs
                )
            case Arbitrate(problem=p):
                return Arbitration(p.id, self.arbitration, "scripted")  # type: ignore[arg-type]
            case Synthesize(included=inc, excluded=exc):
                return f"{len(inc)} included, {len(exc)} excluded"
        raise TypeError(type(step).__name__)

    async def aclose(self) -> None:
        return None


@dataclass
class StaticEvidence:
    docs: tuple[EvidenceDoc, ...] = ()
    version: str = "test-1"

    def retrieve(self, profile: PatientProfile, k: int = 24) -> tuple[EvidenceDoc, ...]:
        return self.docs[:k]
