"""The plan store against SQLite and PostgreSQL alike: migrations, append-only history,
compare-and-set versions, Task idempotency keys, tenancy and all-or-nothing writes."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import pytest

from service.errors import InputError, NotFoundError, StaleVersionError, TaskError
from service.store import (
    FeedbackRecord,
    IssuedCard,
    SqlPlanStore,
    TaskRecord,
    VersionRecord,
    open_store,
    sqlite_path,
)
from service.store._schema import MIGRATIONS


def _rec(plan_id: str, version: int, *, tenant: str = "t1", tasks: tuple[str, ...] = ()):
    return VersionRecord(
        tenant=tenant,
        plan_id=plan_id,
        version=version,
        patient_ref="Patient/p1",
        careplan_id=f"{plan_id}-v{version}",
        kind="generated" if version == 1 else "contested",
        created=f"2026-01-0{version}T00:00:00+00:00",
        deliberation={"version": version, "text": "ünïcode"},
        bundle={"resourceType": "Bundle", "v": version},
        summary={"n": version},
        task_ids=tasks,
    )


def _task(plan_id: str, tid: str, version: int, tenant: str = "t1") -> TaskRecord:
    return TaskRecord(tenant, tid, plan_id, version, {"id": tid, "status": "completed"}, "now")


@pytest.fixture
async def store(store_dsn: str):
    s = await open_store(store_dsn)
    try:
        yield s
    finally:
        await s.aclose()


def test_sqlite_dsn_forms() -> None:
    assert sqlite_path("sqlite:///rel/canoe.db") == "rel/canoe.db"
    assert sqlite_path("sqlite:////abs/canoe.db") == "/abs/canoe.db"
    with pytest.raises(InputError):
        sqlite_path("sqlite://")


async def test_unknown_scheme_is_refused() -> None:
    with pytest.raises(InputError, match="scheme"):
        await open_store("mysql://x/y")


async def test_migrations_are_recorded_and_idempotent(store: SqlPlanStore, store_dsn: str) -> None:
    assert await store.ready()
    assert await store.migrate() == MIGRATIONS[-1].version
    again = await open_store(store_dsn)  # a second replica starting on the same database
    try:
        assert await again.schema_version() == MIGRATIONS[-1].version
    finally:
        await again.aclose()


async def test_versions_append_and_read_back(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    await store.append_version(
        _rec(pid, 2, tasks=("a",)), expected_current=1, tasks=[_task(pid, "a", 2)]
    )
    v1 = await store.get_version(tenant="t1", plan_id=pid, version=1)
    cur = await store.get_version(tenant="t1", plan_id=pid)
    assert (v1.version, v1.deliberation["text"], v1.bundle["v"]) == (1, "ünïcode", 1)
    assert (cur.version, cur.task_ids) == (2, ("a",))
    history = await store.list_versions(tenant="t1", plan_id=pid)
    assert [(i.version, i.kind, i.current) for i in history] == [
        (1, "generated", False),
        (2, "contested", True),
    ]
    by_patient = await store.list_versions(tenant="t1", patient_ref="Patient/p1")
    assert {(i.plan_id, i.version) for i in by_patient} >= {(pid, 1), (pid, 2)}
    assert (await store.get_tasks(tenant="t1", task_ids=["a", "zz"])).keys() == {"a"}


async def test_stale_version_names_the_current_one(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    await store.append_version(_rec(pid, 2), expected_current=1, tasks=[])
    with pytest.raises(StaleVersionError) as err:
        await store.append_version(_rec(pid, 2), expected_current=1, tasks=[])
    assert err.value.current_version == 2
    assert len(await store.list_versions(tenant="t1", plan_id=pid)) == 2


async def test_concurrent_appends_exactly_one_wins(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    results = await asyncio.gather(
        *(
            store.append_version(
                _rec(pid, 2, tasks=(f"k{i}",)), expected_current=1, tasks=[_task(pid, f"k{i}", 2)]
            )
            for i in range(6)
        ),
        return_exceptions=True,
    )
    wins = [r for r in results if r is None]
    stale = [r for r in results if isinstance(r, StaleVersionError)]
    assert len(wins) == 1 and len(stale) == 5, results
    assert all(s.current_version == 2 for s in stale)
    # The losers' Tasks were not kept: only the winner's is on record.
    tasks = await store.get_tasks(tenant="t1", task_ids=[f"k{i}" for i in range(6)])
    assert len(tasks) == 1


async def test_a_task_id_is_applied_once(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    await store.append_version(_rec(pid, 2), expected_current=1, tasks=[_task(pid, "same", 2)])
    with pytest.raises(TaskError, match="already applied"):
        await store.append_version(_rec(pid, 3), expected_current=2, tasks=[_task(pid, "same", 3)])
    assert (await store.get_version(tenant="t1", plan_id=pid)).version == 2


async def test_a_failed_write_leaves_nothing_behind(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    dup = [_task(pid, "d", 2), _task(pid, "d", 2)]  # the second insert fails mid-transaction
    with pytest.raises(TaskError):
        await store.append_version(_rec(pid, 2), expected_current=1, tasks=dup)
    assert [i.version for i in await store.list_versions(tenant="t1", plan_id=pid)] == [1]
    assert await store.get_tasks(tenant="t1", task_ids=["d"]) == {}
    # And the plan still moves on normally afterwards.
    await store.append_version(_rec(pid, 2), expected_current=1, tasks=[_task(pid, "d", 2)])


async def test_a_plan_id_is_created_once(store: SqlPlanStore) -> None:
    """The plan's first write sends no statement's result back until it ends (one round trip on
    PostgreSQL): a second plan with the same id is still refused as such, whole, and the
    connection it used serves the next write."""
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    clash = dataclasses.replace(_rec(pid, 1), patient_ref="Patient/other", summary={"n": 99})
    with pytest.raises(InputError, match=f"plan {pid} already exists"):
        await store.create_plan(clash)
    got = await store.get_version(tenant="t1", plan_id=pid)
    assert (got.patient_ref, dict(got.summary)) == ("Patient/p1", {"n": 1})
    other = uuid.uuid4().hex
    for _ in range(6):  # more than the pool's connections: none was left broken
        await store.create_plan(_rec(other, 1))
        other = uuid.uuid4().hex
    assert await store.current_version(tenant="t1", plan_id=pid) == 1


async def test_plans_are_visible_to_their_tenant_only(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1, tenant="clinic-a"))
    # Another tenant's plan is reported exactly like an unknown one (no existence oracle).
    with pytest.raises(NotFoundError, match=f"^no plan {pid}$"):
        await store.get_version(tenant="clinic-b", plan_id=pid)
    with pytest.raises(NotFoundError, match=f"^no plan {pid}$"):
        await store.append_version(_rec(pid, 2, tenant="clinic-b"), expected_current=1, tasks=[])
    with pytest.raises(NotFoundError, match=f"^no plan {pid}$"):
        await store.list_versions(tenant="clinic-b", plan_id=pid)
    assert await store.list_versions(tenant="clinic-b", patient_ref="Patient/p1") == [] or all(
        i.plan_id != pid
        for i in await store.list_versions(tenant="clinic-b", patient_ref="Patient/p1")
    )
    with pytest.raises(NotFoundError):
        await store.get_version(tenant="clinic-a", plan_id=uuid.uuid4().hex)
    with pytest.raises(NotFoundError):
        await store.get_version(tenant="clinic-a", plan_id=pid, version=7)


async def test_history_rows_cannot_be_rewritten(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    for sql in (
        "UPDATE plan_versions SET bundle = '{}' WHERE plan_id = ?",
        "DELETE FROM plan_versions WHERE plan_id = ?",
    ):
        with pytest.raises(Exception, match="append-only"):
            async with store.driver.transaction() as tx:
                await tx.execute(sql, (pid,))
    assert (await store.get_version(tenant="t1", plan_id=pid)).bundle["v"] == 1


async def test_feedback_is_kept(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    await store.add_feedback(FeedbackRecord("t1", pid, "card-1", "overridden", {"x": 1}, "now"))
    (fb,) = await store.list_feedback(tenant="t1", plan_id=pid)
    assert (fb.card_id, fb.outcome, fb.payload) == ("card-1", "overridden", {"x": 1})
    with pytest.raises(NotFoundError):
        await store.add_feedback(FeedbackRecord("t2", pid, "c", "accepted", {}, "now"))


def _card(plan_id: str, card_id: str, *, tenant: str = "t1") -> IssuedCard:
    payload = {"kind": "order", "option_ids": ["opt-1"], "user_ref": "Practitioner/1"}
    return IssuedCard(tenant, card_id, plan_id, 1, "svc", payload, "2026-01-01T00:00:00Z")


async def test_cards_are_found_by_their_own_tenant_only(store: SqlPlanStore) -> None:
    pid = uuid.uuid4().hex
    await store.create_plan(_rec(pid, 1))
    cid = str(uuid.uuid4())
    await store.add_cards([_card(pid, cid)])
    await store.add_cards([_card(pid, cid)])  # the same card issued again: kept once
    got = await store.get_card(tenant="t1", card_id=cid)
    assert got == _card(pid, cid)
    assert await store.get_card(tenant="t2", card_id=cid) is None
    assert await store.get_card(tenant="t1", card_id=str(uuid.uuid4())) is None
    # A card cannot be filed under another tenant's plan, nor under a plan that does not exist.
    with pytest.raises(NotFoundError):
        await store.add_cards([_card(pid, str(uuid.uuid4()), tenant="t2")])
    with pytest.raises(NotFoundError):
        await store.add_cards([_card(uuid.uuid4().hex, str(uuid.uuid4()))])
    # What a clinician was shown is never rewritten.
    for sql in ("UPDATE cds_cards SET version = 9", "DELETE FROM cds_cards"):
        with pytest.raises(Exception, match="append-only"):
            async with store.driver.transaction() as tx:
                await tx.execute(sql)
    assert (await store.get_card(tenant="t1", card_id=cid)) == got


async def test_a_token_id_is_claimed_once_until_it_expires(store: SqlPlanStore) -> None:
    jti = uuid.uuid4().hex
    assert await store.claim_token_id(issuer="i", jti=jti, expires_at=1100, now=1000)
    assert not await store.claim_token_id(issuer="i", jti=jti, expires_at=1200, now=1050)
    assert await store.claim_token_id(issuer="other", jti=jti, expires_at=1100, now=1000)
    # Its token has expired: the id may be used by a new token (which then holds it).
    assert await store.claim_token_id(issuer="i", jti=jti, expires_at=1300, now=1101)
    assert not await store.claim_token_id(issuer="i", jti=jti, expires_at=1300, now=1200)
    # Concurrent first uses from several connections: exactly one wins.
    race = uuid.uuid4().hex
    won = await asyncio.gather(
        *(store.claim_token_id(issuer="i", jti=race, expires_at=5000, now=1000) for _ in range(8))
    )
    assert sorted(won) == [False] * 7 + [True]
    # Purging forgets expired ids only.
    assert await store.purge_token_ids(now=1400) >= 2
    assert not await store.claim_token_id(issuer="i", jti=race, expires_at=5000, now=1400)


async def test_large_postgres_values_are_compressed_with_lz4(
    store: SqlPlanStore, store_dsn: str
) -> None:
    if not store_dsn.startswith("postgresql"):
        pytest.skip("SQLite stores values uncompressed: nothing to choose")
    import psycopg

    with psycopg.connect(store_dsn, autocommit=True) as c:
        try:
            c.execute("SET default_toast_compression = lz4")
        except psycopg.errors.DatabaseError:
            pytest.skip("this PostgreSQL server is built without lz4: pglz is kept")
        rows = c.execute(
            "SELECT attname, attcompression FROM pg_attribute "
            "WHERE attrelid = 'plan_versions'::regclass "
            "AND attname IN ('deliberation', 'bundle', 'summary', 'history')"
        ).fetchall()
    assert dict(rows) == {c: "l" for c in ("deliberation", "bundle", "summary", "history")}
