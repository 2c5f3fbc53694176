"""`corrige bench fuzz`: schemathesis over the server's whole OpenAPI document, with every check.

Two runs against one real server: as an anonymous client, and as a learner with a portal
session (its cookie and CSRF token, from `GET /portal/api/session`, sent with every request), so
the portal's POST routes get past the CSRF check. Each run is the `st` command line in a
subprocess (schemathesis' own reports, its exit status), with the checks of
`corrige.bench.fuzz_checks` loaded: `positive_data_acceptance` is replaced by a variant that
accepts the refusals the document itself declares no schema can state
(`x-corrige-unstated-codes`); every other check is schemathesis' own.

`fuzz_run` gives one run's figures from schemathesis' JSON report: test cases generated, failures
by kind (server errors, undocumented statuses, schema violations, refused valid requests, ...),
and the errors of the run itself. A bounded run (`max_examples`, deterministic generation) is
what the test suite does; a longer one (`max_time_s`, a seed) is `corrige bench fuzz`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOOKS = "corrige.bench.fuzz_checks"
REPLACED_CHECK = "positive_data_acceptance"  # by fuzz_checks.positive_data_acceptance_stated
# what counts as refusing a request its schema does not allow: schemathesis' list, and 413, the size
# refusals the document states (a `text` over its `maxLength` is 413 `text_too_long`, a body over the
# limit 413 `body_too_large`); schemathesis' own list leaves 413 out
REJECTION_STATUSES = ("400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx")
LABELS = ("anonymous", "session")


@dataclass
class FuzzConfig:
    max_examples: int | None = 10  # test cases per operation and phase (None: schemathesis' default)
    max_time_s: float | None = None  # a time budget per run: fuzzing and stateful phases repeat until it is spent
    seed: int | None = None  # None with max_time_s unset: deterministic generation
    phases: tuple[str, ...] = ("examples", "coverage", "fuzzing", "stateful")
    workers: int = 1  # one request at a time: the server's concurrency limits are not what is fuzzed
    request_timeout_s: float = 30.0
    extra_args: list[str] = field(default_factory=list)


def session_headers(url: str) -> dict[str, str]:
    """A learner's portal session: the cookie and the CSRF token every POST of the portal needs."""
    import httpx

    response = httpx.get(f"{url}/portal/api/session", timeout=10.0)
    response.raise_for_status()
    cookie = "; ".join(f"{name}={value}" for name, value in response.cookies.items())
    return {"Cookie": cookie, "X-CSRF-Token": response.json()["csrf_token"]}


def st_config(path: Path) -> Path:
    """schemathesis.toml for a run: the statuses that count as a rejection of invalid data."""
    statuses = ", ".join(f'"{s}"' for s in REJECTION_STATUSES)
    path.write_text(f"[checks.negative_data_rejection]\nexpected-statuses = [{statuses}]\n")
    return path


