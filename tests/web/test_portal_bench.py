"""`corrige bench portal`, tiny: one real server, every path measured, the JSON report written."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from corrige.bench.portal import PATHS, run_portal_bench
from corrige.bench.servers import ServedBench


def test_bench_portal_measures_each_path_and_writes_json(model_dir, tmp_path):
    report = tmp_path / "bench-portal.json"
    with open(tmp_path / "console.txt", "w") as out:
        settings = ServedBench(4, 2, model=model_dir, json_output=report)
        result = run_portal_bench(Console(file=out, width=120), settings)
    assert [s["n"] for s in result["series"]] == [4] * len(PATHS)
    figures = result["figures"]
    difference = figures["portal_p50_ms"] - figures["grammar_p50_ms"]
    assert figures["overhead_p50_ms"] == pytest.approx(difference, abs=0.002)  # each figure is rounded
    assert {"server_portal_model_p50_ms", "server_portal_audit_p50_ms"} <= set(figures)
    target = result["target"]
    assert target["name"] == "overhead_p50_ms" and target["limit_ms"] == 3.0
    assert target["met"] is (figures["overhead_p50_ms"] <= target["limit_ms"])  # the verdict is the figure's
    assert result["audit_rows_written"] == 6  # every portal submit, warm-up included, is in the audit log
    assert json.loads(report.read_text())["figures"] == figures
    assert "portal overhead at p50" in (tmp_path / "console.txt").read_text()


def test_bench_portal_puts_postgresql_beside_sqlite_and_leaves_the_database_as_it_was(
    model_dir, tmp_path, postgres, monkeypatch
):
    import psycopg

    # the servers inherit the environment: no rule cards and no warm-up, so that both start quickly
    monkeypatch.setenv("CORRIGE_RULES", "off")
    monkeypatch.setenv("CORRIGE_WARMUP", "false")

    def schemas() -> set[str]:
        with psycopg.connect(postgres.url) as conn:
            return {row[0] for row in conn.execute("SELECT schema_name FROM information_schema.schemata")}

    before = schemas()
    with open(tmp_path / "console.txt", "w") as out:
        result = run_portal_bench(
            Console(file=out, width=140), ServedBench(3, 1, model=model_dir), database=postgres.url
        )
    assert [s["n"] for s in result["series"]] == [3] * len(PATHS)
    assert [s["n"] for s in result["postgresql"]["series"]] == [3] * len(PATHS)
    assert result["audit_rows_written"] == 4 and result["postgresql"]["audit_rows_written"] == 4
    gap = result["backend_gap"]
    sqlite, pg = result["figures"], result["postgresql"]["figures"]
    assert gap["overhead_p50_ms"] == pytest.approx(pg["overhead_p50_ms"] - sqlite["overhead_p50_ms"], abs=0.002)
    assert isinstance(gap["met"], bool) and gap["limit_ms"] == 2.0
    assert "PostgreSQL vs SQLite" in (tmp_path / "console.txt").read_text()
    assert schemas() == before  # the run's schema, with its tables, is gone
