"""`corrige budget`, `corrige traces report|audit` and `corrige bench traces` on real store files."""

from __future__ import annotations

import json

import pytest
from obs_support import fill, orphan
from typer.testing import CliRunner

from corrige.cli import app
from corrige.cli.traces_bench import synthetic_spans
from corrige.obs.budget import budget_report, load_budget
from corrige.obs.report import TraceTable, percentile_report
from corrige.obs.store import TraceStore

runner = CliRunner()


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "traces.sqlite"
    store = TraceStore(path)
    fill(store, synthetic_spans(400, seed=11))
    store.close()
    return path


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_budget_json_is_the_budget_report_of_the_last_traces(store_path):
    result = invoke("budget", "--store", str(store_path), "--last", "300", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    store = TraceStore(store_path)
    expected = budget_report(TraceTable.from_traces(store.traces(300)), load_budget(model="reader")).to_dict()
    assert data == expected
    assert data["profile"] == "tutor" and data["traces"] == 300
    assert data["model"] == "reader" and "closest" in data["why"]  # the bundled model's profile, and why
    assert data["formula"]["dominant"] == "K·t_decode_step"


def test_budget_table_lists_every_stage_and_the_formula(store_path):
    result = invoke("budget", "--store", str(store_path), "--profile", "reference")
    assert result.exit_code == 0, result.output
    assert "profile reference for the reader model: asked for" in result.output
    for stage in ("decode", "queue wait", "total", "5,000"):
        assert stage in result.output
    assert "t_total = t_parse + t_tokenize" in result.output
    assert "dominant term: K·t_decode_step" in result.output
    assert "no stage with a sustained burn" in result.output


def test_budget_greys_a_stage_on_too_few_samples_and_flags_it_on_enough(store_path, tmp_path):
    """Decode at ~20x a tight allocation: on 60 traces it is "too few samples", not flagged; on
    400 the same stage is flagged."""
    tight = tmp_path / "tight.toml"
    tight.write_text(
        '[profiles.tight]\n[[profiles.tight.stages]]\nname = "decode"\nms = 0.5\nspans = ["model.decode"]\n'
    )
    few = invoke("budget", "--store", str(store_path), "--file", str(tight), "--last", "60")
    assert few.exit_code == 0, few.output
    n = json.loads(invoke("budget", "--store", str(store_path), "--file", str(tight), "--last", "60", "--json").output)[
        "stages"
    ][0]["n"]
    assert 50 <= n <= 60 < 100  # a refused request has no decode
    assert f"too few samples to judge (under 100 traces): decode (n={n})" in few.output
    assert "no [models.reader]" in " ".join(few.output.split())  # the reason, printed as text (not read as markup)
    assert "no stage with a sustained burn" in few.output
    enough = invoke("budget", "--store", str(store_path), "--file", str(tight), "--last", "400")
    assert "sustained burn > 1.5x: decode" in enough.output
    assert "too few samples (n=" not in enough.output


def test_traces_report_json_matches_the_percentile_report(store_path):
    result = invoke("traces", "report", "--store", str(store_path), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    expected = percentile_report(TraceTable.from_traces(TraceStore(store_path).traces(1000))).to_dict()
    assert data == expected
    assert data["traces"] == 400 and data["incomplete"] == 0  # every synthetic trace has its root
    assert 0 < data["failed"] < 20  # about one in a hundred is refused by the guards
    assert data["naive_p95_sum_ms"] > 0 and data["true_p95_ms"] > 0
    assert {row["name"] for row in data["bytes"]} >= {"http.request", "model.prefill", "model.decode"}

    table = invoke("traces", "report", "--store", str(store_path))
    assert "naive sum of stage p95s" in table.output and "Journey of the bytes" in table.output


def test_audit_exit_code_says_whether_there_are_orphans(store_path):
    clean = invoke("traces", "audit", "--store", str(store_path))
    assert clean.exit_code == 0 and "no orphan spans" in clean.output

    store = TraceStore(store_path)
    lost = [orphan("tool.check"), orphan("model.decode", parent_id=None)]
    store.write(lost)
    store.close()
    dirty = invoke("traces", "audit", "--store", str(store_path), "--json")
    assert dirty.exit_code == 1
    data = json.loads(dirty.output)
    assert data["orphans"] == 2
    assert [e["span_id"] for e in data["examples"]] == [s.span_id for s in lost]
    assert {e["why"] for e in data["examples"]} == {"no parent", "parent not in the trace"}
    table = invoke("traces", "audit", "--store", str(store_path))
    assert table.exit_code == 1 and "2 orphan spans" in table.output


def test_a_missing_store_and_a_bad_budget_fail_cleanly(tmp_path, store_path):
    missing = invoke("budget", "--store", str(tmp_path / "none.sqlite"))
    assert missing.exit_code == 1 and "no trace store" in missing.output
    assert not (tmp_path / "none.sqlite").exists()  # reading never creates a store
    bad = tmp_path / "bad.toml"
    bad.write_text("[profiles.x]\nstages = []\n")
    result = invoke("budget", "--store", str(store_path), "--file", str(bad))
    assert result.exit_code == 2 and "bad budget" in result.output


def test_the_store_and_budget_file_come_from_the_environment(store_path, tmp_path, monkeypatch):
    monkeypatch.setenv("CORRIGE_TRACE_STORE", str(store_path))
    result = invoke("budget", "--json", "--profile", "reference")
    assert result.exit_code == 0 and json.loads(result.output)["profile"] == "reference"
    monkeypatch.setenv("CORRIGE_MODEL_DIR", "corrige/models/tutor")  # the model the server ran
    data = json.loads(invoke("budget", "--json").output)
    assert (data["model"], data["why"]) == ("tutor", "measured on this model")
    data = json.loads(invoke("budget", "--json", "--model", "reader").output)
    assert data["model"] == "reader" and data["profile"] == "tutor" and "reader" in data["why"]

    own = tmp_path / "own.toml"
    own.write_text('[profiles.all]\n[[profiles.all.stages]]\nname = "model"\nms = 5\nspans = ["model.decode"]\n')
    monkeypatch.setenv("CORRIGE_BUDGET_FILE", str(own))
    data = json.loads(invoke("budget", "--json").output)
    assert data["profile"] == "all" and data["source"] == str(own)
    assert [s["name"] for s in data["stages"]] == ["model", "unbudgeted"]


def test_bench_traces_writes_its_medians(tmp_path):
    out = tmp_path / "bench.json"
    result = invoke("bench", "traces", "--traces", "300", "--repeats", "2", "--no-cli", "--output", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["traces"] == 300 and data["spans"] > 300 * 8
    assert set(data["median_s"]) == {"budget: read + compute", "traces report: read + compute", "traces audit: orphans"}
    assert all(len(runs) == 2 for runs in data["runs_s"].values())
