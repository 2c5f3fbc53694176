"""The observability dashboard: `/dashboard` (one HTML page, its script polls) and
`GET /v1/obs/summary`, the numbers of `corrige budget` and `corrige traces report` over the
last N traces, the orphan count of `corrige traces audit`, and the engine's queue depth and
batch size over time.

The page is plain HTML, CSS and a small script drawing inline SVG; its static files are served
from /static/dashboard (see `STATIC_DIR`), nothing comes from a CDN.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from corrige.obs.budget import Budget, BudgetError, budget_profiles, budget_report, load_budget
from corrige.obs.report import TraceTable, percentile_report
from corrige.obs.store import TraceStore, group_traces
from corrige.server.deps import SettingsDep
from corrige.server.errors import ApiError
from corrige.server.schemas import ErrorResponse, limits

router = APIRouter(tags=["observability"])
logger = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
STATIC_DIR = WEB_DIR / "static" / "dashboard"
STATIC_URL = "/static/dashboard"
DEFAULT_LAST = 1000
MAX_LAST = 5000  # a summary reads and groups every span of its traces on each poll: 50,000 took 1.4 s
ORPHAN_EXAMPLES = 5
PROFILES = limits(enum="budget_profiles")  # the OpenAPI document lists the budget file's profiles


@cache
def _templates() -> Jinja2Templates:
    return Jinja2Templates(directory=WEB_DIR / "templates")


async def trace_store_of(request: Request) -> TraceStore | None:
    """The server's trace store; when it has none (tracing off, or the tracing set-up did not put
    one on `app.state`), the file at `settings.trace_store` if it exists, opened once for reading.
    An `async def` so it runs on the event loop: no two requests can open the file at once."""
    state = request.app.state
    store = getattr(state, "trace_store", None)
    if store is not None:
        return store
    store = getattr(state, "dashboard_trace_store", None)
    if store is None:
        settings = state.settings
        if not Path(settings.trace_store).exists():
            return None
        store = state.dashboard_trace_store = TraceStore(settings.trace_store, settings.trace_store_max_spans)
    return store


def _budget(settings, profile: str | None) -> Budget:
    try:
        if profile and profile not in budget_profiles(settings.budget_file):  # empty: the file's default
            known = ", ".join(budget_profiles(settings.budget_file))
            raise ApiError(422, "unknown_profile", f"no budget profile {profile!r}; known: {known}")
        return load_budget(settings.budget_file, profile or None, settings.served_model)
    except BudgetError as exc:
        logger.error("the latency budget file cannot be read: %s", exc)  # its path stays in the log
        raise ApiError(500, "bad_budget", "the latency budget file cannot be read (see the server log)") from exc


def _profiles(settings) -> list[str]:
    try:
        return budget_profiles(settings.budget_file)
    except BudgetError:
        return []


def summarize(store: TraceStore | None, budget: Budget, last: int) -> dict:
    """Budget, percentile report and orphans from one read of the store (runs on a worker thread)."""
    spans = store.spans(last) if store is not None else []
    table = TraceTable.from_traces(group_traces(spans))
    # the orphans of the whole store, as `corrige traces audit`: counted in SQL, a few listed
    count = store.count_orphans() if store is not None else 0
    orphans = store.orphans(limit=ORPHAN_EXAMPLES) if count else []
    return {
        "budget": budget_report(table, budget).to_dict(),
        "report": percentile_report(table).to_dict(),
        "orphans": {
            "count": count,
            "scope": "the whole store, as `corrige traces audit`",
            "examples": [
                {"trace_id": s.trace_id, "span_id": s.span_id, "name": s.name, "parent_id": s.parent_id}
                for s in orphans
            ],
        },
    }


@router.get("/v1/obs/summary", responses={422: {"model": ErrorResponse}, 500: {"model": ErrorResponse}})
async def obs_summary(
    request: Request,
    settings: SettingsDep,
    last: Annotated[int, Query(ge=1, le=MAX_LAST, description="The N most recent traces.")] = DEFAULT_LAST,
    profile: Annotated[
        str | None,
        Query(
            description="Budget profile (absent or empty: the one the budget file gives the served model).",
            json_schema_extra=PROFILES,
        ),
    ] = None,
    window_s: Annotated[float, Query(gt=0, le=600, description="Seconds of queue/batch history.")] = 60.0,
) -> dict:
    """What `corrige budget` and `corrige traces report` print for the last N traces, the orphan
    count, and the engine's queue depth and batch size over time (for the dashboard)."""
    budget = _budget(settings, profile)
    store = await trace_store_of(request)
    summary = await asyncio.to_thread(summarize, store, budget, last)
    history = getattr(request.app.state, "step_history", None)
    engine = getattr(request.app.state, "engine", None)
    return {
        "generated_at": round(time.time(), 3),
        "last": last,
        "store": store is not None,  # whether there is one; never its path
        "profiles": _profiles(settings),
        **summary,
        "steps": None if history is None else history.snapshot(window_s),
        "engine": None if engine is None else asdict(engine.snapshot()),
    }


@router.get("/dashboard", response_class=HTMLResponse, include_in_schema=False)
async def dashboard(
    request: Request,
    settings: SettingsDep,
    last: Annotated[int, Query(ge=1, le=MAX_LAST)] = DEFAULT_LAST,
    profile: str | None = None,
) -> HTMLResponse:
    """Budget vs actual, end-to-end vs summed p95s, burn rates, queue depth and batch size, orphans."""
    chosen = _budget(settings, profile)  # the served model's profile when none is asked for
    return _templates().TemplateResponse(
        request,
        "dashboard/index.html",
        {
            "static": STATIC_URL,
            "last": last,
            "profile": chosen.profile if profile else "",
            "default_profile": _budget(settings, None).profile,
            "profiles": _profiles(settings),
            "poll_ms": 1500,
            "model": settings.model_name,
            "served_model": settings.served_model,
        },
    )
