"""The one table of error codes: every `code` the server can answer with, its HTTP status and
when. docs/api.md's error table and docs/portal.md's are generated from it (`python -m
corrige.server.error_codes api|portal` prints them; a test checks the docs hold them word for
word, and that every code the source raises is here), and so are the OpenAPI document's error
responses and the `code` field's list of values.

`where` says which operations can answer with a code, as traits of an operation that
`corrige.server.openapi` reads off the app (`any`, `body`: a POST, whose body the body guard
reads; `params`: it has parameters or a body to validate; `text`, `text:<kind>`: its body holds
learner text of that kind (`schemas.text_field`); `model`: it runs the model; `loaded`: it needs
the model loaded; `portal`; `csrf`; `drained`, `rate_limited`, `operator`: a middleware covers
its path) or as `METHOD /path` for one operation. `unstated` says where a request that its
schema allows can still get the code: conditions no JSON Schema states (the model's token
window, what an exam holds); everywhere else the request schemas state them (`minLength`,
`pattern`, bounds), so that a request valid against the document is never refused for them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

Doc = Literal["api", "portal"]


@dataclass(frozen=True)
class ErrorCode:
    status: int | None  # None: whichever status the framework gave
    code: str
    when: str  # Markdown, for the docs
    doc: Doc = "api"  # which table lists it: docs/api.md's ("api") or docs/portal.md's ("portal")
    where: tuple[str, ...] = ()  # the operations that can answer with it (traits or `METHOD /path`)
    unstated: tuple[str, ...] = ()  # where a request its schema allows may still get it


# operations that several codes name
CHAT = "POST /v1/chat/completions"
CHECK = "POST /v2/check"
COMPLETIONS = "POST /v1/completions"
RULES_TOOL = "POST /v1/tools/rules"
OBS_SUMMARY = "GET /v1/obs/summary"
READYZ = "GET /readyz"
EXAM_ANSWERS = "POST /portal/api/exams/{exam_id}/answers"


def _body_guard(status: int, code: str, when: str) -> ErrorCode:
    """A refusal of the body guard, which reads the body of every POST."""
    return ErrorCode(status, code, when, where=("body",))


def _text_guard(code: str, when: str) -> ErrorCode:
    """A 400 of the learner-text guard (`check_text`): the text fields' schemas state it; chat messages and
    `/v2/check`'s form do not."""
    return ErrorCode(400, code, when, where=("text", CHAT, CHECK), unstated=(CHAT, CHECK))


