"""Database drivers behind the plan store: SQLite (default, one file) and PostgreSQL (replicas).

Both offer the same tiny surface: ``transaction()`` yields a ``Tx`` with ``execute`` and
``fetchall`` taking ``?`` placeholders; the driver rewrites them for its engine. The SQLite calls
that can wait (for another process's write lock, or for the disk: ``BEGIN IMMEDIATE`` and
``COMMIT``) run on one dedicated thread, so the event loop never waits on them; the statements
in between run inline (see ``_SqliteTx``). This module knows
nothing about plans; the SQL lives in ``_sql``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from service.errors import BackendUnavailable, missing_extra

__all__ = ["Driver", "PostgresDriver", "SqliteDriver", "Tx", "UniqueViolation"]

T = TypeVar("T")
Row = tuple[Any, ...]


class UniqueViolation(Exception):
    """A primary-key or unique constraint refused a row (engine-neutral)."""


class Tx(Protocol):
    async def execute(self, sql: str, params: Sequence[object] = ()) -> int: ...

    async def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]: ...


class Driver(Protocol):
    dialect: str

    # An async context manager yielding a Tx. ``pipeline``: the caller reads no result inside
    # (no rowcount, no fetch), so a driver may send every statement in one round trip; errors
    # such as UniqueViolation may then be raised when the block ends rather than at execute.
    def transaction(self, *, pipeline: bool = False) -> Any: ...

    async def aclose(self) -> None: ...


# --------------------------------------------------------------------------- SQLite


class _SqliteTx:
    """The statements of a transaction whose ``BEGIN IMMEDIATE`` holds SQLite's write lock.

    They run inline, on the caller's thread: with the lock held and the file in WAL mode no
    statement can wait for another connection, and what they touch is in the page cache. Each
    hop to the driver's thread would instead cost two thread switches (each waiting for the
    GIL while planning threads run) with the lock held, and every other worker process of the
    same file waits for that lock. ``COMMIT``, which waits for the disk, runs on the thread.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._c = conn

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        try:
            return self._c.execute(sql, tuple(params)).rowcount
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc) or "PRIMARY KEY" in str(exc):
                raise UniqueViolation(str(exc)) from exc
            raise
        except sqlite3.OperationalError as exc:
            raise BackendUnavailable(f"the plan store failed: {exc}") from exc

    async def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        try:
            return self._c.execute(sql, tuple(params)).fetchall()
        except sqlite3.OperationalError as exc:
            raise BackendUnavailable(f"the plan store failed: {exc}") from exc


# How long a transaction waits for another process's write lock before the store reports
# itself unavailable.
BUSY_TIMEOUT_S = 30.0


class SqliteDriver:
    """One connection, one thread, one transaction at a time (SQLite has one writer anyway)."""

    dialect = "sqlite"

    def __init__(self, path: str, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="canoe-sqlite")
        self._lock = asyncio.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so a transaction takes the
        # write lock up front and a compare-and-set cannot race another process either.
        c = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=self.busy_timeout_s
        )
        for attempt in range(100):
            try:
                c.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                # Switching a fresh file to WAL needs a moment of exclusive access, and SQLite
                # answers "locked" at once (no busy wait) while another process starting on
                # the same file holds it: wait briefly and try again (this is the pool thread).
                if "locked" not in str(exc) or attempt == 99:
                    c.close()
                    raise
                time.sleep(0.05)
        c.execute("PRAGMA synchronous=FULL")  # acknowledged means on disk
        c.execute("PRAGMA foreign_keys=ON")
        return c

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()

        def call() -> T:
            if self._conn is None:
                self._conn = self._connect()
            return fn(self._conn)

        try:
            return await loop.run_in_executor(self._pool, call)
        except sqlite3.OperationalError as exc:
            raise BackendUnavailable(f"the plan store failed: {exc}") from exc

    def _begin(self, c: sqlite3.Connection) -> sqlite3.Connection:
        """``BEGIN IMMEDIATE``, waiting for another process's write lock in short naps.

        SQLite's own busy handler naps 1, 2, 5, 10 ... up to 100 ms at a time, so a writer of
        another worker process that frees the lock after 3 ms is noticed only 5 ms later, and
        one queued behind a few others waits up to 100 ms past its turn: most of the p99 of
        several workers on one file. Here the naps grow from 0.2 ms to 2 ms, up to the same
        overall limit (``busy_timeout_s``)."""
        deadline = time.monotonic() + self.busy_timeout_s
        nap = 0.0002
        c.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    c.execute("BEGIN IMMEDIATE")
                    return c
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or time.monotonic() + nap > deadline:
                        raise
                time.sleep(nap)
                nap = min(nap * 2, 0.002)
        finally:
            c.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")

    @asynccontextmanager
    async def transaction(self, *, pipeline: bool = False) -> AsyncIterator[Tx]:
        async with self._lock:
            conn = await self.run(self._begin)
            try:
                yield _SqliteTx(conn)
            except BaseException:
                await asyncio.shield(self.run(lambda c: c.execute("ROLLBACK")))
                raise
            await asyncio.shield(self.run(lambda c: c.execute("COMMIT")))

    async def aclose(self) -> None:
        def close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await asyncio.get_running_loop().run_in_executor(self._pool, close)
        self._pool.shutdown(wait=True)


