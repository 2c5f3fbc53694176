"""What a rate-limit check costs a request: the in-memory bucket against the shared one in
PostgreSQL, timed in the same run, one take at a time, as the middleware makes them.

    from corrige.bench.limits import measure_limits
    measure_limits("postgresql://…", calls=5000)   # {"memory": {...}, "postgresql": {...}}

Each side takes `calls` tokens from buckets that never run dry (so every take is a full
update, never a cheap refusal), after `warmup` untimed ones (the connection is open and the
statement prepared, as on a server that has been up a while); the figures are the median, p95
and mean of the single takes, in microseconds.
"""

from __future__ import annotations

import asyncio
import statistics
import time

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
