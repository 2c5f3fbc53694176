"""The exam: its pages (`GET /exam`, `GET /exam/{id}`), its form posts (`POST /exam`,
`POST /exam/{id}/answer`), and its JSON API (`POST /portal/api/exams`,
`GET /portal/api/exams/{id}`, `POST /portal/api/exams/{id}/answers`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from corrige.portal.i18n import Text
from corrige.portal.state import Portal
from corrige.portal.store import Exam
from corrige.portal.views import exam_view
from corrige.server.deps import ServiceDep
from corrige.server.errors import ApiError
from corrige.server.routes.portal.answers import submit_answer
from corrige.server.routes.portal.bodies import AnswerBody, ExamId, response_links
from corrige.server.routes.portal.visit import CsrfSession, PortalDep, Visit, parse, text_of

router = APIRouter()

# from an exam to its state and to answering its next question
EXAM_LINKS = response_links(
    ExamState={"operationId": "portal_exam", "parameters": {"exam_id": "$response.body#/exam_id"}},
    AnswerNextQuestion={
        "operationId": "portal_exam_answer",
        "parameters": {"exam_id": "$response.body#/exam_id"},
        "requestBody": {"question_id": "$response.body#/next_question/question_id"},
    },
)


async def owned_exam(portal: Portal, learner: str, exam_id: int) -> Exam:
    exam = await portal.db(portal.store.exam, exam_id)
    if exam is None or exam.learner != learner:
        raise ApiError(404, "exam_not_found", f"no exam {exam_id} for this learner")
    return exam


async def exam_state(portal: Portal, learner: str, exam_id: int, t: Text) -> dict:
    exam = await owned_exam(portal, learner, exam_id)
    answers = await portal.db(portal.store.exam_answers, exam.id)
    return exam_view(exam, answers, (await portal.bank()).get, t)


async def start_exam(portal: Portal, learner: str) -> Exam:
    questions = (await portal.bank()).draw_exam(portal.rng)
    return await portal.db(portal.store.start_exam, learner, [q.id for q in questions])


def in_exam(exam: Exam, body: AnswerBody) -> None:
    if body.question_id not in exam.question_ids:
        raise ApiError(422, "question_not_in_exam", f"question_id: {body.question_id} is not in exam {exam.id}")


@router.get("/exam", response_class=HTMLResponse, include_in_schema=False)
async def exam_page(request: Request, portal: PortalDep) -> Response:
    visit = Visit(request, portal)
    latest = await portal.db(portal.store.latest_exam, visit.session.learner)
    if latest is not None:
        state = await exam_state(portal, visit.session.learner, latest.id, visit.t)
        if not state["finished"]:
            return visit.redirect(f"/exam/{latest.id}")
    return visit.page("exam_intro.html", active="exam", last=latest.id if latest else None)


@router.post("/exam", include_in_schema=False)
async def exam_start_form(request: Request, portal: PortalDep) -> Response:
    visit = Visit(request, portal)
    try:
        await visit.form_fields()
        exam = await start_exam(portal, visit.session.learner)
    except ApiError as exc:
        return visit.form_error(exc)
    return visit.redirect(f"/exam/{exam.id}")


@router.get("/exam/{exam_id}", response_class=HTMLResponse, include_in_schema=False)
async def exam_state_page(request: Request, portal: PortalDep, exam_id: ExamId, saved: int = 0) -> Response:
    visit = Visit(request, portal)
    try:
        state = await exam_state(portal, visit.session.learner, exam_id, visit.t)
    except ApiError as exc:
        return visit.error_page(exc)
    name = "exam_result.html" if state["finished"] else "exam.html"
    return visit.page(name, active="exam", exam=state, saved=bool(saved))


@router.post("/exam/{exam_id}/answer", include_in_schema=False)
async def exam_answer_form(request: Request, portal: PortalDep, service: ServiceDep, exam_id: ExamId) -> Response:
    visit = Visit(request, portal)
    learner = visit.session.learner
    try:
        fields = await visit.form_fields()
        body = parse(AnswerBody, fields)
        in_exam(await owned_exam(portal, learner, exam_id), body)
        await submit_answer(portal, service, request, learner, body, exam_id)
    except ApiError as exc:
        if exc.code != "already_answered":  # a reloaded form: the answer is in, show where the exam stands
            return visit.form_error(exc)
    return visit.redirect(f"/exam/{exam_id}?saved=1")


@router.post("/portal/api/exams", operation_id="portal_exam_start", responses=EXAM_LINKS)
async def api_start_exam(session: CsrfSession, request: Request, portal: PortalDep) -> dict:
    """Start a 10-question exam; answer with `POST /portal/api/exams/{id}/answers`."""
    exam = await start_exam(portal, session.learner)
    return await exam_state(portal, session.learner, exam.id, text_of(request))


@router.get("/portal/api/exams/{exam_id}", operation_id="portal_exam")
async def api_exam(exam_id: ExamId, request: Request, portal: PortalDep) -> dict:
    """Where an exam stands: the next question, or the score and the review of mistakes."""
    visit = Visit(request, portal)
    return await exam_state(portal, visit.session.learner, exam_id, visit.t)


@router.post("/portal/api/exams/{exam_id}/answers", operation_id="portal_exam_answer", responses=EXAM_LINKS)
async def api_exam_answer(
    exam_id: ExamId, body: AnswerBody, session: CsrfSession, request: Request, portal: PortalDep, service: ServiceDep
) -> dict:
    """Answer one of the exam's questions (each once: 409 `already_answered`); returns the exam's state."""
    in_exam(await owned_exam(portal, session.learner, exam_id), body)
    await submit_answer(portal, service, request, session.learner, body, exam_id)
    return await exam_state(portal, session.learner, exam_id, text_of(request))
