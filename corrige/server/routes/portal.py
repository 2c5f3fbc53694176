"""The learner portal: the tutor page, quiz, exam and progress (server-rendered Jinja2 pages),
their form posts, and the JSON API that the pages' small script uses.

Pages: `GET /` (tutor), `/quiz`, `/quiz/answers/{id}`, `/exam`, `/exam/{id}`, `/progress`
(and `/favicon.ico`).
Form posts (they work without JavaScript; a page or a 303 redirect answers): `POST /`,
`POST /quiz`, `POST /exam`, `POST /exam/{id}/answer`. JSON API (errors in the error model):
`GET /portal/api/session`, `POST /portal/api/correct`, `POST /portal/api/text`, `GET /portal/api/quiz/question`,
`POST /portal/api/quiz/answer`, `POST /portal/api/exams`, `GET /portal/api/exams/{id}`,
`POST /portal/api/exams/{id}/answers`, `GET /portal/api/progress`.

The tutor page takes a whole text (`text`, up to 5,000 characters: an email, a letter), corrected
through the grammar API's text path (`corrige.server.text_service`), with a card per edit and an
"accept all" that is itself a form post (the corrected text back in the text box); a form post
with `sentence` still gets the one-sentence correction.

Every POST must carry the session's CSRF token (form field `csrf_token`, or header
`X-CSRF-Token`): else 403 `csrf_failed`, as JSON for the API and as an HTML page for a form.
Quiz and exam answers are graded, then the tutor model corrects the question (its correction
is part of the feedback), then the submission is written to the audit log; the answer goes
out only after the write is on disk.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

import jinja2
from fastapi import APIRouter, Depends, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.types import Scope

from corrige.portal.i18n import LANGS, TEXTS, Text, pick_lang
from corrige.portal.quiz import Question, grade
from corrige.portal.sessions import Session, csrf_ok
from corrige.portal.state import Portal
from corrige.portal.store import AlreadyAnswered, Submission
from corrige.portal.views import (
    correction_view,
    exam_view,
    feedback_view,
    progress_view,
    question_view,
    text_view,
)
from corrige.server.deps import ServiceDep, meta_of, request_id_of
from corrige.server.errors import ApiError, validation_message
from corrige.server.guards import check_text
from corrige.server.languagetool import message_of, utf16
from corrige.server.pipeline import Options
from corrige.server.schemas import TextCorrectResponse, text_field
from corrige.server.service import CorrectionService
from corrige.server.text_service import correct_text
from corrige.tutor.edits import Edit
from corrige.tutor.rule_lookup import RuleLookup
from corrige.tutor.text import MAX_TEXT_CHARS

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
STATIC_PATH = "/static/portal"
FAVICON = WEB_DIR / "static" / "portal" / "favicon.ico"  # /favicon.ico; the pages link favicon.svg
FORM_PATHS = ("/", "/quiz", "/exam", "/exam/")  # form posts the FormPostMiddleware turns into JSON
LANG_COOKIE = "corrige_lang"
CSRF_HEADER = "x-csrf-token"
LANG_MAX_AGE_S = 365 * 24 * 3600
API_PREFIX = "/portal/api/"
# the pages and form posts (answered with HTML): /, /quiz, /quiz/answers/{id}, /exam, /exam/{id},
# /exam/{id}/answer, /progress
PAGE_PATH = re.compile(r"/(?:quiz(?:/answers/[^/]+)?|exam(?:/[^/]+(?:/answer)?)?|progress)?")
FORM_TYPE = b"application/x-www-form-urlencoded"
MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id would overflow the query, not just miss

# every id in a path is bounded: out of range is a 422 (the API) or a page saying there is no such page
ExamId = Annotated[int, PathParam(ge=1, le=MAX_ID, description="The exam's id.")]
SubmissionId = Annotated[int, PathParam(ge=1, le=MAX_ID)]

router = APIRouter(tags=["portal"])  # error responses: from the table of codes (corrige.server.openapi)


def static_files() -> StaticFiles:
    return StaticFiles(directory=WEB_DIR / "static" / "portal")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(WEB_DIR / "templates" / "portal"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,  # a typo in a template fails the tests, not silently
    )
    env.globals["static"] = STATIC_PATH
    return env


def render(name: str, **context: Any) -> str:
    return _env().get_template(name).render(**context)


# ---------------------------------------------------------------- request helpers


async def get_portal(request: Request) -> Portal:
    portal = getattr(request.app.state, "portal", None)
    if portal is None:
        message = "the learner portal is not available (not started, or its database could not be opened)"
        raise ApiError(503, "portal_unavailable", message, {"Retry-After": "1"})
    return portal


PortalDep = Annotated[Portal, Depends(get_portal)]


class Visit:
    """One request's learner: the session (new if the cookie was missing or bad), and the language."""

    def __init__(self, request: Request, portal: Portal) -> None:
        self.request = request
        self.portal = portal
        found = portal.codec.loads(request.cookies.get(portal.cookie_name))
        self.new = found is None
        self.session: Session = found or portal.codec.new()
        self.lang_query = request.query_params.get("lang")
        self.lang = pick_lang(self.lang_query, request.cookies.get(LANG_COOKIE))
        self.t: Text = TEXTS[self.lang]

    def page(self, name: str, status: int = 200, active: str = "", **context: Any) -> HTMLResponse:
        path = self.request.url.path
        kept = [(k, v) for k, v in self.request.query_params.multi_items() if k not in ("lang", "saved")]
        links = {lang: f"{path}?{urlencode([*kept, ('lang', lang)])}" for lang in LANGS}
        html = render(
            name, t=self.t, lang=self.lang, csrf=self.session.csrf, active=active, lang_links=links, **context
        )
        return self.finish(HTMLResponse(html, status))

    def redirect(self, url: str) -> RedirectResponse:
        return self.finish(RedirectResponse(url, 303))

    def finish(self, response: Response) -> Response:
        """Set the session cookie when it is new, and remember a language picked with `?lang=`."""
        portal = self.portal
        # Secure when configured so, or whenever the page came over HTTPS (uvicorn takes the scheme
        # from X-Forwarded-Proto of a trusted proxy): a cookie sent once over plain HTTP can be stolen
        secure = portal.cookie_secure or self.request.url.scheme == "https"
        if self.new:
            response.set_cookie(
                portal.cookie_name,
                portal.codec.dumps(self.session),
                max_age=portal.codec.max_age_s,
                httponly=True,
                samesite="lax",
                secure=secure,
            )
        if self.lang_query in LANGS:
            response.set_cookie(LANG_COOKIE, self.lang, max_age=LANG_MAX_AGE_S, samesite="lax", secure=secure)
        response.headers["Cache-Control"] = "no-store"  # pages carry the learner's token and answers
        return response


