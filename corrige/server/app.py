"""The application factory. `create_app(settings)` only assembles: routers, middleware,
exception handlers and the lifespan; nothing is built at import time.

    uvicorn --factory corrige.server.app:app_from_env     # settings from CORRIGE_* variables
    corrige serve                                        # the same, plus options and SIGTERM draining

Middleware, outermost first: proxy headers (only when `forwarded_allow_ips` names a proxy) →
security headers → request id (and the last-resort 500) → drain admission and in-flight count →
the operator token (when set) → rate limits (probes, per client, per learner session, tools) →
portal form posts as JSON → body guard → FastAPI (validation → handler). Refusals of the learner
portal's pages and form posts are pages in the learner's language (`app.state.error_page`), those
of LanguageTool's API (/v2/) its plain text, the rest the error model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from corrige import __version__
from corrige.server import languagetool, openapi
from corrige.server.admission import Admission
from corrige.server.context import RequestContextMiddleware
from corrige.server.errors import install_error_handlers
from corrige.server.forms import FormPostMiddleware
from corrige.server.guards import (
    BodyGuardMiddleware,
    Bucket,
    DrainMiddleware,
    DrainState,
    RateLimitMiddleware,
    RouteLimit,
    client_key,
    prefix_matcher,
)
from corrige.server.headers import SecurityHeadersMiddleware
from corrige.server.lifecycle import lifespan
from corrige.server.operator import OperatorAuthMiddleware
from corrige.server.routes import dashboard, docs, grammar, health, metrics, openai, portal, tools
from corrige.server.routes import languagetool as languagetool_routes
from corrige.server.settings import Settings
from corrige.server.shared_limits import LimiterFactory, Limiters, limiter_factory

TOOL_PREFIX = "/v1/tools/"
PROBES = ("/healthz", "/readyz")  # rate-limited apart, with a generous bucket of their own
ALWAYS_OPEN = ("/healthz", "/readyz", "/v1/engine/stats", "/metrics")  # answered while draining
OPERATOR_PATHS = ("/metrics", "/dashboard", "/v1/engine/stats", "/v1/obs/summary")  # behind admin_token when set


def create_app(settings: Settings) -> FastAPI:
    app = FastAPI(
        title="corrige",
        version=__version__,
        description="A grammar tutor for Spanish speakers learning English, served by a tiny GPT on a CPU.",
        lifespan=serve_lifespan,
        docs_url=None,  # routes/docs.py serves /docs without FastAPI's inline script
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.limiters = limiter_factory(settings)  # their database connection (if any) opens on first use
    # the work budget (in the limiters' store) and the engine's turns, handed to the service once it is built
    app.state.admission = Admission.from_settings(settings, app.state.limiters)
    app.state.drain = DrainState()
    app.state.tutor = app.state.engine = app.state.service = None
    app.state.tracing = app.state.trace_store = app.state.metrics = None  # set by the lifespan

    app.include_router(grammar.router)
    app.include_router(openai.router)
    app.include_router(languagetool_routes.router)
    app.include_router(health.router)
    app.include_router(dashboard.router)
    app.mount(dashboard.STATIC_URL, StaticFiles(directory=dashboard.STATIC_DIR), name="dashboard-static")
    app.include_router(metrics.router)
    app.include_router(tools.router)
    app.include_router(docs.router)
    app.mount(docs.STATIC_URL, docs.static_files(), name="docs-static")
    app.include_router(portal.router)
    app.mount(portal.STATIC_PATH, portal.static_files(), name="portal-static")
    install_error_handlers(app)
    # refusals of the portal's pages are pages too, and LanguageTool's API (/v2/) answers in its plain text
    app.state.error_page = languagetool.chain_error_pages(languagetool.error_text, portal.page_for_error)
    openapi.install(app)  # error responses from the table of codes, request constraints from the settings

    # add_middleware wraps: the last one added is the outermost
    body_limits = {"max_bytes": settings.max_body_bytes, "timeout_s": settings.body_timeout_s}
    app.add_middleware(BodyGuardMiddleware, form_paths=languagetool.FORM_PATHS, **body_limits)
    # the learner portal's HTML form posts become JSON just outside the body guard (pages work without JS)
    app.add_middleware(FormPostMiddleware, paths=portal.FORM_PATHS, **body_limits)
    if limits := rate_limits(settings, app.state.limiters):
        app.add_middleware(RateLimitMiddleware, limits=limits)
    if settings.admin_token is not None:
        token = settings.admin_token.get_secret_value()
        secure = settings.session_cookie_secure
        app.add_middleware(OperatorAuthMiddleware, token=token, paths=OPERATOR_PATHS, secure_cookie=secure)
    app.add_middleware(
        DrainMiddleware, state=app.state.drain, retry_after_s=settings.retry_after_s, always_open=ALWAYS_OPEN
    )
    app.add_middleware(RequestContextMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)  # the last-resort 500 gets them too
    if proxies := settings.trusted_proxies:  # outermost: the client's address for everything inside
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=proxies)
    return app


@asynccontextmanager
async def serve_lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The server's lifespan (`corrige.server.lifecycle`), its service given the app's admission
    (the work budget in the app's limiters), then the shared rate limiter's connection closed:
    after the drain, since requests in flight still take tokens."""
    limiters: Limiters = app.state.limiters
    try:
        async with lifespan(app):
            if app.state.service is not None:
                app.state.service.pipeline.admission = app.state.admission
            yield
    finally:
        await limiters.close()


def rate_limits(settings: Settings, make: LimiterFactory | None = None) -> list[RouteLimit]:
    """The rate-limited route groups, first match wins: the health probes (a generous bucket of
    their own, so that a busy client never fails its load balancer's checks), the tools (a process
    per call), the learner portal (every route of it reads the database or calls the model), and
    every other path (the API, the operator endpoints, the docs, static files, unknown paths). One
    per-client bucket spans all but the probes; the tools and the portal's sessions have their own
    too. `rate_limit = 0` turns them all off (load tests). The buckets are this process's, or shared
    by every replica through PostgreSQL (`corrige.server.shared_limits`)."""
    if settings.rate_limit <= 0:
        return []
    make = make or limiter_factory(settings)
    groups = []
    if settings.probe_rate_limit > 0:
        burst = max(1, round(2 * settings.probe_rate_limit))
        probes = (Bucket(make("probes", settings.probe_rate_limit, burst), client_key, "client"),)
        groups.append(RouteLimit("probes", lambda scope: scope["path"] in PROBES, probes))
    client = (Bucket(make("client", settings.rate_limit, settings.burst), client_key, "client"),)
    tools = sessions = client
    if settings.tool_rate_limit > 0:
        burst = max(1, round(2 * settings.tool_rate_limit))
        tools = (Bucket(make("tools", settings.tool_rate_limit, burst), client_key, "client"), *client)
    if settings.portal_rate_limit > 0:
        limiter = make("session", settings.portal_rate_limit, settings.portal_burst)
        sessions = (*client, Bucket(limiter, portal.session_key, "session"))
    return [
        *groups,
        RouteLimit("tools", prefix_matcher([TOOL_PREFIX]), tools),
        RouteLimit("portal", portal.is_portal_path, sessions),
        RouteLimit("other", lambda scope: scope["path"] not in PROBES, client),
    ]


def app_from_env() -> FastAPI:
    """For `uvicorn --factory`: settings from the environment."""
    return create_app(Settings())
