"""The deliberation pipeline: one async orchestration shared by the CLI, gRPC and CDS Hooks.

Profile -> evidence -> attending assessment -> panel -> consultation (one call per member: its
votes and its arguments) -> scoring (each option's arguments scored apart, ``service.scoring``)
-> (routing and arbitration || argument relations and arena clashes) ->
A-QBAF -> synthesis. Independent model calls of a stage run concurrently under
one cap. A role's failed contribution
(``StepFailed``, a timed-out call) is recorded as missing and the plan goes on; a backend that
cannot be reached at all (``BackendUnavailable``), or a failed step nothing can go on without,
fails the plan. This module does orchestration only: the maths is ``service.core``, the
knowledge is behind ``inference.protocol.Experts``.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import date
from typing import Any, Final, Protocol, TypeVar, cast, get_args

from inference.knowledge.taken import with_taken
from inference.protocol import (
    Adjudicate,
    Arbitrate,
    ArgumentDraft,
    AssemblePanel,
    Assess,
    Assessment,
    CallContext,
    CandidateOption,
    CandidateProblem,
    ClashVerdict,
    Consult,
    EvidenceDoc,
    Experts,
    KnownOption,
    ModelCall,
    PanelMember,
    Priority,
    ProblemVote,
    Relate,
    Relation,
    Synthesize,
    UrgencyClass,
)
from service.core import Evaluation, evaluate, find_clashes, route
from service.core.model import (
    ActionKind,
    Argument,
    Clash,
    Coverage,
    Deliberation,
    Edge,
    KnowledgeStamp,
    Meta,
    Option,
    Parameters,
    PatientWording,
    Problem,
    SourceRecord,
    Timeframe,
)
from service.core.model import (
    Vote as CoreVote,
)
from service.errors import BackendTimeout, BackendUnavailable, StepFailed
from service.record.profile import PatientProfile
from service.scoring import apply_scores, score_requests
from service.text.summary import Wording, display_names, fact_words, patient_words
from service.text.synthesis import included_outline, synthesise
from service.work import checkpoint

__all__ = [
    "DELIBERATED_OPTION_FIELDS",
    "STAGES",
    "EvidenceSource",
    "PlanResult",
    "Planner",
    "Progress",
    "UsageLog",
    "candidate_from_option",
    "deterministic",
    "knowledge_coverage",
    "knowledge_stamp",
    "new_plan_id",
    "option_from_candidate",
]


def new_plan_id(content: bytes | None = None) -> str:
    """The one plan-id scheme of every entry point (CLI, gRPC, CDS Hooks): 32 lower-case hex
    digits. Random for a served plan; derived from ``content`` (the Bundle) for an offline plan,
    so that planning one file twice names the plan the same."""
    if content is None:
        return uuid.uuid4().hex
    return hashlib.sha256(content).hexdigest()[:32]


T = TypeVar("T")

# "consultation": every member's one call; "scoring": one call per option with arguments; then
# "votes" (routing and arbitration) and "arena" (relations and clashes) run concurrently.
STAGES: tuple[str, ...] = (
    "ingest",
    "evidence",
    "assessment",
    "panel",
    "consultation",
    "scoring",
    "votes",
    "arena",
    "propagation",
    "synthesis",
)


class EvidenceSource(Protocol):
    """The evidence base as the pipeline needs it (``inference.evidence.EvidenceBase``)."""

    @property
    def version(self) -> str: ...  # read-only: the evidence base is a frozen dataclass

    def retrieve(self, profile: PatientProfile, k: int = ...) -> Sequence[EvidenceDoc]: ...


@dataclass(frozen=True, slots=True)
class Progress:
    """One progress event: a stage started or finished, with model calls done / known so far."""

    stage: str
    state: str  # "started" | "finished"
    calls_done: int
    calls_total: int
    detail: str = ""


@dataclass(slots=True)
class UsageLog:
    """Collects the ModelCall records of one plan (the backends report into it)."""

    calls: list[ModelCall] = field(default_factory=list)

    def record(self, call: ModelCall) -> None:
        self.calls.append(call)


@dataclass(frozen=True, slots=True, repr=False)
class PlanResult:
    profile: PatientProfile
    deliberation: Deliberation
    evaluation: Evaluation
    evidence: tuple[EvidenceDoc, ...]
    calls: tuple[ModelCall, ...]
    timings: dict[str, float]  # stage -> seconds

    def __repr__(self) -> str:
        # Short and free of patient data: ``asyncio.run`` formats the finished task (and so
        # this result) when it restores the SIGINT handler, and a large record's full repr
        # took longer than the output stage.
        d = self.deliberation
        return f"PlanResult(plan_id={d.plan_id!r}, version={d.version}, options={len(d.options)})"


class _Run:
    """State of one plan run: usage, progress accounting and the concurrency cap."""

    def __init__(
        self,
        cap: int,
        deadline_s: float,
        progress: Callable[[Progress], None] | None,
    ) -> None:
        self.usage = UsageLog()
        self.ctx = CallContext(recorder=self.usage, deadline_s=deadline_s)
        self.sem = asyncio.Semaphore(cap)
        self.progress = progress
        self.done = 0
        self.total = 2  # assess + panel, grown as the plan reveals more calls
        self.timings: dict[str, float] = {}
        self.missing: list[str] = []
        # Every model call handed to ``call`` or ``optional``: one whose task was cancelled
        # before it ever ran (a sibling failed, the deadline passed) is closed when its stage
        # ends, never left to the interpreter as a coroutine never awaited.
        self._handed: list[Coroutine[Any, Any, Any]] = []

    def emit(self, stage: str, state: str, detail: str = "") -> None:
        if self.progress is not None:
            self.progress(Progress(stage, state, self.done, self.total, detail))

    def call(self, coro: Coroutine[Any, Any, T]) -> Coroutine[Any, Any, T]:
        wrapped = self._call(coro)
        self._handed += (coro, wrapped)
        return wrapped

    async def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            async with self.sem:
                try:
                    return await coro
                finally:
                    self.done += 1
        finally:
            # Cancelled while waiting for the cap (a sibling failed): the call never started;
            # close it so that it is not reported as a coroutine never awaited.
            if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
                coro.close()

    def optional(self, what: str, coro: Coroutine[Any, Any, T]) -> Coroutine[Any, Any, T | None]:
        """A contribution the plan can go on without: failure is recorded, not raised."""
        wrapped = self._optional(what, coro)
        self._handed += (coro, wrapped)
        return wrapped

    async def _optional(self, what: str, coro: Coroutine[Any, Any, T]) -> T | None:
        try:
            return await self._call(coro)
        except BackendUnavailable:
            raise
        except (StepFailed, BackendTimeout) as exc:
            self.missing.append(f"{what}: {exc.message}")
            return None

    async def stage(self, name: str, work: Awaitable[T]) -> T:
        try:
            checkpoint()
        except BaseException:
            # the work was stopped before this stage: its coroutine is closed, never left
            # un-awaited (a warning the interpreter prints at collection), and so are the calls
            # already handed to it as arguments, which no stage will run now
            if inspect.iscoroutine(work):
                work.close()
            self.close_unstarted()
            raise
        self.emit(name, "started")
        t0 = time.perf_counter()
        try:
            return await work
        except BaseException:
            # the stage failed or was stopped: the plan goes no further, so a call handed to
            # it that never ran never will
            self.close_unstarted()
            raise
        finally:
            self._handed = [
                c for c in self._handed if inspect.getcoroutinestate(c) != inspect.CORO_CLOSED
            ]
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0
            self.emit(name, "finished")

    def close_unstarted(self) -> None:
        """Close the handed calls that never ran."""
        for coro in self._handed:
            if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
                coro.close()


def knowledge_coverage(profile: PatientProfile) -> Coverage:
    """The coverage statement from the embedded knowledge (``inference.knowledge.coverage``),
    whichever backend argues: it says where the deterministic knowledge stops. Imported on
    first use, so a process that never plans does not load the knowledge."""
    from inference.knowledge import analyse
    from inference.knowledge.coverage import assess
    from inference.knowledge.presenting import gaps

    said = analyse(profile)  # cached per profile: the backend's own analysis
    cov = assess(profile)
    # a suspected diagnosis that a line of the knowledge acts on (a referral to confirm it) is
    # reasoned about: the statement does not list it as read by no check
    acted = {r for p in said.proposals for r in p.refs}
    kept = tuple(
        g for g in cov.gaps if not (g.key == "suspected-condition" and set(g.refs) <= acted)
    )
    return replace(
        cov,
        gaps=(*kept, *gaps(said.proposals)),
        claims_checked=said.claims_checked,
        withheld=said.withheld,
    )


def knowledge_options(profile: PatientProfile) -> Mapping[str, KnownOption]:
    """What the embedded knowledge states about the options it proposes for this profile, by
    id (the findings of its criteria, how soon to act): an option a model proposes under a
    knowledge option's id gets them, since a model's answer states neither."""
    from inference.embedded import known_options

    return known_options(profile)


def knowledge_stamp() -> KnowledgeStamp:
    """The knowledge plans use now (shipped version and hash, site overlay label and hash),
    whichever backend argues: the coverage statement and the criteria come from it."""
    from inference.knowledge.site import active

    return active().stamp


def patient_wordings(
    profile: PatientProfile, options: Iterable[Option]
) -> tuple[PatientWording, ...]:
    """Each activity in the patient's words, from the knowledge's patient templates
    (``inference.knowledge.patient``), whichever backend argues; imported on first use."""
    from inference.knowledge.patient import patient_wordings as words

    return words(profile, options)


class Planner:
    """Runs the whole deliberation for one profile. Stateless between plans; safe to share.

    ``coverage`` computes the plan's coverage statement (what it checked and could not) from
    the profile; ``None`` leaves it out. ``knowledge`` names the rules a plan was made with
    (recorded in its deliberation and Provenance); ``None`` leaves it out."""

    def __init__(
        self,
        experts: Experts,
        evidence_base: EvidenceSource,
        *,
        parameters: Parameters | None = None,
        concurrency: int = 8,
        call_deadline_s: float = 30.0,
        evidence_k: int = 24,
        coverage: Callable[[PatientProfile], Coverage] | None = knowledge_coverage,
        knowledge: Callable[[], KnowledgeStamp] | None = knowledge_stamp,
        known: Callable[[PatientProfile], Mapping[str, KnownOption]] | None = knowledge_options,
        wording: Wording | None = None,
    ) -> None:
        self.experts = experts
        self.evidence_base = evidence_base
        self.parameters = parameters or Parameters()
        self.concurrency = concurrency
        self.call_deadline_s = call_deadline_s
        self.evidence_k = evidence_k
        self.coverage = coverage
        self.knowledge = knowledge
        self.known = known
        self.wording = wording or Wording()

    async def plan(
        self,
        profile: PatientProfile,
        *,
        plan_id: str,
        created: str,
        progress: Callable[[Progress], None] | None = None,
        source_base: str = "",
    ) -> PlanResult:
        """``source_base``: the FHIR base of the system that sent the record, where known."""
        # What the patient takes, as every check and line reads it: the prescriptions and the
        # medicines the record's statements say are taken that nothing here prescribes.
        profile = with_taken(profile)
        run = _Run(self.concurrency, self.call_deadline_s, progress)
        x = self.experts
        ctx = run.ctx

        evidence = await run.stage("evidence", self._retrieve(profile))
        assessment: Assessment = await run.stage(
            "assessment", run.call(x.run(Assess(profile, evidence), ctx))
        )
        assessment = self._with_knowledge(profile, assessment)
        panel: tuple[PanelMember, ...] = await run.stage(
            "panel", run.call(x.run(AssemblePanel(profile, assessment), ctx))
        )
        if not panel:
            raise StepFailed("the attending assembled an empty panel")
        run.total += len(panel)

        # One call per member: its votes and its arguments. A failed call loses both (one
        # missing entry); votes are then routed as if the member had not voted.
        consultations = await run.stage(
            "consultation",
            _all(
                run.optional(
                    f"votes and arguments of {m.role}",
                    x.run(
                        Consult(profile, m, assessment.problems, assessment.options, evidence),
                        ctx,
                    ),
                )
                for m in panel
            ),
        )
        if all(c is None for c in consultations):
            raise StepFailed("no panel member contributed arguments: " + "; ".join(run.missing))
        votes_by_role = [c.votes if c else None for c in consultations]
        drafts = _unique_ids(d for c in consultations if c for d in c.arguments)
        drafts = await run.stage(
            "scoring", self._score(run, profile, assessment.options, drafts, evidence)
        )

        with _first_error():  # one stage failing cancels the other
            async with asyncio.TaskGroup() as group:
                votes_task = group.create_task(
                    run.stage(
                        "votes", self._reconcile(run, profile, assessment.problems, votes_by_role)
                    )
                )
                arena_task = group.create_task(
                    run.stage(
                        "arena", self._argue(run, profile, assessment.options, drafts, evidence)
                    )
                )
        problems, options = votes_task.result(), _spelled(arena_task.result(), self.wording)

        deliberation = Deliberation(
            plan_id=plan_id,
            version=1,
            patient_ref=profile.ref,
            parameters=self.parameters,
            problems=problems,
            options=options,
            meta=Meta(
                backend=x.name,
                evidence_version=self.evidence_base.version,
                complexity=assessment.complexity,
                dimensions=assessment.dimensions,
                panel=tuple((m.role, m.focus) for m in panel),
                missing=tuple(run.missing),
                unused_facts=tuple(f"{u.ref} {u.field}: {u.reason}" for u in profile.unused),
                created=created,
                facts=fact_words(
                    profile,
                    (
                        r
                        for o in options
                        for r in (*(f for a in o.arguments for f in a.facts), *o.refs)
                    ),
                    self.wording,
                ),
                names=display_names(profile),
                coverage=self.coverage(profile) if self.coverage is not None else None,
                sources=_cited_sources(profile, problems, options),
                source_base=source_base,
                knowledge=self.knowledge() if self.knowledge is not None else None,
                patient=patient_words(profile, created),
                patient_wordings=patient_wordings(profile, options),
            ),
        )
        evaluation = await run.stage("propagation", _now(evaluate, deliberation))

        synthesis: str | None
        if deterministic(x):  # the narrative is the deliberation's own words, no model call
            synthesis = await run.stage("synthesis", _now(synthesise, deliberation, evaluation))
        else:
            run.total += 1
            synthesis = await run.stage(
                "synthesis",
                run.optional("synthesis", self._synthesize(profile, deliberation, evaluation, ctx)),
            )
        deliberation = replace(
            deliberation,
            meta=replace(deliberation.meta, missing=tuple(run.missing), synthesis=synthesis or ""),
        )
        return PlanResult(
            profile=profile,
            deliberation=deliberation,
            evaluation=evaluation,
            evidence=tuple(evidence),
            calls=tuple(run.usage.calls),
            timings=dict(run.timings),
        )

    async def resynthesise(
        self, previous: Deliberation | Evaluation, d: Deliberation, ev: Evaluation
    ) -> tuple[Deliberation, tuple[ModelCall, ...]]:
        """``d`` (a contested version, evaluated in ``ev``) with a synthesis of its own, and the
        model calls that cost. The embedded backend rewrites it from the deliberation (no call);
        a model backend writes a new one only when the contestation changed an included option
        (``included_outline``; ``previous`` is the version contested, or its evaluation), from
        the options and scores alone (the record is not kept with a plan). A failed call leaves
        the previous narrative out, recorded as missing, rather than keep a text that is no
        longer true."""
        if deterministic(self.experts):
            return replace(d, meta=replace(d.meta, synthesis=synthesise(d, ev))), ()
        before = evaluate(previous) if isinstance(previous, Deliberation) else previous
        if not d.meta.synthesis or included_outline(before) == included_outline(ev):
            return d, ()
        run = _Run(1, self.call_deadline_s, None)
        text = await run.optional("synthesis", self._synthesize(_bare_profile(d), d, ev, run.ctx))
        meta = replace(d.meta, synthesis=text or "", missing=(*d.meta.missing, *run.missing))
        return replace(d, meta=meta), tuple(run.usage.calls)

    async def _retrieve(self, profile: PatientProfile) -> tuple[EvidenceDoc, ...]:
        return tuple(self.evidence_base.retrieve(profile, k=self.evidence_k))

    async def _reconcile(
        self,
        run: _Run,
        profile: PatientProfile,
        candidates: Sequence[CandidateProblem],
        votes_by_role: Sequence[tuple[ProblemVote, ...] | None],
    ) -> tuple[Problem, ...]:
        """CAMP hybrid routing; the attending arbitrates only the conflicts (one call each)."""
        by_problem: dict[str, list[ProblemVote]] = {c.id: [] for c in candidates}
        for votes in votes_by_role:
            for v in votes or ():
                if v.problem_id in by_problem:
                    by_problem[v.problem_id].append(v)
        conflicts = [
            c
            for c in candidates
            if route([_vote(v) for v in by_problem[c.id]], c.initial).path == "conflict"
        ]
        run.total += len(conflicts)
        verdicts = await _all(
            run.optional(
                f"arbitration of {c.display}",
                self.experts.run(Arbitrate(profile, c, tuple(by_problem[c.id])), run.ctx),
            )
            for c in conflicts
        )
        arbitration = {c.id: v for c, v in zip(conflicts, verdicts, strict=True) if v is not None}
        return tuple(
            Problem(
                id=c.id,
                display=c.display,
                initial=c.initial,
                votes=tuple(_vote(v) for v in by_problem[c.id]),
                refs=c.refs,
                arbitration=arbitration[c.id].decision if c.id in arbitration else None,
                arbitration_rationale=arbitration[c.id].rationale if c.id in arbitration else "",
            )
            for c in candidates
        )

    async def _argue(
        self,
        run: _Run,
        profile: PatientProfile,
        candidates: Sequence[CandidateOption],
        drafts: Sequence[ArgumentDraft],
        evidence: Sequence[EvidenceDoc],
    ) -> tuple[Option, ...]:
        """Relations between arguments, then clash adjudication on near-tied pairs only."""
        per_option: dict[str, list[ArgumentDraft]] = {o.id: [] for o in candidates}
        for d in drafts:
            if d.option_id in per_option:
                per_option[d.option_id].append(d)
        # Relations: one call for every option with two arguments or more.
        with_pairs = [o for o in candidates if len(per_option[o.id]) >= 2]
        relations: tuple[Relation, ...] | None = ()
        if with_pairs:
            run.total += 1
            relations = await run.optional(
                "relations",
                self.experts.run(
                    Relate(
                        profile,
                        tuple(with_pairs),
                        tuple(d for o in with_pairs for d in per_option[o.id]),
                    ),
                    run.ctx,
                ),
            )
        rel_by_option = {
            o.id: _valid_relations(relations or (), per_option[o.id]) for o in with_pairs
        }

        # Clashes: the near-tied pairs of one option adjudicated in one call, each pair judged
        # on its own.
        arguments_by_option = {
            o.id: tuple(_argument(d) for d in per_option[o.id]) for o in candidates
        }
        pairs_by_option = {
            o.id: find_clashes(arguments_by_option[o.id], self.parameters.delta) for o in candidates
        }
        contested = [o for o in candidates if pairs_by_option[o.id]]
        run.total += len(contested)
        by_id = {d.id: d for d in drafts}
        answers = await _all(
            self._adjudicate(
                run,
                profile,
                o,
                tuple((by_id[s], by_id[a]) for s, a in pairs_by_option[o.id]),
                evidence,
            )
            for o in contested
        )
        verdicts = {(v.support_id, v.attack_id): v for vs in answers for v in vs}
        clashes: dict[str, list[Clash]] = {o.id: [] for o in candidates}
        for o in candidates:
            for s, a in pairs_by_option[o.id]:
                v = verdicts.get((s, a))
                clashes[o.id].append(
                    Clash(
                        support=s,
                        attack=a,
                        winner=v.winner if v else None,
                        reason=v.rationale if v else "adjudication failed; counts for nobody",
                    )
                )

        options = []
        for o in candidates:
            args = arguments_by_option[o.id]
            edges = tuple(Edge(a.id, o.id, a.stance) for a in args) + tuple(
                Edge(r.source, r.target, r.relation) for r in rel_by_option.get(o.id, ())
            )
            options.append(
                option_from_candidate(o, arguments=args, edges=edges, clashes=tuple(clashes[o.id]))
            )
        return tuple(options)

    async def _score(
        self,
        run: _Run,
        profile: PatientProfile,
        options: Sequence[CandidateOption],
        drafts: Sequence[ArgumentDraft],
        evidence: Sequence[EvidenceDoc],
    ) -> list[ArgumentDraft]:
        """Every argument's strength from one scoring call per option (``service.scoring``);
        an argument left unscored is left out and recorded missing."""
        asked = score_requests(profile, options, drafts, evidence)
        run.total += len(asked)
        answers = await _all(
            run.optional(what, self.experts.run(req, run.ctx)) for what, req in asked
        )
        scored, missing = apply_scores(drafts, [req for _, req in asked], answers)
        run.missing.extend(missing)
        if drafts and not scored:
            raise StepFailed("no argument could be scored: " + "; ".join(run.missing))
        return scored

    def _with_knowledge(self, profile: PatientProfile, assessment: Assessment) -> Assessment:
        """Options that state no findings or urgency class (a model's) get what the knowledge
        states for the same id; an option the knowledge does not propose keeps none."""
        if self.known is None or all(
            o.findings
            and o.urgency_class is not None
            and o.action is not None
            and o.timeframe is not None
            for o in assessment.options
        ):
            return assessment
        known = self.known(profile)
        options = tuple(
            replace(
                o,
                findings=o.findings or k.findings,
                urgency_class=o.urgency_class or k.urgency_class,
                treats=o.treats or k.treats,
                action=o.action or k.action,
                timeframe=o.timeframe or k.timeframe,
                harm=o.harm if o.harm is not None else k.harm,
                transition=o.transition or k.transition,
            )
            if (k := known.get(o.id)) is not None
            else o
            for o in assessment.options
        )
        return replace(assessment, options=options)

    async def _adjudicate(
        self,
        run: _Run,
        profile: PatientProfile,
        option: CandidateOption,
        pairs: tuple[tuple[ArgumentDraft, ArgumentDraft], ...],
        evidence: Sequence[EvidenceDoc],
    ) -> tuple[ClashVerdict, ...]:
        """One call for the option's pairs. A failed call leaves every pair undecided (one
        missing entry for the call); a verdict for a pair not asked about is dropped, and a
        pair left without a verdict is undecided and recorded missing on its own."""
        verdicts = await run.optional(
            f"adjudication of {len(pairs)} pair(s) on {option.title}",
            self.experts.run(Adjudicate(profile, option, pairs, tuple(evidence)), run.ctx),
        )
        if verdicts is None:
            return ()
        asked = {(s.id, a.id) for s, a in pairs}
        kept = {
            (v.support_id, v.attack_id): v for v in verdicts if (v.support_id, v.attack_id) in asked
        }
        for s, a in pairs:
            if (s.id, a.id) not in kept:
                run.missing.append(f"adjudication {s.id} vs {a.id}: no verdict for this pair")
        return tuple(kept.values())

    async def _synthesize(
        self,
        profile: PatientProfile,
        d: Deliberation,
        ev: Evaluation,
        ctx: CallContext,
    ) -> str:
        by_id = {o.id: o for o in d.options}
        included: list[tuple[CandidateOption, float]] = []
        excluded: list[tuple[CandidateOption, float]] = []
        for r in ev.options:
            o = by_id[r.option_id]
            cand = candidate_from_option(o)
            (included if r.decision == "include" else excluded).append((cand, r.score))
        return await self.experts.run(Synthesize(profile, tuple(included), tuple(excluded)), ctx)


def deterministic(experts: Experts) -> bool:
    """True for the embedded backend (through any wrapper that keeps it as ``inner``): its
    synthesis is ``service.text.synthesis``, written from the deliberation, with no model call."""
    from inference.embedded import EmbeddedExperts

    while not isinstance(experts, EmbeddedExperts):
        inner = getattr(experts, "inner", None)
        if inner is None:
            return False
        experts = inner
    return True


def _bare_profile(d: Deliberation) -> PatientProfile:
    """The patient of a stored deliberation without the record (which a plan does not keep):
    what a model's synthesis of a contested version is sent."""
    day = (d.meta.created or "")[:10]
    try:
        as_of = date.fromisoformat(day)
    except ValueError:
        as_of = date.min
    return PatientProfile(ref=d.patient_ref, sex="unknown", birth_date=None, as_of=as_of)