def is_form(request: Request) -> bool:
    return bool(getattr(request.state, "portal_form", False))


def csrf_failed() -> ApiError:
    message = "missing or wrong CSRF token: send the page's token (form field csrf_token or header X-CSRF-Token)"
    return ApiError(403, "csrf_failed", message)


async def api_session(request: Request, portal: PortalDep) -> Session:
    """The learner of an API request that changes something: a valid session and its CSRF token."""
    cookie = request.cookies.get(portal.cookie_name)
    session = portal.codec.loads(cookie)
    if session is None and cookie:  # e.g. signed by a replica with another key: say so
        raise ApiError(403, "csrf_failed", portal.codec.refusal(cookie))
    if not csrf_ok(session, request.headers.get(CSRF_HEADER)):
        raise csrf_failed()
    assert session is not None
    return session


CsrfSession = Annotated[Session, Depends(api_session)]


def form_error(visit: Visit, error: ApiError) -> HTMLResponse:
    """A failed form post: an HTML page for a browser's form; a JSON body sent to a form path is an
    API-style request and gets the error model."""
    if not is_form(visit.request):
        raise error
    return error_page(visit, error)


def error_page(visit: Visit, error: ApiError) -> HTMLResponse:
    """The learner's error page: the code's message in the page's language (`Text.error`), never
    the API's wording; the code and request id are in the markup only."""
    message = visit.t.error(error.code, error.status)
    response = visit.page(
        "error.html", error.status, error=error, message=message, request_id=request_id_of(visit.request)
    )
    response.headers.update(error.headers)
    return response


def is_page_request(scope: Scope) -> bool:
    """A request a browser shows as a page: a GET of a page, or a form post (a JSON body sent to a
    form path is an API-style request and keeps the error model)."""
    if PAGE_PATH.fullmatch(scope["path"]) is None:
        return False
    if scope["method"] in ("GET", "HEAD"):
        return True
    if scope.get("state", {}).get("portal_form"):
        return True
    content_type = next((v for k, v in scope["headers"] if k == b"content-type"), b"")
    return content_type.split(b";", 1)[0].strip().lower() == FORM_TYPE


