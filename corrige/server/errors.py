"""One error model for every failure: `{"error": {"code", "message", "request_id"}}`.

Handlers raise `ApiError` (an engine error becomes one in `EngineRefusals`, around every call
into the engine); the exception handlers here and the ASGI guards (which answer before FastAPI
runs) all render the same JSON, whose code travels with the response (`ERROR_CODE_KEY`). Codes are
stable: clients switch on `code`, never on `message`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Message, Receive, Scope, Send

from corrige.engine import EngineError
from corrige.portal.store import StoreUnavailable
from corrige.tutor.token_codec import PromptTooLong

logger = logging.getLogger(__name__)

# HTTP status of each engine error code (corrige.engine.errors)
ENGINE_STATUS = {
    "overloaded": 503,
    "deadline_exceeded": 504,
    "invalid_request": 422,
    "engine_closed": 503,
    "engine_restarting": 503,
    "internal_error": 500,
}
RETRY_AFTER_CODES = {"overloaded", "engine_closed", "engine_restarting", "draining", "not_ready"}

# Starlette's HTTPException statuses as codes of the table (error_codes.py); FastAPI raises a
# 400 only when a body does not parse, which the body guard refuses first as `invalid_json`
HTTP_CODES = {
    400: "invalid_json",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
    504: "deadline_exceeded",
}


class ApiError(Exception):
    """A failure to report to the client with an HTTP status and a stable code."""

    def __init__(self, status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


def error_body(code: str, message: str, request_id: str | None) -> dict:
    return {"error": {"code": code, "message": message, "request_id": request_id}}


def error_bytes(code: str, message: str, request_id: str | None) -> bytes:
    return json.dumps(error_body(code, message, request_id), ensure_ascii=False).encode()


async def send_error(
    send: Send, status: int, code: str, message: str, request_id: str | None, headers: Mapping[str, str] | None = None
) -> None:
    """Answer with the error model straight from ASGI middleware (before FastAPI runs)."""
    body = error_bytes(code, message, request_id)
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw, ERROR_CODE_KEY: code})
    await send({"type": "http.response.body", "body": body})


def from_engine_error(exc: EngineError, retry_after_s: int) -> ApiError:
    code = exc.code
    headers = {"Retry-After": str(retry_after_s)} if code in RETRY_AFTER_CODES else None
    return ApiError(ENGINE_STATUS.get(code, 500), code, str(exc) or code, headers)


class EngineRefusals:
    """The one place an engine error becomes an `ApiError` (`from_engine_error`): every call into the
    engine runs inside `with refusals:`, so handlers, streams and the portal only ever see `ApiError`s."""

    __slots__ = ("retry_after_s",)

    def __init__(self, retry_after_s: int) -> None:
        self.retry_after_s = retry_after_s

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, EngineError):
            raise from_engine_error(exc, self.retry_after_s) from None


# A key of the `http.response.start` message of an answer in the error model: its code, for
# `RequestContextMiddleware` (the trace and the metrics), which then never parses the body it relays.
# Servers read only the keys the ASGI spec names, so the client never sees it.
ERROR_CODE_KEY = "corrige.error_code"


class ErrorResponse(JSONResponse):
    """The error model as a response whose start message carries its code (`ERROR_CODE_KEY`)."""

    def __init__(self, error: ApiError, request_id: str | None) -> None:
        super().__init__(error_body(error.code, error.message, request_id), error.status, error.headers)
        self.code = error.code

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_code(message: Message) -> None:
            if message["type"] == "http.response.start":
                message[ERROR_CODE_KEY] = self.code
            await send(message)

        await super().__call__(scope, receive, send_with_code)


def from_prompt_too_long(exc: PromptTooLong, field: str) -> ApiError:
    return ApiError(422, exc.code, f"{field}: {exc}")


def render(request: Request, error: ApiError) -> Response:
    """The error model; or, when the app's `error_page` hook renders one for this request (the
    learner portal's pages and form posts), the learner's page."""
    page_for = getattr(request.app.state, "error_page", None)
    if page_for is not None and (page := page_for(request.scope, error)) is not None:
        return page
    request_id = getattr(request.state, "request_id", None)  # None: refused before the request was named
    return ErrorResponse(error, request_id)


def field_name(loc: tuple) -> str:
    """`("body", "sentences", 2)` → `sentences[2]`; the body itself is `body`."""
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    name = ""
    for part in parts:
        name += f"[{part}]" if part.isdigit() else (f".{part}" if name else part)
    return name or "body"


def validation_message(errors: list[dict]) -> tuple[str, str, int]:
    """(code, message, status) for pydantic errors; malformed JSON is a 400, the rest 422."""
    first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request", "type": "value_error"}
    if first.get("type") == "json_invalid":
        detail = (first.get("ctx") or {}).get("error", "JSON decode error")
        return "invalid_json", f"the body is not valid JSON: {detail}", 400
    parts = []
    for error in errors[:5]:
        name = field_name(tuple(error.get("loc", ())))
        if error.get("type") == "extra_forbidden":
            parts.append(f"{name}: unknown field")
        else:
            parts.append(f"{name}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "validation_error", "; ".join(parts) + more, 422


def install_error_handlers(app: FastAPI) -> None:
    async def on_api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return render(request, exc)

    async def on_validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        code, message, status = validation_message(list(exc.errors()))
        return render(request, ApiError(status, code, message))

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        code = HTTP_CODES.get(exc.status_code, "http_error")
        message = exc.detail if isinstance(exc.detail, str) else code
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path}"
        return render(request, ApiError(exc.status_code, code, message, exc.headers))

    async def on_store_unavailable(request: Request, exc: Exception) -> Response:
        # the portal's database went away after start-up (PostgreSQL restarted, network): the call that
        # met it fails, nothing was acknowledged, and the next call connects again
        logger.warning("learner portal: %s", exc)
        retry_after = str(request.app.state.settings.retry_after_s)
        message = "the learner portal's database cannot be reached; try again"
        return render(request, ApiError(503, "portal_unavailable", message, {"Retry-After": retry_after}))

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(StoreUnavailable, on_store_unavailable)
