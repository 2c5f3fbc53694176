"""The operator endpoints (`/metrics`, `/dashboard`, `/v1/engine/stats`, `/v1/obs/summary`) behind
an optional token, as pure ASGI middleware in front of their routes.

With `admin_token` unset they stay open, as before. With it set, a request must carry
`Authorization: Bearer <token>` (Prometheus: `authorization: {credentials: …}`), or the cookie a
browser gets by opening `/dashboard?token=<token>` once: the page answers with a redirect to
itself without the token (so it leaves the address bar and the history) and sets an HttpOnly,
SameSite=Strict cookie, which the dashboard's own polling of `/v1/obs/summary` then sends. The
cookie holds a keyed digest of the token, never the token. Anything else: 401 `unauthorized`.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Receive, Scope, Send

from corrige.server.errors import send_error

COOKIE = "corrige_operator"
COOKIE_MAX_AGE_S = 12 * 3600
DASHBOARD = "/dashboard"


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), b"corrige operator cookie", hashlib.sha256).hexdigest()


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""


class OperatorAuthMiddleware:
    def __init__(self, app: ASGIApp, token: str, paths: Iterable[str], secure_cookie: bool = False) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie_value(token)
        self.paths = frozenset(paths)
        self.secure_cookie = secure_cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in self.paths or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = dict(query).get("token")
        if scope["path"] == DASHBOARD and given is not None and hmac.compare_digest(given, self.token):
            await self._set_cookie(scope, send, [(k, v) for k, v in query if k != "token"])
            return
        request_id = scope.get("state", {}).get("request_id")
        message = "this operator endpoint needs the operator token: send Authorization: Bearer <token>"
        await send_error(send, 401, "unauthorized", message, request_id, {"WWW-Authenticate": 'Bearer realm="corrige"'})

    def _allowed(self, scope: Scope) -> bool:
        scheme, _, credentials = _header(scope, b"authorization").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(credentials.strip(), self.token):
            return True
        cookies = SimpleCookie()
        try:
            cookies.load(_header(scope, b"cookie"))
        except Exception:  # a malformed Cookie header is no credential, not an error
            return False
        found = cookies.get(COOKIE)
        return found is not None and hmac.compare_digest(found.value, self.cookie)

    async def _set_cookie(self, scope: Scope, send: Send, query: list[tuple[str, str]]) -> None:
        location = DASHBOARD + (f"?{urlencode(query)}" if query else "")
        cookie = f"{COOKIE}={self.cookie}; Max-Age={COOKIE_MAX_AGE_S}; Path=/; HttpOnly; SameSite=Strict"
        if self.secure_cookie or scope.get("scheme") == "https":
            cookie += "; Secure"
        headers = [
            (b"location", location.encode("latin-1")),
            (b"set-cookie", cookie.encode("latin-1")),
            (b"cache-control", b"no-store"),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