def is_portal_path(scope: Scope) -> bool:
    """The portal's routes: its pages, form posts and JSON API (not its static files)."""
    path = scope["path"]
    return path.startswith(API_PREFIX) or PAGE_PATH.fullmatch(path) is not None


def portal_of(scope: Scope) -> Portal | None:
    app = scope.get("app")
    return getattr(getattr(app, "state", None), "portal", None)


def session_key(scope: Scope) -> str | None:
    """The learner of a request with a valid session cookie (for the per-session rate limit)."""
    portal = portal_of(scope)
    if portal is None:
        return None
    session = portal.codec.loads(Request(scope).cookies.get(portal.cookie_name))
    return None if session is None else session.learner


def page_for_error(scope: Scope, error: ApiError) -> Response | None:
    """The app's `error_page` hook: for a page or form post, the learner's error page, in the
    page's language, for any refusal (a guard's, a failed validation, an unknown id); None for
    everything else, which gets the error model."""
    portal = portal_of(scope)
    if portal is None or not is_page_request(scope):
        return None
    if error.code == "validation_error":  # a page's only validated parameters are ids in its path
        error = ApiError(404, "not_found", error.message)
    return error_page(Visit(Request(scope), portal), error)


async def form_fields(request: Request, visit: Visit) -> dict[str, Any]:
    """The fields of a form post (or of a JSON body sent to a form path), once its CSRF token checks out."""
    try:
        data = await request.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ApiError(422, "validation_error", "body: expected form fields")
    token = data.pop("csrf_token", None) or request.headers.get(CSRF_HEADER)
    found = visit.portal.codec.loads(request.cookies.get(visit.portal.cookie_name))
    if not csrf_ok(found, token if isinstance(token, str) else None):
        raise csrf_failed()
    return data


