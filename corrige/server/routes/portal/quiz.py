"""The quiz: its page (`GET /quiz`), its form post (`POST /quiz`), the feedback page
(`GET /quiz/answers/{id}`), and its JSON API (`GET /portal/api/quiz/question`,
`POST /portal/api/quiz/answer`)."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from corrige.portal.views import feedback_view, question_view
from corrige.server.deps import ServiceDep, request_id_of
from corrige.server.errors import ApiError
from corrige.server.routes.portal.answers import question_card, question_of, submit_answer
from corrige.server.routes.portal.bodies import AnswerBody, SubmissionId, response_links
from corrige.server.routes.portal.visit import CsrfSession, PortalDep, Visit, parse, render, text_of

router = APIRouter()

# from a question to answering it
QUIZ_LINKS = response_links(
    AnswerQuestion={"operationId": "portal_quiz_answer", "requestBody": {"question_id": "$response.body#/question_id"}}
)


@router.get("/quiz", response_class=HTMLResponse, include_in_schema=False)
async def quiz_page(request: Request, portal: PortalDep, q: str | None = None) -> Response:
    visit = Visit(request, portal)
    bank = await portal.bank()
    question = (bank.get(q) if q else None) or bank.draw(portal.rng)
    return visit.page("quiz.html", active="quiz", question=question_view(question, visit.t))


@router.post("/quiz", include_in_schema=False)
async def quiz_form(request: Request, portal: PortalDep, service: ServiceDep) -> Response:
    visit = Visit(request, portal)
    try:
        fields = await visit.form_fields()
        saved, _, _ = await submit_answer(portal, service, request, visit.session.learner, parse(AnswerBody, fields))
    except ApiError as exc:
        return visit.form_error(exc)
    return visit.redirect(f"/quiz/answers/{saved.id}")


@router.get("/quiz/answers/{submission_id}", response_class=HTMLResponse, include_in_schema=False)
async def quiz_feedback_page(
    request: Request, portal: PortalDep, service: ServiceDep, submission_id: SubmissionId
) -> Response:
    visit = Visit(request, portal)
    sub = await portal.db(portal.store.submission, submission_id)
    if sub is None or sub.learner != visit.session.learner:
        return visit.error_page(ApiError(404, "not_found", f"no answer {submission_id} for this learner"))
    question = (await portal.bank()).get(sub.question_id)
    card = await question_card(portal, service, question) if question else None
    return visit.page("quiz_feedback.html", active="quiz", feedback=feedback_view(sub, question, card, visit.t))


@router.get("/portal/api/quiz/question", operation_id="portal_quiz_question", responses=QUIZ_LINKS)
async def api_question(request: Request, portal: PortalDep, id: str | None = None) -> dict:
    """A question (a random one unless `id` names it): a sentence with one error."""
    bank = await portal.bank()
    question = (await question_of(portal, id)) if id else bank.draw(portal.rng)
    return question_view(question, text_of(request))


@router.post("/portal/api/quiz/answer", operation_id="portal_quiz_answer")
async def api_quiz_answer(
    body: AnswerBody, session: CsrfSession, request: Request, portal: PortalDep, service: ServiceDep
) -> JSONResponse:
    """Grade an answer (exact, close, wrong) with the gloss, the tutor's correction and the rule card."""
    saved, question, timings = await submit_answer(portal, service, request, session.learner, body)
    started = time.perf_counter()
    t = text_of(request)
    feedback = feedback_view(saved, question, await question_card(portal, service, question), t)
    html = render("_feedback.html", t=t, feedback=feedback)
    timings["render"] = 1e3 * (time.perf_counter() - started)
    meta = getattr(request.state, "meta", None)
    if meta is not None:
        timings["total"] = 1e3 * (time.perf_counter() - meta.received_at)
    rounded = {stage: round(ms, 3) for stage, ms in timings.items()}
    return JSONResponse({"request_id": request_id_of(request), **feedback, "html": html, "timings_ms": rounded})
