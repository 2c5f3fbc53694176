"""Liveness, readiness, and the engine's counters as JSON."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Request

from corrige.server.deps import DrainDep, EngineDep, SettingsDep
from corrige.server.errors import ApiError
from corrige.server.schemas import ErrorResponse

router = APIRouter(tags=["health"])


@router.get("/healthz", responses={503: {"model": ErrorResponse}})
async def healthz(request: Request) -> dict[str, str]:
    """Alive: the event loop answers and the engine serves or is coming back (a restarting engine
    is alive; one given up for good is not: 503 `engine_failed`, and the server is exiting)."""
    engine = getattr(request.app.state, "engine", None)
    if engine is not None and engine.failed:
        raise ApiError(503, "engine_failed", "the engine died too often and was given up; the server is exiting")
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
    if engine.restarting:
        raise ApiError(503, "engine_restarting", "the engine process died; a new one is starting", retry)
    if not engine.running:
        raise ApiError(503, "not_ready", "the engine is not running", retry)
    return {"status": "ready", "model": settings.model_name, "batching": str(settings.batching)}


@router.get("/v1/engine/stats")
async def engine_stats(engine: EngineDep, drain: DrainDep) -> dict:
    """The engine's snapshot (slots, queue, totals), the server's in-flight count, and the engine
    process's id, its standby's (while one is ready) and its restarts (none for an engine thread)."""
    return {
        "engine": asdict(engine.snapshot()),
        "server": {
            "in_flight": drain.in_flight,
            "draining": drain.draining,
            "engine_pid": getattr(engine, "pid", None),
            "engine_standby_pid": getattr(engine, "standby_pid", None),
            "engine_restarts": getattr(engine, "restarts", 0),
        },
    }
