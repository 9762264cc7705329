"""SQLite writers in several processes on one file: a transaction waits for another process's
write lock and then goes ahead (seeing what that process committed), one that waits past the
busy timeout is a clean BackendUnavailable, and a failed statement rolls the whole
transaction back."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from service.errors import BackendUnavailable
from service.store import open_store
from service.store._drivers import SqliteDriver, UniqueViolation

# Another process: takes the write lock, inserts a row, says so, holds the lock ``hold`` seconds,
# then commits.
_HOLDER = textwrap.dedent(
    """
    import sqlite3, sys, time
    c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO marks (who) VALUES ('other process')")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    c.execute("COMMIT")
    """
)


@contextmanager
def lock_held_by_another_process(path: Path, hold_s: float) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), str(hold_s)],
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
            yield proc
        finally:
            proc.kill()


async def _with_table(path: Path, **kw: float) -> SqliteDriver:
    driver = SqliteDriver(str(path), **kw)
    async with driver.transaction() as tx:
        await tx.execute("CREATE TABLE marks (who TEXT PRIMARY KEY)")
    return driver


async def test_a_writer_waits_for_another_process_and_then_sees_its_commit(tmp_path: Path):
    path = tmp_path / "store.sqlite3"
    driver = await _with_table(path)
    try:
        with lock_held_by_another_process(path, 0.3) as other:
            async with driver.transaction() as tx:
                # Only reachable once the other process has committed and let go of the lock.
                rows = await tx.fetchall("SELECT who FROM marks ORDER BY who")
                await tx.execute("INSERT INTO marks (who) VALUES ('this process')")
            assert other.wait(timeout=10) == 0
        assert rows == [("other process",)]
        async with driver.transaction() as tx:
            got = await tx.fetchall("SELECT who FROM marks ORDER BY who")
        assert got == [("other process",), ("this process",)]
    finally:
        await driver.aclose()


async def test_a_lock_held_past_the_busy_timeout_is_backend_unavailable(tmp_path: Path):
    path = tmp_path / "store.sqlite3"
    driver = await _with_table(path, busy_timeout_s=0.2)
    try:
        with lock_held_by_another_process(path, 30):
            locked = "the plan store failed: database is locked"
            with pytest.raises(BackendUnavailable, match=locked):
                async with driver.transaction() as tx:
                    await tx.execute("INSERT INTO marks (who) VALUES ('never')")
        # The lock is free again: the same driver goes on working.
        async with driver.transaction() as tx:
            await tx.execute("INSERT INTO marks (who) VALUES ('later')")
            assert await tx.fetchall("SELECT who FROM marks") == [("later",)]
    finally:
        await driver.aclose()


async def test_a_failed_statement_rolls_the_whole_transaction_back(tmp_path: Path):
    driver = await _with_table(tmp_path / "store.sqlite3")
    try:
        async with driver.transaction() as tx:
            await tx.execute("INSERT INTO marks (who) VALUES ('a')")
        with pytest.raises(UniqueViolation):
            async with driver.transaction() as tx:
                await tx.execute("INSERT INTO marks (who) VALUES ('b')")
                await tx.execute("INSERT INTO marks (who) VALUES ('a')")
        async with driver.transaction() as tx:
            assert await tx.fetchall("SELECT who FROM marks ORDER BY who") == [("a",)]
    finally:
        await driver.aclose()


async def test_two_stores_on_one_file_write_concurrently_without_losing_a_plan(tmp_path: Path):
    """Two stores (two connections, as two workers have) creating plans at the same time: every
    write lands, none is refused."""
    from tests.service.test_store import _rec

    dsn = f"sqlite:///{tmp_path}/store.sqlite3"
    stores = [await open_store(dsn), await open_store(dsn)]
    try:
        await asyncio.gather(
            *(s.create_plan(_rec(f"p{k}-{i}", 1)) for i in range(20) for k, s in enumerate(stores))
        )
        listed = await stores[0].list_versions(tenant="t1", patient_ref="Patient/p1")
        assert sorted(v.plan_id for v in listed) == sorted(
            f"p{k}-{i}" for i in range(20) for k in range(2)
        )
    finally:
        for s in stores:
            await s.aclose()
