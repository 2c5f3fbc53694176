"""What the app asks of the portal about a request it has not routed yet: whether it is one of
the portal's (the per-session rate limit), whose session it carries, which paths take form posts,
and the learner's error page for a refusal in front of the routes."""

from __future__ import annotations

import re

from fastapi import Request
from fastapi.responses import Response
from starlette.types import Scope

from corrige.portal.state import Portal
from corrige.server.errors import ApiError
from corrige.server.routes.portal.visit import Visit

FORM_PATHS = ("/", "/quiz", "/exam", "/exam/")  # form posts the FormPostMiddleware turns into JSON
API_PREFIX = "/portal/api/"
# the pages and form posts (answered with HTML): /, /quiz, /quiz/answers/{id}, /exam, /exam/{id},
# /exam/{id}/answer, /progress
PAGE_PATH = re.compile(r"/(?:quiz(?:/answers/[^/]+)?|exam(?:/[^/]+(?:/answer)?)?|progress)?")
FORM_TYPE = b"application/x-www-form-urlencoded"


def is_page_request(scope: Scope) -> bool:
    """A request a browser shows as a page: a GET of a page, or a form post (a JSON body sent to a
    form path is an API-style request and keeps the error model)."""
    if PAGE_PATH.fullmatch(scope["path"]) is None:
        return False
    if scope["method"] in ("GET", "HEAD"):
        return True
    if scope.get("state", {}).get("portal_form"):
        return True
    content_type = next((v for k, v in scope["headers"] if k == b"content-type"), b"")
    return content_type.split(b";", 1)[0].strip().lower() == FORM_TYPE


def is_portal_path(scope: Scope) -> bool:
    """The portal's routes: its pages, form posts and JSON API (not its static files)."""
    path = scope["path"]
    return path.startswith(API_PREFIX) or PAGE_PATH.fullmatch(path) is not None


def portal_of(scope: Scope) -> Portal | None:
    app = scope.get("app")
    return getattr(getattr(app, "state", None), "portal", None)


def session_key(scope: Scope) -> str | None:
    """The learner of a request with a valid session cookie (for the per-session rate limit)."""
    portal = portal_of(scope)
    if portal is None:
        return None
    session = portal.codec.loads(Request(scope).cookies.get(portal.cookie_name))
    return None if session is None else session.learner


def page_for_error(scope: Scope, error: ApiError) -> Response | None:
    """The app's `error_page` hook: for a page or form post, the learner's error page, in the
    page's language, for any refusal (a guard's, a failed validation, an unknown id); None for
    everything else, which gets the error model."""
    portal = portal_of(scope)
    if portal is None or not is_page_request(scope):
        return None
    if error.code == "validation_error":  # a page's only validated parameters are ids in its path
        error = ApiError(404, "not_found", error.message)
    return Visit(Request(scope), portal).error_page(error)
