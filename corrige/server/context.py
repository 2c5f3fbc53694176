"""Request identity and the outermost safety net, as pure ASGI middleware.

Every request gets an id: the client's `X-Request-ID` when it is a sane token, a fresh one
otherwise. It is stored in `scope["state"]["request_id"]` (so `request.state.request_id`),
sent back as `X-Request-ID` on every response, errors included, and goes into every error
body. The arrival time (`time.perf_counter()`) is stored too, so the service can time the
ingress stage. An exception that escapes the app becomes a logged 500 with the same model.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from corrige.server.errors import send_error

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = b"x-request-id"
_VALID_ID = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}")


def new_request_id() -> str:
    return uuid.uuid4().hex


def client_request_id(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The client's id when it is 1-128 characters of letters, digits and `._:-`."""
    for name, value in headers:
        if name == REQUEST_ID_HEADER:
            return value.decode("ascii") if _VALID_ID.fullmatch(value) else None
    return None


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = client_request_id(scope["headers"]) or new_request_id()
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["received_at"] = time.perf_counter()
        id_header = (REQUEST_ID_HEADER, request_id.encode("ascii"))
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", ()), id_header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            logger.exception("request %s %s (id %s) failed", scope.get("method"), scope.get("path"), request_id)
            if not started:
                await send_error(send_with_id, 500, "internal_error", "the server failed; please retry", request_id)
