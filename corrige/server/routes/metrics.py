"""Prometheus `/metrics` (the text exposition format)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from corrige.server.errors import ApiError

router = APIRouter(tags=["observability"])


@router.get("/metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    """Request, stage, token and engine metrics, `corrige:`-prefixed (see docs/observability.md)."""
    collectors = getattr(request.app.state, "metrics", None)
    if collectors is None:
        raise ApiError(404, "metrics_disabled", "metrics are off on this server (CORRIGE_METRICS=false)")
    return Response(collectors.exposition(), media_type=CONTENT_TYPE_LATEST)
