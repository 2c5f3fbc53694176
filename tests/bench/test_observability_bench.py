"""`corrige bench observability`: paired ratios, and a tiny real run against two servers."""

import pytest

from corrige.bench.observability import ObservabilityBenchConfig, VariantResult, run_observability_bench, summarize


def test_overheads_are_medians_of_the_paired_round_ratios():
    on = VariantResult(p50_ms=[11.0, 22.0, 10.0], p95_ms=[1, 1, 1], req_per_s=[90.0, 50.0, 100.0], cpu_ms=[3, 4, 2])
    off = VariantResult(p50_ms=[10.0, 20.0, 10.0], p95_ms=[1, 1, 1], req_per_s=[100.0, 50.0, 80.0], cpu_ms=[2, 4, 2])
    out = summarize(ObservabilityBenchConfig(rounds=3), {"on": on, "off": off})
    assert out["latency_overhead"] == pytest.approx(0.10)  # rounds: +10%, +10%, 0%
    assert out["throughput_loss"] == pytest.approx(0.0)  # rounds: 10%, 0%, -25%
    assert out["medians"]["on"]["req_per_s"] == 90.0
    assert out["cpu_overhead"] == pytest.approx(0.0)  # rounds: +50%, 0%, 0%
    assert out["cpu_overhead_rounds"][0] == pytest.approx(0.5) and out["medians"]["on"]["cpu_ms"] == 3


@pytest.mark.slow  # two servers
def test_a_tiny_run_measures_both_servers(seed_model_dir):
    config = ObservabilityBenchConfig(
        rounds=1, latency_requests=10, load_clients=4, load_requests=16, model=seed_model_dir
    )
    out = run_observability_bench(config)
    for variant in ("on", "off"):
        rounds = out["rounds"][variant]
        assert rounds["errors"] == 0 and len(rounds["p50_ms"]) == 1 and rounds["req_per_s"][0] > 0
        assert len(rounds["cpu_ms"]) == 1 and rounds["cpu_ms"][0] > 0  # the engine process's CPU counted too
    assert len(out["cpu_overhead_rounds"]) == 1