def parse(model: type[BaseModel], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        code, message, status = validation_message(list(exc.errors()))
        raise ApiError(status, code, message) from None


# ---------------------------------------------------------------- bodies


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SentenceBody(Strict):
    sentence: str = text_field("sentence", description="An English sentence to correct.")


class TextBody(Strict):
    text: str = text_field("text", description="An English text (an email, a letter): up to 5,000 characters.")


class TextForm(Strict):
    """The tutor page's form: a text to correct, or (`accept=all`) the corrected text to put back in the box."""

    text: str = text_field("text")
    accept: Literal["all"] | None = None


class AnswerBody(Strict):
    question_id: str = Field(max_length=32, description="The question's id (`q123`).")
    answer: str = text_field("answer", description="The learner's corrected sentence.")


# ---------------------------------------------------------------- the work


def rules_of(service: CorrectionService) -> RuleLookup | None:
    """The server's rule lookup (its retriever loaded once at start-up), or None when rule cards are off."""
    return getattr(service, "rules", None)


async def correct(portal: Portal, service: CorrectionService, request: Request, sentence: str) -> dict:
    """The tutor's correction with each edit's rule card (the page sets each card by its own edit,
    `portal.cards`, so the pipeline's `rules` stage shows none)."""
    pipeline = service.pipeline
    run = pipeline.begin(meta_of(request), Options(rules=False))
    c = await pipeline.correct(run, pipeline.prepare(run, sentence))
    cards = await portal.cards.for_edits(rules_of(service), [(c.sentence, e) for e in c.edits])
    return pipeline.respond(run, lambda: correction_view(c.sentence, c.corrected, c.gloss, c.abstained, c.edits, cards))


async def correct_whole_text(portal: Portal, service: CorrectionService, request: Request, text: str, t: Text) -> dict:
    """A whole text through the grammar API's text path, with each edit's rule card (the sentence
    path's cards) and its gloss in the page's language."""
    response = await correct_text(service, text, request.state.meta, rules=False)
    result = TextCorrectResponse.model_validate_json(response.body)
    cards = await portal.cards.for_edits(
        rules_of(service), [(s.sentence, e) for s in result.sentences for e in s.edits]
    )
    glosses = [message_of(e, t.lang == "es") for s in result.sentences for e in s.edits]
    return text_view(result, cards, glosses, utf16(result.text), t)


def typed(text: str) -> str:
    """A textarea's text as the learner typed it: a form post sends its line breaks as CRLF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def accepted_text(text: str) -> str:
    """The corrected text posted back by "accept all", checked as any text is before it is shown."""
    check_text(text, "text")
    if len(text) > MAX_TEXT_CHARS:
        raise ApiError(413, "text_too_long", f"text: at most {MAX_TEXT_CHARS} characters")
    return text


async def question_of(portal: Portal, question_id: str) -> Question:
    question = (await portal.bank()).get(question_id)
    if question is None:
        raise ApiError(404, "question_not_found", f"question_id: no question {question_id!r}")
    return question


def question_edit(q: Question) -> Edit:
    start = q.sentence.find(q.original)
    return Edit(max(start, 0), max(start, 0) + len(q.original), q.original, q.replacement, q.category)


async def question_card(portal: Portal, service: CorrectionService, q: Question) -> dict | None:
    return (await portal.cards.for_edits(rules_of(service), [(q.sentence, question_edit(q))]))[0]


async def submit_answer(
    portal: Portal,
    service: CorrectionService,
    request: Request,
    learner: str,
    body: AnswerBody,
    exam_id: int | None = None,
) -> tuple[Submission, Question, dict[str, float]]:
    """Grade, let the tutor correct the question, write the audit record (flushed), in that order."""
    start = time.perf_counter()
    # the answer as sent is checked (as the OpenAPI document states: length and characters), then stripped
    answer = body.answer.strip()
    if not answer:
        raise ApiError(422, "empty_answer", "answer: the answer is empty; write the corrected sentence")
    if len(body.answer) > service.settings.max_sentence_chars:
        raise ApiError(422, "answer_too_long", f"answer: at most {service.settings.max_sentence_chars} characters")
    check_text(body.answer, "answer")
    question = await question_of(portal, body.question_id)
    verdict = grade(question.sentence, question.expected, answer)
    graded = time.perf_counter()
    pipeline = service.pipeline
    run = pipeline.begin(meta_of(request), Options(rules=False))  # the feedback's card is the question's own
    tutor = await pipeline.correct(run, pipeline.prepare(run, question.sentence, "question"))
    modelled = time.perf_counter()
    record = pipeline.respond(
        run,
        lambda: Submission(
            learner=learner,
            mode="exam" if exam_id is not None else "quiz",
            question_id=question.id,
            category=question.category,
            question=question.sentence,
            answer=answer,
            expected=question.expected,
            grade=verdict.value,
            tutor=tutor.corrected,
            request_id=request_id_of(request),
            exam_id=exam_id,
        ),
    )
    try:
        saved = await portal.db(portal.store.append, record)
    except AlreadyAnswered:
        raise ApiError(409, "already_answered", f"question_id: {question.id} already has an answer") from None
    done = time.perf_counter()
    timings = {
        "grade": 1e3 * (graded - start),
        "model": 1e3 * (modelled - graded),
        "audit": 1e3 * (done - modelled),
    }
    return saved, question, timings


async def owned_exam(portal: Portal, learner: str, exam_id: int):
    exam = await portal.db(portal.store.exam, exam_id)
    if exam is None or exam.learner != learner:
        raise ApiError(404, "exam_not_found", f"no exam {exam_id} for this learner")
    return exam


async def exam_state(portal: Portal, learner: str, exam_id: int, t: Text) -> dict:
    exam = await owned_exam(portal, learner, exam_id)
    answers = await portal.db(portal.store.exam_answers, exam.id)
    return exam_view(exam, answers, (await portal.bank()).get, t)


async def start_exam(portal: Portal, learner: str):
    questions = (await portal.bank()).draw_exam(portal.rng)
    return await portal.db(portal.store.start_exam, learner, [q.id for q in questions])


async def progress(portal: Portal, learner: str, t: Text) -> dict:
    def read():
        store = portal.store
        return store.progress(learner), store.history(learner), store.exams(learner)

    categories, history, exams = await portal.db(read)
    return progress_view(learner, categories, history, exams, t)


# ---------------------------------------------------------------- pages and form posts


def tutor(visit: Visit, text: str = "", status: int = 200, **shown: Any) -> HTMLResponse:
    """The tutor page: the text box holding `text`, and what `shown` has (a text's correction `view`,
    a sentence's `result`, an `error`, `accepted`)."""
    context = {"view": None, "result": None, "error": None, "accepted": False, **shown}
    return visit.page("tutor.html", status, "tutor", text=text, **context)


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def tutor_page(request: Request, portal: PortalDep) -> Response:
    return tutor(Visit(request, portal))


@router.post("/", response_class=HTMLResponse, include_in_schema=False)
async def tutor_form(request: Request, portal: PortalDep, service: ServiceDep) -> Response:
    visit = Visit(request, portal)
    try:
        fields = await form_fields(request, visit)
    except ApiError as exc:
        return form_error(visit, exc)
    if "sentence" in fields:  # the one-sentence form
        sentence = fields["sentence"] if isinstance(fields["sentence"], str) else ""
        try:
            result = await correct(portal, service, request, parse(SentenceBody, fields).sentence)
        except ApiError as exc:
            return tutor(visit, sentence, exc.status, error=exc)
        return tutor(visit, sentence, result=result)
    text = typed(fields["text"]) if isinstance(fields.get("text"), str) else ""
    try:
        form = parse(TextForm, fields)
        if form.accept == "all":
            return tutor(visit, accepted_text(typed(form.text)), accepted=True)
        view = await correct_whole_text(portal, service, request, typed(form.text), visit.t)
    except ApiError as exc:
        return tutor(visit, text, exc.status, error=exc)
    return tutor(visit, text, view=view)


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> FileResponse:
    return FileResponse(FAVICON, media_type="image/x-icon", headers={"Cache-Control": "public, max-age=86400"})


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
        fields = await form_fields(request, visit)
        saved, _, _ = await submit_answer(portal, service, request, visit.session.learner, parse(AnswerBody, fields))
    except ApiError as exc:
        return form_error(visit, exc)
    return visit.redirect(f"/quiz/answers/{saved.id}")


@router.get("/quiz/answers/{submission_id}", response_class=HTMLResponse, include_in_schema=False)
async def quiz_feedback_page(
    request: Request, portal: PortalDep, service: ServiceDep, submission_id: SubmissionId
) -> Response:
    visit = Visit(request, portal)
    sub = await portal.db(portal.store.submission, submission_id)
    if sub is None or sub.learner != visit.session.learner:
        return error_page(visit, ApiError(404, "not_found", f"no answer {submission_id} for this learner"))
    question = (await portal.bank()).get(sub.question_id)
    card = await question_card(portal, service, question) if question else None
    return visit.page("quiz_feedback.html", active="quiz", feedback=feedback_view(sub, question, card, visit.t))


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
        await form_fields(request, visit)
        exam = await start_exam(portal, visit.session.learner)
    except ApiError as exc:
        return form_error(visit, exc)
    return visit.redirect(f"/exam/{exam.id}")


@router.get("/exam/{exam_id}", response_class=HTMLResponse, include_in_schema=False)
async def exam_state_page(request: Request, portal: PortalDep, exam_id: ExamId, saved: int = 0) -> Response:
    visit = Visit(request, portal)
    try:
        state = await exam_state(portal, visit.session.learner, exam_id, visit.t)
    except ApiError as exc:
        return error_page(visit, exc)
    name = "exam_result.html" if state["finished"] else "exam.html"
    return visit.page(name, active="exam", exam=state, saved=bool(saved))


@router.post("/exam/{exam_id}/answer", include_in_schema=False)
async def exam_answer_form(request: Request, portal: PortalDep, service: ServiceDep, exam_id: ExamId) -> Response:
    visit = Visit(request, portal)
    learner = visit.session.learner
    try:
        fields = await form_fields(request, visit)
        body = parse(AnswerBody, fields)
        exam = await owned_exam(portal, learner, exam_id)
        if body.question_id not in exam.question_ids:
            raise ApiError(422, "question_not_in_exam", f"question_id: {body.question_id} is not in exam {exam_id}")
        await submit_answer(portal, service, request, learner, body, exam_id)
    except ApiError as exc:
        if exc.code != "already_answered":  # a reloaded form: the answer is in, show where the exam stands
            return form_error(visit, exc)
    return visit.redirect(f"/exam/{exam_id}?saved=1")


@router.get("/progress", response_class=HTMLResponse, include_in_schema=False)
async def progress_page(request: Request, portal: PortalDep) -> Response:
    visit = Visit(request, portal)
    view = await progress(portal, visit.session.learner, visit.t)
    return visit.page("progress.html", active="progress", progress=view)


# ---------------------------------------------------------------- JSON API


@router.get("/portal/api/session")
async def api_get_session(request: Request, portal: PortalDep) -> Response:
    """The learner's id and CSRF token (a session cookie is set when there was none)."""
    visit = Visit(request, portal)
    return visit.finish(JSONResponse({"learner": visit.session.learner, "csrf_token": visit.session.csrf}))


@router.post("/portal/api/correct")
async def api_correct(
    body: SentenceBody, session: CsrfSession, request: Request, portal: PortalDep, service: ServiceDep
) -> JSONResponse:
    """The tutor page's correction: edits inline, the Spanish gloss, each edit's rule card, and the HTML."""
    result = await correct(portal, service, request, body.sentence)
    t = TEXTS[pick_lang(None, request.cookies.get(LANG_COOKIE))]
    html = render("_correction.html", t=t, result=result)
    return JSONResponse({"request_id": request_id_of(request), **result, "html": html})


@router.post("/portal/api/text")
async def api_text(
    body: TextBody, session: CsrfSession, request: Request, portal: PortalDep, service: ServiceDep
) -> JSONResponse:
    """The tutor page's correction of a whole text: the text with its edits inline, a card per edit
    (gloss in the page's language, category, rule card, UTF-16 offsets), the sentences the tutor
    could not check, the corrected text, and the HTML."""
    t = TEXTS[pick_lang(None, request.cookies.get(LANG_COOKIE))]
    view = await correct_whole_text(portal, service, request, body.text, t)
    html = render("_text_correction.html", t=t, lang=t.lang, csrf=session.csrf, view=view)
    return JSONResponse({"request_id": request_id_of(request), **view, "html": html})


# OpenAPI links: how a client (and schemathesis' stateful phase) goes from a question or an exam to
# answering it, with the ids the answers carry
QUIZ_LINKS = {
    200: {
        "links": {
            "AnswerQuestion": {
                "operationId": "portal_quiz_answer",
                "requestBody": {"question_id": "$response.body#/question_id"},
            }
        }
    }
}
EXAM_LINKS = {
    200: {
        "links": {
            "ExamState": {"operationId": "portal_exam", "parameters": {"exam_id": "$response.body#/exam_id"}},
            "AnswerNextQuestion": {
                "operationId": "portal_exam_answer",
                "parameters": {"exam_id": "$response.body#/exam_id"},
                "requestBody": {"question_id": "$response.body#/next_question/question_id"},
            },
        }
    }
}


@router.get("/portal/api/quiz/question", operation_id="portal_quiz_question", responses=QUIZ_LINKS)
async def api_question(request: Request, portal: PortalDep, id: str | None = None) -> dict:
    """A question (a random one unless `id` names it): a sentence with one error."""
    bank = await portal.bank()
    question = (await question_of(portal, id)) if id else bank.draw(portal.rng)
    return question_view(question, TEXTS[pick_lang(None, request.cookies.get(LANG_COOKIE))])


@router.post("/portal/api/quiz/answer", operation_id="portal_quiz_answer")
async def api_quiz_answer(
    body: AnswerBody, session: CsrfSession, request: Request, portal: PortalDep, service: ServiceDep
) -> JSONResponse:
    """Grade an answer (exact, close, wrong) with the gloss, the tutor's correction and the rule card."""
    saved, question, timings = await submit_answer(portal, service, request, session.learner, body)
    started = time.perf_counter()
    t = TEXTS[pick_lang(None, request.cookies.get(LANG_COOKIE))]
    feedback = feedback_view(saved, question, await question_card(portal, service, question), t)
    html = render("_feedback.html", t=t, feedback=feedback)
    timings["render"] = 1e3 * (time.perf_counter() - started)
    meta = getattr(request.state, "meta", None)
    if meta is not None:
        timings["total"] = 1e3 * (time.perf_counter() - meta.received_at)
    rounded = {stage: round(ms, 3) for stage, ms in timings.items()}
    return JSONResponse({"request_id": request_id_of(request), **feedback, "html": html, "timings_ms": rounded})


@router.post("/portal/api/exams", operation_id="portal_exam_start", responses=EXAM_LINKS)
async def api_start_exam(session: CsrfSession, request: Request, portal: PortalDep) -> dict:
    """Start a 10-question exam; answer with `POST /portal/api/exams/{id}/answers`."""
    exam = await start_exam(portal, session.learner)
    return await exam_state(portal, session.learner, exam.id, TEXTS[pick_lang(None, request.cookies.get(LANG_COOKIE))])


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
    exam = await owned_exam(portal, session.learner, exam_id)
    if body.question_id not in exam.question_ids:
        raise ApiError(422, "question_not_in_exam", f"question_id: {body.question_id} is not in exam {exam_id}")
    await submit_answer(portal, service, request, session.learner, body, exam_id)
    return await exam_state(portal, session.learner, exam_id, TEXTS[pick_lang(None, request.cookies.get(LANG_COOKIE))])


@router.get("/portal/api/progress")
async def api_progress(request: Request, portal: PortalDep) -> dict:
    """The learner's results by error category, latest answers and exams."""
    visit = Visit(request, portal)
    return await progress(portal, visit.session.learner, visit.t)
