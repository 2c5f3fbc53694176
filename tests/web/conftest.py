"""The learner portal's tests: real uvicorn servers in subprocesses (tests/e2e's `ServerProcess`),
real SQLite files and a real PostgreSQL server (`postgres_support`), and Debian's chromium
driven by Playwright.

Screenshots go to `test-artifacts/` at the repository root. The browser is required: when
chromium is missing the browser tests fail (`make test` installs it), they never skip.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "server"))

from e2e_support import ServerProcess  # noqa: E402
from postgres_support import Backend, make_backend, start_postgres  # noqa: E402
from server_support import build_fixture_model  # noqa: E402

from corrige.tutor.agent import SEED_MODEL  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts"
UVICORN = ["-m", "uvicorn", "--factory", "corrige.server.app:app_from_env", "--no-access-log", "--log-level", "warning"]
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PHONE = {"width": 390, "height": 844}
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> Path:
    """The seed model when it is there (real corrections, and the model that checked the quiz bank,
    so every question's feedback shows the tutor's correction), else a random fixture model."""
    if (SEED_MODEL / "model.safetensors").is_file():
        return SEED_MODEL
    return build_fixture_model(tmp_path_factory.mktemp("web-model"))


def portal_env(model_dir: Path, state_dir: Path, **extra: str) -> dict[str, str]:
    """A server whose portal database, session key and traces live in `state_dir`."""
    return {
        "CORRIGE_MODEL_DIR": str(model_dir),
        "CORRIGE_RATE_LIMIT": "0",
        "CORRIGE_ACCESS_LOG": "false",
        "CORRIGE_PORTAL_DB": str(state_dir / "portal.sqlite"),
        "CORRIGE_TRACE_STORE": str(state_dir / "traces.sqlite"),
        "OPENBLAS_NUM_THREADS": "1",
        **extra,
    }


@pytest.fixture(scope="session")
def question_bank():
    """The checked question bank in the machine's cache, built before a server wants it: a server
    builds it on a thread as it starts (its readiness does not wait for it), and on a cold cache
    the check (the seed and the bundled tutor over every question) outlasts a test's first request."""
    from corrige.portal.quiz import QuestionBank
    from corrige.tutor.retrieval import default_cache_dir

    return QuestionBank.cached(default_cache_dir())


@pytest.fixture(scope="session")
def portal_server(model_dir, tmp_path_factory, question_bank):
    """One server for the API and browser tests (the default rule retrieval, warm-up off)."""
    state = tmp_path_factory.mktemp("portal-state")
    env = portal_env(model_dir, state, CORRIGE_WARMUP="false")
    process = ServerProcess(UVICORN, env, state / "server.log")
    process.db_path = state / "portal.sqlite"
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture(scope="session")
def postgres():
    """One real PostgreSQL server for the session (skipped, saying what to install, where there is none)."""
    yield from start_postgres()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, tmp_path) -> Backend:
    """The portal store's location on each backend: a new SQLite file, or a new PostgreSQL schema."""
    server = request.getfixturevalue("postgres") if request.param == "postgresql" else None
    return make_backend(request.param, tmp_path / "state", server)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


class Learner:
    """An httpx client with its own session cookie and CSRF token, as a browser would have."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=30.0)
        page = self.client.get("/")
        page.raise_for_status()
        self.csrf = CSRF_META.search(page.text).group(1)

    def post(self, path: str, json: dict | None = None, **kwargs) -> httpx.Response:
        headers = {"X-CSRF-Token": self.csrf, **kwargs.pop("headers", {})}
        return self.client.post(path, json=json, headers=headers, **kwargs)

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def learner(portal_server):
    person = Learner(portal_server.url)
    yield person
    person.close()


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless, one per test module."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's chromium (`make test` installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield launched
        launched.close()


def new_page(browser: Browser, url: str, **options) -> Page:
    context = browser.new_context(base_url=url, **options)
    context.set_default_timeout(15_000)
    return context.new_page()
