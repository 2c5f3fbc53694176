"""The tutor page (`GET /`, its form post `POST /`) and its JSON API (`POST /portal/api/correct`,
`POST /portal/api/text`): a sentence, or a whole text through the grammar API's text path, with
a rule card per edit."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from corrige.portal.i18n import Text
from corrige.portal.state import Portal
from corrige.portal.views import correction_view, text_view
from corrige.server.deps import ServiceDep, meta_of, request_id_of
from corrige.server.errors import ApiError
from corrige.server.guards import check_text
from corrige.server.languagetool import message_of, utf16
from corrige.server.pipeline import Options
from corrige.server.routes.portal.bodies import SentenceBody, TextBody, TextForm
from corrige.server.routes.portal.visit import FAVICON, CsrfSession, PortalDep, Visit, parse, render, rules_of, text_of
from corrige.server.schemas import TextCorrectResponse
from corrige.server.service import CorrectionService
from corrige.server.text_service import correct_text
from corrige.tutor.edits import Edit
from corrige.tutor.text import MAX_TEXT_CHARS

router = APIRouter()


async def correct(portal: Portal, service: CorrectionService, request: Request, sentence: str) -> dict:
    """The tutor's correction with each edit's rule card (the page sets each card by its own edit,
    `portal.cards`, so the pipeline's `rules` stage shows none)."""
    pipeline = service.pipeline
    run = pipeline.begin(meta_of(request), Options(rules=False))
    c = await pipeline.correct(run, pipeline.prepare(run, sentence))
    cards = await portal.cards.for_edits(rules_of(service), [(c.sentence, e) for e in c.edits])
    return pipeline.respond(
        run, lambda: correction_view(c.sentence, c.corrected, c.gloss, c.abstained, c.edits, cards, c.more_errors)
    )


async def correct_whole_text(portal: Portal, service: CorrectionService, request: Request, text: str, t: Text) -> dict:
    """A whole text through the grammar API's text path, with each edit's rule card (the sentence
    path's cards) and its gloss in the page's language."""
    response = await correct_text(service, text, request.state.meta, rules=False)
    result = TextCorrectResponse.model_validate_json(bytes(response.body))
    # each edit as a span of the whole text: its card depends on its sentence and its words
    edits = [
        (s.sentence, Edit(e.offset, e.offset + e.length, e.original, e.replacement, e.category))
        for s in result.sentences
        for e in s.edits
    ]
    cards = await portal.cards.for_edits(rules_of(service), edits)
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
        fields = await visit.form_fields()
    except ApiError as exc:
        return visit.form_error(exc)
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


@router.post("/portal/api/correct")
async def api_correct(
    body: SentenceBody, session: CsrfSession, request: Request, portal: PortalDep, service: ServiceDep
) -> JSONResponse:
    """The tutor page's correction: edits inline, the Spanish gloss, each edit's rule card, and the HTML."""
    result = await correct(portal, service, request, body.sentence)
    html = render("_correction.html", t=text_of(request), result=result)
    return JSONResponse({"request_id": request_id_of(request), **result, "html": html})


@router.post("/portal/api/text")
async def api_text(
    body: TextBody, session: CsrfSession, request: Request, portal: PortalDep, service: ServiceDep
) -> JSONResponse:
    """The tutor page's correction of a whole text: the text with its edits inline, a card per edit
    (gloss in the page's language, category, rule card, UTF-16 offsets), the sentences the tutor
    could not check, the corrected text, and the HTML."""
    t = text_of(request)
    view = await correct_whole_text(portal, service, request, body.text, t)
    html = render("_text_correction.html", t=t, lang=t.lang, csrf=session.csrf, view=view)
    return JSONResponse({"request_id": request_id_of(request), **view, "html": html})
