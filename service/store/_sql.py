"""The plan store's operations in portable SQL, over either driver.

Writes: ``create_plan`` (version 1) and ``append_version`` (a contestation result, with its
Tasks). Both insert the version row first and move the plan's ``current_version`` last, by a
compare-and-set, in one transaction. A contested version is stored as its own part and the
history it added (``_history``), so a plan's N versions cost O(N) bytes; ``get_version`` joins
them back. Reads check the tenant before they return anything.
For the CDS Hooks bridge: ``add_cards`` / ``get_card`` (the card ledger, per tenant) and
``claim_token_id`` (a JWT id's first use; the primary key refuses the second, on any replica).
"""

from __future__ import annotations

import json
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from service.errors import (
    InputError,
    Issue,
    NotFoundError,
    StaleVersionError,
    TaskError,
)
from service.jsonio import dump_json
from service.store._drivers import Driver, Tx, UniqueViolation
from service.store._history import Split, join, split, tail_end
from service.store._schema import MIGRATIONS

__all__ = [
    "FeedbackRecord",
    "IssuedCard",
    "PlanStore",
    "SqlPlanStore",
    "TaskRecord",
    "VersionInfo",
    "VersionRecord",
]


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """One stored plan version. ``kind``: "generated" (version 1) or "contested"."""

    tenant: str
    plan_id: str
    version: int
    patient_ref: str
    careplan_id: str
    kind: str
    created: str
    deliberation: Mapping[str, Any]  # the canoe.deliberation/1 document
    bundle: Mapping[str, Any]  # the CarePlan + Provenance Bundle returned for this version
    summary: Mapping[str, Any] = field(default_factory=dict)
    task_ids: tuple[str, ...] = ()
    # The same two as bytes: written as given (a whole version), and read back as stored, so
    # the bytes a transport returns are the bytes kept. Empty: serialised from the mappings.
    bundle_json: bytes = b""
    deliberation_json: bytes = b""


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """An applied Task: the version it produced and the Task as returned (with its outcome)."""

    tenant: str
    task_id: str
    plan_id: str
    version: int
    outcome: Mapping[str, Any]
    applied: str


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """A line of a plan's history (no documents: cheap to list)."""

    plan_id: str
    version: int
    patient_ref: str
    careplan_id: str
    kind: str
    created: str
    task_ids: tuple[str, ...]
    current: bool


@dataclass(frozen=True, slots=True)
class FeedbackRecord:
    tenant: str
    plan_id: str
    card_id: str
    outcome: str
    payload: Mapping[str, Any]
    recorded: str


@dataclass(frozen=True, slots=True)
class IssuedCard:
    """A CDS Hooks card as issued: the plan version and service it came from; ``payload`` is
    whatever else the bridge needs to act on feedback (JSON)."""

    tenant: str
    card_id: str
    plan_id: str
    version: int
    service_id: str
    payload: Mapping[str, Any]
    created: str


class PlanStore(Protocol):
    async def migrate(self) -> int: ...

    async def ready(self) -> bool: ...

    async def create_plan(self, rec: VersionRecord) -> None: ...

    async def append_version(
        self, rec: VersionRecord, *, expected_current: int, tasks: Sequence[TaskRecord]
    ) -> None: ...

    async def get_version(
        self, *, tenant: str, plan_id: str, version: int | None = None
    ) -> VersionRecord: ...

    async def current_version(self, *, tenant: str, plan_id: str) -> int: ...

    async def version_info(self, *, tenant: str, plan_id: str, version: int) -> VersionInfo: ...

    async def list_versions(
        self, *, tenant: str, plan_id: str | None = None, patient_ref: str | None = None
    ) -> list[VersionInfo]: ...

    async def get_tasks(self, *, tenant: str, task_ids: Sequence[str]) -> dict[str, TaskRecord]: ...

    async def add_feedback(self, rec: FeedbackRecord) -> str: ...

    async def add_cards(self, cards: Sequence[IssuedCard]) -> None: ...

    async def get_card(self, *, tenant: str, card_id: str) -> IssuedCard | None: ...

    async def claim_token_id(self, *, issuer: str, jti: str, expires_at: int, now: int) -> bool: ...

    async def purge_token_ids(self, *, now: int) -> int: ...

    async def aclose(self) -> None: ...


