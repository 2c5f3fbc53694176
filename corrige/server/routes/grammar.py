"""The grammar API: one sentence (optionally streamed), or a batch."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from corrige.server.deps import ServiceDep, meta_of
from corrige.server.schemas import (
    BatchCorrectRequest,
    BatchCorrectResponse,
    CorrectRequest,
    CorrectResponse,
    TextCorrectResponse,
)
from corrige.server.sse import SSE_HEADERS, SSE_MEDIA_TYPE, stream_doc
from corrige.server.text_service import correct_text, open_text_stream, text_events

router = APIRouter(tags=["grammar"])  # error responses: from the table of codes (corrige.server.openapi)

STREAM_DOC = stream_doc(
    "The correction, or with `stream: true` server-sent events: `token` events that spell the corrected "
    "sentence, a `replace` event when the checked answer is not what they spelled (the tutor abstained), "
    "one `gloss` event, then `result`. The tokens joined (started over at a `replace`) are the result's "
    "`corrected`; an `error` event ends a failed stream. With `text`: one `sentence` event per sentence as soon "
    "as it is corrected (any order; `index` says which), then `result` with the whole text.",
    'event: token\ndata: {"index":0,"text":"Y"}\n\n'
    'event: token\ndata: {"index":1,"text":"esterday"}\n\n'
    "…\n\n"
    'event: gloss\ndata: {"text":"pasado irregular: goed → went"}\n\n'
    'event: result\ndata: {"request_id": "...", "corrected": "Yesterday I went to the store", ...}\n\n',
    events=("token", "replace", "gloss", "sentence", "result", "error"),
)


@router.post("/v1/grammar/correct", response_model=CorrectResponse | TextCorrectResponse, responses=STREAM_DOC)
async def correct(
    body: CorrectRequest, service: ServiceDep, request: Request
) -> Response | CorrectResponse | TextCorrectResponse:
    """Correct one sentence (`sentence`) or a whole text (`text`) and explain the corrections in Spanish."""
    meta = meta_of(request)
    if body.text is not None:
        if not body.stream:
            return await correct_text(service, body.text, meta, body.rules)
        run = open_text_stream(service, body.text, meta, body.rules)  # refusals answer before the stream starts
        return StreamingResponse(text_events(run), media_type=SSE_MEDIA_TYPE, headers=SSE_HEADERS)
    assert body.sentence is not None  # the request model holds exactly one of the two
    if not body.stream:
        return await service.correct(body.sentence, meta, body.rules)
    run, prepared, stream = await service.open_stream(body.sentence, meta, body.rules)  # refusals answer before it
    events = service.correct_events(run, prepared, stream)
    return StreamingResponse(events, media_type=SSE_MEDIA_TYPE, headers=SSE_HEADERS)


router.add_api_route(
    "/correct",
    correct,
    methods=["POST"],
    response_model=CorrectResponse | TextCorrectResponse,
    responses=STREAM_DOC,
    summary="Correct (the course's path)",
    description="The same as `POST /v1/grammar/correct`.",
)


@router.post("/v1/grammar/correct:batch", response_model=BatchCorrectResponse)
async def correct_batch(body: BatchCorrectRequest, service: ServiceDep, request: Request) -> Response:
    """Correct several sentences in one call; the engine batches them together."""
    return await service.correct_batch(body.sentences, meta_of(request))