ERROR_CODES: tuple[ErrorCode, ...] = (
    _body_guard(400, "invalid_json", "the body is not valid JSON, or nests deeper than 32 levels"),
    _body_guard(
        400,
        "invalid_encoding",
        "the body is not UTF-8 (nor, for a form, its fields once percent-decoded), or the text holds a lone surrogate",
    ),
    _text_guard(
        "invalid_characters",
        "NUL or another control character (tab and newlines are fine), a bidirectional override, a BOM",
    ),
    _text_guard(
        "prompt_injection",
        "one of the model's special tokens written out (`<\\|sep\\|>`, `<\\|gloss\\|>`, …);"
        " a slash or a lone `<\\|` is only text",
    ),
    ErrorCode(
        401,
        "unauthorized",
        "an operator endpoint without the operator token, when `ADMIN_TOKEN` is set",
        where=("operator",),
    ),
    ErrorCode(404, "not_found", "no such route", where=()),
    ErrorCode(404, "model_not_found", "an OpenAI route named another model", where=(COMPLETIONS, CHAT)),
    ErrorCode(
        404, "metrics_disabled", "`/metrics` on a server started with `CORRIGE_METRICS=false`", where=("GET /metrics",)
    ),
    ErrorCode(405, "method_not_allowed", "wrong method for the route", where=()),
    _body_guard(
        408,
        "body_timeout",
        "the body did not arrive within `body_timeout_s` of the request's headers; `Connection: close`",
    ),
    _body_guard(
        413,
        "body_too_large",
        "the body is over `max_body_bytes` (refused by `Content-Length`, or as soon as the count passes it)",
    ),
    _body_guard(415, "unsupported_media_type", "a body without `Content-Type: application/json`"),
    ErrorCode(
        431,
        "headers_too_large",
        "`corrige serve`: the request line and headers are over `max_header_bytes`, refused as they arrive;"
        " `Connection: close`",
        where=(),
    ),
    ErrorCode(
        422,
        "validation_error",
        'an unknown field, a wrong type (no coercion: `"stream": "yes"` is refused), a missing field or '
        "a path id out of range; the message names it (`sentence: Input should be a valid string`, `sentences[1]: …`)",
        where=("params",),
    ),
    ErrorCode(422, "empty_sentence", "the sentence is empty or blank", where=("text:sentence", CHAT), unstated=(CHAT,)),
    ErrorCode(
        422,
        "prompt_too_long",
        "the sentence is over `max_sentence_chars`, or too long for the model's window with room for the answer",
        where=("text:sentence",),
        unstated=("any",),
    ),
    ErrorCode(422, "empty_text", "`text` is empty or blank", where=("text:text",)),
    ErrorCode(
        413,
        "text_too_long",
        "`text` (or a chat message) is over 5,000 characters (a sentence too long for the model's window is "
        "never a reason: it is cut at clause boundaries or passed through flagged)",
        where=("text:text", CHAT, CHECK),
        unstated=(CHAT, CHECK),
    ),
    ErrorCode(
        422,
        "no_words",
        "`text` (or a chat message) has no words: only punctuation, digits or symbols",
        where=("text:text", CHAT),
        unstated=("any",),
    ),
    ErrorCode(
        422,
        "not_english",
        "the learner's text (`sentence`, `sentences[i]`, `text`, a chat message, a raw `prompt`) is not English: "
        "the message names the language told by its stop words (`es`, `fr`, …) or the script (`Cyrillic`, "
        "`CJK`, …); in a text of several sentences, one that is not English is only skipped",
        where=("text:text", "text:sentence", "text:prompt", CHAT),
        unstated=("any",),
    ),
    ErrorCode(
        400,
        "missing_parameter",
        "`/v2/check` without `language`, or without both `text` and `data` (LanguageTool's API: plain text)",
        where=(CHECK,),
    ),
    ErrorCode(
        400,
        "unsupported_language",
        "`/v2/check` with a `language` other than English's (`en`, `en-US`, …, `auto`), or `auto` on a text "
        "that is not English",
        where=(CHECK,),
        unstated=(CHECK,),
    ),
    ErrorCode(
        400,
        "invalid_data",
        '`/v2/check`\'s `data` is not LanguageTool\'s annotation (`{"annotation": [{"text": …}, {"markup": …}]}`)',
        where=(CHECK,),
        unstated=(CHECK,),
    ),
    ErrorCode(
        422, "batch_too_large", "more sentences than `max_batch_sentences`", where=("POST /v1/grammar/correct:batch",)
    ),
    ErrorCode(422, "empty_prompt", "`/v1/completions` with an empty text prompt", where=("text:prompt",)),
    ErrorCode(
        422,
        "invalid_request",
        "the engine cannot serve it as asked (e.g. `max_tokens` beyond the window)",
        where=(COMPLETIONS,),
        unstated=("any",),
    ),
    ErrorCode(
        422,
        "unknown_profile",
        "`/v1/obs/summary` or `/dashboard` named a budget profile the file lacks",
        where=(OBS_SUMMARY,),
    ),
    ErrorCode(
        429,
        "rate_limited",
        "over a rate limit: per client address, per learner session on the portal, or the tools' own; "
        "`Retry-After` says when to retry",
        where=("rate_limited",),
    ),
    ErrorCode(
        429,
        "work_limited",
        "the client address's work budget for the model is spent: `WORK_RATE_LIMIT` sentences per second, "
        "`WORK_RATE_BURST` at once (a sentence, each of a batch, each piece of a text the answer cache does not "
        "answer, a raw completion); a longer text is not refused, its sentences go at that rate and the next request "
        "gets this until it is paid for; `Retry-After` says when the budget holds a sentence again",
        where=("work_limited",),
    ),
    ErrorCode(500, "internal_error", "a bug or a model failure (logged with the request id)", where=("any",)),
    ErrorCode(500, "bad_budget", "the latency budget file cannot be read (logged)", where=(OBS_SUMMARY,)),
    ErrorCode(
        502,
        "tool_failed",
        "a subprocess tool (`/v1/tools/rules`) failed or answered garbage (logged)",
        where=(RULES_TOOL,),
    ),
    ErrorCode(
        503,
        "overloaded",
        "`max_waiting` requests already wait for the model and this client address holds its share of them "
        "(`max_waiting` over the clients waiting); `Retry-After`",
        where=("model",),
    ),
    ErrorCode(
        503, "tools_busy", "`max_tool_processes` tool processes are already running; `Retry-After`", where=(RULES_TOOL,)
    ),
    ErrorCode(
        503, "draining", "the server is shutting down; `Retry-After`, `Connection: close`", where=("drained", READYZ)
    ),
    ErrorCode(
        503, "not_ready", "the model is not loaded yet, or the engine stopped; `Retry-After`", where=("loaded", READYZ)
    ),
    ErrorCode(
        503,
        "engine_closed",
        "the engine shut down while the request was in flight (drain grace period over, or its process given up)",
        where=("model",),
    ),
    ErrorCode(
        503,
        "engine_restarting",
        "the engine process died while the request was in flight, or `/readyz` while a new one starts "
        "(requests sent meanwhile wait for it); `Retry-After`",
        where=("model", READYZ),
    ),
    ErrorCode(
        503,
        "engine_failed",
        "`/healthz`: the engine process died more than `ENGINE_MAX_RESTARTS` times in a minute and was "
        "given up; it answers this for `ENGINE_FAILED_DRAIN_S`, then the server exits with a non-zero status",
        where=("GET /healthz",),
    ),
    ErrorCode(
        503,
        "replica_unavailable",
        "`corrige serve --replicas`: the replica serving the request stopped (a crash, `kill -9`) and no other "
        "could answer it (a model route's request is sent once more, a portal form or answer is not), or no "
        "replica is running; `Retry-After`. Ray's proxy answers it, so no operation of the OpenAPI document lists it",
        where=(),
    ),
    ErrorCode(
        504, "deadline_exceeded", "the request waited longer than `queue_timeout_s` for the model", where=("model",)
    ),
    ErrorCode(None, "http_error", "any other HTTP error from the framework, with its own status", where=()),
    # the learner portal's own
    ErrorCode(403, "csrf_failed", "a POST without the session's CSRF token", "portal", where=("csrf",)),
    ErrorCode(
        404,
        "question_not_found",
        "no question with that id",
        "portal",
        where=("GET /portal/api/quiz/question", "POST /portal/api/quiz/answer"),
    ),
    ErrorCode(
        404,
        "exam_not_found",
        "no such exam for this learner",
        "portal",
        where=("GET /portal/api/exams/{exam_id}", EXAM_ANSWERS),
    ),
    ErrorCode(409, "already_answered", "an exam question answered twice", "portal", where=(EXAM_ANSWERS,)),
    ErrorCode(422, "empty_answer", "a blank answer", "portal", where=("text:answer",)),
    ErrorCode(422, "answer_too_long", "an answer over `MAX_SENTENCE_CHARS`", "portal", where=("text:answer",)),
    ErrorCode(
        422,
        "question_not_in_exam",
        "answering an exam with a question it does not have",
        "portal",
        where=(EXAM_ANSWERS,),
        unstated=("any",),
    ),
    ErrorCode(
        503,
        "portal_unavailable",
        "the portal's database could not be opened at start-up, or cannot be reached (logged; the APIs still serve)",
        "portal",
        where=("portal",),
    ),
)

