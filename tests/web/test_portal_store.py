"""The audit log and learner records on both backends (a real SQLite file, a real PostgreSQL server:
the `backend` fixture); migrations; the session cookie and its key."""

from __future__ import annotations

import sqlite3
import stat
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from corrige.portal import migrations
from corrige.portal.sessions import Session, SessionCodec, csrf_ok, load_or_create_secret
from corrige.portal.store import (
    AlreadyAnswered,
    PortalStore,
    PostgresStore,
    StoreUnavailable,
    Submission,
    is_database_url,
    redact,
    with_search_path,
)


def submission(learner="ana", grade="exact", request_id="r1", **extra) -> Submission:
    fields = dict(
        learner=learner,
        mode="quiz",
        question_id="q7",
        category="a_an",
        question="She is a engineer.",
        answer="She is an engineer.",
        expected="She is an engineer.",
        grade=grade,
        tutor="She is an engineer.",
        request_id=request_id,
    )
    return Submission(**{**fields, **extra})


@pytest.fixture
def store(backend):
    opened = backend.open()
    yield opened
    opened.close()


def test_the_sqlite_database_is_wal_with_full_sync(tmp_path):
    store = PortalStore.open(tmp_path / "state" / "portal.sqlite")
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store.path.with_name("portal.sqlite-wal").exists()
    store.close()


def test_postgresql_commits_are_synchronous(postgres):
    store = PortalStore.open(postgres.fresh_url())
    assert isinstance(store, PostgresStore)
    assert store.execute("SHOW synchronous_commit").fetchone()[0] == "on"
    assert store.execute("SHOW fsync").fetchone()[0] == "on"
    assert store.conn.autocommit  # every write is its own explicit transaction, committed before returning
    store.close()


def test_a_submission_is_stored_with_who_when_what_and_the_request_id(store, backend):
    saved = store.append(submission())
    assert saved.id == 1 and saved.at.endswith("Z") and "T" in saved.at
    # a second connection (another process would do the same) sees the committed row
    other = backend.connect()
    row = other.execute("SELECT learner, at, question, answer, grade, request_id FROM submissions").fetchone()
    other.close()
    assert tuple(row) == ("ana", saved.at, "She is a engineer.", "She is an engineer.", "exact", "r1")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE submissions SET grade = 'exact'",
        "DELETE FROM submissions",
        "UPDATE learners SET created_at = ''",
        "DELETE FROM learners",
        "UPDATE exams SET question_ids = ''",
        "DELETE FROM exams",
    ],
)
def test_every_table_is_append_only(store, backend, statement):
    store.append(submission(grade="wrong"))
    store.start_exam("ana", ["q1", "q2"])
    other = backend.connect()  # the database refuses it, whoever asks: not only the store's code
    with pytest.raises(backend.integrity_error, match="append-only"):
        other.execute(statement)
    other.close()
    assert store.history("ana")[0].grade == "wrong"


@pytest.mark.parametrize("table", ["submissions", "learners", "exams"])
def test_postgresql_refuses_truncate_too(postgres, table):
    from postgres_support import make_backend

    backend = make_backend("postgresql", None, postgres)
    store = backend.open()
    store.append(submission())
    other = backend.connect()
    with pytest.raises(backend.integrity_error, match="append-only"):
        other.execute(f"TRUNCATE {table} CASCADE")
    other.close()
    assert store.request_ids() == {"r1"}
    store.close()


def test_a_lost_postgresql_connection_fails_one_call_and_the_next_connects_again(postgres):
    import psycopg

    store = PortalStore.open(postgres.fresh_url())
    store.append(submission(request_id="before"))
    with psycopg.connect(postgres.url, autocommit=True) as admin:  # as a restart of PostgreSQL would
        admin.execute("SELECT pg_terminate_backend(%s)", (store.conn.info.backend_pid,))
    with pytest.raises(StoreUnavailable, match="lost the connection"):
        store.append(submission(request_id="lost"))  # never retried: its commit might have happened
    store.append(submission(request_id="after"))
    assert store.request_ids() == {"before", "after"}
    store.close()


