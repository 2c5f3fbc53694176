"""What Ray Serve's HTTP proxy runs in front of the replicas: one retry when a replica dies
under a request, and the error model when no replica can answer.

A replica that dies (a crash, `kill -9`, its node gone) fails the requests it held. Ray's proxy
then sends nothing, and its HTTP server answers a plain-text 500; with no replica left to route
to, the proxy answers a plain-text 503 of its own. Neither is the API's error model, and a client
cannot tell them from a bug. The model's routes change nothing on the server (a correction is a
function of its body), so such a request is sent once more, to whichever replica the proxy picks
next (Ray's router has by then struck the dead one off); if that fails too, or the request cannot
be sent again, the client gets 503 `replica_unavailable` with `Retry-After`.

The proxy loads this module through `RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH`
(`PROXY_CALLBACK`, which `corrige serve --replicas` sets before Ray starts); it imports nothing
of the server, so that Ray's proxy does not load the engine's dependencies.
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

PROXY_CALLBACK = "corrige.cluster.proxy:proxy_middlewares"

CODE = "replica_unavailable"
MESSAGE = "no replica could answer the request (one stopped while serving it); try again"
RETRY_AFTER_S = 1  # the server's own default `retry_after_s`
# a request body is kept for its retry up to this size; the server refuses bodies over
# `max_body_bytes` (64 KiB by default) anyway, and a larger one is answered 503 instead
RETRY_BODY_BYTES = 1 << 20
# the model's routes, whose POSTs change nothing on the server; the portal's POSTs record
# answers and exams, and are not sent twice
RETRY_POST_PREFIXES = ("/v1/", "/v2/")
# `/v2/` answers errors as LanguageTool does, in plain text with the code in a header
# (corrige.server.languagetool: PREFIX, CODE_HEADER, error_text)
LANGUAGETOOL_PREFIX = "/v2/"
CODE_HEADER = b"x-corrige-error-code"
SSE_MEDIA_TYPE = b"text/event-stream"


def proxy_middlewares() -> list[Any]:
    """Ray's proxy calls this (`RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH`) for the middlewares
    around its ASGI app."""
    from starlette.middleware import Middleware

    return [Middleware(ReplicaRetry)]


def error_body(code: str, message: str, request_id: str | None) -> bytes:
    """The server's error model (corrige.server.errors.error_body; a test holds the two equal)."""
    error = {"error": {"code": code, "message": message, "request_id": request_id}}
    return json.dumps(error, ensure_ascii=False).encode()


class ReplicaRetry:
    """Outermost around Ray's proxy app: a request that got no answer from its replica is sent
    once more; what still has none, and the proxy's own plain-text 503, become 503
    `replica_unavailable`; a stream cut by its replica's death ends with an error event."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        # `/-/…` are the proxy's own health and route endpoints
        if scope["type"] != "http" or scope["path"].startswith("/-/"):
            await self.app(scope, receive, send)
            return
        body = _KeptBody(receive)
        attempt = _Attempt(send)
        await self.app(scope, body.receive, attempt.send)
        if not (attempt.started or attempt.refused) and body.replayable and _may_send_twice(scope):
            logger.warning("%s %s: its replica stopped before answering; sent again", scope["method"], scope["path"])
            attempt = _Attempt(send)
            await self.app(scope, body.replay(), attempt.send)
        if body.disconnected or attempt.finished:
            return
        request_id = _request_id(scope)  # the proxy names each request in its headers
        if attempt.started:
            if attempt.stream:
                await attempt.end_stream(scope["path"], request_id)
            # any other body cut short is left so: the server closes the connection, and the
            # client sees the answer incomplete rather than a shorter one
            return
        logger.warning("%s %s: no replica answered (503 %s)", scope["method"], scope["path"], CODE)
        await _send_unavailable(send, scope["path"], request_id)


class _KeptBody:
    """The proxy's `receive`, keeping the request's messages (up to `RETRY_BODY_BYTES`) so that the
    request can be sent again."""

    def __init__(self, receive: Any) -> None:
        self._receive = receive
        self.kept: list[dict] | None = []
        self.size = 0
        self.disconnected = False

    @property
    def replayable(self) -> bool:
        return self.kept is not None and not self.disconnected

    async def receive(self) -> dict:
        message = await self._receive()
        if message["type"] == "http.disconnect":
            self.disconnected = True
        elif self.kept is not None:
            self.size += len(message.get("body", b""))
            if self.size > RETRY_BODY_BYTES:
                self.kept = None
            else:
                self.kept.append(message)
        return message

    def replay(self) -> Any:
        """A `receive` for the second try: the kept messages, then whatever else the client sends
        (the rest of the body, its disconnect)."""
        pending = list(self.kept or [])

        async def receive() -> dict:
            if pending:
                return pending.pop(0)
            return await self.receive()

        return receive


class _Attempt:
    """One pass of a request through the proxy, as its answer goes out: whether it started and
    finished; the proxy's own plain-text 503 is held back (`refused`)."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self.started = False
        self.finished = False
        self.refused = False
        self.stream = False

    async def send(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            if _proxy_refusal(message):
                self.refused = True
                return
            self.started = True
            self.stream = _header(message, b"content-type").startswith(SSE_MEDIA_TYPE)
        elif message["type"] == "http.response.body":
            if self.refused:
                return
            self.finished = not message.get("more_body", False)
        await self._send(message)

    async def end_stream(self, path: str, request_id: str | None) -> None:
        """End a stream cut short by its replica's death as the server ends a stream that fails:
        a last event with the error (`event: error` on the grammar routes, unnamed on the OpenAI
        ones)."""
        name = b"event: error\n" if path.startswith("/v1/grammar/") else b""
        tail = name + b"data: " + error_body(CODE, MESSAGE, request_id) + b"\n\n"
        await self._send({"type": "http.response.body", "body": tail, "more_body": False})


def _proxy_refusal(start: dict) -> bool:
    """The proxy's own 503 (no replica to route to): plain text, without the code header that the
    server's own plain-text errors (`/v2/`) carry."""
    return (
        start["status"] == 503
        and _header(start, b"content-type").startswith(b"text/plain")
        and not _header(start, CODE_HEADER)
    )


def _may_send_twice(scope: dict) -> bool:
    return scope["method"] in ("GET", "HEAD", "OPTIONS") or scope["path"].startswith(RETRY_POST_PREFIXES)


def _header(message: dict, name: bytes) -> bytes:
    return next((v for k, v in message.get("headers", []) if k.lower() == name), b"")


def _request_id(scope: dict) -> str | None:
    value = _header(scope, b"x-request-id")
    return value.decode("latin-1") if value else None


async def _send_unavailable(send: Any, path: str, request_id: str | None) -> None:
    headers = [(b"retry-after", str(RETRY_AFTER_S).encode())]
    if request_id is not None:
        headers.append((b"x-request-id", request_id.encode("latin-1")))
    if path.startswith(LANGUAGETOOL_PREFIX):
        body = f"Error: {MESSAGE}".encode()
        headers += [(b"content-type", b"text/plain; charset=utf-8"), (CODE_HEADER, CODE.encode())]
    else:
        body = error_body(CODE, MESSAGE, request_id)
        headers.append((b"content-type", b"application/json"))
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