BY_CODE = {entry.code: entry for entry in ERROR_CODES}


def markdown_table(doc: Doc) -> str:
    """The docs' table of `doc`'s codes, by status."""
    rows = ["| status | code | when |", "|---|---|---|"]
    for entry in sorted((e for e in ERROR_CODES if e.doc == doc), key=lambda e: e.status or 999):
        rows.append(f"| {entry.status or 'other'} | `{entry.code}` | {entry.when} |")
    return "\n".join(rows) + "\n"


def applies(where: tuple[str, ...], operation: str, traits: frozenset[str]) -> bool:
    """Whether `where` names this operation (`METHOD /path`) or one of its traits."""
    return any(w == operation or w in traits for w in where)


def codes_of(operation: str, traits: frozenset[str]) -> list[ErrorCode]:
    """The codes an operation can answer with, by status."""
    found = [e for e in ERROR_CODES if e.status is not None and applies(e.where, operation, traits)]
    return sorted(found, key=lambda e: e.status or 0)


def unstated_codes(operation: str, traits: frozenset[str]) -> list[str]:
    """The codes a request that the operation's schema allows may still get."""
    return [e.code for e in codes_of(operation, traits) if applies(e.unstated, operation, traits | {"any"})]


if __name__ == "__main__":  # regenerate a docs table: python -m corrige.server.error_codes api
    sys.stdout.write(markdown_table(sys.argv[1] if len(sys.argv) > 1 else "api"))  # type: ignore[arg-type]
