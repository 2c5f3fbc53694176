"""schemathesis, every check, over the whole OpenAPI document of a real uvicorn server: as an
anonymous client, and the portal's operations as a learner with a portal session (cookie and
CSRF token). A bounded run on the seed model: five test cases per operation and phase,
deterministic generation (the same requests every time); `corrige bench fuzz` runs it for
minutes with a seed (docs/BENCHMARKS.md).

The server runs with its rate limits off (`CORRIGE_RATE_LIMIT=0`, `corrige.bench.fuzz.server_env`):
schemathesis is one client sending some 1,700 requests a minute, and which of them a 429 would
answer would depend on timing. A 429 is documented where the limits apply; that is checked
without a server (tests/server/test_openapi_spec.py)."""

from __future__ import annotations

import httpx
import pytest

from corrige.bench.fuzz import FuzzConfig, fuzz_run, server_env, session_headers

pytestmark = pytest.mark.slow

BOUNDED = FuzzConfig(max_examples=5)  # deterministic generation (no seed)
# the learner's session matters to the portal's operations only (the others ignore the cookie):
# the second run fuzzes those, so that the whole document is not fuzzed twice
PORTAL = FuzzConfig(max_examples=5, extra_args=["--include-path-regex", "^/portal/"])


def test_schemathesis_finds_no_server_error_and_no_departure_from_the_document(make_server, tmp_path):
    server = make_server("uvicorn", **server_env(tmp_path))
    paths = httpx.get(f"{server.url}/openapi.json").json()["paths"]
    every = sum(len(ops) for ops in paths.values())
    portal = sum(len(ops) for path, ops in paths.items() if path.startswith("/portal/"))
    assert 0 < portal < every
    anonymous = fuzz_run(server.url, "anonymous", BOUNDED)
    session = fuzz_run(server.url, "session", PORTAL, session_headers(server.url))
    for run, operations in ((anonymous, every), (session, portal)):
        report = f"{run['label']}: {run['command']}\n{run['output_tail']}"
        assert run["complete"] and run["errors"] == [], report
        assert run["operations_tested"] == operations, report
        assert run["test_cases"] > 20 * operations, report  # it really sent requests
        assert run["server_errors"] == 0, report
        assert run["failures"] == {}, report  # undocumented statuses, schema violations, refused valid input, ...
        assert run["exit_code"] == 0, report
    # with the session, the portal's POSTs got past the CSRF check (without, they are all 403)
    assert "missing_auth" in anonymous["warnings"] and "missing_auth" not in session["warnings"]
    assert "Traceback" not in server.log()
