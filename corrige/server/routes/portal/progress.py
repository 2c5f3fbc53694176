"""The learner's progress: the page (`GET /progress`) and its JSON (`GET /portal/api/progress`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from corrige.portal.i18n import Text
from corrige.portal.state import Portal
from corrige.portal.views import progress_view
from corrige.server.routes.portal.visit import PortalDep, Visit

router = APIRouter()


async def progress(portal: Portal, learner: str, t: Text) -> dict:
    def read():
        store = portal.store
        return store.progress(learner), store.history(learner), store.exams(learner)

    categories, history, exams = await portal.db(read)
    return progress_view(learner, categories, history, exams, t)


@router.get("/progress", response_class=HTMLResponse, include_in_schema=False)
async def progress_page(request: Request, portal: PortalDep) -> Response:
    visit = Visit(request, portal)
    view = await progress(portal, visit.session.learner, visit.t)
    return visit.page("progress.html", active="progress", progress=view)


@router.get("/portal/api/progress")
async def api_progress(request: Request, portal: PortalDep) -> dict:
    """The learner's results by error category, latest answers and exams."""
    visit = Visit(request, portal)
    return await progress(portal, visit.session.learner, visit.t)
