"""The soak's verdict from its figures: the warm-up it leaves out, RSS growth after it, and the
checks of `corrige bench soak` (see `corrige.bench.soak`)."""

from __future__ import annotations

import statistics
from typing import Any

RSS_GROWTH_TARGET = 0.05  # after the warm-up, per process
EDGE_SAMPLES = 3  # RSS samples whose median starts and ends the growth


def warmup_seconds(run_s: float) -> float:
    """The warm-up: 10% of the run, at least a minute once the run is 4 minutes or longer."""
    return max(0.1 * run_s, min(60.0, 0.25 * run_s))


def store_bound(max_spans: int) -> int:
    """The most rows the store can hold between two trims (see `TraceStore.write`)."""
    return max_spans + max(max_spans // 20, 1)


def rss_growth(samples: list[tuple[float, int]], warmup_s: float) -> dict[str, Any] | None:
    """Growth of (time, RSS bytes) samples after `warmup_s`: the median of the last `EDGE_SAMPLES`
    against the median of the first `EDGE_SAMPLES` from the warm-up's end; also the peak and the
    least-squares slope after the warm-up. None with fewer than two samples after the warm-up."""
    after = [(t, rss) for t, rss in samples if t >= warmup_s]
    if len(after) < 2:
        return None
    edge = max(1, min(EDGE_SAMPLES, len(after) // 2))
    start = statistics.median(rss for _, rss in after[:edge])
    end = statistics.median(rss for _, rss in after[-edge:])
    times = [t for t, _ in after]
    mean_t, mean_r = statistics.fmean(times), statistics.fmean(rss for _, rss in after)
    spread = sum((t - mean_t) ** 2 for t in times)
    slope = sum((t - mean_t) * (rss - mean_r) for t, rss in after) / spread if spread > 0 else 0.0
    return {
        "samples": len(after),
        "start_bytes": start,
        "end_bytes": end,
        "peak_bytes": max(rss for _, rss in after),
        "growth": (end - start) / start if start > 0 else 0.0,
        "slope_mb_per_h": slope * 3600 / 2**20,
    }


def judge(result: dict[str, Any], growth_target: float = RSS_GROWTH_TARGET) -> list[dict[str, Any]]:
    """The soak's checks from its result (see the module docstring); each has `ok`."""
    checks: list[dict[str, Any]] = []
    for role, proc in result["processes"].items():
        growth = proc.get("rss") and proc["rss"].get("growth")
        checks.append({
            "name": f"RSS growth after warm-up: {role}",
            "target": f"< {growth_target:.0%}",
            "value": None if growth is None else round(growth, 4),
            "ok": growth is not None and growth < growth_target,
        })  # fmt: skip
        fds = proc["fds"]
        leaked = None if fds["idle_start"] is None or fds["idle_end"] is None else fds["idle_end"] - fds["idle_start"]
        checks.append({
            "name": f"descriptors leaked: {role}",
            "target": "0",
            "value": leaked,
            "ok": leaked is not None and leaked <= 0,
        })  # fmt: skip
    idle = result["engine_idle"]
    busy = None if idle is None else idle["running"] + idle["waiting"] + idle["slots_used"]
    checks.append({
        "name": "KV slots taken once idle (running + waiting + slots used)",
        "target": "0",
        "value": busy,
        "ok": busy == 0,
    })  # fmt: skip
    checks.append({
        "name": "engine process restarts",
        "target": "0",
        "value": result["engine_restarts"],
        "ok": result["engine_restarts"] == 0,
    })  # fmt: skip
    store = result["trace_store"]
    checks.append({
        "name": "trace store rows (most seen)",
        "target": f"<= {store['bound']} (cap {store['max_spans']} + trim step)",
        "value": store["spans_max"],
        "ok": store["spans_max"] is not None and store["spans_max"] <= store["bound"],
    })  # fmt: skip
    requests = result["requests"]
    checks.append({
        "name": "requests failed",
        "target": f"0 of {requests['done']}",
        "value": requests["failed"],
        "ok": requests["done"] > 0 and requests["failed"] == 0,
    })  # fmt: skip
    return checks
