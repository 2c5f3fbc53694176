"""Security headers, as pure ASGI middleware around every response.

Every response gets `X-Content-Type-Options: nosniff`. Every HTML response also gets a Content
Security Policy that allows scripts, styles and connections from this origin only (no inline
script or handler: the templates load their scripts from /static files), no framing
(`frame-ancestors 'none'` and `X-Frame-Options: DENY`) and `Referrer-Policy: same-origin`; the
API docs page too (Swagger UI's files are served from here). A response that sets its own
`Content-Security-Policy` keeps it.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
HTML_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
)
ALL_HEADERS = ((b"x-content-type-options", b"nosniff"),)


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, with_security_headers(send) if scope["type"] == "http" else send)


def with_security_headers(send: Send) -> Send:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            present = {name.lower() for name, _ in headers}
            content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
            extra = ALL_HEADERS + (HTML_HEADERS if content_type.lower().startswith(b"text/html") else ())
            headers += [(name, value) for name, value in extra if name not in present]
            message = {**message, "headers": headers}
        await send(message)

    return send_with_headers
