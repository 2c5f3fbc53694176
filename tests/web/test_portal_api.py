"""The portal over HTTP against a real server: the JSON API, form posts, CSRF, and the audit
log as it lands in the SQLite file."""

from __future__ import annotations

import re
import sqlite3

import httpx
from conftest import Learner
from server_support import bundled_model_available

from corrige.portal.quiz import QuestionBank

BANK = None


def bank() -> QuestionBank:
    global BANK
    if BANK is None:
        BANK = QuestionBank.build()  # the server's bank: same seed, same ids
    return BANK


def audit_rows(server, **where) -> list[dict]:
    conn = sqlite3.connect(server.db_path)
    conn.row_factory = sqlite3.Row
    clause = " AND ".join(f"{k} = ?" for k in where) or "1"
    query = f"SELECT * FROM submissions WHERE {clause} ORDER BY id"
    rows = [dict(r) for r in conn.execute(query, tuple(where.values()))]
    conn.close()
    return rows


def test_the_tutor_api_highlights_edits_with_a_rule_each(learner):
    response = learner.post("/portal/api/correct", {"sentence": "Yesterday I goed to the store"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert response.headers["x-request-id"] == body["request_id"]
    kinds = [s["kind"] for s in body["segments"]]
    assert "".join(s["text"] for s in body["segments"] if s["kind"] != "ins") == body["sentence"]
    if bundled_model_available():
        assert body["corrected"] == "Yesterday I went to the store"
        assert kinds == ["same", "del", "ins", "same"]
        assert body["explanation"] == "pasado irregular: goed → went"
        (edit,) = body["edits"]
        assert edit["rule"]["category"] == "past_irregular" and edit["rule"]["explanation"]
        assert "<del>" in body["html"] and "<ins>" in body["html"] and "Pasados irregulares" in body["html"]


def test_a_quiz_answer_is_graded_explained_and_audited(portal_server, learner):
    question = httpx.get(f"{portal_server.url}/portal/api/quiz/question").json()
    q = bank().get(question["question_id"])
    assert q is not None and q.sentence == question["sentence"]
    headers = {"X-Request-ID": "quiz-answer-1"}
    response = learner.post("/portal/api/quiz/answer", {"question_id": q.id, "answer": q.expected}, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["grade"] == "exact" and body["expected"] == q.expected and body["explanation"] == q.gloss
    assert body["tutor"] and set(body["timings_ms"]) >= {"grade", "model", "audit", "total"}
    (row,) = audit_rows(portal_server, request_id="quiz-answer-1")
    assert row["answer"] == q.expected and row["grade"] == "exact" and row["question"] == q.sentence
    assert row["mode"] == "quiz" and row["tutor"] == body["tutor"] and row["at"].endswith("Z")
    wrong = learner.post("/portal/api/quiz/answer", {"question_id": q.id, "answer": q.sentence}).json()
    assert wrong["grade"] == "wrong" and any(s["kind"] == "del" for s in wrong["answer_segments"])


def test_state_changing_api_calls_need_the_sessions_csrf_token(portal_server, learner):
    other = Learner(portal_server.url)
    body = {"sentence": "She like cats."}
    try:
        cases = {
            "missing": learner.client.post("/portal/api/correct", json=body),
            "wrong": learner.client.post("/portal/api/correct", json=body, headers={"X-CSRF-Token": "nope"}),
            "another learner's": learner.client.post(
                "/portal/api/correct", json=body, headers={"X-CSRF-Token": other.csrf}
            ),
            "no session": httpx.post(
                f"{portal_server.url}/portal/api/quiz/answer",
                json={"question_id": "q1", "answer": "x"},
                headers={"X-CSRF-Token": learner.csrf},
            ),
            "exam": learner.client.post("/portal/api/exams"),
            "json to a form path": learner.client.post("/quiz", json={"question_id": "q1", "answer": "x"}),
        }
    finally:
        other.close()
    for case, response in cases.items():
        assert response.status_code == 403, case
        error = response.json()["error"]
        assert error["code"] == "csrf_failed" and error["request_id"] == response.headers["x-request-id"], case


def test_a_form_post_without_the_token_gets_an_html_403_page_and_no_record(portal_server, learner):
    before = len(audit_rows(portal_server))
    response = learner.client.post("/quiz", data={"question_id": "q1", "answer": "anything"})
    assert response.status_code == 403 and response.headers["content-type"].startswith("text/html")
    assert 'data-code="csrf_failed"' in response.text and "Recarga la página" in response.text
    assert len(audit_rows(portal_server)) == before


def test_the_quiz_and_exam_work_as_plain_form_posts(portal_server, learner):
    page = learner.client.get("/quiz").text
    qid = re.search(r'data-question-id="(q\d+)"', page).group(1)
    answer = bank().get(qid).expected
    posted = learner.client.post("/quiz", data={"csrf_token": learner.csrf, "question_id": qid, "answer": answer})
    assert posted.status_code == 303
    feedback = learner.client.get(posted.headers["location"])
    assert feedback.status_code == 200 and 'data-grade="exact"' in feedback.text
    # another learner cannot read it
    stranger = httpx.get(portal_server.url + posted.headers["location"])
    assert stranger.status_code == 404

    started = learner.client.post("/exam", data={"csrf_token": learner.csrf})
    assert started.status_code == 303
    exam_url = started.headers["location"]
    for i in range(10):
        page = learner.client.get(exam_url).text
        assert f"{i + 1} de 10" in page
        qid = re.search(r'data-question-id="(q\d+)"', page).group(1)
        answer = bank().get(qid).expected if i % 2 == 0 else "I do not know."
        done = learner.client.post(
            f"{exam_url}/answer", data={"csrf_token": learner.csrf, "question_id": qid, "answer": answer}
        )
        assert done.status_code == 303
    result = learner.client.get(exam_url).text
    assert 'data-score="5.0"' in result and result.count('data-grade="wrong"') == 5


def test_the_exam_api_answers_each_question_once_and_only_for_its_learner(portal_server, learner):
    exam = learner.post("/portal/api/exams").json()
    assert exam["total"] == 10 and exam["answered"] == 0 and not exam["finished"]
    first = exam["next_question"]
    path = f"/portal/api/exams/{exam['exam_id']}/answers"
    answered = learner.post(path, {"question_id": first["question_id"], "answer": "x"})
    assert answered.status_code == 200 and answered.json()["answered"] == 1
    again = learner.post(path, {"question_id": first["question_id"], "answer": "y"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_answered"
    outside = learner.post(path, {"question_id": "q999999", "answer": "y"})
    assert outside.status_code == 422 and outside.json()["error"]["code"] == "question_not_in_exam"
    other = Learner(portal_server.url)
    try:
        stolen = other.post(path, {"question_id": exam["next_question"]["question_id"], "answer": "z"})
        assert stolen.status_code == 404 and stolen.json()["error"]["code"] == "exam_not_found"
    finally:
        other.close()
    for _ in range(9):
        state = learner.client.get(f"/portal/api/exams/{exam['exam_id']}").json()
        qid = state["next_question"]["question_id"]
        learner.post(path, {"question_id": qid, "answer": bank().get(qid).expected})
    final = learner.client.get(f"/portal/api/exams/{exam['exam_id']}").json()
    assert final["finished"] and final["score"] == 9.0 and len(final["review"]) == 1
    assert final["review"][0]["question_id"] == first["question_id"]
    rows = audit_rows(portal_server, exam_id=exam["exam_id"])
    assert len(rows) == 10 and {r["mode"] for r in rows} == {"exam"}


def test_progress_by_category(learner):
    q = next(q for q in bank().questions if q.category != "capitalisation")
    for answer in (q.expected, q.sentence, q.expected.lower().rstrip(".")):
        assert learner.post("/portal/api/quiz/answer", {"question_id": q.id, "answer": answer}).status_code == 200
    progress = learner.client.get("/portal/api/progress").json()
    (row,) = progress["categories"]
    assert (row["category"], row["attempts"], row["exact"], row["close"], row["wrong"]) == (q.category, 3, 1, 1, 1)
    assert row["score"] == 0.5 and [h["grade"] for h in progress["history"]] == ["close", "wrong", "exact"]
    page = learner.client.get("/progress").text
    assert f'data-category="{q.category}"' in page and "50 %" in page


def test_a_contraction_or_a_missing_final_full_stop_is_an_exact_answer(learner):
    """Issue 30's exam question: 'It's snowing in Ireland.' is as right as 'It is snowing in Ireland.',
    and a sentence without its full stop costs nothing."""
    q = bank().get("q1215")
    assert q is not None and (q.sentence, q.expected) == ("Is snowing in Ireland.", "It is snowing in Ireland.")
    for answer in ("It's snowing in Ireland.", "It’s snowing in Ireland", "It is snowing in Ireland"):
        body = learner.post("/portal/api/quiz/answer", {"question_id": q.id, "answer": answer}).json()
        assert body["grade"] == "exact", (answer, body)
    (row,) = learner.client.get("/portal/api/progress").json()["categories"]
    assert (row["category"], row["exact"], row["score"]) == ("missing_subject", 3, 1.0)


def test_an_exam_answered_without_final_full_stops_scores_full_marks(portal_server, learner):
    exam = learner.post("/portal/api/exams").json()
    path = f"/portal/api/exams/{exam['exam_id']}/answers"
    for _ in range(exam["total"]):
        qid = learner.client.get(f"/portal/api/exams/{exam['exam_id']}").json()["next_question"]["question_id"]
        answer = bank().get(qid).expected.removesuffix(".")
        assert learner.post(path, {"question_id": qid, "answer": answer}).status_code == 200, answer
    final = learner.client.get(f"/portal/api/exams/{exam['exam_id']}").json()
    assert final["finished"] and final["score"] == 10.0 and final["review"] == []  # every answer exact
    rows = audit_rows(portal_server, exam_id=exam["exam_id"])
    assert {r["grade"] for r in rows} == {"exact"} and not any(r["answer"].endswith(".") for r in rows)


def test_bad_answers_use_the_error_model(learner):
    cases = [
        ({"question_id": "q1", "answer": "  "}, 422, "empty_answer"),
        ({"question_id": "nope", "answer": "x"}, 404, "question_not_found"),
        ({"question_id": "q1", "answer": "bad\x00"}, 400, "invalid_characters"),
        ({"question_id": "q1"}, 422, "validation_error"),
    ]
    for body, status, code in cases:
        response = learner.post("/portal/api/quiz/answer", body)
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), body


def test_only_the_portal_form_paths_take_form_posts():
    from corrige.server.forms import is_form_path
    from corrige.server.routes.portal import FORM_PATHS

    assert is_form_path("/", FORM_PATHS) and is_form_path("/quiz", FORM_PATHS) and is_form_path("/exam/3", FORM_PATHS)
    assert not is_form_path("/v1/grammar/correct", FORM_PATHS)  # the API stays JSON-only (415)
    assert not is_form_path("/correct", FORM_PATHS)
