"""The one table of error codes: every `code` the server can answer with, its HTTP status and
when. The README's error table and docs/portal.md's are generated from it (`python -m
corrige.server.error_codes api|portal` prints them; a test checks the docs hold them word for
word, and that every code the source raises is here), and so are the OpenAPI document's error
responses and the `code` field's list of values.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Literal

Doc = Literal["api", "portal"]


@dataclass(frozen=True)
class ErrorCode:
    status: int | None  # None: whichever status the framework gave
    code: str
    when: str  # Markdown, for the docs
    doc: Doc = "api"  # which table lists it: the README's ("api") or docs/portal.md's ("portal")


ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode(400, "invalid_json", "the body is not valid JSON, or nests deeper than 32 levels"),
    ErrorCode(400, "invalid_encoding", "the body is not UTF-8, or the text holds a lone surrogate"),
    ErrorCode(
        400,
        "invalid_characters",
        "NUL or another control character (tab and newlines are fine), a bidirectional override, a BOM",
    ),
    ErrorCode(
        400,
        "prompt_injection",
        "a special-token marker (`<\\|`, `\\|>`, as in `<\\|sep\\|>`), or the tutor's answer separator ` / `",
    ),
    ErrorCode(401, "unauthorized", "an operator endpoint without the operator token, when `ADMIN_TOKEN` is set"),
    ErrorCode(404, "not_found", "no such route"),
    ErrorCode(404, "model_not_found", "an OpenAI route named another model"),
    ErrorCode(404, "metrics_disabled", "`/metrics` on a server started with `CORRIGE_METRICS=false`"),
    ErrorCode(405, "method_not_allowed", "wrong method for the route"),
    ErrorCode(
        408,
        "body_timeout",
        "the body did not arrive within `body_timeout_s` of the request's headers; `Connection: close`",
    ),
    ErrorCode(
        413,
        "body_too_large",
        "the body is over `max_body_bytes` (refused by `Content-Length`, or as soon as the count passes it)",
    ),
    ErrorCode(415, "unsupported_media_type", "a body without `Content-Type: application/json`"),
    ErrorCode(
        422,
        "validation_error",
        'an unknown field, a wrong type (no coercion: `"stream": "yes"` is refused), a missing field or '
        "a path id out of range; the message names it (`sentence: Input should be a valid string`, `sentences[1]: …`)",
    ),
    ErrorCode(422, "empty_sentence", "the sentence is empty or blank"),
    ErrorCode(
        422,
        "prompt_too_long",
        "the sentence is over `max_sentence_chars`, or too long for the model's window with room for the answer",
    ),
    ErrorCode(422, "batch_too_large", "more sentences than `max_batch_sentences`"),
    ErrorCode(422, "empty_prompt", "`/v1/completions` with an empty text prompt"),
    ErrorCode(422, "invalid_request", "the engine cannot serve it as asked (e.g. `max_tokens` beyond the window)"),
    ErrorCode(422, "unknown_profile", "`/v1/obs/summary` or `/dashboard` named a budget profile the file lacks"),
    ErrorCode(
        429,
        "rate_limited",
        "over a rate limit: per client address, per learner session on the portal, or the tools' own; "
        "`Retry-After` says when to retry",
    ),
    ErrorCode(500, "internal_error", "a bug or a model failure (logged with the request id)"),
    ErrorCode(500, "bad_budget", "the latency budget file cannot be read (logged)"),
    ErrorCode(502, "tool_failed", "a subprocess tool (`/v1/tools/rules`) failed or answered garbage (logged)"),
    ErrorCode(503, "overloaded", "the engine's waiting queue is full (`max_waiting`); `Retry-After`"),
    ErrorCode(503, "tools_busy", "`max_tool_processes` tool processes are already running; `Retry-After`"),
    ErrorCode(503, "draining", "the server is shutting down; `Retry-After`, `Connection: close`"),
    ErrorCode(503, "not_ready", "the model is not loaded yet, or the engine stopped; `Retry-After`"),
    ErrorCode(
        503,
        "engine_closed",
        "the engine shut down while the request was in flight (drain grace period over, or its process given up)",
    ),
    ErrorCode(
        503,
        "engine_restarting",
        "the engine process died while the request was in flight, or `/readyz` while a new one starts "
        "(requests sent meanwhile wait for it); `Retry-After`",
    ),
    ErrorCode(
        503,
        "engine_failed",
        "`/healthz`: the engine process died more than `ENGINE_MAX_RESTARTS` times in a minute and was "
        "given up; the server exits with a non-zero status",
    ),
    ErrorCode(504, "deadline_exceeded", "the request waited longer than `queue_timeout_s` for the model"),
    ErrorCode(None, "http_error", "any other HTTP error from the framework, with its own status"),
    # the learner portal's own
    ErrorCode(403, "csrf_failed", "a POST without the session's CSRF token", "portal"),
    ErrorCode(404, "question_not_found", "no question with that id", "portal"),
    ErrorCode(404, "exam_not_found", "no such exam for this learner", "portal"),
    ErrorCode(409, "already_answered", "an exam question answered twice", "portal"),
    ErrorCode(422, "empty_answer", "a blank answer", "portal"),
    ErrorCode(422, "answer_too_long", "an answer over `MAX_SENTENCE_CHARS`", "portal"),
    ErrorCode(422, "question_not_in_exam", "answering an exam with a question it does not have", "portal"),
    ErrorCode(
        503,
        "portal_unavailable",
        "the portal's database could not be opened at start-up (logged; the APIs still serve)",
        "portal",
    ),
)

BY_CODE = {entry.code: entry for entry in ERROR_CODES}


def markdown_table(doc: Doc) -> str:
    """The docs' table of `doc`'s codes, by status."""
    rows = ["| status | code | when |", "|---|---|---|"]
    for entry in sorted((e for e in ERROR_CODES if e.doc == doc), key=lambda e: e.status or 999):
        rows.append(f"| {entry.status or 'other'} | `{entry.code}` | {entry.when} |")
    return "\n".join(rows) + "\n"


def response_description(status: int) -> str:
    """An OpenAPI response's description: the codes a status can carry."""
    codes = [f"`{e.code}`" for e in ERROR_CODES if e.status == status]
    return "Error model; `code` is one of " + ", ".join(codes) if codes else "Error model"


def error_responses(model: Any, statuses: tuple[int, ...]) -> dict[int | str, dict[str, Any]]:
    """FastAPI `responses=` for the given statuses, described from the table."""
    return {status: {"model": model, "description": response_description(status)} for status in statuses}


def describe_errors(document: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI document with the table's codes as the values of the error model's `code`."""
    detail = document.get("components", {}).get("schemas", {}).get("ErrorDetail")
    if detail is not None:
        detail["properties"]["code"]["enum"] = sorted(BY_CODE)
    return document


if __name__ == "__main__":  # regenerate a docs table: python -m corrige.server.error_codes api
    sys.stdout.write(markdown_table(sys.argv[1] if len(sys.argv) > 1 else "api"))  # type: ignore[arg-type]
