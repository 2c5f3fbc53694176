"""A tiny sweep end to end: one policy, clients 1 and 2, a dozen requests each, real servers."""

import json

import pytest
from typer.testing import CliRunner

from corrige.bench.report import sweep_markdown, sweep_tables
from corrige.bench.sweep import SweepConfig, run_sweep
from corrige.cli import app


@pytest.fixture(scope="module")
def sweep(seed_model_dir):
    config = SweepConfig(
        policies=("continuous",),
        clients=(1, 2),
        per_client=4,
        min_requests=12,
        max_seconds=20,
        dod_clients=0,
        model=seed_model_dir,
    )
    return run_sweep(config)


def test_every_point_is_measured_with_the_servers_counters(sweep):
    points = sweep["points"]
    assert [(p["server"], p["clients"]) for p in points] == [("continuous", 1), ("continuous", 2)]
    for p in points:
        assert p["summary"]["requests"] == 12 and p["summary"]["errors"] == {}
        assert len(p["latency_quantiles_ms"]) == 99
        assert p["server_cpu_share"] is not None and p["server_cpu_share"] > 0
        assert p["engine"]["steps"] > 0  # the engine stats moved over the point
    assert sweep["servers"]["continuous"][:4] == ["-m", "corrige.cli", "serve", "--batching"]
    assert sweep["server_log_problems"] == {}  # kept only for servers that failed requests


def test_a_failing_servers_log_problems_are_kept_before_its_log_goes():
    from corrige.bench.servers import LabServer
    from corrige.bench.sweep import _log_problems

    server = LabServer.corrige("static")  # not started: its log is written by hand here
    server.log_path.write_text(
        "INFO uvicorn.error: Started server process [1]\n"
        "ERROR corrige.engine.process: engine process 2 exited (exit code -9)\n"
        "WARNING corrige.engine.process: engine process gone: failing 3 requests in flight\n"
    )
    failed = {"server": "static", "clients": 4, "summary": {"errors": {"internal_error": 3}}}
    fine = {"server": "static", "clients": 1, "summary": {"errors": {}}}
    assert _log_problems([server], [fine]) == {}
    problems = _log_problems([server], [fine, failed])
    assert problems == {"static": server.log_path.read_text().splitlines()[1:]}
    server.stop()


def test_targets_not_covered_by_the_run_say_so(sweep):
    targets = sweep["targets"]
    assert targets["continuous at 64 clients"]["met"] is None  # 64 clients were not run
    assert targets["continuous throughput / peer at 8 clients"]["met"] is None  # no peer
    assert sweep["dod"]["servers"] == {}


def test_tables_markdown_and_plot(sweep, tmp_path):
    from corrige.bench.plots import sweep_plot

    assert len(sweep_tables(sweep)) == 5  # p50, p95, throughput, breakdown, targets
    text = sweep_markdown(sweep)
    assert "| clients | continuous |" in text and "**targets**" in text
    png = sweep_plot(sweep, tmp_path / "sweep.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_capacity_command_plans_from_the_sweep_file(sweep, tmp_path):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(sweep))
    out = tmp_path / "plan.json"
    result = CliRunner().invoke(app, ["capacity", "--sweep", str(path), "--p95-ms", "500", "--output", str(out)])
    assert result.exit_code == 0, result.output
    plan = json.loads(out.read_text())
    assert plan["mu_max"] == max(p["summary"]["req_per_s"] for p in sweep["points"])
    assert len(plan["rates"]) == 5


def test_load_command_refuses_a_remote_host():
    result = CliRunner().invoke(app, ["bench", "load", "--url", "http://192.0.2.1:8000", "--requests", "1"])
    assert result.exit_code == 2
    assert "only targets this machine" in result.output


def test_sweep_command_rejects_an_unknown_policy():
    result = CliRunner().invoke(app, ["bench", "sweep", "--policies", "continuous,magic"])
    assert result.exit_code != 0
    assert "magic" in result.output
