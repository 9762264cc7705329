"""Linear plan history, on SQLite and PostgreSQL: a contested version is stored as its own part
plus the contestations it added, reads give back exactly what each contestation returned (for
rows written before this layout too), and 1,000 versions of one plan grow the store linearly."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.app import CarePlanService, ContestOutcome, PlanOutcome
from service.settings import load_settings
from service.store import SqlPlanStore, open_store
from service.store._history import split
from service.store._schema import MIGRATIONS
from tests.benchmarks.bench_history import contest_task, first_argument, store_bytes
from tests.service.conftest import bundle_bytes

TENANT = "t-history"


async def _service(dsn: str) -> CarePlanService:
    return await CarePlanService.create(load_settings({}, store_dsn=dsn))


@pytest.fixture
async def app(store_dsn: str) -> AsyncIterator[CarePlanService]:
    service = await _service(store_dsn)
    try:
        yield service
    finally:
        await service.aclose()


async def _contest(app: CarePlanService, plan: PlanOutcome, version: int) -> ContestOutcome:
    doc = plan.deliberation
    task = contest_task(plan.plan_id, version, first_argument(doc), doc["patient_ref"])
    return await app.contest(task, tenant=TENANT, plan_id=plan.plan_id, version=version)


async def _reads_back(app: CarePlanService, plan_id: str, written: dict[int, Any]) -> None:
    for version, out in written.items():
        rec = await app.store.get_version(tenant=TENANT, plan_id=plan_id, version=version)
        assert rec.deliberation == out.deliberation, version
        assert rec.bundle == out.bundle, version


async def _rows(store: SqlPlanStore, plan_id: str) -> list[tuple[Any, ...]]:
    async with store.driver.transaction() as tx:
        return await tx.fetchall(
            "SELECT version, deliberation, history FROM plan_versions WHERE plan_id = ? "
            "ORDER BY version",
            (plan_id,),
        )


async def test_every_version_reads_back_as_it_was_returned(app: CarePlanService) -> None:
    plan = await app.generate(bundle_bytes(), tenant=TENANT)
    written: dict[int, Any] = {1: plan}
    for version in range(1, 6):
        out = await _contest(app, plan, version)
        written[out.version] = out
    await _reads_back(app, plan.plan_id, written)
    assert len(written[6].deliberation["contestations"]) == 5
    rows = await _rows(app.store, plan.plan_id)
    # Version 1 is whole; each contested row holds no contestation in its document and only
    # its own one in its tail.
    assert rows[0][2] is None
    for version, document, history in rows[1:]:
        assert json.loads(document)["contestations"] == []
        tail = json.loads(history)
        assert tail["prior"] == version - 2 and len(tail["contestations"]) == 1
        assert tail["binary"] == "canonical"


@pytest.fixture
def empty_dsn(store_dsn: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database no test has migrated yet, on the engine ``store_dsn`` names."""
    if store_dsn.startswith("sqlite"):
        yield f"sqlite:///{tmp_path}/empty.sqlite3"
        return
    import psycopg

    server: str = request.getfixturevalue("postgres_server")
    schema = f"canoe_empty_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{server}{'&' if '?' in server else '?'}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(server, autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")


async def _old_schema(store: SqlPlanStore) -> None:
    """The store laid out as before history tails: migrations 1-3 only."""
    async with store.driver.transaction() as tx:
        await tx.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
        )
        for m in MIGRATIONS[:3]:
            for stmt in m.sqlite if store.dialect == "sqlite" else m.postgres:
                await tx.execute(stmt)
            await tx.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (m.version, m.name)
            )


async def test_rows_written_before_the_migration_still_read(empty_dsn: str, tmp_path: Path) -> None:
    # Versions 1-3 as an older release wrote them: whole rows, in the old columns.
    source = await _service(f"sqlite:///{tmp_path}/source.sqlite3")
    try:
        plan = await source.generate(bundle_bytes(), tenant=TENANT)
        written: dict[int, Any] = {1: plan}
        for version in (1, 2):
            out = await _contest(source, plan, version)
            written[out.version] = out
        old = [
            await source.store.get_version(tenant=TENANT, plan_id=plan.plan_id, version=v)
            for v in (1, 2, 3)
        ]
    finally:
        await source.aclose()
    store = await open_store(empty_dsn, migrate=False)
    try:
        await _old_schema(store)
        async with store.driver.transaction() as tx:
            await tx.execute(
                "INSERT INTO plans (plan_id, tenant, patient_ref, current_version, created) "
                "VALUES (?, ?, ?, 3, ?)",
                (plan.plan_id, TENANT, old[0].patient_ref, old[0].created),
            )
            for r in old:
                await tx.execute(
                    "INSERT INTO plan_versions (tenant, plan_id, version, patient_ref, "
                    "careplan_id, kind, created, task_ids, deliberation, bundle, summary) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        r.tenant, r.plan_id, r.version, r.patient_ref, r.careplan_id, r.kind,
                        r.created, json.dumps(list(r.task_ids)), json.dumps(r.deliberation),
                        json.dumps(r.bundle), json.dumps(r.summary),
                    ),
                )  # fmt: skip
    finally:
        await store.aclose()
    # The current release migrates the store and carries the plan on from the old rows.
    app = await _service(empty_dsn)
    try:
        for version in (3, 4):
            out = await _contest(app, plan, version)
            written[out.version] = out
        await _reads_back(app, plan.plan_id, written)
        tails = {v: h for v, _d, h in await _rows(app.store, plan.plan_id)}
        assert [tails[v] for v in (1, 2, 3)] == [None, None, None]
        # The first tail after an old row carries every contestation, so no chain reaches
        # into an old row; the next one only its own.
        assert json.loads(tails[4])["prior"] == 0
        assert len(json.loads(tails[4])["contestations"]) == 3
        assert json.loads(tails[5])["prior"] == 3
    finally:
        await app.aclose()