def _dump(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _text(value: Mapping[str, Any], raw: bytes) -> str:
    """A whole version's Bundle or document as stored: its own bytes where the caller has
    them (the bytes it returns), else the one serialisation every transport uses."""
    return (raw or dump_json(value)).decode("utf-8")


# Versions whose checked contestations a store keeps: the current one of as many plans.
_CHECKED_VERSIONS = 256

_VERSION_COLUMNS = (
    "tenant, plan_id, version, patient_ref, careplan_id, kind, created, task_ids, "
    "deliberation, bundle, summary, history"
)


class SqlPlanStore:
    """``PlanStore`` on a ``Driver``. Safe to share between concurrent requests."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.dialect = driver.dialect
        # (plan id, version) -> ``Split.checked`` of the versions this store wrote last: the
        # next version of the plan checks only the contestations it adds (``split``).
        self._checked: OrderedDict[tuple[str, int], tuple[list[Any], list[Any]]] = OrderedDict()

    # ------------------------------------------------------------------ schema

    async def migrate(self) -> int:
        """Apply the migrations not yet recorded; returns the schema version now in place."""
        async with self.driver.transaction() as tx:
            if self.dialect == "postgres":
                # Replicas starting together: one migrates, the others wait, then see it done.
                await tx.execute("SELECT pg_advisory_xact_lock(4242001)")
            await tx.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
            )
            done = {r[0] for r in await tx.fetchall("SELECT version FROM schema_migrations")}
            for m in MIGRATIONS:
                if m.version in done:
                    continue
                for stmt in m.sqlite if self.dialect == "sqlite" else m.postgres:
                    await tx.execute(stmt)
                await tx.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                    (m.version, m.name),
                )
        return MIGRATIONS[-1].version

    async def schema_version(self) -> int:
        async with self.driver.transaction() as tx:
            rows = await tx.fetchall("SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    async def ready(self) -> bool:
        try:
            return await self.schema_version() == MIGRATIONS[-1].version
        except Exception:
            return False

    # ------------------------------------------------------------------ writes

    async def create_plan(self, rec: VersionRecord) -> None:
        if rec.version != 1:
            raise InputError("a new plan starts at version 1")
        # The hot write path of every plan, and no result is read: one round trip where the
        # store can pipeline (PostgreSQL: five before; a realistic write 5.2 ms -> 4.6 ms).
        try:
            async with self.driver.transaction(pipeline=True) as tx:
                await tx.execute(
                    "INSERT INTO plans (plan_id, tenant, patient_ref, current_version, created) "
                    "VALUES (?, ?, ?, 0, ?)",
                    (rec.plan_id, rec.tenant, rec.patient_ref, rec.created),
                )
                await self._insert_version(tx, rec)
                await self._in_transaction()
                await tx.execute(
                    "UPDATE plans SET current_version = 1 "
                    "WHERE plan_id = ? AND current_version = 0",
                    (rec.plan_id,),
                )
        except UniqueViolation as exc:
            raise InputError(f"plan {rec.plan_id} already exists") from exc

    async def append_version(
        self, rec: VersionRecord, *, expected_current: int, tasks: Sequence[TaskRecord]
    ) -> None:
        """Store ``rec`` as the version after ``expected_current``. Raises StaleVersionError
        (with the current version) when another write got there first."""
        if rec.version != expected_current + 1:
            raise InputError("a new version follows the current one")
        async with self.driver.transaction() as tx:
            # Lock the plan row first (PostgreSQL; SQLite's BEGIN IMMEDIATE already holds the
            # one write lock): a concurrent writer waits here, then sees the version it lost to.
            await self._owned(tx, rec.tenant, rec.plan_id, lock=True)
            await self._check_current(tx, rec.plan_id, expected_current)
            prior, after = await self._prior(tx, rec.plan_id, expected_current)
            checked = self._checked.get((rec.plan_id, expected_current))
            parts = split(rec.deliberation, rec.bundle, prior=prior, after=after, checked=checked)
            try:
                await self._insert_version(tx, rec, parts)
            except UniqueViolation as exc:
                # Only reachable past the lock by a writer that skipped it; the failed statement
                # has spoiled the transaction, so no further query: report what we know.
                raise _stale_error(rec.plan_id, rec.version) from exc
            for t in tasks:
                try:
                    await tx.execute(
                        "INSERT INTO tasks (tenant, task_id, plan_id, version, outcome, applied) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (t.tenant, t.task_id, t.plan_id, t.version, _dump(t.outcome), t.applied),
                    )
                except UniqueViolation as exc:
                    msg = f"Task {t.task_id} was already applied"
                    issue = Issue("error", "duplicate", msg, ("Task.id",))
                    raise TaskError(msg, issues=(issue,)) from exc
            await self._in_transaction()
            n = await tx.execute(
                "UPDATE plans SET current_version = ? WHERE plan_id = ? AND current_version = ?",
                (rec.version, rec.plan_id, expected_current),
            )
            if n != 1:
                await self._check_current(tx, rec.plan_id, expected_current)
                raise _stale_error(rec.plan_id, rec.version)
        # Committed: the next version of this plan starts from this one.
        self._checked.pop((rec.plan_id, expected_current), None)
        if parts is not None:
            self._checked[(rec.plan_id, rec.version)] = parts.checked
            while len(self._checked) > _CHECKED_VERSIONS:
                self._checked.popitem(last=False)

    async def add_feedback(self, rec: FeedbackRecord) -> str:
        fid = uuid.uuid4().hex
        async with self.driver.transaction() as tx:
            await self._owned(tx, rec.tenant, rec.plan_id)
            await tx.execute(
                "INSERT INTO feedback (id, tenant, plan_id, card_id, outcome, payload, recorded) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    fid,
                    rec.tenant,
                    rec.plan_id,
                    rec.card_id,
                    rec.outcome,
                    _dump(rec.payload),
                    rec.recorded,
                ),
            )
        return fid

    async def add_cards(self, cards: Sequence[IssuedCard]) -> None:
        """Remember issued cards, in one transaction. Each card's plan must belong to the card's
        tenant. Card ids are deterministic, so the same card issued again is kept once."""
        if not cards:
            return
        async with self.driver.transaction() as tx:
            for plan_id, tenant in dict.fromkeys((c.plan_id, c.tenant) for c in cards):
                await self._owned(tx, tenant, plan_id)
            for c in cards:
                await tx.execute(
                    "INSERT INTO cds_cards "
                    "(tenant, card_id, plan_id, version, service_id, payload, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, card_id) DO NOTHING",
                    (
                        c.tenant,
                        c.card_id,
                        c.plan_id,
                        c.version,
                        c.service_id,
                        _dump(c.payload),
                        c.created,
                    ),
                )

    async def get_card(self, *, tenant: str, card_id: str) -> IssuedCard | None:
        """The card ``card_id`` as issued to ``tenant``; None when unknown or another tenant's
        (the two are indistinguishable by design: no probing for other tenants' cards)."""
        async with self.driver.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT tenant, card_id, plan_id, version, service_id, payload, created "
                "FROM cds_cards WHERE tenant = ? AND card_id = ?",
                (tenant, card_id),
            )
        if not rows:
            return None
        r = rows[0]
        return IssuedCard(r[0], r[1], r[2], int(r[3]), r[4], json.loads(r[5]), r[6])

    async def claim_token_id(self, *, issuer: str, jti: str, expires_at: int, now: int) -> bool:
        """Record the first use of a JWT id: True when it is new (or its earlier token has
        expired), False for a replay. One statement, so two replicas racing on the same id
        cannot both win: the primary key lets one insert and the other sees its live row."""
        async with self.driver.transaction() as tx:
            n = await tx.execute(
                "INSERT INTO cds_jtis (issuer, jti, expires_at) VALUES (?, ?, ?) "
                "ON CONFLICT (issuer, jti) DO UPDATE SET expires_at = excluded.expires_at "
                "WHERE cds_jtis.expires_at < ?",
                (issuer, jti, expires_at, now),
            )
        return int(n) == 1

    async def purge_token_ids(self, *, now: int) -> int:
        """Forget JWT ids whose tokens have expired (they can no longer be replayed)."""
        async with self.driver.transaction() as tx:
            return int(await tx.execute("DELETE FROM cds_jtis WHERE expires_at < ?", (now,)))

    async def list_feedback(self, *, tenant: str, plan_id: str) -> list[FeedbackRecord]:
        async with self.driver.transaction() as tx:
            await self._owned(tx, tenant, plan_id)
            rows = await tx.fetchall(
                "SELECT tenant, plan_id, card_id, outcome, payload, recorded FROM feedback "
                "WHERE plan_id = ? ORDER BY recorded, id",
                (plan_id,),
            )
        return [FeedbackRecord(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows]

    # ------------------------------------------------------------------ reads

    async def get_version(
        self, *, tenant: str, plan_id: str, version: int | None = None
    ) -> VersionRecord:
        """A version of a plan (the current one when ``version`` is None)."""
        async with self.driver.transaction() as tx:
            current = await self._owned(tx, tenant, plan_id)
            want = current if version is None else version
            rows = await tx.fetchall(
                f"SELECT {_VERSION_COLUMNS} FROM plan_versions WHERE plan_id = ? AND version = ? "
                "AND version <= ?",
                (plan_id, want, current),
            )
            if not rows:
                raise NotFoundError(
                    f"plan {plan_id} has no version {want} (versions 1 to {current})"
                )
            r = rows[0]
            deliberation, bundle = json.loads(r[8]), json.loads(r[9])
            # A whole row's text is the bytes returned when it was written; a contested
            # version is rebuilt from its parts and serialised as every transport does.
            raw = (r[8].encode("utf-8"), r[9].encode("utf-8"))
            if r[11] is not None:
                chain = await self._chain(tx, plan_id, want, json.loads(r[11]))
                deliberation, bundle = join(deliberation, bundle, chain)
                raw = (dump_json(deliberation), dump_json(bundle))
        return VersionRecord(
            tenant=r[0],
            plan_id=r[1],
            version=int(r[2]),
            patient_ref=r[3],
            careplan_id=r[4],
            kind=r[5],
            created=r[6],
            task_ids=tuple(json.loads(r[7])),
            deliberation=deliberation,
            bundle=bundle,
            summary=json.loads(r[10]),
            deliberation_json=raw[0],
            bundle_json=raw[1],
        )

    async def current_version(self, *, tenant: str, plan_id: str) -> int:
        async with self.driver.transaction() as tx:
            return await self._owned(tx, tenant, plan_id)

    async def version_info(self, *, tenant: str, plan_id: str, version: int) -> VersionInfo:
        """A version's line of history without its documents: what a caller that holds the
        version's deliberation already needs (one row, whatever the length of the history;
        ``get_version`` joins every contestation before it). Checked as ``get_version`` is."""
        async with self.driver.transaction() as tx:
            current = await self._owned(tx, tenant, plan_id)
            rows = await tx.fetchall(
                "SELECT plan_id, version, patient_ref, careplan_id, kind, created, task_ids "
                "FROM plan_versions WHERE plan_id = ? AND version = ? AND version <= ?",
                (plan_id, version, current),
            )
        if not rows:
            raise NotFoundError(
                f"plan {plan_id} has no version {version} (versions 1 to {current})"
            )
        r = rows[0]
        return VersionInfo(
            plan_id=r[0],
            version=int(r[1]),
            patient_ref=r[2],
            careplan_id=r[3],
            kind=r[4],
            created=r[5],
            task_ids=tuple(json.loads(r[6])),
            current=int(r[1]) == current,
        )

    async def list_versions(
        self, *, tenant: str, plan_id: str | None = None, patient_ref: str | None = None
    ) -> list[VersionInfo]:
        """History of one plan, or of every plan of a patient (oldest plan first)."""
        if bool(plan_id) == bool(patient_ref):
            raise InputError("name exactly one of plan_id or patient_ref")
        cols = (
            "v.plan_id, v.version, v.patient_ref, v.careplan_id, v.kind, v.created, v.task_ids, "
            "p.current_version"
        )
        async with self.driver.transaction() as tx:
            if plan_id:
                await self._owned(tx, tenant, plan_id)
                rows = await tx.fetchall(
                    f"SELECT {cols} FROM plan_versions v JOIN plans p ON p.plan_id = v.plan_id "
                    "WHERE v.plan_id = ? AND v.version <= p.current_version ORDER BY v.version",
                    (plan_id,),
                )
            else:
                rows = await tx.fetchall(
                    f"SELECT {cols} FROM plan_versions v JOIN plans p ON p.plan_id = v.plan_id "
                    "WHERE p.tenant = ? AND p.patient_ref = ? AND v.version <= p.current_version "
                    "ORDER BY p.created, v.plan_id, v.version",
                    (tenant, patient_ref),
                )
        return [
            VersionInfo(
                plan_id=r[0],
                version=int(r[1]),
                patient_ref=r[2],
                careplan_id=r[3],
                kind=r[4],
                created=r[5],
                task_ids=tuple(json.loads(r[6])),
                current=int(r[1]) == int(r[7]),
            )
            for r in rows
        ]

    async def get_tasks(self, *, tenant: str, task_ids: Sequence[str]) -> dict[str, TaskRecord]:
        if not task_ids:
            return {}
        marks = ", ".join("?" for _ in task_ids)
        async with self.driver.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT t.tenant, t.task_id, t.plan_id, t.version, t.outcome, t.applied "
                "FROM tasks t JOIN plans p ON p.plan_id = t.plan_id "
                f"WHERE t.tenant = ? AND t.task_id IN ({marks}) AND t.version <= p.current_version",
                (tenant, *task_ids),
            )
        return {r[1]: TaskRecord(r[0], r[1], r[2], int(r[3]), json.loads(r[4]), r[5]) for r in rows}

    async def aclose(self) -> None:
        await self.driver.aclose()

    # ------------------------------------------------------------------ helpers

    async def _owned(self, tx: Tx, tenant: str, plan_id: str, *, lock: bool = False) -> int:
        """The plan's current version, after checking it exists and belongs to ``tenant``."""
        sql = "SELECT tenant, current_version FROM plans WHERE plan_id = ?"
        if lock and self.dialect == "postgres":
            sql += " FOR UPDATE"
        rows = await tx.fetchall(sql, (plan_id,))
        # Another tenant's plan answers exactly like an unknown one: the same error, the same
        # message, from the same single query, so no caller can learn which plan ids exist.
        if not rows or int(rows[0][1]) == 0 or rows[0][0] != tenant:
            raise NotFoundError(f"no plan {plan_id}")
        return int(rows[0][1])

    async def _check_current(self, tx: Tx, plan_id: str, expected: int) -> None:
        rows = await tx.fetchall("SELECT current_version FROM plans WHERE plan_id = ?", (plan_id,))
        current = int(rows[0][0])
        if current != expected:
            raise _stale_error(plan_id, current)

    async def _insert_version(self, tx: Tx, rec: VersionRecord, parts: Split | None = None) -> None:
        """One version row: whole, or (``parts``) its own part and its history tail."""
        await tx.execute(
            f"INSERT INTO plan_versions ({_VERSION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rec.tenant,
                rec.plan_id,
                rec.version,
                rec.patient_ref,
                rec.careplan_id,
                rec.kind,
                rec.created,
                _dump(list(rec.task_ids)),
                _text(rec.deliberation, rec.deliberation_json)
                if parts is None
                else _dump(parts.deliberation),
                _text(rec.bundle, rec.bundle_json) if parts is None else _dump(parts.bundle),
                _dump(rec.summary),
                None if parts is None else _dump(parts.history),
            ),
        )

    async def _prior(self, tx: Tx, plan_id: str, version: int) -> tuple[int, object]:
        """How many contestations the next version inherits from ``version`` through the
        chain of tails, and the last one's Task id: (0, None) when ``version`` is stored whole
        (the next tail then carries all of its own: no chain reaches into a whole row)."""
        rows = await tx.fetchall(
            "SELECT history FROM plan_versions WHERE plan_id = ? AND version = ?",
            (plan_id, version),
        )
        if not rows or rows[0][0] is None:
            return 0, None
        return tail_end(json.loads(rows[0][0]))

    async def _chain(
        self, tx: Tx, plan_id: str, version: int, last: Mapping[str, Any]
    ) -> list[Mapping[str, Any]]:
        """The tails ``join`` needs for ``version`` (whose own tail is ``last``), oldest first."""
        chain = [last]
        if int(last["prior"]) == 0:
            return chain
        rows = await tx.fetchall(
            "SELECT history FROM plan_versions WHERE plan_id = ? AND version < ? "
            "ORDER BY version DESC",
            (plan_id, version),
        )
        for (text,) in rows:
            if text is None:
                break
            tail = json.loads(text)
            chain.append(tail)
            if int(tail["prior"]) == 0:
                break
        return chain[::-1]

    async def _in_transaction(self) -> None:
        """Called inside every write transaction, just before its last statement; does nothing.

        A seam for the crash tests (tests/service/paused_serve.py), which replace it to hold a
        real process inside a transaction and kill it there.
        """


def _stale_error(plan_id: str, current: int) -> StaleVersionError:
    msg = f"version is stale: the current version of plan {plan_id} is {current}"
    return StaleVersionError(
        msg, current_version=current, issues=(Issue("error", "conflict", msg, ("Task.focus",)),)
    )
