"""Writing a plan version: the one step under every transport.

A version comes from a plan (a fresh deliberation and its evaluation) or from a contest (the
current deliberation and parsed contestation Tasks). ``write_version`` turns either into a
``WrittenVersion``: the deliberation, its evaluation, the canoe.deliberation/1 document, the
clinician summary, the CarePlan + Provenance Bundle (as a dict and as the bytes the store keeps
and every transport returns), the version number and the Tasks as applied. The gRPC service,
the CDS Hooks bridge, the review app and the command line all write through it and render from
what it returns; none re-derives a plan from its JSON.

A contest is applied atomically (``service.core.apply_all``), evaluated again, and its synthesis
written again, so that the version's narrative describes this version and not the one before.
On the embedded backend that rewrite is ``rewrite_synthesis`` (deterministic, the default); a
model backend writes it asynchronously between ``apply_contest`` and ``write_version`` (see
``CarePlanService._contest``), and hands the result in as an ``AppliedContest``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fhir_mapping.careplan import (
    at_source,
    careplan_id,
    careplan_of,
    deliberation_from_bundle,
    plan_bundle,
)
from fhir_mapping.definitions import CANOE_BASE, rebase
from fhir_mapping.tasks import (
    ParsedTask,
    not_after,
    parse_tasks,
    remap_core_error,
    task_outcomes,
)
from service.core import Evaluation, apply_all, evaluate, to_document
from service.core.model import Deliberation
from service.errors import TaskError
from service.jsonio import canonical_json, dump_json
from service.text.summary import Summary, summarise
from service.text.synthesis import synthesise
from service.work import checkpoint

__all__ = [
    "AppliedContest",
    "Contest",
    "Plan",
    "Resynthesis",
    "WrittenVersion",
    "apply_contest",
    "contest_of_bundle",
    "rewrite_synthesis",
    "write_version",
]


@dataclass(frozen=True, slots=True)
class Plan:
    """A deliberation to write as it is (a new plan's first version)."""

    deliberation: Deliberation
    evaluation: Evaluation


@dataclass(frozen=True, slots=True)
class Contest:
    """Contestation Tasks (already parsed against ``current``) to apply to ``current`` at
    ``at`` (the version's time stamp). ``stored_bundle``: the current version's Bundle, the
    answer when every Task had been applied before (a replay: nothing new is written)."""

    current: Deliberation
    tasks: Sequence[ParsedTask]
    at: str
    stored_bundle: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AppliedContest:
    """A contest applied and evaluated, not yet written: ``after`` is the new deliberation,
    whose synthesis the caller may write again before ``write_version`` writes it."""

    contest: Contest
    after: Deliberation
    evaluation: Evaluation

    @property
    def replayed(self) -> bool:
        """Every Task had been applied before: ``after`` is the current version itself."""
        return self.after is self.contest.current

    def with_plan(self, after: Deliberation) -> AppliedContest:
        """The same contest with ``after`` (its synthesis rewritten) as the new version."""
        return replace(self, after=after)


@dataclass(frozen=True, slots=True)
class WrittenVersion:
    """One version as every transport gives it, each part built once: the typed deliberation
    and evaluation it was written from, the document, the clinician summary and the Bundle
    written from them, the Bundle and document serialised once, and for a contest the Tasks
    as applied (``status`` completed, ``output`` the new CarePlan version, as the Bundle holds
    them). ``previous``: the deliberation contested (None for a plan's first version)."""

    deliberation: Deliberation
    evaluation: Evaluation
    document: dict[str, Any]
    clinician: Summary
    bundle: dict[str, Any]
    bundle_json: bytes
    document_json: bytes
    tasks: list[dict[str, Any]] = field(default_factory=list)
    previous: Deliberation | None = None
    replayed: bool = False

    @property
    def version(self) -> int:
        return self.deliberation.version


Resynthesis = Callable[[Deliberation, Deliberation, Evaluation], Deliberation]
"""(version contested, new version, its evaluation) -> the new version with its synthesis."""


def rewrite_synthesis(before: Deliberation, after: Deliberation, ev: Evaluation) -> Deliberation:
    """The embedded backend's synthesis, written again from the new version (no model call):
    what ``Planner.resynthesise`` does on a deterministic backend."""
    del before  # the deterministic synthesis depends on the new version alone
    return replace(after, meta=replace(after.meta, synthesis=synthesise(after, ev)))


def apply_contest(contest: Contest) -> AppliedContest:
    """Apply the Tasks atomically (all or none: a refusal raises ``TaskError`` naming the
    Task element) and evaluate the result. A Task's ``authoredOn`` later than ``at`` counts
    as ``at``."""
    at = contest.at
    actions = [
        (t.action, t.task_id, t.actor, not_after(t.at, at) if t.at else at, t.reason)
        for t in contest.tasks
    ]
    try:
        after = apply_all(contest.current, actions)
    except TaskError as exc:
        raise remap_core_error(exc, contest.tasks) from exc
    checkpoint()
    ev = evaluate(after)
    checkpoint()
    return AppliedContest(contest, after, ev)


def write_version(
    source: Plan | Contest | AppliedContest,
    *,
    base: str,
    recorded: str | None = None,
    resynthesise: Resynthesis = rewrite_synthesis,
    service_version: str | None = None,
) -> WrittenVersion:
    """Write a version: a ``Plan`` as it is (``recorded`` its time stamp), a ``Contest``
    applied, evaluated, its synthesis written again by ``resynthesise`` and written as the next
    version (time stamp ``Contest.at``), or an ``AppliedContest`` whose synthesis the caller
    already wrote. ``base``: the canonical base of the service's own resources."""
    if isinstance(source, Contest):
        applied = apply_contest(source)
        if not applied.replayed:
            applied = applied.with_plan(
                resynthesise(source.current, applied.after, applied.evaluation)
            )
        source = applied
    if isinstance(source, Plan):
        if recorded is None:
            raise ValueError("a plan's version needs its recorded time")
        return _written(
            source.deliberation,
            source.evaluation,
            recorded=recorded,
            base=base,
            service_version=service_version,
        )
    return _contested(source, base=base, service_version=service_version)


def _contested(
    applied: AppliedContest, *, base: str, service_version: str | None
) -> WrittenVersion:
    contest, after = applied.contest, applied.after
    cid = careplan_id(after.plan_id, after.version)
    done = task_outcomes(
        contest.tasks,
        status="completed",
        careplan_ref=f"CarePlan/{cid}/_history/{after.version}",
        at=contest.at,
    )
    held = rebase(at_source(done, after), base)  # the Tasks as the Bundle holds them
    if applied.replayed:
        return _replay(applied, held, base)
    written = _written(
        after,
        applied.evaluation,
        recorded=contest.at,
        base=base,
        service_version=service_version,
        tasks=done,
        previous=contest.current,
    )
    return replace(written, tasks=held)


def _replay(applied: AppliedContest, held: list[dict[str, Any]], base: str) -> WrittenVersion:
    """Every Task was applied before (same ids): the current version IS their result. Its
    stored Bundle is the answer, with the replayed Tasks added as completed, rather than a
    misleading new trail."""
    contest = applied.contest
    if contest.stored_bundle is None:
        raise ValueError("a replayed contest needs the current version's stored Bundle")
    same = copy.deepcopy(dict(contest.stored_bundle))
    have = {
        e["resource"].get("id")
        for e in same.get("entry", ())
        if e.get("resource", {}).get("resourceType") == "Task"
    }
    same["entry"] = list(same.get("entry", ())) + [
        {"fullUrl": rebase(f"{CANOE_BASE}/Task/{t['id']}", base), "resource": t}
        for t in held
        if t["id"] not in have
    ]
    d, ev = contest.current, applied.evaluation
    document = to_document(d, ev)
    return WrittenVersion(
        d,
        ev,
        document,
        summarise(d, ev),
        same,
        dump_json(same),
        canonical_json(document),
        tasks=held,
        previous=d,
        replayed=True,
    )


def _written(
    plan: Deliberation,
    evaluation: Evaluation,
    *,
    recorded: str,
    base: str,
    service_version: str | None,
    tasks: Sequence[Mapping[str, Any]] = (),
    previous: Deliberation | None = None,
) -> WrittenVersion:
    document, clinician = to_document(plan, evaluation), summarise(plan, evaluation)
    document_json = canonical_json(document)
    bundle = plan_bundle(
        plan,
        evaluation,
        recorded=recorded,
        base=base,
        service_version=service_version,
        tasks=tasks,
        previous_version=previous.version if previous is not None else None,
        document=document,
        summary=clinician,
        document_json=document_json,
    )
    return WrittenVersion(
        plan,
        evaluation,
        document,
        clinician,
        bundle,
        dump_json(bundle),
        document_json,
        previous=previous,
    )


def contest_of_bundle(
    plan_bundle_json: Mapping[str, Any],
    tasks_raw: bytes | str | Mapping[str, Any],
    *,
    at: str,
    base: str,
    max_tasks: int | None = None,
) -> Contest:
    """The contest of ``tasks_raw`` against the plan version a Bundle holds (written under
    ``base``), for a caller without a store (``canoe contest``): the deliberation comes back
    from the Bundle's deliberation Binary, and the Bundle itself answers a replay."""
    current = deliberation_from_bundle(plan_bundle_json, base)
    _, careplan = careplan_of(plan_bundle_json)
    tasks = parse_tasks(
        tasks_raw, plan=current, careplan_id=str(careplan["id"]), max_tasks=max_tasks, base=base
    )
    return Contest(current, tuple(tasks), at, stored_bundle=plan_bundle_json)
