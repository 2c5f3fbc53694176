"""The portal's records: the audit log of submissions, exams and learners, in SQLite (the
default, one file) or PostgreSQL (`postgresql://…`, for servers on several machines).

`PortalStore` holds the queries, written once for both backends (`?` placeholders; SQL that
SQLite and PostgreSQL read alike); `SqliteStore` and `PostgresStore` only connect, lock and
translate errors. `PortalStore.open(location)` picks one: a `postgresql://` URL, else a path.

Every table is append-only: the database itself refuses UPDATE and DELETE (triggers; in
PostgreSQL TRUNCATE too), so a record, once written, stays as it was (an exam's progress is its
submissions; nothing is ever rewritten). Every write is one transaction, committed before it
returns: SQLite runs in WAL mode with `synchronous=FULL` (the WAL is flushed at commit),
PostgreSQL with `synchronous_commit=on` (the commit returns once its WAL record is flushed on the
server). So a submission the server has acknowledged survives the process being killed (and a
power cut, as far as the disk keeps its promises). The schema is versioned (`migrations`) and
brought up to date on open.

A store is one connection and is not thread-safe: the server confines it to one worker thread
(`state.Portal`); tests and tools call it directly.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from corrige.obs.store import journal_mode_wal
from corrige.portal import migrations

logger = logging.getLogger(__name__)

POSTGRES_SCHEMES = ("postgresql", "postgres")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AlreadyAnswered(Exception):
    """An exam question that already has an answer."""


class StoreUnavailable(RuntimeError):
    """The database cannot be reached (or opened); the next call tries to connect again."""


def is_database_url(location: object) -> bool:
    return isinstance(location, str) and urlsplit(location).scheme in POSTGRES_SCHEMES


def redact(url: str) -> str:
    """The URL without its password, for logs and messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def with_search_path(url: str, schema: str) -> str:
    """The URL with PostgreSQL's `search_path` set to `schema` (its tables go there): for tests and
    benchmarks that keep to a schema of their own."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema):
        raise ValueError(f"not a plain schema name: {schema!r}")
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query["options"] = f"{query.get('options', '')} -csearch_path={schema}".strip()
    return urlunsplit(parts._replace(query=urlencode(query)))


@dataclass(frozen=True, slots=True)
class Submission:
    """One graded answer, as the audit log keeps it (`id` and `at` are set when it is written)."""

    learner: str
    mode: str
    question_id: str
    category: str
    question: str
    answer: str
    expected: str
    grade: str
    tutor: str
    request_id: str
    exam_id: int | None = None
    id: int | None = None
    at: str | None = None


@dataclass(frozen=True, slots=True)
class Exam:
    id: int
    learner: str
    started_at: str
    question_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CategoryProgress:
    category: str
    attempts: int
    exact: int
    close: int
    wrong: int

    @property
    def score(self) -> float:
        """Share of the points: exact 1, close 0.5 (as in exams)."""
        return (self.exact + 0.5 * self.close) / self.attempts if self.attempts else 0.0


_SUBMISSION_COLUMNS = (
    "learner, mode, question_id, category, question, answer, expected, grade, tutor, request_id, exam_id, id, at"
)


class PortalStore:
    """Audit log and learner records (see the module docstring). The queries live here, once;
    a backend says how to connect, run a statement, take the migration lock and begin a write."""

    dialect: ClassVar[str]  # the `Migration` field with this backend's SQL
    BEGIN: ClassVar[str] = "BEGIN"
    integrity_error: ClassVar[type[Exception]]  # what the database raises for a refused write

    conn: Any
    location: str

    @staticmethod
    def open(location: Path | str) -> PortalStore:
        """A `postgresql://` URL: PostgreSQL; anything else is a SQLite file's path."""
        if is_database_url(location):
            return PostgresStore.open(str(location))
        return SqliteStore.open(Path(location))

    def close(self) -> None:
        self.conn.close()

    # ---- the backend's part ----

    def execute(self, sql: str, args: Sequence[object] = ()) -> Any:
        """Run one statement (`?` placeholders); returns a cursor."""
        raise NotImplementedError

    def run_script(self, script: str) -> None:
        """Run several statements without parameters (within the current transaction)."""
        raise NotImplementedError

    @contextmanager
    def migration_lock(self) -> Iterator[None]:
        """A write transaction that no other process's migration can overlap."""
        raise NotImplementedError
        yield

    def _is_exam_conflict(self, exc: Exception) -> bool:
        """The integrity error is the unique index on (exam_id, question_id)."""
        raise NotImplementedError

    # ---- writes: one transaction each, committed (and flushed) before returning ----

    def append(self, sub: Submission) -> Submission:
        """Write one submission (and its learner, the first time); returns it with `id` and `at`.
        Raises `AlreadyAnswered` for a second answer to the same exam question."""
        at = utc_now()
        with self.transaction():
            self._learner(sub.learner, at)
            try:
                row = self.execute(
                    "INSERT INTO submissions (at, learner, mode, exam_id, question_id, category, question, answer,"
                    " expected, grade, tutor, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (
                        at,
                        sub.learner,
                        sub.mode,
                        sub.exam_id,
                        sub.question_id,
                        sub.category,
                        sub.question,
                        sub.answer,
                        sub.expected,
                        sub.grade,
                        sub.tutor,
                        sub.request_id,
                    ),
                ).fetchone()
            except self.integrity_error as exc:
                if self._is_exam_conflict(exc):
                    raise AlreadyAnswered(sub.question_id) from None
                raise
        return dataclasses.replace(sub, id=row[0], at=at)

    def start_exam(self, learner: str, question_ids: Sequence[str]) -> Exam:
        at = utc_now()
        with self.transaction():
            self._learner(learner, at)
            row = self.execute(
                "INSERT INTO exams (learner, started_at, question_ids) VALUES (?, ?, ?) RETURNING id",
                (learner, at, ",".join(question_ids)),
            ).fetchone()
        return Exam(row[0], learner, at, tuple(question_ids))

    # ---- reads ----

    def exam(self, exam_id: int) -> Exam | None:
        row = self.execute(
            "SELECT id, learner, started_at, question_ids FROM exams WHERE id = ?", (exam_id,)
        ).fetchone()
        return Exam(row[0], row[1], row[2], tuple(row[3].split(","))) if row else None

    def latest_exam(self, learner: str) -> Exam | None:
        row = self.execute("SELECT id FROM exams WHERE learner = ? ORDER BY id DESC LIMIT 1", (learner,)).fetchone()
        return self.exam(row[0]) if row else None

    def exams(self, learner: str, limit: int = 20) -> list[tuple[Exam, list[Submission]]]:
        rows = self.execute(
            "SELECT id FROM exams WHERE learner = ? ORDER BY id DESC LIMIT ?", (learner, limit)
        ).fetchall()
        return [(exam, self.exam_answers(exam.id)) for (exam_id,) in rows if (exam := self.exam(exam_id))]

    def exam_answers(self, exam_id: int) -> list[Submission]:
        return self._submissions("exam_id = ? ORDER BY id", (exam_id,))

    def submission(self, submission_id: int) -> Submission | None:
        found = self._submissions("id = ?", (submission_id,))
        return found[0] if found else None

    def history(self, learner: str, limit: int = 50) -> list[Submission]:
        """The learner's latest submissions, newest first."""
        return self._submissions("learner = ? ORDER BY id DESC LIMIT ?", (learner, limit))

    def progress(self, learner: str) -> list[CategoryProgress]:
        """Counts of each grade per error category, most attempted first."""
        rows = self.execute(
            "SELECT category, COUNT(*), COUNT(*) FILTER (WHERE grade = 'exact'),"
            " COUNT(*) FILTER (WHERE grade = 'close'), COUNT(*) FILTER (WHERE grade = 'wrong')"
            " FROM submissions WHERE learner = ? GROUP BY category ORDER BY COUNT(*) DESC, category",
            (learner,),
        ).fetchall()
        return [CategoryProgress(*row) for row in rows]

    def request_ids(self) -> set[str]:
        """Every request id in the audit log (what a durability check counts)."""
        return {row[0] for row in self.execute("SELECT request_id FROM submissions").fetchall()}

    def schema_version(self) -> int:
        return self.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]

    # ---- helpers ----

    def _submissions(self, where: str, args: tuple) -> list[Submission]:
        rows = self.execute(f"SELECT {_SUBMISSION_COLUMNS} FROM submissions WHERE {where}", args).fetchall()
        return [Submission(*row) for row in rows]

    def _learner(self, learner: str, at: str) -> None:
        self.execute("INSERT INTO learners (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", (learner, at))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN (SQLite: IMMEDIATE, the write lock up front: no upgrade deadlock between processes),
        COMMIT on success, ROLLBACK on any error."""
        self.execute(self.BEGIN)
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        self.execute("COMMIT")

    def _rollback(self) -> None:
        self.execute("ROLLBACK")


class SqliteStore(PortalStore):
    """One SQLite file in WAL mode with `synchronous=FULL`."""

    dialect = "sqlite"
    BEGIN = "BEGIN IMMEDIATE"
    integrity_error = sqlite3.IntegrityError

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.location = str(path)

    @classmethod
    def open(cls, path: Path | str) -> SqliteStore:  # type: ignore[override]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE ... COMMIT)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
        store = cls(conn, path)
        try:
            mode = journal_mode_wal(conn, deadline=time.monotonic() + 10.0)
            if mode.lower() != "wal":
                raise RuntimeError(f"{path}: SQLite refused WAL mode (got {mode!r}); is it on a network file system?")
            conn.execute("PRAGMA synchronous=FULL")  # every commit flushes the WAL to disk
            conn.execute("PRAGMA foreign_keys=ON")
            migrations.run(store)
            conn.execute(f"PRAGMA user_version={migrations.LATEST}")  # what databases before schema_version read
        except BaseException:
            conn.close()  # an open transaction is rolled back
            raise
        logger.info("portal store %s (SQLite, WAL, synchronous=FULL)", path)
        return store

    def execute(self, sql: str, args: Sequence[object] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, args)

    def run_script(self, script: str) -> None:
        # executescript would COMMIT the open transaction first: one statement at a time instead
        statement = ""
        for piece in script.split(";"):
            statement += piece + ";"
            if sqlite3.complete_statement(statement):
                if statement.strip(" \n;"):
                    self.conn.execute(statement)
                statement = ""

    @contextmanager
    def migration_lock(self) -> Iterator[None]:
        with self.transaction():  # BEGIN IMMEDIATE: the write lock, waited for up to the busy timeout
            yield

    def _is_exam_conflict(self, exc: Exception) -> bool:
        return "submissions.exam_id" in str(exc)


class PostgresStore(PortalStore):
    """One connection to PostgreSQL (psycopg 3, autocommit; explicit transactions), with
    `synchronous_commit=on`. A lost connection fails the call that met it (`StoreUnavailable`)
    and is made again by the next one; a write is never retried (its commit may have happened)."""

    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        import psycopg

        self.url = url
        self.location = redact(url)
        self.integrity_error = psycopg.IntegrityError  # type: ignore[misc]
        self._psycopg = psycopg
        self._in_transaction = False
        self.conn = self._connect()

    @classmethod
    def open(cls, url: str) -> PostgresStore:  # type: ignore[override]
        try:
            import psycopg
        except ImportError as exc:
            raise StoreUnavailable("PostgreSQL needs psycopg: pip install 'corrige[postgres]'") from exc
        try:
            store = cls(url)
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot connect to {redact(url)}: {exc}") from exc
        try:
            migrations.run(store)
            fsync = store.execute("SHOW fsync").fetchone()[0]
        except psycopg.Error as exc:  # e.g. a role that may not create the tables
            store.close()
            raise StoreUnavailable(f"cannot prepare {store.location}: {exc}") from exc
        except BaseException:
            store.close()
            raise
        if fsync != "on":
            logger.warning(
                "PostgreSQL at %s runs with fsync=%s: a crash of its machine may lose commits", store.location, fsync
            )
        logger.info("portal store %s (PostgreSQL, synchronous_commit=on)", store.location)
        return store

    def _connect(self):
        try:
            conn = self._psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except self._psycopg.OperationalError as exc:
            raise StoreUnavailable(f"cannot connect to {self.location}: {exc}") from exc
        conn.execute("SET synchronous_commit = on")  # whatever the server's or role's default
        return conn

    def execute(self, sql: str, args: Sequence[object] = ()) -> Any:
        if self.conn.closed and not self._in_transaction:
            self.conn = self._connect()
        try:
            return self.conn.execute(_pg(sql), args)
        except self._psycopg.OperationalError as exc:
            if self.conn.closed:  # the connection is gone (not a statement the server refused)
                raise StoreUnavailable(f"lost the connection to {self.location}: {exc}") from exc
            raise

    def run_script(self, script: str) -> None:
        self.conn.execute(script)  # no parameters: PostgreSQL takes several statements at once

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with super().transaction():
            self._in_transaction = True
            try:
                yield
            finally:
                self._in_transaction = False

    def _rollback(self) -> None:
        if not self.conn.closed:
            self.execute("ROLLBACK")

    @contextmanager
    def migration_lock(self) -> Iterator[None]:
        with self.transaction():
            self.execute("SELECT pg_advisory_xact_lock(?)", (migrations.ADVISORY_LOCK_KEY,))
            yield

    def _is_exam_conflict(self, exc: Exception) -> bool:
        diag = getattr(exc, "diag", None)
        return getattr(diag, "constraint_name", None) == "submissions_exam_question"


_PG_SQL: dict[str, str] = {}


def _pg(sql: str) -> str:
    """A shared statement with psycopg's placeholders (the queries have no `?` or `%` of their own)."""
    translated = _PG_SQL.get(sql)
    if translated is None:
        translated = _PG_SQL[sql] = sql.replace("?", "%s")
    return translated
