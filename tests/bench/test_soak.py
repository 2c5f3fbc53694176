"""`corrige bench soak`: the verdict's arithmetic on made-up samples, the readings from /proc and
the trace store against real ones, and a short soak of a real `corrige serve` (seed model, 4 clients, 18 s)
whose JSON must agree with its own samples and whose exit status must agree with its verdict."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from corrige.bench.soak import (
    find_processes,
    judge,
    open_fds,
    rss_bytes,
    rss_growth,
    store_bound,
    store_size,
    warmup_seconds,
)
from corrige.obs.store import SpanRecord, TraceStore

MB = 2**20


def test_the_warm_up_is_a_tenth_of_a_long_run_and_at_least_a_minute_once_that_is_a_quarter():
    assert warmup_seconds(1800) == 180  # 30 minutes: 10%
    assert warmup_seconds(300) == 60  # 5 minutes: a minute, not 30 s
    assert warmup_seconds(240) == 60
    assert warmup_seconds(36) == 9  # too short for a minute: a quarter
    assert warmup_seconds(600) == 60 and warmup_seconds(601) > 60


def test_growth_is_measured_after_the_warm_up_from_the_medians_of_its_ends():
    flat = [(t, (100 + (0, 1, -1)[t // 5 % 3]) * MB) for t in range(0, 100, 5)]  # noise, no trend
    g = rss_growth(flat, warmup_s=10)
    assert g["samples"] == 18 and g["start_bytes"] == 100 * MB and g["end_bytes"] == 100 * MB
    assert g["growth"] == 0 and g["peak_bytes"] == 101 * MB

    # memory that climbs during the warm-up only: no growth after it
    settling = [(t, (50 + min(t, 20)) * MB) for t in range(0, 100, 5)]
    assert rss_growth(settling, warmup_s=20)["growth"] == 0
    assert rss_growth(settling, warmup_s=0)["growth"] > 0.2  # counted from the start it would be

    # a steady leak of 1 MB every 10 s from 100 MB
    leak = [(t, 100 * MB + t * MB // 10) for t in range(0, 400, 5)]
    g = rss_growth(leak, warmup_s=40)
    assert g["start_bytes"] == 100 * MB + 45 * MB // 10  # the median of t = 40, 45, 50
    assert g["end_bytes"] == 100 * MB + 390 * MB // 10  # the median of t = 385, 390, 395
    assert g["growth"] == pytest.approx((390 - 45) / 10 / 104.5)
    assert g["slope_mb_per_h"] == pytest.approx(360, rel=1e-3)

    assert rss_growth([(0, MB), (50, 2 * MB)], warmup_s=10) is None  # one sample after the warm-up
    assert rss_growth([(20, MB), (50, 2 * MB)], warmup_s=10)["growth"] == 1.0


def passing_result() -> dict:
    """A made-up result that meets every target."""
    proc = {"pid": 1, "rss": {"growth": 0.01}, "fds": {"idle_start": 20, "idle_end": 20}}
    return {
        "processes": {role: copy.deepcopy(proc) for role in ("server", "engine", "trace_writer")},
        "engine_idle": {"running": 0, "waiting": 0, "slots_used": 0},
        "engine_restarts": 0,
        "trace_store": {"max_spans": 1000, "bound": store_bound(1000), "spans_max": 1000},
        "requests": {"done": 500, "failed": 0},
    }


def failing(result: dict) -> list[str]:
    return [check["name"] for check in judge(result) if not check["ok"]]


def test_the_verdict_fails_exactly_the_target_that_is_missed():
    assert failing(passing_result()) == []

    r = passing_result()
    r["processes"]["engine"]["rss"]["growth"] = 0.05  # the target is strictly under 5%
    assert failing(r) == ["RSS growth after warm-up: engine"]
    r["processes"]["engine"]["rss"]["growth"] = 0.0499
    assert failing(r) == []
    r["processes"]["engine"]["rss"] = None  # too few samples: no figure, no pass
    assert failing(r) == ["RSS growth after warm-up: engine"]

    r = passing_result()
    r["processes"]["trace_writer"]["fds"]["idle_end"] = 21
    assert failing(r) == ["descriptors leaked: trace_writer"]
    r["processes"]["trace_writer"]["fds"]["idle_end"] = 19  # fewer at the end is no leak
    assert failing(r) == []
    r["processes"]["server"]["fds"]["idle_end"] = None  # the process is gone
    assert failing(r) == ["descriptors leaked: server"]

    for field in ("running", "waiting", "slots_used"):
        r = passing_result()
        r["engine_idle"][field] = 1
        assert failing(r) == ["KV slots taken once idle (running + waiting + slots used)"], field

    r = passing_result()
    r["engine_restarts"] = 1
    assert failing(r) == ["engine process restarts"]

    r = passing_result()
    r["trace_store"]["spans_max"] = store_bound(1000)
    assert failing(r) == []
    r["trace_store"]["spans_max"] = store_bound(1000) + 1
    assert failing(r) == ["trace store rows (most seen)"]

    r = passing_result()
    r["requests"]["failed"] = 1
    assert failing(r) == ["requests failed"]
    r["requests"] = {"done": 0, "failed": 0}  # nothing answered is no soak
    assert failing(r) == ["requests failed"]


def span(i: int) -> SpanRecord:
    return SpanRecord(
        trace_id=f"{i // 4:032x}", span_id=f"{i:016x}", parent_id=None, name="http.request",
        start_ns=i, end_ns=i + 1, request_id=None, status="OK", attributes={},
    )  # fmt: skip


def test_the_store_never_holds_more_than_the_bound_and_its_size_is_read_as_written(tmp_path):
    path = tmp_path / "traces.sqlite"
    store = TraceStore(path, max_spans=200)
    written, most = 0, 0
    try:
        for batch in (1, 7, 3, 30, 2, 9, 1, 50, 4, 4, 13) * 8:
            store.write([span(written + k) for k in range(batch)])
            written += batch
            size = store_size(path)
            assert size["spans"] == store.count() and size["bytes"] > 0
            most = max(most, size["spans"])
    finally:
        store.close()
    assert written > 4 * 200 and most > 200  # it went past the cap and was trimmed
    assert most <= store_bound(200) == 210


def test_process_readings_follow_the_process(tmp_path):
    pid = os.getpid()
    assert rss_bytes(pid) > 10 * MB
    before = open_fds(pid)
    with open(tmp_path / "x", "w"):
        assert open_fds(pid) == before + 1
    assert open_fds(pid) == before
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert rss_bytes(child.pid) is None and open_fds(child.pid) is None
    assert find_processes(pid, None) == {"server": pid}  # no spawned children here


@pytest.mark.slow
def test_a_short_soak_of_a_real_server_reports_what_it_measured(tmp_path, seed_model_dir):
    out, png = tmp_path / "soak.json", tmp_path / "soak.png"
    command = [
        sys.executable, "-m", "corrige.cli", "bench", "soak", "--minutes", "0.3", "--clients", "4",
        "--interval", "2", "--trace-store-max-spans", "500", "--model", str(seed_model_dir),
        "--output", str(out), "--plot", str(png),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORRIGE_")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert done.returncode == (0 if result["passed"] else 1), done.stdout[-3000:]
    assert result["passed"] == all(check["ok"] for check in result["checks"])
    assert result["checks"] == judge(result)  # the verdict is the one its own figures give
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    cfg = result["config"]
    assert (cfg["minutes"], cfg["clients"], cfg["interval_s"], cfg["trace_store_max_spans"]) == (0.3, 4, 2.0, 500)
    assert result["run_s"] >= 18  # callers keep sending until the time is up, then finish
    assert result["warmup_s"] == round(warmup_seconds(result["run_s"]), 2)

    samples = result["samples"]
    assert len(samples) >= 3
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    assert [s["done"] for s in samples] == sorted(s["done"] for s in samples)
    req = result["requests"]
    assert req["done"] > 0 and req["done"] == req["ok"] + req["failed"] == samples[-1]["done"]
    assert req["failed"] == sum(req["errors"].values()) == samples[-1]["failed"]

    procs = result["processes"]
    assert set(procs) == {"server", "engine", "trace_writer"}
    assert len({p["pid"] for p in procs.values()}) == 3
    for role, proc in procs.items():
        series = [(s["t"], s["rss"][role]) for s in samples if s["rss"][role] is not None]
        assert proc["rss"] == rss_growth(series, result["warmup_s"]), role
        counts = [s["fds"][role] for s in samples]
        assert proc["fds"]["load_min"] == min(counts) and proc["fds"]["load_max"] == max(counts)
        assert proc["fds"]["idle_start"] > 0 and proc["fds"]["idle_end"] > 0
    # under load the server also holds the 4 clients' connections
    assert procs["server"]["fds"]["load_max"] >= procs["server"]["fds"]["idle_start"] + 4

    idle = result["engine_idle"]
    assert idle["slots_total"] == 64 and idle["in_flight"] == 0
    assert idle["finished_during_soak"] >= req["ok"]  # every answered correction went through the engine
    assert all(s["engine"]["finished"] <= idle["finished"] for s in samples)

    store = result["trace_store"]
    assert (store["max_spans"], store["bound"]) == (500, 525)
    seen = [s["store"]["spans"] for s in samples if s["store"]["spans"] is not None] + [store["spans_end"]]
    assert store["spans_max"] == max(seen) and store["bytes_end"] > 0
