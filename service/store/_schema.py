"""The store's schema as numbered migrations, one list for SQLite and PostgreSQL alike.

Only portable SQL (TEXT, INTEGER, primary keys, indexes); JSON travels as TEXT so both engines
store the same bytes. A migration is applied once and recorded in ``schema_migrations``; later
schema changes are new entries at the end, never edits of old ones. The append-only guards
(migrations 2 and 3) are the one place where the dialects differ, in syntax only.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "Migration"]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


_TABLES = (
    # One row per plan: who owns it and which version is current. ``current_version`` is the
    # only column the store ever updates, and only with a compare-and-set.
    """CREATE TABLE plans (
        plan_id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        patient_ref TEXT NOT NULL,
        current_version INTEGER NOT NULL,
        created TEXT NOT NULL
    )""",
    "CREATE INDEX plans_by_patient ON plans (tenant, patient_ref)",
    # Every version ever produced, with its deliberation document and the FHIR Bundle returned.
    """CREATE TABLE plan_versions (
        plan_id TEXT NOT NULL REFERENCES plans (plan_id),
        version INTEGER NOT NULL,
        tenant TEXT NOT NULL,
        patient_ref TEXT NOT NULL,
        careplan_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        created TEXT NOT NULL,
        task_ids TEXT NOT NULL,
        deliberation TEXT NOT NULL,
        bundle TEXT NOT NULL,
        summary TEXT NOT NULL,
        PRIMARY KEY (plan_id, version)
    )""",
    # Every applied Task, keyed for idempotency: the same id is applied once per tenant.
    """CREATE TABLE tasks (
        tenant TEXT NOT NULL,
        task_id TEXT NOT NULL,
        plan_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        applied TEXT NOT NULL,
        PRIMARY KEY (tenant, task_id)
    )""",
    # CDS Hooks card feedback, kept as received (the bridge maps it to contestation separately).
    """CREATE TABLE feedback (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        plan_id TEXT NOT NULL,
        card_id TEXT NOT NULL,
        outcome TEXT NOT NULL,
        payload TEXT NOT NULL,
        recorded TEXT NOT NULL
    )""",
)

_PG_APPEND_ONLY = (
    """CREATE FUNCTION canoe_append_only() RETURNS trigger AS $$
    BEGIN
        RAISE EXCEPTION 'canoe: % is append-only', TG_TABLE_NAME;
    END
    $$ LANGUAGE plpgsql""",
    *(
        f"CREATE TRIGGER {t}_append_only BEFORE UPDATE OR DELETE ON {t} "
        "FOR EACH ROW EXECUTE FUNCTION canoe_append_only()"
        for t in ("plan_versions", "tasks", "feedback")
    ),
)

_SQLITE_APPEND_ONLY = tuple(
    f"CREATE TRIGGER {t}_no_{op.lower()} BEFORE {op} ON {t} "
    f"BEGIN SELECT RAISE(ABORT, 'canoe: {t} is append-only'); END"
    for t in ("plan_versions", "tasks", "feedback")
    for op in ("UPDATE", "DELETE")
)

_CDS_TABLES = (
    # The CDS Hooks cards issued: which plan version, service and options each card id stands
    # for, so feedback can reach any replica. Keyed by tenant first: a card id is only ever
    # looked up within the caller's tenant. ``payload``: the rest of the bridge's record (JSON).
    """CREATE TABLE cds_cards (
        tenant TEXT NOT NULL,
        card_id TEXT NOT NULL,
        plan_id TEXT NOT NULL REFERENCES plans (plan_id),
        version INTEGER NOT NULL,
        service_id TEXT NOT NULL,
        payload TEXT NOT NULL,
        created TEXT NOT NULL,
        PRIMARY KEY (tenant, card_id)
    )""",
    # CDS client JWT ids seen, until their token expires (epoch seconds, leeway included): the
    # primary key refuses a second use on every replica. Not history: expired rows are purged.
    """CREATE TABLE cds_jtis (
        issuer TEXT NOT NULL,
        jti TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (issuer, jti)
    )""",
    "CREATE INDEX cds_jtis_by_expiry ON cds_jtis (expires_at)",
)

# What a clinician was shown is part of the plan's record: issued cards are never rewritten.
_CDS_SQLITE = _CDS_TABLES + tuple(
    f"CREATE TRIGGER cds_cards_no_{op.lower()} BEFORE {op} ON cds_cards "
    "BEGIN SELECT RAISE(ABORT, 'canoe: cds_cards is append-only'); END"
    for op in ("UPDATE", "DELETE")
)
_CDS_PG = (
    *_CDS_TABLES,
    "CREATE TRIGGER cds_cards_append_only BEFORE UPDATE OR DELETE ON cds_cards "
    "FOR EACH ROW EXECUTE FUNCTION canoe_append_only()",
)

# A contested version's tail (``_history``): the contestations it added and how many came before.
# NULL: the row holds its whole document and Bundle (version 1, and every row written before).
_HISTORY = ("ALTER TABLE plan_versions ADD COLUMN history TEXT",)

# PostgreSQL compresses a large value with pglz by default; lz4 (PostgreSQL 14 and later, when
# the server is built with it) compresses a plan's Bundle and document several times faster
# for about the same size: a plan's store write on the local server, 4.6 ms -> 3.1 ms. Rows
# already stored keep their compression; a server without lz4 keeps pglz.
_PG_LZ4 = (
    """DO $$
    BEGIN
        IF current_setting('server_version_num')::int >= 140000 THEN
            ALTER TABLE plan_versions
                ALTER COLUMN deliberation SET COMPRESSION lz4,
                ALTER COLUMN bundle SET COMPRESSION lz4,
                ALTER COLUMN summary SET COMPRESSION lz4,
                ALTER COLUMN history SET COMPRESSION lz4;
        END IF;
    EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
        NULL;
    END
    $$""",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "plans, versions, tasks, feedback", _TABLES, _TABLES),
    Migration(2, "history is append-only", _SQLITE_APPEND_ONLY, _PG_APPEND_ONLY),
    Migration(3, "CDS Hooks card ledger and JWT replay guard", _CDS_SQLITE, _CDS_PG),
    Migration(4, "a contested version keeps only its own history", _HISTORY, _HISTORY),
    Migration(5, "large PostgreSQL values compressed with lz4", (), _PG_LZ4),
)
