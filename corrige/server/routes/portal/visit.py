"""What every portal route shares: the templates, the learner of a request (`Visit`: session
cookie, language), the CSRF checks, form fields, and the learner's error page."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import urlencode

import jinja2
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ValidationError

from corrige.portal.i18n import LANGS, TEXTS, Text, pick_lang
from corrige.portal.sessions import Session, csrf_ok
from corrige.portal.state import Portal
from corrige.server.deps import request_id_of
from corrige.server.errors import ApiError, validation_message
from corrige.server.service import CorrectionService
from corrige.tutor.rule_lookup import RuleLookup

WEB_DIR = Path(__file__).resolve().parents[2] / "web"
STATIC_PATH = "/static/portal"
FAVICON = WEB_DIR / "static" / "portal" / "favicon.ico"  # /favicon.ico; the pages link favicon.svg
LANG_COOKIE = "corrige_lang"
CSRF_HEADER = "x-csrf-token"
LANG_MAX_AGE_S = 365 * 24 * 3600

R = TypeVar("R", bound=Response)


def static_files() -> StaticFiles:
    return StaticFiles(directory=WEB_DIR / "static" / "portal")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(WEB_DIR / "templates" / "portal"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,  # a typo in a template fails the tests, not silently
    )
    env.globals["static"] = STATIC_PATH
    return env


def render(name: str, **context: Any) -> str:
    return _env().get_template(name).render(**context)


def text_of(request: Request) -> Text:
    """The texts of an API request's language: the language cookie's (the API takes no `?lang=`)."""
    return TEXTS[pick_lang(None, request.cookies.get(LANG_COOKIE))]


def rules_of(service: CorrectionService) -> RuleLookup | None:
    """The server's rule lookup (its retriever loaded once at start-up), or None when rule cards are off."""
    return getattr(service, "rules", None)


async def get_portal(request: Request) -> Portal:
    portal = getattr(request.app.state, "portal", None)
    if portal is None:
        message = "the learner portal is not available (not started, or its database could not be opened)"
        raise ApiError(503, "portal_unavailable", message, {"Retry-After": "1"})
    return portal


PortalDep = Annotated[Portal, Depends(get_portal)]


class Visit:
    """One request's learner: the session (new if the cookie was missing or bad), and the language;
    the pages it is answered with, and the fields of its form post."""

    def __init__(self, request: Request, portal: Portal) -> None:
        self.request = request
        self.portal = portal
        found = portal.codec.loads(request.cookies.get(portal.cookie_name))
        self.new = found is None
        self.session: Session = found or portal.codec.new()
        self.lang_query = request.query_params.get("lang")
        self.lang = pick_lang(self.lang_query, request.cookies.get(LANG_COOKIE))
        self.t: Text = TEXTS[self.lang]

    def page(self, name: str, status: int = 200, active: str = "", **context: Any) -> HTMLResponse:
        path = self.request.url.path
        kept = [(k, v) for k, v in self.request.query_params.multi_items() if k not in ("lang", "saved")]
        links = {lang: f"{path}?{urlencode([*kept, ('lang', lang)])}" for lang in LANGS}
        html = render(
            name, t=self.t, lang=self.lang, csrf=self.session.csrf, active=active, lang_links=links, **context
        )
        return self.finish(HTMLResponse(html, status))

    def redirect(self, url: str) -> RedirectResponse:
        return self.finish(RedirectResponse(url, 303))

    def finish(self, response: R) -> R:
        """Set the session cookie when it is new, and remember a language picked with `?lang=`."""
        portal = self.portal
        # Secure when configured so, or whenever the page came over HTTPS (uvicorn takes the scheme
        # from X-Forwarded-Proto of a trusted proxy): a cookie sent once over plain HTTP can be stolen
        secure = portal.cookie_secure or self.request.url.scheme == "https"
        if self.new:
            response.set_cookie(
                portal.cookie_name,
                portal.codec.dumps(self.session),
                max_age=portal.codec.max_age_s,
                httponly=True,
                samesite="lax",
                secure=secure,
            )
        if self.lang_query in LANGS:
            response.set_cookie(LANG_COOKIE, self.lang, max_age=LANG_MAX_AGE_S, samesite="lax", secure=secure)
        response.headers["Cache-Control"] = "no-store"  # pages carry the learner's token and answers
        return response

    def error_page(self, error: ApiError) -> HTMLResponse:
        """The learner's error page: the code's message in the page's language (`Text.error`), never
        the API's wording; the code and request id are in the markup only."""
        message = self.t.error(error.code, error.status)
        response = self.page(
            "error.html", error.status, error=error, message=message, request_id=request_id_of(self.request)
        )
        response.headers.update(error.headers)
        return response

    def form_error(self, error: ApiError) -> HTMLResponse:
        """A failed form post: an HTML page for a browser's form; a JSON body sent to a form path is an
        API-style request and gets the error model."""
        if not is_form(self.request):
            raise error
        return self.error_page(error)

    async def form_fields(self) -> dict[str, Any]:
        """The fields of a form post (or of a JSON body sent to a form path), once its CSRF token checks out."""
        request = self.request
        try:
            data = await request.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ApiError(422, "validation_error", "body: expected form fields")
        token = data.pop("csrf_token", None) or request.headers.get(CSRF_HEADER)
        found = self.portal.codec.loads(request.cookies.get(self.portal.cookie_name))
        if not csrf_ok(found, token if isinstance(token, str) else None):
            raise csrf_failed()
        return data


def is_form(request: Request) -> bool:
    return bool(getattr(request.state, "portal_form", False))


def csrf_failed() -> ApiError:
    message = "missing or wrong CSRF token: send the page's token (form field csrf_token or header X-CSRF-Token)"
    return ApiError(403, "csrf_failed", message)


async def api_session(request: Request, portal: PortalDep) -> Session:
    """The learner of an API request that changes something: a valid session and its CSRF token."""
    cookie = request.cookies.get(portal.cookie_name)
    session = portal.codec.loads(cookie)
    if session is None and cookie:  # e.g. signed by a replica with another key: say so
        raise ApiError(403, "csrf_failed", portal.codec.refusal(cookie))
    if not csrf_ok(session, request.headers.get(CSRF_HEADER)):
        raise csrf_failed()
    assert session is not None
    return session


CsrfSession = Annotated[Session, Depends(api_session)]


def parse(model: type[BaseModel], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        code, message, status = validation_message([dict(e) for e in exc.errors()])
        raise ApiError(status, code, message) from None
