"""The load generator against a real `corrige serve` on loopback (continuous batching)."""

import statistics

import numpy as np
import pytest

from corrige.bench.load import LoadSpec, NotLoopback, arrival_gaps, check_loopback, run_load
from corrige.bench.load_summary import latency_quantiles_ms, percentile
from corrige.bench.workload import Workload


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://localhost:9/", "http://[::1]:8000"])
def test_loopback_urls_are_accepted(url):
    assert check_loopback(url) == url.rstrip("/")


@pytest.mark.parametrize("url", ["http://example.com:8000", "http://10.0.0.1:8000", "http://0.0.0.0:8000", "ftp://x"])
def test_other_hosts_are_refused_before_anything_is_sent(url):
    with pytest.raises(NotLoopback):
        run_load(LoadSpec(url, requests=1))


def test_percentile_interpolates_like_numpy():
    values = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0]
    for q in (0, 1, 50, 95, 99, 100):
        assert percentile(values, q) == pytest.approx(np.percentile(values, q))


@pytest.mark.parametrize("arrival,cv", [("poisson", 1.0), ("gamma", 2.0)])
def test_arrival_gaps_have_the_asked_rate_and_burstiness(arrival, cv):
    gaps = arrival_gaps(LoadSpec("http://127.0.0.1:1", mode="open", rate=40.0, arrival=arrival, burstiness=cv), 20000)
    mean = statistics.fmean(gaps)
    assert mean == pytest.approx(1 / 40.0, rel=0.05)
    assert statistics.pstdev(gaps) / mean == pytest.approx(cv, rel=0.1)


def test_closed_loop_measures_every_request(continuous_server):
    run = run_load(LoadSpec(continuous_server.url, clients=2, requests=12, warmup=1))
    summary = run.summary()
    assert summary["requests"] == 12 and summary["ok"] == 12 and summary["errors"] == {}
    assert len([r for r in run.results if r.phase == "warmup"]) == 2  # one per client
    assert summary["req_per_s"] > 0 and summary["tokens_per_s"] > summary["req_per_s"]
    assert summary["latency_ms"]["p50"] <= summary["latency_ms"]["p95"] <= summary["latency_ms"]["p99"]
    for r in run.measured:  # the client sees at least what the server spent on the request
        assert r.completion_tokens > 0 and 1e3 * r.latency >= r.server_ms["total"]
    assert {"queue", "prefill", "decode", "total"} <= set(summary["server_ms_p50"])
    assert len(latency_quantiles_ms(run.measured)) == 99
    assert summary["goodput"]["good"] <= summary["ok"]


def test_streaming_records_time_to_first_token_and_token_gaps(continuous_server):
    run = run_load(LoadSpec(continuous_server.url, clients=1, requests=4, stream=True))
    assert run.summary()["ok"] == 4
    for r in run.measured:
        assert r.ttft is not None and 0 < r.ttft < r.latency
        assert r.itl is not None and len(r.itl) >= 1
        assert r.completion_tokens > 0  # read from the final `result` event
    assert run.summary()["ttft_ms"]["p50"] < run.summary()["latency_ms"]["p50"]


def test_errors_are_counted_by_the_servers_error_code(continuous_server):
    workload = Workload(("", "Yesterday I goed to the store."), seed=0, median_words=0, tail=0)
    run = run_load(LoadSpec(continuous_server.url, clients=1, requests=6, warmup=0), workload)
    summary = run.summary()
    assert summary["errors"] == {"empty_sentence": 3}
    assert summary["ok"] == 3
    assert summary["goodput"]["share"] <= 0.5


def test_open_loop_agrees_with_littles_law(continuous_server):
    spec = LoadSpec(continuous_server.url, mode="open", rate=30.0, requests=150, duration=20.0, warmup=2)
    run = run_load(spec)
    summary = run.summary()
    assert summary["ok"] == summary["requests"] == 150
    little = summary["little"]
    assert little["lambda_per_s"] == pytest.approx(30.0, rel=0.3)  # the Poisson schedule, 150 arrivals
    assert little["L"] > 0
    assert little["relative_error"] <= 0.10 and little["agree"]
    assert little["server"]["samples"] >= 10  # the server's own in-flight count was sampled
