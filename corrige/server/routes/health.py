"""Liveness, readiness, and the engine's counters as JSON."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Request

from corrige.server.deps import DrainDep, EngineDep, SettingsDep
from corrige.server.errors import ApiError
from corrige.server.schemas import ErrorResponse

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is alive and its event loop answers (says nothing about the model)."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"model": ErrorResponse}})
async def readyz(request: Request, drain: DrainDep, settings: SettingsDep) -> dict[str, str]:
    """Ready for traffic: the model is loaded, the engine runs, and the server is not draining."""
    retry = {"Retry-After": str(settings.retry_after_s)}
    if drain.draining:
        raise ApiError(503, "draining", "the server is shutting down", retry)
    engine = getattr(request.app.state, "engine", None)
    if getattr(request.app.state, "tutor", None) is None or engine is None:
        raise ApiError(503, "not_ready", "the model is not loaded yet", retry)
    if not engine.running:
        raise ApiError(503, "not_ready", "the engine is not running", retry)
    return {"status": "ready", "model": settings.model_name, "batching": str(settings.batching)}


@router.get("/v1/engine/stats")
async def engine_stats(engine: EngineDep, drain: DrainDep) -> dict:
    """The engine's snapshot (slots, queue, totals) and the server's in-flight count."""
    return {
        "engine": asdict(engine.snapshot()),
        "server": {"in_flight": drain.in_flight, "draining": drain.draining},
    }
