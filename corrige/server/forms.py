"""HTML form posts to the portal, as JSON.

The server's body guard accepts only JSON bodies (the APIs are JSON), but a page that works
without JavaScript posts `application/x-www-form-urlencoded`. This pure ASGI middleware sits
just outside the body guard: for a form post to one of the portal's form paths it reads the
body (no more than the guard would), turns the fields into a JSON object, and marks the
request (`scope["state"]["portal_form"] = True`) so the route answers with HTML pages and
redirects instead of JSON; so does a post with no body at all (no fields, no Content-Type), as a
browser's form with no fields would. Everything else passes through untouched, so the guard still
judges every other body, and a form body it cannot decode, or one still arriving after the
guard's time limit, is left for the guard to refuse.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from corrige.server.guards import body_time_left, replay_body

FORM_TYPE = b"application/x-www-form-urlencoded"


def is_form_path(path: str, prefixes: Iterable[str]) -> bool:
    """`path` is one of `prefixes`, or under one ending in "/" (the root "/" matches only itself:
    the API's JSON-only paths must keep answering 415 to form posts)."""
    return any(path == p or (p != "/" and p.endswith("/") and path.startswith(p)) for p in prefixes)


class FormPostMiddleware:
    """Form posts to `paths` (exact paths; a path ending in "/" covers everything under it) become JSON."""

    def __init__(self, app: ASGIApp, paths: Iterable[str], max_bytes: int, timeout_s: float = 10.0) -> None:
        self.app = app
        self.paths = tuple(paths)
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s  # the body guard's: past it, the guard answers 408

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not is_form_path(scope["path"], self.paths):
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"])
        content_type = given.get(b"content-type", b"")
        if content_type.split(b";", 1)[0].strip().lower() != FORM_TYPE and not _no_body(given):
            await self.app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        try:
            async with asyncio.timeout(max(0.0, body_time_left(scope, self.timeout_s))):
                while more:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    chunks.append(message.get("body", b""))
                    size += len(chunks[-1])
                    more = message.get("more_body", False)
                    if size > self.max_bytes:
                        break  # the guard refuses it (413); it reads the rest of the body itself
        except TimeoutError:
            pass  # `more` is still true: the guard, on the same clock, finds the time up (408)
        raw = b"".join(chunks)
        fields = _decode(raw) if not more else None
        if fields is None:  # too large or not UTF-8: replay it as it came and let the guard answer
            await self.app(scope, replay_body(raw, more, receive), send)
            return
        body = json.dumps(fields, ensure_ascii=False).encode()
        headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-type", b"content-length")]
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        scope = {**scope, "headers": headers}
        scope.setdefault("state", {})["portal_form"] = True
        await self.app(scope, replay_body(body, False, receive), send)


def _no_body(headers: dict[bytes, bytes]) -> bool:
    """A post with no body and no Content-Type: a form with no fields (a form post to a page path
    without its CSRF token gets the learner's 403 page, not the API's 422 for a missing body)."""
    no_length = headers.get(b"content-length", b"0").strip() == b"0"
    return b"content-type" not in headers and no_length and b"transfer-encoding" not in headers


def _decode(raw: bytes) -> dict[str, str] | None:
    """Form fields (a repeated field keeps its last value), or None when the body is not UTF-8."""
    try:
        text = raw.decode("utf-8")
        return dict(parse_qsl(text, keep_blank_values=True, strict_parsing=False, errors="strict"))
    except (UnicodeDecodeError, ValueError):
        return None