def _spelled(options: tuple[Option, ...], wording: Wording) -> tuple[Option, ...]:
    """The options' clinician text (titles, descriptions, arguments) in the locale's
    spellings; as they are when it has none."""
    if not wording.spellings:
        return options
    return tuple(
        replace(
            o,
            title=wording.spell(o.title),
            description=wording.spell(o.description),
            arguments=tuple(replace(a, text=wording.spell(a.text)) for a in o.arguments),
        )
        for o in options
    )


def _cited_sources(
    profile: PatientProfile, problems: Iterable[Problem], options: Iterable[Option]
) -> tuple[SourceRecord, ...]:
    """Where the record's resources the deliberation cites live at the source."""
    cited = {profile.ref}
    cited.update(r for p in problems for r in p.refs)
    for o in options:
        cited.update(o.refs)
        cited.update(f for a in o.arguments for f in a.facts)
        if o.medication_ref:
            cited.add(o.medication_ref)
    return tuple(s for s in profile.sources if s.ref in cited)


async def _all(coros: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Their results, run concurrently in a task group: the first error cancels the siblings
    (no orphaned model calls) and is raised as itself (see ``_first_error``)."""
    with _first_error():
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in coros]
    return [t.result() for t in tasks]


@contextmanager
def _first_error() -> Iterator[None]:
    """A task group's ``ExceptionGroup`` unwrapped to the first error raised in it, with that
    error's own cause: callers and the error tree see ``StepFailed``, ``BackendUnavailable``...
    as the call raised it, never a group."""
    try:
        yield
    except BaseExceptionGroup as group:
        first: BaseException = group
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        # Raised here, it would get the group as its context: keep the chain it had instead.
        chain = first.__cause__, first.__context__, first.__suppress_context__
        try:
            raise first  # the cause stays the error's own, restored below
        finally:
            first.__cause__, first.__context__, first.__suppress_context__ = chain


async def _now(fn: Callable[..., T], *args: object) -> T:
    return fn(*args)


# An option crosses between the model protocol (``CandidateOption``) and the deliberation
# (``Option``) field by field, by name: every field of a candidate is kept in the deliberation,
# which adds only what deliberating makes (a test compares the two field sets).
DELIBERATED_OPTION_FIELDS: Final = frozenset({"arguments", "edges", "clashes", "human_decision"})
_SHARED_OPTION_FIELDS: Final = tuple(f.name for f in fields(CandidateOption))


def option_from_candidate(candidate: CandidateOption, **deliberated: Any) -> Option:
    """The deliberation's option for a candidate: every field of the candidate, and
    ``deliberated`` (some of ``DELIBERATED_OPTION_FIELDS``)."""
    shared = {name: getattr(candidate, name) for name in _SHARED_OPTION_FIELDS}
    return Option(**shared, **deliberated)


def candidate_from_option(option: Option) -> CandidateOption:
    """The candidate a deliberated option was (its stored priority and urgency class read back
    as the protocol's types)."""
    shared = {name: getattr(option, name) for name in _SHARED_OPTION_FIELDS}
    shared["priority"] = _priority(option.priority)
    shared["urgency_class"] = _urgency_class(option.urgency_class)
    shared["action"] = _action(option.action)
    shared["timeframe"] = _timeframe(option.timeframe)
    return CandidateOption(**shared)


def _priority(value: str | None) -> Priority:
    """An option's stored priority as the protocol's type ("review" when none was stored)."""
    for p in get_args(Priority):
        if p == value:
            return cast(Priority, p)
    return "review"


def _urgency_class(value: str | None) -> UrgencyClass | None:
    """An option's stored urgency class as the protocol's type (None when none was stored)."""
    return next((cast(UrgencyClass, u) for u in get_args(UrgencyClass) if u == value), None)


def _action(value: str | None) -> ActionKind | None:
    """An option's stored action kind as the protocol's type (None when none was stored)."""
    return next((cast(ActionKind, k) for k in get_args(ActionKind) if k == value), None)


def _timeframe(value: str | None) -> Timeframe | None:
    """An option's stored timeframe as the protocol's type (None when none was stored)."""
    return next((cast(Timeframe, t) for t in get_args(Timeframe) if t == value), None)


def _vote(v: ProblemVote) -> CoreVote:
    return CoreVote(
        role=v.role,
        vote=v.vote,
        confidence=min(1.0, max(0.0, float(v.confidence))),
        quote=v.quote,
        rationale=v.rationale,
    )


def _argument(d: ArgumentDraft) -> Argument:
    if d.tau is None or not 0.0 <= d.tau <= 1.0:
        raise StepFailed(f"argument {d.id} has strength {d.tau} outside [0, 1]")
    return Argument(
        id=d.id,
        role=d.role,
        stance=d.stance,
        text=d.text,
        evidence=d.evidence,
        facts=d.facts,
        tau=float(d.tau),
    )


def _unique_ids(drafts: Iterable[ArgumentDraft]) -> list[ArgumentDraft]:
    """Argument ids must be unique across the plan; a backend that repeats one gets a suffix."""
    seen: set[str] = set()
    out = []
    for d in drafts:
        new_id, n = d.id, 1
        while new_id in seen:
            n += 1
            new_id = f"{d.id}-{n}"
        seen.add(new_id)
        out.append(d if new_id == d.id else replace(d, id=new_id))
    return out


def _valid_relations(
    relations: Iterable[Relation], arguments: Sequence[ArgumentDraft]
) -> tuple[Relation, ...]:
    """Keep only argument-to-argument edges between this option's arguments, once each."""
    ids = {a.id for a in arguments}
    seen: set[tuple[str, str]] = set()
    out = []
    for r in relations:
        key = (r.source, r.target)
        if r.source in ids and r.target in ids and r.source != r.target and key not in seen:
            seen.add(key)
            out.append(r)
    return tuple(out)
