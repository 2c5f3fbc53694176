"""What the server exposes and how its pages protect themselves: the operator endpoints behind an
optional token, security headers on every HTML response (and no inline script in any template),
the session cookie marked Secure over HTTPS, and a body that stops arriving cut off (408)."""

from __future__ import annotations

import asyncio
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from server_support import error_of

from corrige.server.app import OPERATOR_PATHS, create_app
from corrige.server.guards import BodyGuardMiddleware
from corrige.server.operator import COOKIE
from corrige.server.settings import Settings

TOKEN = "s3cret-operator-token"
TEMPLATES = Path(__file__).resolve().parents[2] / "corrige" / "server" / "web" / "templates"
PAGES = ["/", "/quiz", "/exam", "/progress", "/dashboard", "/docs", "/exam/12345", "/quiz/answers/77?lang=en"]


@pytest.fixture
def app_with(make_settings, tmp_path):
    def build(**overrides) -> TestClient:
        return TestClient(create_app(make_settings(portal_db=tmp_path / "portal.sqlite", **overrides)))

    return build


# ---------------------------------------------------------------- operator token


def test_without_a_token_the_operator_endpoints_stay_open(app_with):
    with app_with() as client:
        for path in OPERATOR_PATHS:
            assert client.get(path).status_code == 200, path


def test_with_a_token_the_operator_endpoints_need_it(app_with):
    with app_with(admin_token=TOKEN) as client:
        for path in OPERATOR_PATHS:
            refused = client.get(path)
            assert refused.status_code == 401, path
            assert error_of(refused)["code"] == "unauthorized" and TOKEN not in refused.text
            assert refused.headers["www-authenticate"].startswith("Bearer")
            wrong = client.get(path, headers={"Authorization": "Bearer not-the-token"})
            assert wrong.status_code == 401 and error_of(wrong)["code"] == "unauthorized"
            assert client.get(path, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200, path
        # the rest of the server is not behind it
        for path in ("/healthz", "/readyz", "/v1/models", "/", "/portal/api/session"):
            assert client.get(path).status_code == 200, path


def test_the_dashboard_takes_the_token_once_and_keeps_a_cookie_for_its_polling(app_with):
    with app_with(admin_token=TOKEN) as client:
        wrong = client.get("/dashboard", params={"token": "nope"}, follow_redirects=False)
        assert wrong.status_code == 401 and error_of(wrong)["code"] == "unauthorized"
        given = client.get("/dashboard", params={"token": TOKEN, "last": 100}, follow_redirects=False)
        assert given.status_code == 303
        assert given.headers["location"] == "/dashboard?last=100"  # the token leaves the address bar
        cookie = given.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and TOKEN not in cookie
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        page = client.get("/dashboard", params={"last": 100})  # the client keeps the cookie
        assert page.status_code == 200 and 'data-last="100"' in page.text
        assert client.get("/v1/obs/summary", params={"last": 10}).status_code == 200
        client.cookies.clear()
        client.cookies.set(COOKIE, "0" * 64)
        assert client.get("/v1/obs/summary").status_code == 401


def test_the_token_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("CORRIGE_ADMIN_TOKEN", TOKEN)
    settings = Settings()
    assert settings.admin_token is not None and settings.admin_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(settings)


# ---------------------------------------------------------------- security headers


class InlineScripts(HTMLParser):
    """Inline scripts, event-handler attributes and style attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        names = {name for name, _ in attrs}
        self.found += [f"<{tag} {name}>" for name in names if name.startswith("on") or name == "style"]
        self._in_script = tag == "script" and "src" not in names

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.found.append(f"<script>{data.strip()[:40]}")


def test_no_template_has_an_inline_script_handler_or_style():
    templates = list(TEMPLATES.rglob("*.html"))
    assert len(templates) > 10
    for template in templates:
        text = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), template
        assert not re.search(r"\son[a-z]+\s*=", text), template
        assert not re.search(r"\sstyle\s*=", text), template


def test_every_html_response_has_the_security_headers_and_no_inline_script(app_with):
    with app_with() as client:
        for path in PAGES:
            response = client.get(path)
            assert response.headers["content-type"].startswith("text/html"), path
            csp = response.headers["content-security-policy"]
            directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
            assert "'unsafe-inline'" not in directives["script-src"] and "'self'" in directives["script-src"], path
            assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'", path
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["referrer-policy"] == "same-origin"
            assert response.headers["x-content-type-options"] == "nosniff"
            parser = InlineScripts()
            parser.feed(response.text)
            assert parser.found == [], (path, parser.found)
        api = client.post("/v1/grammar/correct", json={"sentence": "She like cats."})
        assert api.headers["x-content-type-options"] == "nosniff" and "content-security-policy" not in api.headers


def test_the_docs_page_starts_swagger_from_a_static_file(app_with):
    with app_with() as client:
        page = client.get("/docs").text
        script = client.get("/static/docs/swagger-init.js")
        assert '<script src="/static/docs/swagger-init.js"></script>' in page
        assert script.status_code == 200 and "SwaggerUIBundle" in script.text and "/openapi.json" in script.text
        # Swagger UI itself is served from here, not from a CDN (the page works offline)
        assert "http://" not in page and "https://" not in page
        for asset in re.findall(r'(?:src|href)="([^"]+)"', page):
            served = client.get(asset)
            assert served.status_code == 200 and len(served.content) > 500, asset
        bundle = client.get("/static/docs/swagger-ui-bundle.js")
        assert bundle.headers["content-type"].startswith(("text/javascript", "application/javascript"))
        assert "SwaggerUIBundle" in bundle.text
        assert client.get("/redoc").status_code == 404  # FastAPI's other page (inline style, fonts) is gone


# ---------------------------------------------------------------- session cookie


@pytest.mark.parametrize(
    ("base_url", "configured", "secure"),
    [("https://testserver", False, True), ("http://testserver", True, True), ("http://testserver", False, False)],
)
def test_the_session_cookie_is_secure_over_https_or_when_configured(app_with, base_url, configured, secure):
    with app_with(session_cookie_secure=configured) as client:
        client.base_url = base_url
        response = client.get("/", params={"lang": "en"})
        cookies = response.headers.get_list("set-cookie")
        session = next(c for c in cookies if c.startswith("corrige_session="))
        lang = next(c for c in cookies if c.startswith("corrige_lang="))
        assert ("; secure" in session.lower()) is secure and ("; secure" in lang.lower()) is secure
        assert "httponly" in session.lower()


# ---------------------------------------------------------------- body timeout


def test_a_body_that_stops_arriving_is_cut_off_with_408():
    """Pure ASGI: half a body, then nothing; the guard answers within its time limit."""
    sent = []
    messages = [{"type": "http.request", "body": b'{"sentence": "hal', "more_body": True}]

    async def receive():
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # the rest of the body never comes

    async def send(message):
        sent.append(message)

    async def app(scope, receive, send):  # never reached
        raise AssertionError("the app must not run")

    scope = {"type": "http", "method": "POST", "headers": [(b"content-type", b"application/json")], "state": {}}
    asyncio.run(asyncio.wait_for(BodyGuardMiddleware(app, max_bytes=1024, timeout_s=0.05)(scope, receive, send), 30))
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
    assert b'"code": "body_timeout"' in sent[1]["body"]
