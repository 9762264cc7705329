"""The service's use cases, shared by the gRPC API and the CDS Hooks bridge.

``CarePlanService`` turns requests into pipeline runs, contestations and store reads: it ingests
the Bundle, runs the planner under the concurrency cap and the request deadline, writes the FHIR
answer, and persists every version (with its deliberation and Tasks) *before* returning it. It
raises only the project's error tree; the transports translate. It knows nothing of gRPC or HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span

from service.core import Evaluation, from_document
from service.core.model import Deliberation
from service.errors import (
    BackendTimeout,
    BusyError,
    ConflictError,
    InputError,
    Issue,
    LimitError,
    StaleVersionError,
    TaskError,
)
from service.logs import get_logger
from service.pipeline import Planner, PlanResult, Progress, new_plan_id
from service.record.profile import PatientProfile
from service.settings import Settings
from service.store import (
    FeedbackRecord,
    IssuedCard,
    PlanStore,
    TaskRecord,
    VersionInfo,
    VersionRecord,
    open_store,
)
from service.stored_summary import summary_record
from service.telemetry import Telemetry, TracedExperts
from service.text.summary import Summary
from service.versions import Contest, Plan, WrittenVersion, apply_contest, write_version
from service.work import Work, working

__all__ = [
    "CarePlanService",
    "ContestOutcome",
    "PlanOutcome",
    "request_time",
    "utc_now",
]

ProgressFn = Callable[[Progress], None]
_log = get_logger("canoe.plan")
T = TypeVar("T")
_PARSED_CACHE = 512
_JTI_PURGE_EVERY_S = 300.0  # how often a process sweeps expired JWT ids out of the store
CPU_WORKERS = 1  # the thread for CPU-heavy work; see CarePlanService.__init__
# Bounds on the retry hint of a refusal for too many plans at once (see CarePlanService._slot).
_RETRY_AFTER_MIN_S = 0.005
_RETRY_AFTER_MAX_S = 10.0


def utc_now() -> str:
    """The service's clock: UTC, ISO 8601 with milliseconds (a valid FHIR instant)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def request_time(stamp: str) -> datetime:
    """A clock reading or a stated ``--created`` time as the request time ingest judges the
    record's dates against (UTC when no offset is written)."""
    try:
        at = datetime.fromisoformat(stamp)
    except ValueError as exc:
        raise InputError(f"{stamp[:40]!r} is not an ISO 8601 date-time") from exc
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    """One plan request's result, built once: every transport renders from it and none
    re-parses or recomputes it. ``bundle_json`` and ``deliberation_json`` are the bytes the
    store keeps and the bytes every transport returns."""

    plan_id: str
    version: int
    bundle: dict[str, Any]  # CarePlan + Provenance Bundle
    deliberation: dict[str, Any]  # canoe.deliberation/1 document
    summary: dict[str, Any]  # counts, borderline option ids, tokens, timings, missing
    bundle_json: bytes = b""
    deliberation_json: bytes = b""
    plan: Deliberation | None = None  # the typed deliberation the document was written from
    evaluation: Evaluation | None = None
    clinician: Summary | None = None  # the clinician summary the CarePlan narrative shows


@dataclass(frozen=True, slots=True)
class ContestOutcome:
    plan_id: str
    version: int
    bundle: dict[str, Any]
    tasks: list[dict[str, Any]]  # the Tasks as applied, each with its status/outcome
    deliberation: dict[str, Any] = field(default_factory=dict)  # the version's document
    replayed: bool = False  # True: every Task had been applied before; nothing changed
    bundle_json: bytes = b""  # ``bundle`` as returned (empty: serialise ``bundle``)
    # the version as its writing step made it (typed deliberation, evaluation, summary); None
    # for a replay, which answers what the store holds
    written: WrittenVersion | None = None