async def test_two_workers_carry_one_history_on(empty_dsn: str) -> None:
    """A worker contesting a version it made reuses the deliberation it holds; one that did not
    make it (another process) reads it whole from the store. Either way every version reads back
    as it was returned, and the last lists every contestation in order."""
    app, other = await _service(empty_dsn), await _service(empty_dsn)  # Task ids: a store each
    try:
        plan = await app.generate(bundle_bytes(), tenant=TENANT)
        written: dict[int, Any] = {1: plan}
        for version in range(1, 8):
            worker = other if version % 3 == 0 else app  # both runs of the same worker and turns
            out = await _contest(worker, plan, version)
            written[out.version] = out
        for worker in (app, other):
            await _reads_back(worker, plan.plan_id, written)
        assert [c["id"] for c in written[8].deliberation["contestations"]] == [
            f"history-{v}" for v in range(1, 8)
        ]
        # Version 8 was made by ``app`` from version 7, which ``other`` made.
        assert (plan.plan_id, 7) in other._parsed and (plan.plan_id, 8) in app._parsed
    finally:
        await app.aclose()
        await other.aclose()


async def test_a_thousand_versions_grow_the_store_linearly(empty_dsn: str) -> None:
    """The last tenth of the versions adds about what the first tenth added: no version
    carries the ones before it. (Stored whole, version k cost O(k): over 1,000 versions the
    last hundred added 4.9x the first on SQLite, and over 1.1x on PostgreSQL, whose TOAST
    compression hides most of the growth.) SQLite, the store that grew to gigabytes, writes
    1,000 versions; PostgreSQL, on the same code path, 300. A contestation costs the same
    whatever the history before it (the worker holds the version it made, and each record is
    written once), so the run is linear: the SQLite case took 62-72 s on a loaded 2-core machine,
    against 214 s when each contestation joined and rewrote every one before it."""
    store_dsn = empty_dsn  # a store of its own: Task ids are unique per store
    count = 300 if store_dsn.startswith("postgresql") else 1000
    tenth = count // 10
    app = await _service(store_dsn)
    try:
        await _grow_linearly(app, store_dsn, count, tenth)
    finally:
        await app.aclose()


async def _grow_linearly(app: CarePlanService, store_dsn: str, count: int, tenth: int) -> None:
    plan = await app.generate(bundle_bytes(), tenant=TENANT)
    sizes = {1: await store_bytes(app, store_dsn)}
    last: ContestOutcome | None = None
    for version in range(1, count + 1):
        last = await _contest(app, plan, version)
        if last.version in (1 + tenth, 1 + count - tenth, 1 + count):
            sizes[last.version] = await store_bytes(app, store_dsn)
    assert last is not None
    first_tenth = sizes[1 + tenth] - sizes[1]
    last_tenth = sizes[1 + count] - sizes[1 + count - tenth]
    assert 0 < last_tenth < 1.1 * first_tenth, sizes
    rec = await app.store.get_version(tenant=TENANT, plan_id=plan.plan_id)
    assert rec.version == count + 1 and len(rec.deliberation["contestations"]) == count
    assert rec.deliberation == last.deliberation and rec.bundle == last.bundle


def _version(ids: list[str], ext_ids: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A hand-made document and Bundle: contestations ``ids``, CarePlan extensions naming
    ``ext_ids`` after one of its own."""

    def ext(task: str) -> dict[str, Any]:
        url = "https://canoe.example.org/fhir/StructureDefinition/contestation"
        return {"url": url, "extension": [{"url": "task", "valueString": task}]}

    careplan = {"resourceType": "CarePlan", "extension": [{"url": "own"}, *map(ext, ext_ids)]}
    bundle = {"resourceType": "Bundle", "entry": [{"resource": careplan}]}
    return {"contestations": [{"id": i} for i in ids]}, bundle


def test_split_checks_what_a_version_adds_and_all_of_what_it_was_not_given() -> None:
    first = split(*_version(["a"], ["a"]), prior=0)
    assert first is not None and first.checked[0] == [{"id": "a"}]
    # The next version starts as the checked one did: its own contestation is checked.
    assert split(*_version(["a", "b"], ["a", "b"]), prior=1, after="a", checked=first.checked)
    assert not split(*_version(["a", "b"], ["a", "x"]), prior=1, after="a", checked=first.checked)
    # It starts otherwise than the checked one: everything is checked, and the mismatch found.
    assert not split(*_version(["a", "b"], ["z", "b"]), prior=1, after="a", checked=first.checked)
    assert not split(*_version(["a", "b"], ["z", "b"]), prior=1, after="a")
