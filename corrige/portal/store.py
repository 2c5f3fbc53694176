"""The portal's records in SQLite: the audit log of submissions, exams and learners.

Every table is append-only: triggers refuse UPDATE and DELETE, so a record, once written,
stays as it was (an exam's progress is its submissions; nothing is ever rewritten). The
database runs in WAL mode with `synchronous=FULL`: `append` returns only after its
transaction is committed and the WAL is flushed to disk, so a submission the server has
acknowledged survives the process being killed (and a power cut, as far as the disk keeps
its promises).

A `PortalStore` is one connection and is not thread-safe: the server confines it to one
worker thread (`state.Portal`); tests and tools call it directly.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
APPEND_ONLY = ("learners", "exams", "submissions")

SCHEMA = """
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


def _append_only_triggers() -> str:
    statements = []
    for table in APPEND_ONLY:
        for action in ("UPDATE", "DELETE"):
            statements.append(
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_{action.lower()} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;"
            )
    return "\n".join(statements)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AlreadyAnswered(Exception):
    """An exam question that already has an answer."""


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
    """Audit log and learner records in one SQLite file (see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path | str) -> PortalStore:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE ... COMMIT) below
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            conn.close()
            raise RuntimeError(f"{path}: SQLite refused WAL mode (got {mode!r}); is it on a network file system?")
        conn.execute("PRAGMA synchronous=FULL")  # every commit flushes the WAL to disk
        conn.execute("PRAGMA foreign_keys=ON")
        try:
            # one transaction: a second process opening the same file sees all of it or none
            conn.executescript(
                f"BEGIN IMMEDIATE;\n{SCHEMA}\n{_append_only_triggers()}\nPRAGMA user_version={SCHEMA_VERSION};\nCOMMIT;"
            )
        except BaseException:
            conn.close()  # an open transaction is rolled back
            raise
        logger.info("portal store %s (WAL, synchronous=FULL)", path)
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    # ---- writes: one transaction each, committed (and flushed) before returning ----

    def append(self, sub: Submission) -> Submission:
        """Write one submission (and its learner, the first time); returns it with `id` and `at`.
        Raises `AlreadyAnswered` for a second answer to the same exam question."""
        at = utc_now()
        with self._transaction():
            self._learner(sub.learner, at)
            try:
                cursor = self.conn.execute(
                    "INSERT INTO submissions (at, learner, mode, exam_id, question_id, category, question, answer,"
                    " expected, grade, tutor, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                )
            except sqlite3.IntegrityError as exc:
                if "submissions.exam_id" in str(exc):
                    raise AlreadyAnswered(sub.question_id) from None
                raise
        return dataclasses.replace(sub, id=cursor.lastrowid, at=at)

    def start_exam(self, learner: str, question_ids: Sequence[str]) -> Exam:
        at = utc_now()
        with self._transaction():
            self._learner(learner, at)
            cursor = self.conn.execute(
                "INSERT INTO exams (learner, started_at, question_ids) VALUES (?, ?, ?)",
                (learner, at, ",".join(question_ids)),
            )
        return Exam(int(cursor.lastrowid or 0), learner, at, tuple(question_ids))

    # ---- reads ----

    def exam(self, exam_id: int) -> Exam | None:
        row = self.conn.execute(
            "SELECT id, learner, started_at, question_ids FROM exams WHERE id = ?", (exam_id,)
        ).fetchone()
        return Exam(row[0], row[1], row[2], tuple(row[3].split(","))) if row else None

    def latest_exam(self, learner: str) -> Exam | None:
        row = self.conn.execute(
            "SELECT id FROM exams WHERE learner = ? ORDER BY id DESC LIMIT 1", (learner,)
        ).fetchone()
        return self.exam(row[0]) if row else None

    def exams(self, learner: str, limit: int = 20) -> list[tuple[Exam, list[Submission]]]:
        rows = self.conn.execute(
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
        rows = self.conn.execute(
            "SELECT category, COUNT(*), SUM(grade = 'exact'), SUM(grade = 'close'), SUM(grade = 'wrong')"
            " FROM submissions WHERE learner = ? GROUP BY category ORDER BY COUNT(*) DESC, category",
            (learner,),
        ).fetchall()
        return [CategoryProgress(*row) for row in rows]

    def request_ids(self) -> set[str]:
        """Every request id in the audit log (what a durability check counts)."""
        return {row[0] for row in self.conn.execute("SELECT request_id FROM submissions")}

    # ---- helpers ----

    def _submissions(self, where: str, args: tuple) -> list[Submission]:
        rows = self.conn.execute(f"SELECT {_SUBMISSION_COLUMNS} FROM submissions WHERE {where}", args).fetchall()
        return [Submission(*row) for row in rows]

    def _learner(self, learner: str, at: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO learners (id, created_at) VALUES (?, ?)", (learner, at))

    def _transaction(self) -> _Transaction:
        return _Transaction(self.conn)


class _Transaction:
    """BEGIN IMMEDIATE (take the write lock up front: no upgrade deadlock between processes),
    COMMIT on success, ROLLBACK on any error."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
