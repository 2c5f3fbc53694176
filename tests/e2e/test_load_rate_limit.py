"""`corrige bench load` against a real `corrige serve` whose rate limit refuses most of the load."""

from __future__ import annotations

import json
import subprocess
import sys

from e2e_support import ServerProcess

SERVE = ["-m", "corrige.cli", "serve"]
REQUESTS = 20


def test_load_that_hits_the_rate_limit_says_so_and_how_to_lift_it(model_dir, tmp_path):
    # 2 requests/s per client, a bucket of 2: 2 clients sending back to back run into it at once
    env = {
        "CORRIGE_MODEL_DIR": str(model_dir),
        "CORRIGE_RATE_LIMIT": "2",
        "CORRIGE_RATE_BURST": "2",
        "CORRIGE_TRACING": "false",
        "CORRIGE_PORTAL_DB": str(tmp_path / "portal.sqlite"),
    }
    server = ServerProcess(SERVE, env, tmp_path / "server.log").start()
    output = tmp_path / "load.json"
    try:
        run = subprocess.run(
            [sys.executable, "-m", "corrige.cli", "bench", "load", "--url", server.url, "--clients", "2"]
            + ["--requests", str(REQUESTS), "--warmup", "0", "--model", str(model_dir), "--output", str(output)],
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        server.stop()
    summary = json.loads(output.read_text())["summary"]
    limited = summary["rate_limited"]
    assert 0 < limited < REQUESTS, summary  # the bucket let the first ones through
    assert summary["errors"] == {"rate_limited": limited}
    last = run.stdout.strip().splitlines()[-1]  # said at the end, with the count and the way out
    assert last.startswith(f"rate limited: {limited} of {REQUESTS} requests were refused with 429 rate_limited"), last
    assert "`corrige serve --rate-limit 0`" in last and "CORRIGE_RATE_LIMIT=0" in last
    assert run.returncode == 0, run.stderr  # some requests succeeded
    # building the sentence mix says nothing about the splits it did not ask for (neither does the server)
    assert "examples" not in run.stdout + run.stderr
    assert "0 examples" not in server.log()


def test_load_against_an_unlimited_server_has_no_rate_limit_line(server, model_dir, tmp_path):
    """The e2e `server` fixture runs with CORRIGE_RATE_LIMIT=0."""
    run = subprocess.run(
        [sys.executable, "-m", "corrige.cli", "bench", "load", "--url", server.url, "--clients", "2"]
        + ["--requests", str(REQUESTS), "--warmup", "0", "--model", str(model_dir)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    assert f"{REQUESTS}/{REQUESTS} ok" in run.stdout
    assert "rate limited" not in run.stdout
