"""The application factory. `create_app(settings)` only assembles: routers, middleware,
exception handlers and the lifespan; nothing is built at import time.

    uvicorn --factory corrige.server.app:app_from_env     # settings from CORRIGE_* variables
    corrige serve                                        # the same, plus options and SIGTERM draining

Middleware, outermost first: request id (and the last-resort 500) → drain admission and
in-flight count → rate limit → portal form posts as JSON → body guard → FastAPI (validation → handler).
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from corrige import __version__
from corrige.portal.forms import FormPostMiddleware
from corrige.server.context import RequestContextMiddleware
from corrige.server.errors import install_error_handlers
from corrige.server.guards import (
    BodyGuardMiddleware,
    DrainMiddleware,
    DrainState,
    RateLimitMiddleware,
    TokenBucketLimiter,
)
from corrige.server.lifecycle import lifespan
from corrige.server.routes import dashboard, grammar, health, metrics, openai, portal, tools
from corrige.server.settings import Settings

API_PREFIXES = ("/v1/", "/correct")
NOT_RATE_LIMITED = ("/v1/engine/stats", "/v1/models")
ALWAYS_OPEN = ("/healthz", "/readyz", "/v1/engine/stats", "/metrics")  # answered while draining


def create_app(settings: Settings) -> FastAPI:
    app = FastAPI(
        title="corrige",
        version=__version__,
        description="A grammar tutor for Spanish speakers learning English, served by a tiny GPT on a CPU.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.drain = DrainState()
    app.state.tutor = app.state.engine = app.state.service = None
    app.state.tracing = app.state.trace_store = app.state.metrics = None  # set by the lifespan

    app.include_router(grammar.router)
    app.include_router(openai.router)
    app.include_router(health.router)
    app.include_router(dashboard.router)
    app.mount(dashboard.STATIC_URL, StaticFiles(directory=dashboard.STATIC_DIR), name="dashboard-static")
    app.include_router(metrics.router)
    app.include_router(tools.router)
    app.include_router(portal.router)
    app.mount(portal.STATIC_PATH, portal.static_files(), name="portal-static")
    install_error_handlers(app)

    # add_middleware wraps: the last one added is the outermost
    app.add_middleware(BodyGuardMiddleware, max_bytes=settings.max_body_bytes)
    # the learner portal's HTML form posts become JSON just outside the body guard (pages work without JS)
    app.add_middleware(FormPostMiddleware, paths=portal.FORM_PATHS, max_bytes=settings.max_body_bytes)
    if settings.rate_limit > 0:
        limiter = TokenBucketLimiter(settings.rate_limit, settings.burst)
        app.add_middleware(RateLimitMiddleware, limiter=limiter, prefixes=API_PREFIXES, exempt=NOT_RATE_LIMITED)
    app.add_middleware(
        DrainMiddleware, state=app.state.drain, retry_after_s=settings.retry_after_s, always_open=ALWAYS_OPEN
    )
    app.add_middleware(RequestContextMiddleware)
    return app


def app_from_env() -> FastAPI:
    """For `uvicorn --factory`: settings from the environment."""
    return create_app(Settings())
