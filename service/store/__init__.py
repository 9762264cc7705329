"""Durable, append-only plan history: every version, its deliberation and every applied Task.

``open_store(dsn)`` picks the engine from the DSN: ``sqlite:///relative.db``,
``sqlite:////abs/path.db`` (the default, one file) or ``postgresql://...`` for several replicas.
Both run the same schema and migrations (``_schema``) and the same SQL (``_sql``). A version is
written in one transaction with the Tasks that produced it, and becomes current by a
compare-and-set on the plan row: two contestations of one version cannot both win, and a crash
leaves the old version or the new one, never a part. Tenancy is enforced here too: a plan is
read or extended only by its own tenant. A contested version is kept as its own part plus the
contestations it added (``_history``), so a plan's N versions cost O(N) bytes. This package uses
no FHIR model and knows nothing of gRPC (``_history`` reads a plan Bundle as plain JSON).
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from service.errors import InputError
from service.store._drivers import PostgresDriver, SqliteDriver
from service.store._sql import (
    FeedbackRecord,
    IssuedCard,
    PlanStore,
    SqlPlanStore,
    TaskRecord,
    VersionInfo,
    VersionRecord,
)

__all__ = [
    "FeedbackRecord",
    "IssuedCard",
    "PlanStore",
    "SqlPlanStore",
    "TaskRecord",
    "VersionInfo",
    "VersionRecord",
    "open_store",
    "sqlite_path",
]


def sqlite_path(dsn: str) -> str:
    """``sqlite:///rel.db`` -> ``rel.db``; ``sqlite:////abs.db`` -> ``/abs.db``; ``:memory:``."""
    rest = dsn[len("sqlite://") :]
    if not rest.startswith("/") or len(rest) < 2:
        raise InputError(f"a SQLite DSN is sqlite:///relative.db or sqlite:////abs.db, not {dsn!r}")
    return unquote(rest[1:])


async def open_store(dsn: str, *, migrate: bool = True) -> SqlPlanStore:
    """Open (and by default migrate) the store a DSN names. Unknown schemes are an InputError."""
    scheme = urlsplit(dsn).scheme.lower()
    if scheme == "sqlite":
        driver: SqliteDriver | PostgresDriver = SqliteDriver(sqlite_path(dsn))
    elif scheme in ("postgresql", "postgres"):
        driver = PostgresDriver(dsn)
    else:
        raise InputError(f"unknown store DSN scheme {scheme!r}: use sqlite:/// or postgresql://")
    store = SqlPlanStore(driver)
    if migrate:
        try:
            await store.migrate()
        except BaseException:
            await store.aclose()
            raise
    return store
