"""What a rate-limit check costs a request: the in-memory bucket against the shared one in
PostgreSQL, timed in the same run, one take at a time, as the middleware makes them.

    from corrige.bench.limits import measure_limits
    measure_limits("postgresql://…", calls=5000)   # {"memory": {...}, "postgresql": {...}}
    run_limits_bench(None, runs=3)                  # the same on a throwaway PostgreSQL, three runs

`corrige bench limits` prints `run_limits_bench`'s report.

Each side takes `calls` tokens from buckets that never run dry (so every take is a full
update, never a cheap refusal), after `warmup` untimed ones (the connection is open and the
statement prepared, as on a server that has been up a while); the figures are the median, p95
and mean of the single takes, in microseconds.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

from corrige.bench.postgres import PostgresServer
from corrige.server.guards import RateLimiter, TokenBucketLimiter
from corrige.server.shared_limits import BucketStore, SharedBucketLimiter

KEYS = 64  # clients, taken in turn: each take updates another row, as different clients' requests do


async def _time_takes(limiter: RateLimiter, calls: int, warmup: int) -> dict[str, float]:
    for i in range(warmup):
        await limiter.take(f"10.0.{i % KEYS}.1")
    times: list[float] = []
    for i in range(calls):
        start = time.perf_counter()
        await limiter.take(f"10.0.{i % KEYS}.1")
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return {
        "calls": calls,
        "median_us": round(statistics.median(times), 2),
        "p95_us": round(times[int(0.95 * (len(times) - 1))], 2),
        "mean_us": round(statistics.fmean(times), 2),
    }


def measure_limits(url: str, calls: int = 5000, warmup: int = 200) -> dict[str, dict[str, float]]:
    """The cost of one take, in memory and in PostgreSQL at `url`, measured in one run."""
    rate, burst = 1e9, 10**9  # never empty

    async def run() -> dict[str, dict[str, float]]:
        memory = await _time_takes(TokenBucketLimiter(rate, burst), calls, warmup)
        store = BucketStore(url)
        try:
            shared = await _time_takes(SharedBucketLimiter(store, "bench", rate, burst), calls, warmup)
        finally:
            await store.close()
        return {"memory": memory, "postgresql": shared}

    return asyncio.run(run())


SIDES = ("memory", "postgresql")


def run_limits_bench(database_url: str | None, calls: int = 5000, warmup: int = 200, runs: int = 3) -> dict[str, Any]:
    """`measure_limits` `runs` times against `database_url`, or against a throwaway PostgreSQL
    started for the purpose (`corrige.bench.postgres`) when it is None; the medians over runs of
    each side's median and p95, and the shared take's cost over the in-memory one."""
    if database_url is None:
        with PostgresServer() as server:
            report = _runs(server.fresh_url("bench"), calls, warmup, runs)
        report["database"] = "throwaway (initdb + pg_ctl, Unix socket)"
        return report
    report = _runs(database_url, calls, warmup, runs)
    report["database"] = "given (--database-url)"
    return report


def _runs(url: str, calls: int, warmup: int, runs: int) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    figures = [measure_limits(url, calls, warmup) for _ in range(runs)]
    summary = {
        side: {key: round(statistics.median(run[side][key] for run in figures), 2) for key in ("median_us", "p95_us")}
        for side in SIDES
    }
    return {
        "calls": calls,
        "warmup": warmup,
        "runs": figures,
        "median_of_runs": summary,
        "median_ratio": round(summary["postgresql"]["median_us"] / summary["memory"]["median_us"], 1),
        "server_version": _server_version(url),
        "load_average": {"before": load_before, "after": os.getloadavg()[0]},
        "cpus": os.cpu_count(),
    }


def _server_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "unknown"