def test_an_exam_question_takes_one_answer(store):
    exam = store.start_exam("ana", ["q7", "q8"])
    store.append(submission(mode="exam", exam_id=exam.id, request_id="a"))
    with pytest.raises(AlreadyAnswered):
        store.append(submission(mode="exam", exam_id=exam.id, request_id="b"))
    store.append(submission(request_id="c"))  # the same question as a quiz is fine
    assert [s.request_id for s in store.exam_answers(exam.id)] == ["a"]
    assert store.latest_exam("ana") == exam and store.latest_exam("bea") is None
    assert store.request_ids() == {"a", "c"}  # the refused answer left nothing behind


def test_progress_counts_grades_per_category_for_one_learner(store):
    for grade in ("exact", "close", "wrong", "wrong"):
        store.append(submission(grade=grade))
    store.append(submission(grade="exact", category="uncountable"))
    store.append(submission(grade="exact", category="a_before_vowel"))
    store.append(submission(learner="bea", grade="exact"))
    progress = store.progress("ana")
    # most attempted first, then by name, bytewise ("a_an" before "a_before_vowel") on both backends
    assert [p.category for p in progress] == ["a_an", "a_before_vowel", "uncountable"]
    by_name = {p.category: p for p in progress}
    assert (by_name["a_an"].attempts, by_name["a_an"].exact, by_name["a_an"].close) == (4, 1, 1)
    assert by_name["a_an"].score == pytest.approx(1.5 / 4)
    assert by_name["uncountable"].score == 1.0
    assert len(store.history("ana")) == 6 and store.history("ana")[0].category == "a_before_vowel"
    exam = store.start_exam("ana", ["q1", "q2"])
    store.append(submission(mode="exam", exam_id=exam.id, question_id="q1"))
    assert store.exams("ana") == [(exam, [store.submission(8)])]


def test_records_survive_closing_and_reopening(backend):
    first = backend.open()
    first.append(submission(request_id="kept"))
    first.close()
    again = backend.open()
    assert again.request_ids() == {"kept"}
    again.close()


def test_migrations_are_versioned_and_applied_once(backend):
    first = backend.open()
    assert first.schema_version() == migrations.LATEST
    first.append(submission())
    first.close()
    again = backend.open()  # opening again applies nothing and keeps every record
    assert migrations.run(again) == []
    rows = again.execute("SELECT version FROM schema_version").fetchall()
    assert [row[0] for row in rows] == [m.version for m in migrations.MIGRATIONS]
    assert again.request_ids() == {"r1"}
    again.close()


def test_two_processes_opening_a_new_database_at_once_migrate_it_once(backend):
    # each opener is its own connection, as two servers starting together would have; the migration lock
    # (SQLite's write lock, PostgreSQL's advisory lock) makes the second wait and then find it done
    start = threading.Barrier(4)

    def open_one() -> int:
        start.wait()
        store = backend.open()
        version = store.schema_version()
        store.close()
        return version

    with ThreadPoolExecutor(4) as pool:
        versions = list(pool.map(lambda _: open_one(), range(4)))
    assert versions == [migrations.LATEST] * 4
    other = backend.connect()
    assert other.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == len(migrations.MIGRATIONS)
    other.close()


def test_a_database_newer_than_this_code_is_refused(backend):
    backend.open().close()
    other = backend.connect()
    other.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (99, 'future', 'x')")
    if backend.name == "sqlite":
        other.commit()
    other.close()
    with pytest.raises(migrations.SchemaTooNew, match="version 99"):
        backend.open()


