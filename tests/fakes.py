"""A scripted Experts backend for unit tests of one piece (never proof that the whole works).

Answers are scripted per step; a step can be told to fail for given roles, or to sleep, so that
tests can check the pipeline's routing, cost discipline, concurrency and failure recording.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from inference.protocol import (
    Arbitration,
    ArgumentDraft,
    Assessment,
    CallContext,
    CandidateOption,
    CandidateProblem,
    ClashVerdict,
    EvidenceDoc,
    ModelCall,
    PanelMember,
    ProblemVote,
    Relation,
)
from service.core.profile import PatientProfile
from service.errors import BackendUnavailable, StepFailed


@dataclass
class ScriptedExperts:
    assessment: Assessment
    panel: tuple[PanelMember, ...]
    votes: dict[str, tuple[ProblemVote, ...]]  # role -> votes
    arguments: dict[str, tuple[ArgumentDraft, ...]]  # role -> arguments
    relations: dict[str, tuple[Relation, ...]] = field(default_factory=dict)  # option -> edges
    clash_winner: str = "support"
    arbitration: str = "accept"
    fail_roles: frozenset[str] = frozenset()  # vote/argue of these roles raise StepFailed
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

    async def assess(
        self, profile: PatientProfile, evidence: Sequence[EvidenceDoc], ctx: CallContext
    ) -> Assessment:
        await self._enter("assess", ctx)
        return self.assessment

    async def assemble_panel(
        self, profile: PatientProfile, assessment: Assessment, ctx: CallContext
    ) -> tuple[PanelMember, ...]:
        await self._enter("panel", ctx)
        return self.panel

    async def vote(
        self,
        profile: PatientProfile,
        member: PanelMember,
        problems: Sequence[CandidateProblem],
        ctx: CallContext,
    ) -> tuple[ProblemVote, ...]:
        await self._enter("vote", ctx)
        if member.role in self.fail_roles:
            raise StepFailed(f"{member.role} answered invalid JSON twice")
        return self.votes.get(member.role, ())

    async def argue(
        self,
        profile: PatientProfile,
        member: PanelMember,
        options: Sequence[CandidateOption],
        evidence: Sequence[EvidenceDoc],
        ctx: CallContext,
    ) -> tuple[ArgumentDraft, ...]:
        await self._enter("argue", ctx)
        if member.role in self.fail_roles:
            raise StepFailed(f"{member.role} answered invalid JSON twice")
        return self.arguments.get(member.role, ())

    async def relate(
        self,
        profile: PatientProfile,
        option: CandidateOption,
        arguments: Sequence[ArgumentDraft],
        ctx: CallContext,
    ) -> tuple[Relation, ...]:
        await self._enter("relate", ctx)
        return self.relations.get(option.id, ())

    async def adjudicate(
        self,
        profile: PatientProfile,
        option: CandidateOption,
        support: ArgumentDraft,
        attack: ArgumentDraft,
        evidence: Sequence[EvidenceDoc],
        ctx: CallContext,
    ) -> ClashVerdict:
        await self._enter("adjudicate", ctx)
        return ClashVerdict(support.id, attack.id, self.clash_winner, "scripted")  # type: ignore[arg-type]

    async def arbitrate(
        self,
        profile: PatientProfile,
        problem: CandidateProblem,
        votes: Sequence[ProblemVote],
        ctx: CallContext,
    ) -> Arbitration:
        await self._enter("arbitrate", ctx)
        return Arbitration(problem.id, self.arbitration, "scripted")  # type: ignore[arg-type]

    async def synthesize(
        self,
        profile: PatientProfile,
        included: Sequence[tuple[CandidateOption, float]],
        excluded: Sequence[tuple[CandidateOption, float]],
        ctx: CallContext,
    ) -> str:
        await self._enter("synthesize", ctx)
        return f"{len(included)} included, {len(excluded)} excluded"

    async def aclose(self) -> None:
        return None


@dataclass
class StaticEvidence:
    docs: tuple[EvidenceDoc, ...] = ()
    version: str = "test-1"

    def retrieve(self, profile: PatientProfile, k: int = 24) -> tuple[EvidenceDoc, ...]:
        return self.docs[:k]
