"""The OpenAI-compatible API: `/v1/models`, `/v1/completions` (the raw model) and
`/v1/chat/completions` (the last user message goes to the tutor), with or without `stream`.

Streams are server-sent events of `data: {chunk}` lines ending with `data: [DONE]`;
`stream_options.include_usage` adds a last chunk with the token counts and no choices.
Completions stream live, one chunk per decoded piece of text. A chat answer is the tutor's
checked correction (it abstains when the model was unsure, so nothing is shown before that
check), streamed as word pieces once it is known.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Sequence

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from corrige.server.context import RequestMeta
from corrige.server.deps import ServiceDep, SettingsDep, meta_of
from corrige.server.errors import ApiError, error_body
from corrige.server.pipeline import HeldStream
from corrige.server.schemas import (
    AssistantMessage,
    ChatChoice,
    ChatCompletionRequest,
    ChatCompletionResponse,
    ChatMessage,
    CompletionChoice,
    CompletionRequest,
    CompletionResponse,
    ModelCard,
    ModelList,
    OpenAIUsage,
    TextCorrectResponse,
)
from corrige.server.service import CorrectionService, RawOptions, finish_reason
from corrige.server.settings import Settings
from corrige.server.sse import DONE, SSE_HEADERS, SSE_MEDIA_TYPE, IncrementalDecoder, event, stream_doc
from corrige.server.text_service import TextRun
from corrige.tutor.answer_text import NO_ERRORS_GLOSS

router = APIRouter(prefix="/v1", tags=["openai"])  # error responses: from the table of codes (corrige.server.openapi)
COMPLETION_STREAM = stream_doc(
    "The completion, or with `stream: true` server-sent events: `data: {chunk}` lines, then `data: [DONE]`.",
    'data: {"id":"cmpl-...","object":"text_completion","choices":[{"index":0,"text":"..."}]}\n\ndata: [DONE]\n\n',
)
CHAT_STREAM = stream_doc(
    "The answer, or with `stream: true` server-sent events: `data: {chunk}` lines, then `data: [DONE]`.",
    'data: {"id":"chatcmpl-...","object":"chat.completion.chunk","choices":[{"index":0,"delta":{}}]}\n\n'
    "data: [DONE]\n\n",
)

_WORD_PIECES = re.compile(r"\s*\S+|\s+")


def served_meta(request: Request, name: str, settings: Settings) -> RequestMeta:
    """The request's context (id, arrival, trace), once its body has named the model this server serves."""
    if name != settings.model_name:
        message = f"model: unknown model {name!r}; this server serves {settings.model_name!r}"
        raise ApiError(404, "model_not_found", message)
    return meta_of(request)


def usage(prompt_tokens: int, completion_tokens: int) -> OpenAIUsage:
    return OpenAIUsage(
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, total_tokens=prompt_tokens + completion_tokens
    )


@router.get("/models", tags=["openai"])
async def list_models(settings: SettingsDep) -> ModelList:
    """The one model this server serves."""
    return ModelList(data=[ModelCard(id=settings.model_name, created=0)])


# ---------------------------------------------------------------- completions


@router.post("/completions", response_model=CompletionResponse, responses=COMPLETION_STREAM)
async def completions(
    body: CompletionRequest, service: ServiceDep, settings: SettingsDep, request: Request
) -> Response | CompletionResponse:
    """The raw model: continue a prompt (text after a <bos> token, or token ids)."""
    meta = served_meta(request, body.model, settings)
    request_id = meta.request_id
    options = raw_options(body)
    ids, params = service.raw_prompt(
        body.prompt, body.max_tokens, options, temperature=body.temperature, top_p=body.top_p, seed=body.seed
    )
    completion_id, created = f"cmpl-{request_id}", int(time.time())
    if body.stream and not (options.echo or options.logprobs):
        stream = await service.open_raw_stream(ids, params, meta)
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        chunks = completion_chunks(
            service, stream, request_id, completion_id, created, body.model, len(ids), include_usage
        )
        return StreamingResponse(chunks, media_type=SSE_MEDIA_TYPE, headers=SSE_HEADERS)
    gen = await service.complete_raw(ids, params, meta, options)
    choice = CompletionChoice(index=0, text=gen.text, finish_reason=gen.finish_reason, logprobs=gen.logprobs)
    counts = usage(gen.prompt_tokens, gen.completion_tokens)
    if body.stream:  # with echo or logprobs: the whole choice in one chunk, once it is known
        head = {"id": completion_id, "object": "text_completion", "created": created, "model": body.model}
        parts = [event({**head, "choices": [choice.model_dump()]})]
        if body.stream_options and body.stream_options.include_usage:
            parts.append(event({**head, "choices": [], "usage": counts.model_dump()}))
        return StreamingResponse(replay([*parts, DONE]), media_type=SSE_MEDIA_TYPE, headers=SSE_HEADERS)
    return CompletionResponse(id=completion_id, created=created, model=body.model, choices=[choice], usage=counts)