class CarePlanService:
    """One per process; safe for concurrent requests."""

    def __init__(
        self,
        settings: Settings,
        planner: Planner,
        store: PlanStore,
        *,
        telemetry: Telemetry | None = None,
        clock: Callable[[], str] = utc_now,
        plan_ids: Callable[[], str] = new_plan_id,
        offload_planning: bool = False,
    ) -> None:
        self.settings = settings
        self.plan_ids = plan_ids  # names each generated plan (a test may fix the name)
        # True when the experts hold nothing bound to the serving event loop (the embedded
        # backend): a whole plan then runs on a worker thread with a loop of its own, so a big
        # plan cannot stall health probes and other calls. Triton's clients belong to the
        # serving loop; there the model calls are awaits, and the CPU-heavy steps around them
        # (ingest, FHIR writing, contestation) still leave the loop.
        self.offload_planning = offload_planning
        # CPU work (ingest, planning on the embedded backend, Task parsing, recomputation)
        # runs here, on one thread: under the GIL a second would not plan faster, and two
        # plans interleaved cost more (one worker, 16 clients, tests/benchmarks/load_grpc.py:
        # 40-45 ms of server CPU a plan on two threads, 30-39 ms on one). More cores are
        # used by more worker processes (``--workers``).
        self._pool = ThreadPoolExecutor(max_workers=CPU_WORKERS, thread_name_prefix="canoe-cpu")
        self.planner = planner
        self.store = store
        self.telemetry = telemetry or Telemetry()
        self.clock = clock
        self._running = 0  # plans and contestations in flight (for max_concurrent_plans)
        self._held_s: float | None = None  # moving mean of how long one holds its place
        # Parsed deliberations by (plan id, version). Versions are immutable (append-only), so
        # the cache can never be stale, even with other replicas writing: it only saves
        # re-validating a stored document when the next contestation arrives. Filled by
        # contestations only: most plans are never contested, and keeping every generated one
        # made each full collection walk hundreds of plans' objects (4 ms of GC a served plan
        # at 16 clients, load_grpc; 1.5 ms without them).
        self._parsed: OrderedDict[tuple[str, int], Deliberation] = OrderedDict()
        self._jti_purged: float | None = None  # time.monotonic() of the last sweep of JWT ids

    @classmethod
    async def create(
        cls, settings: Settings, *, telemetry: Telemetry | None = None, experts: Any = None
    ) -> CarePlanService:
        """Build the planner the settings ask for, open and migrate the store."""
        from service.backends import build_experts, build_planner, loop_agnostic

        tel = telemetry or Telemetry()
        inner = experts if experts is not None else build_experts(settings)
        planner = build_planner(settings, TracedExperts(inner, tel))
        store = await open_store(settings.store.dsn)
        return cls(settings, planner, store, telemetry=tel, offload_planning=loop_agnostic(inner))

    async def ready(self) -> bool:
        """True when the model backend answers ready and the store is migrated and reachable."""
        try:
            backend = await asyncio.wait_for(self.planner.experts.is_ready(), timeout=5.0)
        except Exception:
            backend = False
        return bool(backend) and await self.store.ready()

    # ------------------------------------------------------------------ plans

    async def generate(
        self,
        bundle: bytes | Mapping[str, Any],
        *,
        tenant: str,
        progress: ProgressFn | None = None,
        deadline_s: float | None = None,
        source_base: str = "",
    ) -> PlanOutcome:
        """Ingest a FHIR R4 Bundle (JSON bytes, or the JSON object a transport has parsed
        already), plan it and persist version 1.

        ``source_base``: the FHIR base of the system that holds the record, where the caller
        knows it; the plan's references to the record then point there."""
        started = time.perf_counter()  # timings_ms.total counts from here (slot wait included)
        created = self.clock()  # the request time: the record's dates are judged against it

        if isinstance(bundle, bytes) and len(bundle) > self.settings.limits.max_message_bytes:
            raise LimitError(
                f"the Bundle is {len(bundle)} bytes; the limit is "
                f"{self.settings.limits.max_message_bytes} (CANOE_MAX_MESSAGE_BYTES)"
            )
        async with self._slot(), self._deadline(deadline_s) as work:
            with working(work):
                return await self._plan(bundle, tenant, progress, started, created, source_base)

    async def _plan(
        self,
        bundle: bytes | Mapping[str, Any],
        tenant: str,
        progress: ProgressFn | None,
        started: float,
        created: str,
        source_base: str = "",
    ) -> PlanOutcome:
        """``started``: ``perf_counter`` at the start of the request, for ``timings_ms.total``;
        ``created``: the request time, the plan's stamp and what the record's dates are judged by.

        Ingest, planning and writing the FHIR output are one piece of work on one worker
        thread when the planning may leave the serving loop (each hand-off between threads
        waits for the GIL behind the planning of other requests)."""
        from fhir_mapping.careplan import careplan_id
        from fhir_mapping.ingest import ingest

        plan_id = self.plan_ids()
        t0 = time.perf_counter()
        offload = self.offload_planning
        # Stage spans are opened and ended on whichever thread reports (the tracer is thread
        # safe); only a caller's progress callback (a stream) is posted to the serving loop,
        # so a unary plan's twenty-odd stage events cost no wake-up of the loop.
        stages = _StageSpans(
            self.telemetry, _threadsafe(progress) if offload and progress else progress
        )
        on_progress = stages.on_progress
        ingest_s: list[float] = []

        def ingested() -> PatientProfile:
            t = time.perf_counter()
            on_progress(Progress("ingest", "started", 0, 0))
            profile = ingest(
                bundle,
                max_resources=self.settings.limits.max_bundle_resources,
                memory_budget_mb=self.settings.limits.max_plan_memory_mb,
                received=request_time(created),
                clock_skew=self.settings.fhir.clock_skew,
            )
            on_progress(Progress("ingest", "finished", 0, 0))
            ingest_s.append(time.perf_counter() - t)
            return profile

        def write(result: PlanResult) -> WrittenVersion:
            return write_version(
                Plan(result.deliberation, result.evaluation),
                recorded=created,
                base=self.settings.fhir.base,
            )

        async def deliberate() -> tuple[PlanResult, WrittenVersion]:
            profile = ingested() if offload else await self._cpu(ingested)
            result = await self.planner.plan(
                profile,
                plan_id=plan_id,
                created=created,
                progress=on_progress,
                source_base=source_base,
            )
            return result, (write(result) if offload else await self._cpu(write, result))

        try:
            result, written = await (off_loop(deliberate, self._pool) if offload else deliberate())
        finally:
            if offload:
                await asyncio.sleep(0)  # let the last posted progress events run first
            stages.close()
        d = result.deliberation
        cov = d.meta.coverage
        if cov is not None and cov.withheld:  # criterion ids and claim kinds: no patient data
            _log.info("plan.claims_withheld", checked=cov.claims_checked, withheld=cov.withheld)
        # The stored copy cannot hold its own write time: its total ends just before the write.
        stored = _summary(
            result, ingest_s[0], time.perf_counter() - started, self.planner.experts.name
        )
        t_store = time.perf_counter()
        await self.store.create_plan(
            VersionRecord(
                tenant=tenant,
                plan_id=plan_id,
                version=d.version,
                patient_ref=d.patient_ref,
                careplan_id=careplan_id(plan_id, d.version),
                kind="generated",
                created=created,
                deliberation=written.document,
                bundle=written.bundle,
                deliberation_json=written.document_json,
                bundle_json=written.bundle_json,
                # The cited facts by name, value and date, for the review app's pages; kept
                # with version 1 only (facts do not change between versions), not returned.
                summary={
                    **stored,
                    "facts": _cited_facts(result),
                    "patient": _patient_header(result),
                    "clinician": summary_record(written.clinician),
                },
            )
        )
        done = time.perf_counter()
        # The caller's copy: total is the whole request, ingest and the store write included,
        # so it is never below any one stage.
        timings = {
            **stored["timings_ms"],
            "store": round((done - t_store) * 1000.0, 3),
            "total": round((done - started) * 1000.0, 3),
        }
        summary = {**stored, "timings_ms": timings}
        self.telemetry.plans.add(1, {"backend": self.planner.experts.name})
        self.telemetry.plan_duration.record(time.perf_counter() - t0)
        return PlanOutcome(
            plan_id,
            d.version,
            written.bundle,
            written.document,
            summary,
            bundle_json=written.bundle_json,
            deliberation_json=written.document_json,
            plan=d,
            evaluation=result.evaluation,
            clinician=written.clinician,
        )

    # ------------------------------------------------------------------ contestation

    async def contest(
        self,
        tasks: bytes | Mapping[str, Any],
        *,
        tenant: str,
        plan_id: str,
        version: int,
        deadline_s: float | None = None,
    ) -> ContestOutcome:
        """Apply a Task (or a Bundle of Tasks) to plan version ``version`` -> the next version.

        Idempotent per Task id: Tasks applied before return their stored result unchanged.
        A ``version`` that is no longer current raises StaleVersionError naming the current one;
        of two concurrent contestations of one version exactly one wins. The work stops, with
        nothing stored, when ``deadline_s`` (or the request deadline) passes or the caller
        cancels, as a plan's does.
        """
        async with self._slot(), self._deadline(deadline_s) as work:
            with working(work):
                return await self._contest(tasks, tenant, plan_id, version)

    async def _contest(
        self, tasks: bytes | Mapping[str, Any], tenant: str, plan_id: str, version: int
    ) -> ContestOutcome:
        from fhir_mapping.careplan import careplan_id
        from fhir_mapping.tasks import parse_tasks

        rec, d = await self._contested(tenant, plan_id, version)
        base = self.settings.fhir.base
        # Parsing (JSON, R4 validation of every Task) is CPU work proportional to the
        # request: a worker thread does it, and the Task cap stops an absurd one early.
        parsed = await self._cpu(
            parse_tasks,
            tasks,
            plan=d,
            careplan_id=rec.careplan_id,
            max_tasks=self.settings.limits.max_tasks_per_request,
            base=base,
        )
        ids = [t.task_id for t in parsed]
        known = await self.store.get_tasks(tenant=tenant, task_ids=ids)
        foreign = [k for k, r in known.items() if r.plan_id != plan_id]
        if foreign:
            msg = f"Task {foreign[0]} was applied to another plan"
            raise TaskError(msg, issues=(Issue("error", "duplicate", msg, ("Task.id",)),))
        _same_content(parsed, known, base)
        if known and len(known) == len(set(ids)):
            return await self._replay(tenant, plan_id, ids, known)

        current = await self.store.current_version(tenant=tenant, plan_id=plan_id)
        if current != version:
            # A concurrent copy of these very Tasks may have made the version since they were
            # looked up: then this one is their duplicate and replays it, not "stale".
            known = await self.store.get_tasks(tenant=tenant, task_ids=ids)
            if known and len(known) == len(set(ids)):
                _same_content(parsed, known, base)
                return await self._replay(tenant, plan_id, ids, known)
            raise _stale(plan_id, current)
        fresh = [t for t in parsed if t.task_id not in known]
        now = self.clock()

        # Every Task here is new (a replay answered above), so the stored Bundle is not needed.
        applied = await self._cpu(apply_contest, Contest(d, tuple(fresh), now))
        # every version says what it decided: its synthesis is written again (model calls
        # counted in the version's summary)
        new_d, calls = await self.planner.resynthesise(d, applied.after, applied.evaluation)
        written = await self._cpu(write_version, applied.with_plan(new_d), base=base)
        new_d, outcomes = written.deliberation, written.tasks
        new_cid = careplan_id(plan_id, new_d.version)
        new_version = new_d.version
        try:
            await self.store.append_version(
                VersionRecord(
                    tenant=tenant,
                    plan_id=plan_id,
                    version=new_version,
                    patient_ref=rec.patient_ref,
                    careplan_id=new_cid,
                    kind="contested",
                    created=now,
                    deliberation=written.document,
                    bundle=written.bundle,
                    deliberation_json=written.document_json,
                    bundle_json=written.bundle_json,
                    summary={
                        "tasks": len(fresh),
                        "replaces": version,
                        "clinician": summary_record(written.clinician),
                        "tokens": {
                            "model_calls": len(calls),
                            "input": sum(c.input_tokens for c in calls),
                            "output": sum(c.output_tokens for c in calls),
                        },
                    },
                    task_ids=tuple(t.task_id for t in fresh),
                ),
                expected_current=version,
                tasks=[
                    TaskRecord(tenant, t.task_id, plan_id, new_version, o, now)
                    for t, o in zip(fresh, outcomes, strict=True)
                ],
            )
        except StaleVersionError:
            # A concurrent request may have applied these very Tasks first: then this one
            # is their duplicate and answers what they made, not "stale".
            known = await self.store.get_tasks(tenant=tenant, task_ids=ids)
            if not known or len(known) != len(set(ids)):
                raise
            _same_content(parsed, known, base)
            return await self._replay(tenant, plan_id, ids, known)
        self._remember(new_d)
        for t in fresh:
            self.telemetry.contestations.add(1, {"action": type(t.action).__name__})
        by_id = {t.task_id: o for t, o in zip(fresh, outcomes, strict=True)}
        by_id.update({k: dict(r.outcome) for k, r in known.items()})
        return ContestOutcome(
            plan_id,
            new_version,
            written.bundle,
            [by_id[i] for i in _unique(ids)],
            written.document,
            bundle_json=written.bundle_json,
            written=written,
        )

    async def _replay(
        self, tenant: str, plan_id: str, ids: Sequence[str], known: Mapping[str, TaskRecord]
    ) -> ContestOutcome:
        version = max(r.version for r in known.values())
        rec = await self.store.get_version(tenant=tenant, plan_id=plan_id, version=version)
        return ContestOutcome(
            plan_id,
            version,
            dict(rec.bundle),
            [dict(known[i].outcome) for i in _unique(ids)],
            dict(rec.deliberation),
            replayed=True,
            bundle_json=rec.bundle_json,
        )

    async def _contested(
        self, tenant: str, plan_id: str, version: int
    ) -> tuple[VersionInfo | VersionRecord, Deliberation]:
        """The version a contestation starts from, and its deliberation. When this process made
        or read it last, the parsed deliberation is at hand and one row of history is read,
        whatever its length (the n-th contestation costs what the first did); else the version
        is read whole, its contestations joined, and parsed."""
        d = self._parsed.get((plan_id, version))
        if d is not None:
            self._parsed.move_to_end((plan_id, version))
            info = await self.store.version_info(tenant=tenant, plan_id=plan_id, version=version)
            return info, d
        rec = await self.store.get_version(tenant=tenant, plan_id=plan_id, version=version)
        return rec, await self._deliberation_of(rec)

    async def _deliberation_of(self, rec: VersionRecord) -> Deliberation:
        key = (rec.plan_id, rec.version)
        d = self._parsed.get(key)
        if d is None:
            d = await self._cpu(from_document, rec.deliberation)
            self._remember(d)
        else:
            self._parsed.move_to_end(key)
        return d

    def _remember(self, d: Deliberation) -> None:
        # The version before it can no longer be contested (stale): no need to hold it, and a
        # long history's versions each hold a tuple of all its contestations, for the GC to walk.
        self._parsed.pop((d.plan_id, d.version - 1), None)
        self._parsed[(d.plan_id, d.version)] = d
        while len(self._parsed) > _PARSED_CACHE:
            self._parsed.popitem(last=False)

    # ------------------------------------------------------------------ reads

    async def deliberation(
        self, *, tenant: str, plan_id: str, version: int | None = None
    ) -> dict[str, Any]:
        rec = await self.store.get_version(tenant=tenant, plan_id=plan_id, version=version)
        return dict(rec.deliberation)

    async def plan_version(
        self, *, tenant: str, plan_id: str, version: int | None = None
    ) -> VersionRecord:
        """The whole stored version (bundle, deliberation, summary)."""
        return await self.store.get_version(tenant=tenant, plan_id=plan_id, version=version)

    async def versions(
        self, *, tenant: str, plan_id: str | None = None, patient_ref: str | None = None
    ) -> list[VersionInfo]:
        return await self.store.list_versions(
            tenant=tenant, plan_id=plan_id or None, patient_ref=patient_ref or None
        )

    async def record_feedback(
        self, *, tenant: str, plan_id: str, card_id: str, outcome: str, payload: dict[str, Any]
    ) -> None:
        await self.store.add_feedback(
            FeedbackRecord(tenant, plan_id, card_id, outcome, payload, self.clock())
        )

    # ------------------------------------------------------------------ CDS Hooks bridge

    async def record_cards(
        self,
        *,
        tenant: str,
        plan_id: str,
        version: int,
        service_id: str,
        cards: Mapping[str, Mapping[str, Any]],
    ) -> None:
        """Remember the cards (card id -> what feedback on it needs) issued for one plan
        version, in the store, so feedback reaching any replica finds them."""
        now = self.clock()
        await self.store.add_cards(
            [
                IssuedCard(tenant, card_id, plan_id, version, service_id, dict(payload), now)
                for card_id, payload in cards.items()
            ]
        )

    async def card(self, *, tenant: str, card_id: str) -> IssuedCard | None:
        """A card issued to ``tenant``; None when unknown or issued to another tenant."""
        return await self.store.get_card(tenant=tenant, card_id=card_id)

    async def claim_token_id(self, *, issuer: str, jti: str, expires_at: float) -> bool:
        """True on the first use of a client JWT id (store-wide, every replica), False for a
        replay. Expired ids are swept out now and then, by whichever replica comes first."""
        now = time.time()
        if self._jti_purged is None or time.monotonic() - self._jti_purged > _JTI_PURGE_EVERY_S:
            self._jti_purged = time.monotonic()
            await self.store.purge_token_ids(now=int(now))
        return await self.store.claim_token_id(
            issuer=issuer, jti=jti, expires_at=math.ceil(expires_at), now=int(now)
        )

    async def aclose(self) -> None:
        try:
            await self.planner.experts.aclose()
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
            await self.store.aclose()

    async def _cpu(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on the CPU pool, in a copy of the caller's context."""
        ctx = contextvars.copy_context()
        call = functools.partial(ctx.run, fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    # ------------------------------------------------------------------ limits

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """One of the ``max_concurrent_plans`` places for a plan or a contestation (both are
        CPU work on this process's few threads). A request over the limit is refused at once,
        before any work and with nothing stored, rather than queued: behind a full house it
        would only spend its deadline, and the admitted ones would wait longer too. The refusal
        carries a hint of when a place is likely to be free."""
        busy = self.refusal()
        if busy is not None:
            raise busy
        self._running += 1
        self.telemetry.in_flight.add(1)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._running -= 1
            self.telemetry.in_flight.add(-1)
            took = time.perf_counter() - t0
            self._held_s = took if self._held_s is None else 0.8 * self._held_s + 0.2 * took

    def refusal(self) -> BusyError | None:
        """The refusal a plan or contestation arriving now would get, or None while a place is
        free: a transport asks first, so that a request refused for load costs it nothing more."""
        limit = self.settings.limits.max_concurrent_plans
        if self._running < limit:
            return None
        return _busy(self._running, limit, self._retry_after_s(limit))

    def _retry_after_s(self, limit: int) -> float:
        """When a place is likely free: with ``limit`` requests in flight, each holding its
        place for about ``_held_s``, one ends every ``_held_s / limit`` on average."""
        held = self._held_s if self._held_s is not None else 0.1
        return min(_RETRY_AFTER_MAX_S, max(_RETRY_AFTER_MIN_S, held / limit))

    @asynccontextmanager
    async def _deadline(self, deadline_s: float | None) -> AsyncIterator[Work]:
        """The request's deadline on this loop, and a token with the same deadline that the
        worker thread's planning loops check: cancelling the request (deadline, client gone)
        cancels the token, so the thread stops too instead of planning on for nobody."""
        limit = self.settings.limits.request_deadline_s
        if deadline_s is not None:
            limit = min(limit, deadline_s)
        work = Work(limit)
        try:
            async with asyncio.timeout(limit):
                yield work
        except TimeoutError as exc:
            work.cancel(f"the request passed its deadline of {limit:g} s")
            raise BackendTimeout(f"the request passed its deadline of {limit:g} s") from exc
        except BaseException:
            work.cancel()
            raise


class _StageSpans:
    """Turns the planner's progress events into one span per stage, and forwards them."""

    def __init__(self, telemetry: Telemetry, progress: ProgressFn | None) -> None:
        self._tel = telemetry
        self._progress = progress
        self._open: dict[str, Span] = {}
        self._parent = trace.set_span_in_context(trace.get_current_span())

    def on_progress(self, progress: Progress) -> None:
        if progress.state == "started" and progress.stage not in self._open:
            self._open[progress.stage] = self._tel.tracer.start_span(
                f"stage.{progress.stage}", context=self._parent
            )
        elif progress.state == "finished" and progress.stage in self._open:
            span = self._open.pop(progress.stage)
            span.set_attributes(
                {"canoe.calls_done": progress.calls_done, "canoe.calls_total": progress.calls_total}
            )
            span.end()
        _emit(self._progress, progress)

    def close(self) -> None:
        for span in self._open.values():
            span.end()
        self._open.clear()


async def off_loop(
    make: Callable[[], Coroutine[Any, Any, T]], executor: Executor | None = None
) -> T:
    """Run the coroutine ``make()`` on a worker thread with an event loop of its own, in a copy
    of the caller's context (request id, current span). Cancelling the caller (deadline, client
    gone) cancels the work on the worker's loop too."""
    cancelled = threading.Event()
    handle: dict[str, Any] = {}

    async def runner() -> T:
        handle["loop"] = asyncio.get_running_loop()
        handle["task"] = asyncio.current_task()
        if cancelled.is_set():
            raise asyncio.CancelledError
        return await make()

    def work() -> T:
        return _thread_loop().run_until_complete(_settled(runner()))

    ctx = contextvars.copy_context()
    future = asyncio.get_running_loop().run_in_executor(executor, ctx.run, work)
    try:
        return await future
    except asyncio.CancelledError:
        cancelled.set()
        loop, task = handle.get("loop"), handle.get("task")
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # its loop may have finished meanwhile
                loop.call_soon_threadsafe(task.cancel)
        raise


class _ThreadLoop:
    """A worker thread's own event loop, made once and kept: ``asyncio.run`` per plan would
    make and close a loop (and its self-pipe socket pair) every time, several percent of a
    plan's CPU under load. Closed when its thread ends (the thread-local is then dropped)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def __del__(self) -> None:
        if not self.loop.is_running():
            self.loop.close()


_loops = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    held: _ThreadLoop | None = getattr(_loops, "held", None)
    if held is None or held.loop.is_closed():
        held = _loops.held = _ThreadLoop()
    return held.loop


async def _settled(work: Coroutine[Any, Any, T]) -> T:
    """``work``, after which no task it started is left on this thread's loop (as
    ``asyncio.run`` would leave none): each is cancelled and awaited."""
    try:
        return await work
    finally:
        me = asyncio.current_task()
        left = [t for t in asyncio.all_tasks() if t is not me]
        for t in left:
            t.cancel()
        if left:
            await asyncio.gather(*left, return_exceptions=True)


def _threadsafe(progress: ProgressFn) -> ProgressFn:
    """``progress`` called on the current (serving) loop, whatever thread reports."""
    loop = asyncio.get_running_loop()

    def post(event: Progress) -> None:
        loop.call_soon_threadsafe(progress, event)

    return post


def _emit(progress: ProgressFn | None, p: Progress) -> None:
    if progress is not None:
        progress(p)


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _busy(running: int, limit: int, retry_after_s: float) -> BusyError:
    msg = (
        f"{running} plans are in progress; the limit is {limit} (CANOE_MAX_CONCURRENT_PLANS): "
        f"retry in about {math.ceil(retry_after_s * 1000)} ms"
    )
    return BusyError(msg, retry_after_s=retry_after_s)


def _stale(plan_id: str, current: int) -> StaleVersionError:
    msg = f"version is stale: the current version of plan {plan_id} is {current}"
    return StaleVersionError(
        msg,
        current_version=current,
        issues=(Issue("error", "conflict", msg, ("Task.focus",)),),
    )


def _cited_facts(result: PlanResult) -> dict[str, dict[str, str]]:
    from service.cited_facts import fact_index

    d = result.deliberation
    return fact_index(result.profile, (f for o in d.options for a in o.arguments for f in a.facts))


def _patient_header(result: PlanResult) -> dict[str, str]:
    from service.cited_facts import patient_header

    return patient_header(result.profile)


def _summary(
    result: PlanResult, ingest_s: float | None, total_s: float, backend: str
) -> dict[str, Any]:
    d, ev = result.deliberation, result.evaluation
    timings = {k: round(v * 1000.0, 3) for k, v in result.timings.items()}
    if ingest_s is not None:
        timings = {"ingest": round(ingest_s * 1000.0, 3), **timings}
    return {
        "counts": {
            "problems": len(d.problems),
            "problems_accepted": sum(1 for p in ev.problems if p.decision == "accept"),
            "options": len(d.options),
            "options_included": sum(1 for o in ev.options if o.decision == "include"),
            "arguments": sum(len(o.arguments) for o in d.options),
            "clashes": sum(len(o.clashes) for o in d.options),
            "panel": len(d.meta.panel),
            "model_calls": len(result.calls),
        },
        "borderline": [o.option_id for o in ev.options if o.borderline],
        "tokens": {
            "input": sum(c.input_tokens for c in result.calls),
            "output": sum(c.output_tokens for c in result.calls),
        },
        "timings_ms": {**timings, "total": round(total_s * 1000.0, 3)},
        "missing": list(d.meta.missing),
        "backend": backend,
    }


def _same_content(parsed: Sequence[Any], known: Mapping[str, TaskRecord], base: str) -> None:
    """Refuse (``ConflictError``) a Task whose id was applied before with another decision."""
    from fhir_mapping.tasks import task_difference

    for t in parsed:
        applied = known.get(t.task_id)
        if applied is None:
            continue
        paths = task_difference(t, applied.outcome, base=base)
        if paths:
            msg = (
                f"Task {t.task_id} was already applied with other content "
                f"({', '.join(p.rsplit('.', 1)[-1] for p in paths)} differ); the first stands: "
                "send a new decision under a new Task id"
            )
            raise ConflictError(msg, issues=(Issue("error", "duplicate", msg, paths),))
