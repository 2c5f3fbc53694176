"""`corrige bench http` end to end, tiny: it starts a server, measures both paths, writes its reports."""

import json

from rich.console import Console

from corrige.bench.http import run_http_bench


def test_bench_http_measures_both_paths_and_writes_markdown_and_json(model_dir, tmp_path):
    md, js = tmp_path / "bench-http.md", tmp_path / "bench-http.json"
    with open(tmp_path / "console.txt", "w") as out:
        console = Console(file=out, width=120)
        result = run_http_bench(console, requests=6, warmup=2, block=3, model=model_dir, output=md, json_output=js)
    assert [s["n"] for s in result["series"]] == [6] * 6
    assert set(result["targets"]) == {"http_p50_ms", "http_p95_ms", "overhead_p50_ms", "http_layers_p50_ms"}
    figures = result["figures"]
    raw_p50 = result["series"][-1]["p50_ms"]  # the socket client's requests, which the layers come from
    assert 0 < figures["http_layers_p50_ms"] < raw_p50
    assert all(isinstance(goal["met"], bool) for goal in result["targets"].values())
    assert json.loads(js.read_text())["figures"] == result["figures"]
    text = md.read_text()
    assert text.startswith("# HTTP benchmark") and "| http_p50_ms |" in text
