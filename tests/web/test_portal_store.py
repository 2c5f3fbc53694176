"""The audit log and learner records on real SQLite files; the session cookie and its key."""

from __future__ import annotations

import sqlite3
import stat

import pytest

from corrige.portal.sessions import Session, SessionCodec, csrf_ok, load_or_create_secret
from corrige.portal.store import AlreadyAnswered, PortalStore, Submission


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
def store(tmp_path):
    opened = PortalStore.open(tmp_path / "state" / "portal.sqlite")
    yield opened
    opened.close()


def test_the_database_is_wal_with_full_sync(store):
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store.path.with_name("portal.sqlite-wal").exists()


def test_a_submission_is_stored_with_who_when_what_and_the_request_id(store, tmp_path):
    saved = store.append(submission())
    assert saved.id == 1 and saved.at.endswith("Z") and "T" in saved.at
    # a second connection (another process would do the same) sees the committed row
    other = sqlite3.connect(store.path)
    row = other.execute("SELECT learner, at, question, answer, grade, request_id FROM submissions").fetchone()
    other.close()
    assert row == ("ana", saved.at, "She is a engineer.", "She is an engineer.", "exact", "r1")


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
def test_every_table_is_append_only(store, statement):
    store.append(submission(grade="wrong"))
    store.start_exam("ana", ["q1", "q2"])
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute(statement)
    assert store.history("ana")[0].grade == "wrong"


def test_an_exam_question_takes_one_answer(store):
    exam = store.start_exam("ana", ["q7", "q8"])
    store.append(submission(mode="exam", exam_id=exam.id, request_id="a"))
    with pytest.raises(AlreadyAnswered):
        store.append(submission(mode="exam", exam_id=exam.id, request_id="b"))
    store.append(submission(request_id="c"))  # the same question as a quiz is fine
    assert [s.request_id for s in store.exam_answers(exam.id)] == ["a"]
    assert store.latest_exam("ana") == exam and store.latest_exam("bea") is None


def test_progress_counts_grades_per_category_for_one_learner(store):
    for grade in ("exact", "close", "wrong", "wrong"):
        store.append(submission(grade=grade))
    store.append(submission(grade="exact", category="uncountable"))
    store.append(submission(learner="bea", grade="exact"))
    progress = {p.category: p for p in store.progress("ana")}
    assert (progress["a_an"].attempts, progress["a_an"].exact, progress["a_an"].close) == (4, 1, 1)
    assert progress["a_an"].score == pytest.approx(1.5 / 4)
    assert progress["uncountable"].score == 1.0
    assert len(store.history("ana")) == 5 and store.history("ana")[0].category == "uncountable"


def test_records_survive_closing_and_reopening(tmp_path):
    path = tmp_path / "portal.sqlite"
    first = PortalStore.open(path)
    first.append(submission(request_id="kept"))
    first.close()
    again = PortalStore.open(path)
    assert again.request_ids() == {"kept"}
    again.close()


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