# --------------------------------------------------------------------------- PostgreSQL


class _PgTx:
    def __init__(self, conn: Any) -> None:
        self._c = conn

    async def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        import psycopg

        try:
            # No parameters: send the SQL untouched (a plpgsql body may hold a literal '%').
            cur = (
                await self._c.execute(_pg(sql), tuple(params))
                if params
                else await self._c.execute(sql)
            )
        except psycopg.errors.UniqueViolation as exc:
            raise UniqueViolation(str(exc)) from exc
        return int(cur.rowcount)

    async def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        cur = await self._c.execute(_pg(sql), tuple(params))
        return list(await cur.fetchall())


def _pg(sql: str) -> str:
    # Parameterised SQL here never holds a literal '?' or '%', so the swap is exact.
    return sql.replace("?", "%s")


class PostgresDriver:
    """A small pool of psycopg async connections; a broken connection is replaced, not reused."""

    dialect = "postgres"

    def __init__(self, dsn: str, size: int = 4) -> None:
        try:
            import psycopg  # noqa: F401  (fail at start-up, naming the extra, not at first use)
        except ImportError as exc:
            raise missing_extra("postgres", "the PostgreSQL plan store") from exc
        self.dsn = dsn
        self.size = size
        self._idle: asyncio.Queue[Any] = asyncio.Queue()
        self._slots = asyncio.Semaphore(size)

    async def _get(self) -> Any:
        import psycopg

        try:
            return self._idle.get_nowait()
        except asyncio.QueueEmpty:
            pass
        try:
            return await psycopg.AsyncConnection.connect(
                self.dsn, connect_timeout=10, autocommit=True
            )
        except psycopg.OperationalError as exc:
            raise BackendUnavailable(f"the plan store is unreachable: {exc}") from exc

    @asynccontextmanager
    async def transaction(self, *, pipeline: bool = False) -> AsyncIterator[Tx]:
        import psycopg

        async with self._slots:
            conn = await self._get()
            ok = False
            try:
                async with contextlib.AsyncExitStack() as stack:
                    if pipeline:  # BEGIN, the statements and COMMIT in one round trip
                        await stack.enter_async_context(conn.pipeline())
                    await stack.enter_async_context(conn.transaction())
                    yield _PgTx(conn)
                ok = True
            except psycopg.errors.UniqueViolation as exc:  # raised at the end of a pipeline
                raise UniqueViolation(str(exc)) from exc
            except psycopg.OperationalError as exc:
                raise BackendUnavailable(f"the plan store failed: {exc}") from exc
            finally:
                if ok or (not conn.closed and conn.info.transaction_status == 0):
                    self._idle.put_nowait(conn)
                else:
                    await asyncio.shield(conn.close())

    async def aclose(self) -> None:
        while not self._idle.empty():
            await self._idle.get_nowait().close()
