"""The portal store's schema, as versioned SQL: one migration per version, for each backend.

`run(store)` applies, in one transaction, the migrations a database has not had yet, and records
each in `schema_version` (version, name, when). It runs on every start and is idempotent: a
database at the latest version is left as it is. Two processes starting at once are serialised
by a lock taken before anything is read (SQLite: `BEGIN IMMEDIATE`, the database's write lock;
PostgreSQL: a transaction-level advisory lock), so the second sees the first one's work.

A new version is a new `Migration` appended to `MIGRATIONS`, with the SQL of both backends;
a migration that was released is never edited. Version 1 is the schema that SQLite databases
made before `schema_version` existed already have (they kept it in `PRAGMA user_version`); its
statements are `IF NOT EXISTS`, so such a database is only stamped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

logger = logging.getLogger(__name__)

APPEND_ONLY = ("learners", "exams", "submissions")

# the same in both backends; `applied_at` is UTC ISO 8601, as every time in the store
VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""

# an advisory lock's key (any 64-bit number the database's other users do not take): "corrige\x01"
ADVISORY_LOCK_KEY = int.from_bytes(b"corrige\x01", "big")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sqlite: str
    postgresql: str


def _sqlite_append_only() -> str:
    return "\n".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_{action.lower()} BEFORE {action} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;"
        for table in APPEND_ONLY
        for action in ("UPDATE", "DELETE")
    )


def _postgresql_append_only() -> str:
    # statement-level, so TRUNCATE (which no row trigger sees) is refused as well; the error is an
    # integrity constraint violation (SQLSTATE 23000), as SQLite's RAISE(ABORT) is an IntegrityError
    function = """
CREATE FUNCTION corrige_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
END
$$;
"""
    triggers = "\n".join(
        f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION corrige_append_only();"
        for table in APPEND_ONLY
    )
    return function + triggers


SQLITE_V1 = """
CREATE TABLE IF NOT EXISTS learners (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS exams (
    id INTEGER PRIMARY KEY,
    learner TEXT NOT NULL REFERENCES learners(id),
    started_at TEXT NOT NULL,
    question_ids TEXT NOT NULL  -- comma-separated, in the order asked
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,             -- UTC, ISO 8601 with milliseconds
    learner TEXT NOT NULL REFERENCES learners(id),
    mode TEXT NOT NULL CHECK (mode IN ('quiz', 'exam')),
    exam_id INTEGER REFERENCES exams(id),
    question_id TEXT NOT NULL,
    category TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    expected TEXT NOT NULL,
    grade TEXT NOT NULL CHECK (grade IN ('exact', 'close', 'wrong')),
    tutor TEXT NOT NULL,          -- the tutor model's correction of the question
    request_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS submissions_learner ON submissions (learner, id);
CREATE UNIQUE INDEX IF NOT EXISTS submissions_exam_question ON submissions (exam_id, question_id)
    WHERE exam_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS exams_learner ON exams (learner, id);
"""

# the same tables; ids are 64-bit identities (SQLite's integer range), times the same ISO text, and
# the text columns that queries sort by compare bytewise (COLLATE "C"), as SQLite's do
POSTGRESQL_V1 = """
CREATE TABLE learners (
    id TEXT COLLATE "C" PRIMARY KEY,
    created_at TEXT NOT NULL
);
CREATE TABLE exams (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    learner TEXT COLLATE "C" NOT NULL REFERENCES learners(id),
    started_at TEXT NOT NULL,
    question_ids TEXT NOT NULL
);
CREATE TABLE submissions (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at TEXT NOT NULL,
    learner TEXT COLLATE "C" NOT NULL REFERENCES learners(id),
    mode TEXT NOT NULL CHECK (mode IN ('quiz', 'exam')),
    exam_id BIGINT REFERENCES exams(id),
    question_id TEXT COLLATE "C" NOT NULL,
    category TEXT COLLATE "C" NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    expected TEXT NOT NULL,
    grade TEXT NOT NULL CHECK (grade IN ('exact', 'close', 'wrong')),
    tutor TEXT NOT NULL,
    request_id TEXT NOT NULL
);
CREATE INDEX submissions_learner ON submissions (learner, id);
CREATE UNIQUE INDEX submissions_exam_question ON submissions (exam_id, question_id) WHERE exam_id IS NOT NULL;
CREATE INDEX exams_learner ON exams (learner, id);
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "learners, exams and the submissions audit log; append-only",
        SQLITE_V1 + _sqlite_append_only(),
        POSTGRESQL_V1 + _postgresql_append_only(),
    ),
)
LATEST = MIGRATIONS[-1].version


class Migratable(Protocol):
    """What the runner needs of a store (`corrige.portal.store.PortalStore` is one)."""

    @property
    def dialect(self) -> str: ...
    def migration_lock(self) -> AbstractContextManager[None]: ...
    def run_script(self, script: str) -> None: ...
    def execute(self, sql: str, args: Sequence[object] = ()) -> Any: ...


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer corrige than this one."""


def run(store: Migratable) -> list[int]:
    """Bring the store's database to `LATEST`; returns the versions applied now (none: it was there)."""
    applied = []
    with store.migration_lock():
        store.run_script(VERSION_TABLE)
        current = store.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0]
        if current > LATEST:
            raise SchemaTooNew(f"the portal database is at schema version {current}; this corrige knows {LATEST}")
        for migration in MIGRATIONS:
            if migration.version <= current:
                continue
            store.run_script(getattr(migration, store.dialect))
            store.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, datetime.now(UTC).isoformat(timespec="seconds")),
            )
            applied.append(migration.version)
    if applied:
        logger.info("portal store migrated to schema version %d (applied %s)", LATEST, applied)
    return applied
