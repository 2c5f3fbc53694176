"""`corrige bench portal`, tiny: one real server, every path measured, the JSON report written."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from corrige.bench.portal import PATHS, run_portal_bench


def test_bench_portal_measures_each_path_and_writes_json(model_dir, tmp_path):
    report = tmp_path / "bench-portal.json"
    with open(tmp_path / "console.txt", "w") as out:
        result = run_portal_bench(Console(file=out, width=120), rounds=4, warmup=2, model=model_dir, json_output=report)
    assert [s["n"] for s in result["series"]] == [4] * len(PATHS)
    figures = result["figures"]
    difference = figures["portal_p50_ms"] - figures["grammar_p50_ms"]
    assert figures["overhead_p50_ms"] == pytest.approx(difference, abs=0.002)  # each figure is rounded
    assert {"server_portal_model_p50_ms", "server_portal_audit_p50_ms"} <= set(figures)
    assert isinstance(result["target"]["met"], bool)
    assert result["audit_rows_written"] == 6  # every portal submit, warm-up included, is in the audit log
    assert json.loads(report.read_text())["figures"] == figures
    assert "portal overhead at p50" in (tmp_path / "console.txt").read_text()