def raw_options(body: CompletionRequest) -> RawOptions:
    """What the completion returns besides new text: the prompt (`echo`), log-probabilities, and
    whether anything is generated (`max_tokens` 0: nothing; with echo and logprobs, a score)."""
    return RawOptions(echo=body.echo, logprobs=body.logprobs is not None, score_only=body.max_tokens == 0)


async def completion_chunks(
    service: CorrectionService,
    stream: HeldStream,
    request_id: str,
    completion_id: str,
    created: int,
    model: str,
    prompt_tokens: int,
    include_usage: bool,
) -> AsyncIterator[bytes]:
    head = {"id": completion_id, "object": "text_completion", "created": created, "model": model}

    def chunk(text: str, finish: str | None) -> bytes:
        return event({**head, "choices": [{"index": 0, "text": text, "finish_reason": finish, "logprobs": None}]})

    decoder = IncrementalDecoder(service.tutor.tokenizer)
    try:
        with service.pipeline.refusals:
            async for token in stream:
                piece = decoder.push(token.token_id)
                if piece:
                    yield chunk(piece, None)
        output = stream.output
        assert output is not None
        yield chunk(decoder.flush(), finish_reason(output))
        if include_usage:
            yield event({**head, "choices": [], "usage": usage(prompt_tokens, len(output.token_ids)).model_dump()})
    except ApiError as error:
        yield event(error_body(error.code, error.message, request_id))
    finally:
        await stream.aclose()  # aborts the request if the client went away
    yield DONE


# ---------------------------------------------------------------- chat


def last_user_message(messages: Sequence[ChatMessage]) -> tuple[int, str]:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user":
            content = message.content
            text = content if isinstance(content, str) else " ".join(p.text for p in content or [])
            return index, text
    raise ApiError(422, "validation_error", "messages: no message with role 'user'; send the sentence as one")


@router.post("/chat/completions", response_model=ChatCompletionResponse, responses=CHAT_STREAM)
async def chat_completions(
    body: ChatCompletionRequest, service: ServiceDep, settings: SettingsDep, request: Request
) -> Response | ChatCompletionResponse:
    """The tutor as a chat model: it corrects the last user message and explains in Spanish."""
    meta = served_meta(request, body.model, settings)
    index, text = last_user_message(body.messages)
    field = f"messages[{index}].content"
    if not text.strip():
        raise ApiError(422, "empty_sentence", f"{field}: the message is empty; send English sentences")
    # a message is a text, as the tutor page's: split into sentences, each corrected (no rule cards)
    text_run = TextRun(service, text, meta, rules=False, field=field)
    pipeline, run = service.pipeline, text_run.run
    answer = text_run.response(await text_run.results())
    content = chat_content(answer)
    counts = usage(answer.usage.prompt_tokens, answer.usage.completion_tokens)
    completion_id, created = f"chatcmpl-{meta.request_id}", int(time.time())
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        counted = counts if include_usage else None
        chunks = pipeline.respond(run, lambda: chat_chunks(content, completion_id, created, body.model, counted))
        return StreamingResponse(replay(chunks), media_type=SSE_MEDIA_TYPE, headers=SSE_HEADERS)
    response = ChatCompletionResponse(
        id=completion_id,
        created=created,
        model=body.model,
        choices=[ChatChoice(index=0, message=AssistantMessage(content=content), finish_reason="stop")],
        usage=counts,
    )
    return Response(pipeline.respond(run, lambda: response.model_dump_json().encode()), media_type="application/json")


def chat_content(answer: TextCorrectResponse) -> str:
    """The corrected text, a blank line, then what was corrected: one sentence's explanation as the
    tutor wrote it, or for several, one line per corrected sentence ("sin errores" when none was)."""
    if len(answer.sentences) == 1:
        return f"{answer.corrected}\n\n{answer.sentences[0].explanation}"
    notes = [s.explanation for s in answer.sentences if s.edits and s.explanation]
    return f"{answer.corrected}\n\n" + ("\n".join(notes) if notes else NO_ERRORS_GLOSS)


def chat_chunks(content: str, completion_id: str, created: int, model: str, counts: OpenAIUsage | None) -> list[bytes]:
    """The answer's stream, known in full before it starts: the checked correction, in word pieces."""
    head = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model}

    def chunk(delta: dict, finish: str | None) -> bytes:
        return event({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]})

    chunks = [chunk({"role": "assistant", "content": ""}, None)]
    chunks += [chunk({"content": piece}, None) for piece in _WORD_PIECES.findall(content)]
    chunks.append(chunk({}, "stop"))
    if counts is not None:
        chunks.append(event({**head, "choices": [], "usage": counts.model_dump()}))
    return [*chunks, DONE]


async def replay(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
