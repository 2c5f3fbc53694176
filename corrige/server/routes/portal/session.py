"""The session API (`GET /portal/api/session`): the learner's id and CSRF token, for the pages' script."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from corrige.server.routes.portal.visit import PortalDep, Visit

router = APIRouter()


@router.get("/portal/api/session")
async def api_get_session(request: Request, portal: PortalDep) -> Response:
    """The learner's id and CSRF token (a session cookie is set when there was none)."""
    visit = Visit(request, portal)
    return visit.finish(JSONResponse({"learner": visit.session.learner, "csrf_token": visit.session.csrf}))
