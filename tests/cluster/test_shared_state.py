"""What replicas share, shown with real servers: two `corrige` servers (two uvicorn processes, what
two replicas are, minus Ray) pointed at one PostgreSQL, one session key and one trace store.

* the rate limit: a learner's session bucket, spent alternately on both servers, runs out once
  for both (the buckets are rows in PostgreSQL, corrige/server/shared_limits.py);
* sessions: a cookie issued by one server is the same learner on the other; a third server,
  with another key, refuses it with an error that says why;
* traces: both servers write one trace store, and `corrige traces report` and `corrige budget`
  count the traces of both, each by its server's `service.instance.id`.

PostgreSQL as in tests/web (Debian's package, initdb + pg_ctl; skipped where it is missing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in ("web", "e2e", "server"):
    sys.path.insert(0, str(TESTS / folder))
from e2e_support import ServerProcess  # noqa: E402
from postgres_support import start_postgres  # noqa: E402
from server_support import build_fixture_model  # noqa: E402

from corrige.tutor.agent import SEED_MODEL  # noqa: E402

UVICORN = ["-m", "uvicorn", "--factory", "corrige.server.app:app_from_env", "--no-access-log", "--log-level", "warning"]
SECRET = "a-session-key-both-servers-share-0123456789"
BURST = 3  # a learner's session may make 3 portal requests, then 1 per 1,000 s


@pytest.fixture(scope="module")
def postgres():
    yield from start_postgres()


@pytest.fixture(scope="module")
def servers(postgres, tmp_path_factory):
    """Servers `a` and `b` sharing everything, and `c` with another session key."""
    state = tmp_path_factory.mktemp("shared-state")
    # the seed model: what is shared (sessions, limits, traces) is the same on any model, and it starts faster
    model = SEED_MODEL if (SEED_MODEL / "model.safetensors").is_file() else build_fixture_model(state / "model")
    base = {
        "CORRIGE_MODEL_DIR": str(model),
        "CORRIGE_WARMUP": "false",
        "CORRIGE_ACCESS_LOG": "false",
        "CORRIGE_DATABASE_URL": postgres.fresh_url("shared"),
        "CORRIGE_RATE_LIMIT": "1000",
        "CORRIGE_PORTAL_RATE_LIMIT": "0.001",
        "CORRIGE_PORTAL_RATE_BURST": str(BURST),
        "CORRIGE_TRACE_STORE": str(state / "traces.sqlite"),
        "CORRIGE_SESSION_SECRET": SECRET,
        "OPENBLAS_NUM_THREADS": "1",
    }
    other = {
        **base,
        "CORRIGE_SESSION_SECRET": "another-key-another-deployment-9876543210",
        "CORRIGE_TRACE_STORE": str(state / "c-traces.sqlite"),
        "CORRIGE_INSTANCE": "replica-c",
    }
    started = {
        "a": ServerProcess(UVICORN, {**base, "CORRIGE_INSTANCE": "replica-a"}, state / "a.log"),
        "b": ServerProcess(UVICORN, {**base, "CORRIGE_INSTANCE": "replica-b"}, state / "b.log"),
        "c": ServerProcess(UVICORN, other, state / "c.log"),
    }
    try:
        for server in started.values():
            server.start(ready_timeout=120)
        yield started, state
    finally:
        for server in started.values():
            server.stop()


def new_session(url: str) -> tuple[str, str, str]:
    """(cookie, learner, csrf token) of a new session from `url`."""
    response = httpx.get(f"{url}/portal/api/session", timeout=30)
    response.raise_for_status()
    body = response.json()
    return response.cookies["corrige_session"], body["learner"], body["csrf_token"]


def test_a_session_bucket_is_spent_once_across_two_servers(servers):
    started, _ = servers
    cookie, _, _ = new_session(started["a"].url)
    statuses = []
    for i in range(2 * BURST):
        url = started["ab"[i % 2]].url
        response = httpx.get(f"{url}/portal/api/progress", cookies={"corrige_session": cookie}, timeout=30)
        statuses.append(response.status_code)
        if response.status_code == 429:
            error = response.json()["error"]
            assert error["code"] == "rate_limited" and "from this session" in error["message"]
    # a, b, a took the 3 tokens; then each server refuses: the bucket is one, not one per server
    assert statuses == [200] * BURST + [429] * BURST, statuses


def test_a_cookie_from_one_server_is_the_same_learner_on_the_other(servers):
    started, _ = servers
    cookie, learner, csrf = new_session(started["a"].url)
    cookies = {"corrige_session": cookie}
    again = httpx.get(f"{started['b'].url}/portal/api/session", cookies=cookies, timeout=30)
    assert again.json() == {"learner": learner, "csrf_token": csrf}
    assert "corrige_session" not in again.cookies  # no new session was issued
    # a write on b with a's cookie and token gets past the session and CSRF check (then the body's validation)
    headers = {"X-CSRF-Token": csrf}
    posted = httpx.post(f"{started['b'].url}/portal/api/exams", json={}, cookies=cookies, headers=headers, timeout=30)
    assert posted.status_code != 403, posted.text


def test_a_server_with_another_key_refuses_the_cookie_and_says_why(servers):
    started, state = servers
    cookie, _, csrf = new_session(started["a"].url)
    cookies, headers = {"corrige_session": cookie}, {"X-CSRF-Token": csrf}
    refused = httpx.post(f"{started['c'].url}/portal/api/exams", json={}, cookies=cookies, headers=headers, timeout=30)
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert error["code"] == "csrf_failed"
    assert "not signed with this server's key" in error["message"] and "session_secret" in error["message"]
    # pages do not fail: the learner gets a new session there
    page = httpx.get(f"{started['c'].url}/portal/api/session", cookies=cookies, timeout=30)
    assert page.status_code == 200 and page.json()["csrf_token"] != csrf
    started["c"].stop()  # its log is complete
    assert "signed with another key" in (state / "c.log").read_text()


def test_the_trace_report_and_the_budget_read_both_servers_traces(servers):
    started, state = servers
    for name in ("a", "b", "a", "b"):
        response = httpx.post(
            f"{started[name].url}/v1/grammar/correct", json={"sentence": "She have two cats"}, timeout=60
        )
        assert response.status_code == 200, response.text
    for name in ("a", "b"):
        started[name].stop()  # each flushes its traces on the way out
    store = str(state / "traces.sqlite")
    report = json.loads(corrige("traces", "report", "--store", store, "--json"))
    instances = report["instances"]
    assert {"replica-a", "replica-b"} <= set(instances), instances
    assert instances["replica-a"] >= 2 and instances["replica-b"] >= 2
    assert report["traces"] == sum(instances.values())
    budget = json.loads(corrige("budget", "--store", store, "--json"))
    assert budget["instances"] == instances and budget["traces"] == report["traces"]
    table = corrige("traces", "report", "--store", store)
    assert "traces from 2 servers" in table


def corrige(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "corrige.cli", *argv], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