def st_command(url: str, config: FuzzConfig, headers: dict[str, str], report: Path, toml: Path) -> list[str]:
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(toml), "run", f"{url}/openapi.json"]
    command += ["--checks", "all", "--exclude-checks", REPLACED_CHECK, "--continue-on-failure"]
    command += ["--phases", ",".join(config.phases), "--workers", str(config.workers), "--no-color"]
    command += ["--request-timeout", str(config.request_timeout_s)]
    command += ["--report", "json", "--report-json-path", str(report)]
    if config.max_examples is not None:
        command += ["--max-examples", str(config.max_examples)]
    if config.max_time_s is not None:
        command += ["--max-time", str(max(1, round(config.max_time_s)))]
    if config.seed is not None:
        command += ["--seed", str(config.seed), "--generation-database", "none"]
    else:  # implies no example database
        command += ["--generation-deterministic"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    return command + list(config.extra_args)


def fuzz_run(url: str, label: str, config: FuzzConfig, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One schemathesis run against `url`: its figures, and the tail of its output (failures with curl lines)."""
    with tempfile.TemporaryDirectory(prefix="corrige-fuzz-") as tmp:
        report_path = Path(tmp) / "report.json"
        toml = st_config(Path(tmp) / "schemathesis.toml")
        command = st_command(url, config, headers or {}, report_path, toml)
        env = {**os.environ, "SCHEMATHESIS_HOOKS": HOOKS, "PYTHONIOENCODING": "utf-8"}
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp, check=False)
        wall_s = time.perf_counter() - started
        try:
            report = json.loads(report_path.read_text())
        except (OSError, ValueError):
            report = {}
    shown = [("<redacted>" if i and command[i - 1] == "-H" else arg) for i, arg in enumerate(command)]
    return {"label": label, "exit_code": done.returncode, "wall_s": round(wall_s, 1), **figures(report),
            "command": " ".join(shown[1:]), "output_tail": done.stdout[-12000:] + done.stderr[-3000:]}  # fmt: skip


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """What a run found, from schemathesis' JSON report."""
    failures = report.get("failures", [])
    by_code = {f"{f.get('code')} {f.get('title')}": f.get("count", 0) for f in failures}
    cases = report.get("test_cases", {})
    return {
        "complete": bool(report.get("complete")),
        "operations_tested": report.get("operations", {}).get("tested", 0),
        "test_cases": cases.get("generated", 0),
        "failing_cases": cases.get("with_failures", 0),
        "unique_failures": sum(f.get("count", 0) for f in failures),
        "server_errors": sum(f.get("count", 0) for f in failures if f.get("type") == "ServerError"),
        "failures": by_code,
        "failing_operations": sorted({op for f in failures for op in f.get("operations", [])}),
        "errors": [str(e)[:500] for e in report.get("errors", [])],
        "phases": {name: phase.get("status") for name, phase in report.get("phases", {}).items()},
        "warnings": {kind: ops for kind, ops in report.get("warnings", {}).items() if ops},
        "schemathesis_version": report.get("schemathesis_version"),
    }


def fuzz_server(url: str, config: FuzzConfig) -> dict[str, Any]:
    """Both runs against one server: anonymous, then with a learner's portal session."""
    runs = [fuzz_run(url, "anonymous", config), fuzz_run(url, "session", config, session_headers(url))]
    return {
        "runs": runs,
        "server_errors": sum(r["server_errors"] for r in runs),
        "unique_failures": sum(r["unique_failures"] for r in runs),
        "test_cases": sum(r["test_cases"] for r in runs),
        "clean": all(r["exit_code"] == 0 and r["complete"] and not r["errors"] for r in runs),
    }


def server_env(state_dir: Path) -> dict[str, str]:
    """The fuzzed server: rate limits off (one client sends thousands of requests; a 429 is
    documented, but would leave most of the run unanswered), its files in `state_dir`."""
    return {
        "CORRIGE_RATE_LIMIT": "0",
        "CORRIGE_ACCESS_LOG": "false",
        "CORRIGE_TRACE_STORE": str(state_dir / "traces.sqlite"),
        "CORRIGE_PORTAL_DB": str(state_dir / "portal.sqlite"),
        "OMP_WAIT_POLICY": "PASSIVE",
    }


def run_fuzz_bench(config: FuzzConfig, model: Path | None = None, progress=lambda what: None) -> dict[str, Any]:
    """`corrige serve` (rate limits off) on a free port, fuzzed; its log's warnings and errors kept."""
    from corrige.bench.servers import LabServer

    server = LabServer.corrige("continuous", model=model)
    server.env.update(server_env(server.state_dir))
    try:
        progress("starting the server…")
        server.start().wait_ready()
        progress(f"fuzzing {server.url} (anonymous, then with a portal session)…")
        result = fuzz_server(server.url, config)
        result["server_log_problems"] = server.log_problems()
    finally:
        server.stop()
    settings = {k: v for k, v in vars(config).items() if k != "extra_args"}
    return {"config": settings, **result}