def test_a_sqlite_file_from_before_schema_version_is_stamped_not_rebuilt(tmp_path):
    path = tmp_path / "portal.sqlite"
    old = sqlite3.connect(path)
    old.executescript(migrations.SQLITE_V1 + "PRAGMA user_version=1;")
    old.execute("INSERT INTO learners VALUES ('ana', 'x');")
    old.execute(
        "INSERT INTO submissions (at, learner, mode, question_id, category, question, answer, expected, grade,"
        " tutor, request_id) VALUES ('x', 'ana', 'quiz', 'q1', 'a_an', 'q', 'a', 'e', 'wrong', 't', 'old')"
    )
    old.commit()
    old.close()
    store = PortalStore.open(path)
    assert store.schema_version() == 1 and store.request_ids() == {"old"}
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.execute("DELETE FROM submissions")
    store.close()


def test_a_postgresql_url_is_told_apart_from_a_path_and_its_password_is_not_logged():
    assert is_database_url("postgresql://u:secret@db.example/corrige")
    assert is_database_url("postgres://db/corrige") and not is_database_url("/var/lib/portal.sqlite")
    assert redact("postgresql://u:secret@db.example:5432/corrige") == "postgresql://u:***@db.example:5432/corrige"
    assert "search_path%3Dbench" in with_search_path("postgresql://db/corrige", "bench")
    with pytest.raises(ValueError):
        with_search_path("postgresql://db/corrige", "x; DROP TABLE learners")


def test_an_unreachable_postgresql_disables_the_portal_not_the_server(tmp_path, caplog):
    from corrige.portal.state import open_portal
    from corrige.server.settings import Settings

    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[postgres]'")
    url = f"postgresql://u:secret@/corrige?host={tmp_path}&port=1&connect_timeout=2"  # no server on that socket
    assert open_portal(Settings(portal_db=tmp_path / "portal.sqlite", database_url=url)) is None
    assert "learner portal disabled" in caplog.text and "secret" not in caplog.text
    with pytest.raises(StoreUnavailable):
        PortalStore.open(url)


def test_database_url_must_be_postgresql():
    from pydantic import ValidationError

    from corrige.server.settings import Settings

    with pytest.raises(ValidationError, match="postgresql://"):
        Settings(database_url="mysql://db/corrige")
    assert Settings(database_url="postgresql://db/corrige").portal_location == "postgresql://db/corrige"
    assert Settings(database_url="").database_url is None  # an empty variable is no URL: SQLite


def test_a_session_round_trips_and_a_forged_cookie_does_not():
    codec = SessionCodec("k" * 40, max_age_s=3600)
    session = codec.new()
    cookie = codec.dumps(session)
    assert codec.loads(cookie) == session
    assert codec.loads(cookie[:-2] + ("A" if cookie[-2] != "A" else "B") + cookie[-1]) is None
    assert codec.loads(SessionCodec("x" * 40, 3600).dumps(session)) is None  # another server's key
    assert codec.loads("") is None and codec.loads("garbage") is None


def test_csrf_token_must_match_the_session():
    session = Session("ana", "token-123")
    assert csrf_ok(session, "token-123")
    assert not csrf_ok(session, "token-124") and not csrf_ok(session, None) and not csrf_ok(None, "token-123")


def test_the_session_key_is_made_once_private_and_reused(tmp_path):
    path = tmp_path / "keys" / "portal.key.json"
    first = load_or_create_secret(path)
    assert load_or_create_secret(path) == first and len(first) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_a_portal_whose_database_cannot_open_is_disabled_not_fatal(tmp_path, caplog):
    from corrige.portal.state import close_portal, open_portal
    from corrige.server.settings import Settings

    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    assert open_portal(Settings(portal_db=blocker / "portal.sqlite")) is None
    assert "learner portal disabled" in caplog.text
    portal = open_portal(Settings(portal_db=tmp_path / "ok" / "portal.sqlite"))
    assert portal is not None and (tmp_path / "ok" / "portal.key.json").is_file()
    close_portal(portal)
    close_portal(None)
