"""Rate limits on every route that reaches the model or a database: per client address (one budget
over the API, the tools and the portal) and per learner session on the portal. Past a limit each
route answers 429 with Retry-After: the error model with `rate_limited` on the API routes, a page
in the learner's language on the portal's pages and form posts.

The limiters refill at 0.001 tokens/s, so a refused request stays refused however slow the
machine; nothing here times anything."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from server_support import error_of, run, served

from corrige.portal.i18n import TEXTS
from corrige.server.app import create_app, rate_limits
from corrige.server.settings import Settings

FORM = "application/x-www-form-urlencoded"

# (method, path, answered with a page); a POST sends a body the route refuses at once (no model call)
ROUTES = [
    ("GET", "/", True),
    ("POST", "/", True),
    ("GET", "/quiz", True),
    ("POST", "/quiz", True),
    ("GET", "/quiz/answers/1", True),
    ("GET", "/exam", True),
    ("POST", "/exam", True),
    ("GET", "/exam/1", True),
    ("POST", "/exam/1/answer", True),
    ("GET", "/progress", True),
    ("GET", "/portal/api/session", False),
    ("POST", "/portal/api/correct", False),
    ("POST", "/portal/api/text", False),
    ("GET", "/portal/api/quiz/question", False),
    ("POST", "/portal/api/quiz/answer", False),
    ("POST", "/portal/api/exams", False),
    ("GET", "/portal/api/exams/1", False),
    ("POST", "/portal/api/exams/1/answers", False),
    ("GET", "/portal/api/progress", False),
]
API_ROUTES = [
    ("POST", "/v1/grammar/correct", False),
    ("POST", "/correct", False),
    ("POST", "/v1/grammar/correct:batch", False),
    ("POST", "/v1/completions", False),
    ("POST", "/v1/chat/completions", False),
    ("POST", "/v1/tools/rules", False),
    ("GET", "/v1/obs/summary", False),
]


def settings(model_dir: Path, state: Path, **overrides) -> Settings:
    values = {
        "model_dir": model_dir,
        "access_log": False,
        "blas_threads": 0,
        "engine_process": False,
        "warmup": False,
        "trace_store": state / "traces.sqlite",
        "portal_db": state / "portal.sqlite",
        **overrides,
    }
    return Settings(**values)


async def call(client: httpx.AsyncClient, method: str, path: str, page: bool) -> httpx.Response:
    if method == "GET":
        return await client.get(path)
    if page:  # a browser's form post
        return await client.post(path, content=b"answer=x", headers={"content-type": FORM})
    return await client.post(path, json={})


def assert_refused(response: httpx.Response, page: bool, per: str, lang: str = "es") -> None:
    assert response.status_code == 429, response.text
    assert int(response.headers["retry-after"]) >= 1
    if page:
        assert response.headers["content-type"].startswith("text/html")
        assert f'<html lang="{lang}">' in response.text
        assert 'data-code="rate_limited"' in response.text and TEXTS[lang].error_rate_limited in response.text
    else:
        error = error_of(response)
        assert error["code"] == "rate_limited" and f"from this {per}" in error["message"]


def test_each_route_is_limited_per_client_address(model_dir, tmp_path):
    app = create_app(settings(model_dir, tmp_path, rate_limit=0.001, rate_burst=1))

    async def scenario():
        async with served(app):
            for i, (method, path, page) in enumerate(ROUTES + API_ROUTES):
                transport = httpx.ASGITransport(app=app, client=(f"10.0.0.{i + 1}", 50000))
                async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
                    first = await call(client, method, path, page)
                    assert first.status_code != 429, (path, first.text)
                    assert_refused(await call(client, method, path, page), page, "client")
            # the health probes have a bucket of their own: a client past its limit still passes its checks
            transport = httpx.ASGITransport(app=app, client=("10.0.0.1", 50000))
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
                for path in ("/healthz", "/readyz") * 10:
                    assert (await client.get(path)).status_code == 200, path

    run(scenario(), timeout=120)


# every GET that is no probe: operator endpoints, listings, docs, static files, unknown paths
OTHER_GETS = [
    "/metrics",
    "/v1/engine/stats",
    "/v1/models",
    "/v2/languages",
    "/dashboard",
    "/docs",
    "/openapi.json",
    "/static/portal/portal.css",
    "/no/such/path",
]


def test_every_other_get_is_limited_per_client_and_the_probes_by_their_own_bucket(model_dir, tmp_path):
    limits = {"rate_limit": 0.001, "rate_burst": 1, "probe_rate_limit": 0.001}
    app = create_app(settings(model_dir, tmp_path, **limits))

    async def scenario():
        async with served(app):
            for i, path in enumerate([*OTHER_GETS, "/healthz"]):
                transport = httpx.ASGITransport(app=app, client=(f"10.0.1.{i + 1}", 50000))
                async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
                    assert (await client.get(path)).status_code != 429, path
                    refused = await client.get(path)
                    if path.startswith("/v2/"):  # LanguageTool's API: its plain text, the code in a header
                        assert refused.status_code == 429 and refused.headers["x-corrige-error-code"] == "rate_limited"
                    else:
                        assert_refused(refused, False, "client")
                    if path != "/healthz":  # the probes' bucket is apart: this client has its token
                        assert (await client.get("/readyz")).status_code == 200, path

    run(scenario(), timeout=120)


@pytest.mark.parametrize(("trusted", "limited"), [("", True), ("10.9.0.0/16", True), ("127.0.0.1", False)])
def test_x_forwarded_for_is_read_only_from_the_proxies_named(model_dir, tmp_path, trusted, limited):
    """A client cannot name the address its limit counts unless it is a proxy `forwarded_allow_ips`
    names: then each forwarded address has its own bucket."""
    app = create_app(settings(model_dir, tmp_path, rate_limit=0.001, rate_burst=1, forwarded_allow_ips=trusted))

    async def scenario():
        async with served(app) as client:
            statuses = []
            for i in range(5):
                response = await client.get("/v1/models", headers={"X-Forwarded-For": f"203.0.113.{i + 1}"})
                statuses.append(response.status_code)
            assert statuses == ([200, 429, 429, 429, 429] if limited else [200] * 5)

    run(scenario(), timeout=60)


def test_forwarded_allow_ips_takes_addresses_and_networks_only():
    assert Settings(forwarded_allow_ips=" 10.0.0.1, 10.1.0.0/16 ,::1").trusted_proxies == [
        "10.0.0.1",
        "10.1.0.0/16",
        "::1",
    ]
    assert Settings(forwarded_allow_ips="*").trusted_proxies == ["*"]
    assert Settings().trusted_proxies == []
    with pytest.raises(ValueError, match="not an IP address"):
        Settings(forwarded_allow_ips="10.0.0.1,proxy.example")


def test_the_per_client_budget_is_shared_by_the_api_and_the_portal(model_dir, tmp_path):
    app = create_app(settings(model_dir, tmp_path, rate_limit=0.001, rate_burst=2))

    async def scenario():
        async with served(app) as client:
            assert (await client.post("/v1/grammar/correct", json={})).status_code == 422
            assert (await client.get("/portal/api/quiz/question")).status_code == 200
            assert_refused(await client.get("/progress"), True, "client")
            assert_refused(await client.post("/correct", json={}), False, "client")

    run(scenario(), timeout=60)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_each_portal_route_is_limited_per_session(model_dir, tmp_path, lang):
    # the client address has room for everything here: only the sessions' own buckets refuse
    limits = {"rate_limit": 1000, "portal_rate_limit": 0.001, "portal_rate_burst": 1}
    app = create_app(settings(model_dir, tmp_path, **limits))

    async def scenario():
        async with served(app):
            transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
            for method, path, page in ROUTES:
                async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as learner:
                    learner.cookies.set("corrige_lang", lang)
                    # a request without a session is not counted per session (there is none to count)
                    session = (await learner.get("/portal/api/session")).json()
                    learner.headers["X-CSRF-Token"] = session["csrf_token"]
                    first = await call(learner, method, path, page)
                    assert first.status_code != 429, (path, first.text)
                    assert_refused(await call(learner, method, path, page), page, "session", lang)
                async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as other:
                    await other.get("/portal/api/session")
                    assert (await call(other, method, path, page)).status_code != 429, path

    run(scenario(), timeout=120)


def test_rate_limit_zero_turns_every_limit_off_and_the_defaults_cover_clients_and_sessions():
    assert rate_limits(Settings(rate_limit=0)) == []
    groups = {group.name: [bucket.per for bucket in group.buckets] for group in rate_limits(Settings())}
    assert groups == {
        "probes": ["client"],
        "tools": ["client", "client"],
        "portal": ["client", "session"],
        "other": ["client"],
    }
