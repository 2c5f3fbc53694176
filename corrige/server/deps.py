"""FastAPI dependencies: the objects the lifespan put on `app.state`, as types.

They are `async def` so FastAPI calls them inline: a plain `def` dependency would run on a
worker thread, a thread hop per dependency per request. Per-request values (the request id,
the arrival time) are read from `request.state` by plain helpers: every injected dependency
costs tens of microseconds per request, and the grammar route's budget is about a millisecond."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from corrige.engine import Engine
from corrige.server.context import RequestMeta
from corrige.server.errors import ApiError
from corrige.server.guards import DrainState
from corrige.server.service import CorrectionService
from corrige.server.settings import Settings


def _loaded(request: Request, name: str):
    value = getattr(request.app.state, name, None)
    if value is None:
        raise ApiError(503, "not_ready", "the model is not loaded yet; retry shortly", {"Retry-After": "1"})
    return value


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_engine(request: Request) -> Engine:
    return _loaded(request, "engine")


async def get_service(request: Request) -> CorrectionService:
    """The correction service; a POST (one that may send sentences to the model) is refused with 429
    `work_limited` first while its client's work budget is spent (`corrige.server.admission`), before
    its text is split or tokenized."""
    service: CorrectionService = _loaded(request, "service")
    if request.method == "POST":
        await service.pipeline.admission.check(meta_of(request).client)
    return service


async def get_drain(request: Request) -> DrainState:
    return request.app.state.drain


def request_id_of(request: Request) -> str:
    """The id `RequestContextMiddleware` gave this request (the client's X-Request-ID when valid)."""
    return request.state.request_id


def meta_of(request: Request) -> RequestMeta:
    """What the request's layers share: id, arrival time, trace (`RequestContextMiddleware`)."""
    return request.state.meta


SettingsDep = Annotated[Settings, Depends(get_settings)]
EngineDep = Annotated[Engine, Depends(get_engine)]
ServiceDep = Annotated[CorrectionService, Depends(get_service)]
DrainDep = Annotated[DrainState, Depends(get_drain)]
