"""Request identity, the request's trace and metrics, and the outermost safety net, as pure
ASGI middleware.

Every request gets an id: the client's `X-Request-ID` when it is a sane token, a fresh one
otherwise. It is sent back as `X-Request-ID` on every response, errors included, and goes into
every error body. A `RequestMeta` in `scope["state"]["meta"]` (`request.state.meta`) carries
the id, the arrival time (`time.perf_counter()`), and for POST requests the request's trace:
its `http.request` root opens here (continuing the caller's W3C `traceparent`), the stages add
their spans as they run, and the root closes when the last byte has gone out. A request that
a guard refused before the handler still leaves a whole trace: this middleware records its
`security.check` span with the verdict and the error code (or its `validate.body` span, for
a body that failed validation): both spans are written by this module's `security_span` and
`validate_span` only, for these refusals and for the pipeline's stages alike. The error code
comes with the response's start message (`errors.ERROR_CODE_KEY`), never from the body relayed. An
exception that escapes the app becomes a logged 500.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from corrige.obs import spans as S
from corrige.obs.tracing import RequestTrace
from corrige.server.errors import ERROR_CODE_KEY, send_error

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = b"x-request-id"
_VALID_ID = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}")
_TRACE_HEADERS = (b"traceparent", b"tracestate")


@dataclass(slots=True)
class RequestMeta:
    """What the layers of one request share, from ingress to the last byte."""

    request_id: str
    received_at: float  # time.perf_counter() when the request reached the app
    trace: RequestTrace | None = None  # POST requests, when tracing is on
    guards_done_at: float | None = None  # the body guard passed: validation starts
    bytes_in: int = 0  # request body size
    fresh: bool = False  # `Cache-Control: no-cache`: no answer from the answer cache
    client: str = "local"  # the client's address (a trusted proxy's X-Forwarded-For): whose work budget and turn


def new_request_id() -> str:
    return uuid.uuid4().hex


def client_request_id(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The client's id when it is 1-128 characters of letters, digits and `._:-`."""
    for name, value in headers:
        if name == REQUEST_ID_HEADER:
            return value.decode("ascii") if _VALID_ID.fullmatch(value) else None
    return None


def wants_fresh_answers(headers: list[tuple[bytes, bytes]]) -> bool:
    """`Cache-Control: no-cache` (HTTP's "do not answer from a cache"), in any of its headers."""
    return any(name == b"cache-control" and b"no-cache" in value.lower() for name, value in headers)


def _trace_headers(headers: list[tuple[bytes, bytes]]) -> dict[str, str] | None:
    found = {k.decode("latin-1"): v.decode("latin-1") for k, v in headers if k in _TRACE_HEADERS}
    return found or None


def _route_of(scope: Scope) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"  # the template, never the raw path (bounded labels)


def validate_span(
    trace: RequestTrace, start: float, end: float, bytes_in: int, bytes_out: int = 0, error: str | None = None
) -> None:
    """The `validate.body` span: the body parsed and validated (or, with `error`, refused by validation).
    Written here only, for the pipeline's `validate` stage and for a body that failed validation."""
    trace.timed(S.VALIDATE, start, end, error, **{S.BYTES_IN: bytes_in, S.BYTES_OUT: bytes_out})


def security_span(
    trace: RequestTrace, start: float, end: float, reason: str | None, bytes_in: int, bytes_out: int
) -> None:
    """The `security.check` span: the guards' verdict, with the error code of a refusal (`reason`).
    Written here only, for the pipeline's `guard` stage and for a guard in front of the app."""
    verdict = {S.VERDICT: "pass"} if reason is None else {S.VERDICT: "refuse", S.REASON: reason}
    trace.timed(S.SECURITY, start, end, **verdict, **{S.BYTES_IN: bytes_in, S.BYTES_OUT: bytes_out})


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        received_at = time.perf_counter()
        request_id = client_request_id(scope["headers"]) or new_request_id()
        client = scope.get("client")
        fresh = wants_fresh_answers(scope["headers"])
        meta = RequestMeta(request_id, received_at, fresh=fresh, client=client[0] if client else "unknown")
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["received_at"] = received_at
        state["meta"] = meta
        app_state = scope["app"].state if "app" in scope else None
        observed = scope["method"] == "POST"
        tracing = getattr(app_state, "tracing", None) if observed else None
        metrics = getattr(app_state, "metrics", None) if observed else None
        if tracing is not None:
            meta.trace = tracing.request(
                request_id, received_at, _trace_headers(scope["headers"]), **{"http.route": scope["path"]}
            )
        id_header = (REQUEST_ID_HEADER, request_id.encode("ascii"))
        started = False
        status = 500
        bytes_out = 0
        code: str | None = None

        async def send_with_id(message: Message) -> None:
            nonlocal started, status, bytes_out, code
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                code = message.get(ERROR_CODE_KEY)  # an answer in the error model says its code
                message["headers"] = [*message.get("headers", ()), id_header]
            elif message["type"] == "http.response.body":
                bytes_out += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            logger.exception("request %s %s (id %s) failed", scope.get("method"), scope.get("path"), request_id)
            if not started:
                await send_error(send_with_id, 500, "internal_error", "the server failed; please retry", request_id)
        finally:
            if observed:
                self._close(scope, meta, metrics, status, bytes_out, code if status >= 400 else None)

    @staticmethod
    def _close(scope: Scope, meta: RequestMeta, metrics, status: int, bytes_out: int, code: str | None) -> None:
        end = time.perf_counter()
        trace = meta.trace
        if trace is not None:
            if code is not None:
                recorded = trace.recorded
                if meta.guards_done_at is None and S.SECURITY not in recorded:
                    # refused by a guard in front of the app (rate limit, body size, draining)
                    security_span(trace, meta.received_at, end, code, meta.bytes_in, bytes_out)
                elif not recorded and meta.guards_done_at is not None:
                    # the body failed validation before the handler ran
                    validate_span(trace, meta.guards_done_at, end, meta.bytes_in, error=code)
            trace.finish(end, status, code, **{S.BYTES_IN: meta.bytes_in, S.BYTES_OUT: bytes_out})
        if metrics is not None:
            metrics.on_request_done(_route_of(scope), end - meta.received_at, status, code)
            if trace is not None:
                metrics.on_trace(trace.spans)
