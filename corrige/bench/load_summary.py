"""A load run (`LoadRun`) and its summary: latency percentiles, rates, errors by code, goodput
against the SLO, the server's stage medians, and Little's law for open-loop runs."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from corrige.bench.load_records import LoadSpec, RequestResult

LITTLE_TOLERANCE = 0.10  # L and λ·W must agree within this share
RATE_LIMITED_STATUS = 429  # `rate_limited`: the server's per-client limit (`corrige serve --rate-limit 0` lifts it)


@dataclass
class LoadRun:
    spec: LoadSpec
    results: list[RequestResult]
    window: tuple[float, float]  # rates are counted over this span (seconds from the start)
    client_cpu_s: float
    wall_s: float
    stats_samples: list[tuple[float, int]] = field(default_factory=list)  # (time, server in_flight)
    workload: dict[str, Any] = field(default_factory=dict)

    @property
    def measured(self) -> list[RequestResult]:
        return [r for r in self.results if r.phase == "measured"]

    def summary(self) -> dict[str, Any]:
        return summarize(self)

    def to_json(self, include_requests: bool = True) -> dict[str, Any]:
        spec = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self.spec).items()}
        out: dict[str, Any] = {"spec": spec, "workload": self.workload, "summary": self.summary()}
        if include_requests:
            out["requests"] = [asdict(r) for r in self.results]
        return out


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (NumPy's default), `q` in 0..100; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _dist_ms(seconds: list[float]) -> dict[str, float] | None:
    if not seconds:
        return None
    ms = [1e3 * s for s in seconds]
    return {
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "p99": percentile(ms, 99),
        "mean": sum(ms) / len(ms),
        "max": max(ms),
    }


def latency_quantiles_ms(results: list[RequestResult]) -> list[float]:
    """Latency percentiles 1..99 of the successful requests (what `corrige capacity` rebuilds distributions from)."""
    ms = [1e3 * r.latency for r in results if r.ok]
    return [round(percentile(ms, q), 3) for q in range(1, 100)] if ms else []


def little_check(run: LoadRun) -> dict[str, Any] | None:
    """Little's law over the arrival window of an open-loop run: L (time-average in flight) against λ·W."""
    begin, end = run.window
    span = end - begin
    measured = [r for r in run.measured if begin <= r.start <= end]
    if span <= 0 or len(measured) < 2:
        return None
    lam = len(measured) / span
    w = sum(r.latency for r in measured) / len(measured)
    # time-average of requests in flight: each request contributes the part of its interval inside the window
    area = sum(max(0.0, min(r.end, end) - max(r.start, begin)) for r in run.results)
    L = area / span
    out: dict[str, Any] = {
        "window_s": span,
        "lambda_per_s": lam,
        "W_ms": 1e3 * w,
        "L": L,
        "lambda_W": lam * w,
        "relative_error": abs(L - lam * w) / (lam * w) if w > 0 else math.nan,
    }
    out["agree"] = out["relative_error"] <= LITTLE_TOLERANCE
    inside = [n for t, n in run.stats_samples if begin <= t <= end]
    served = [r.server_ms["total"] / 1e3 for r in measured if r.server_ms and "total" in r.server_ms]
    if len(inside) >= 10 and served:
        w_server = sum(served) / len(served)
        L_server = sum(inside) / len(inside)
        out["server"] = {
            "samples": len(inside),
            "L": L_server,
            "W_ms": 1e3 * w_server,
            "lambda_W": lam * w_server,
            "relative_error": abs(L_server - lam * w_server) / (lam * w_server) if w_server > 0 else math.nan,
        }
        out["server"]["agree"] = out["server"]["relative_error"] <= LITTLE_TOLERANCE
    return out


def summarize(run: LoadRun) -> dict[str, Any]:
    """Percentiles, rates, errors by code, goodput against the SLO, the server's stage medians."""
    spec = run.spec
    measured = run.measured
    ok = [r for r in measured if r.ok]
    begin, end = run.window
    span = max(end - begin, 1e-9)
    # rates: every completion inside the window (closed loop: the tail keeps the load on; open: arrivals only)
    done_in_window = [r for r in run.results if r.phase != "warmup" and begin <= r.end <= end and r.ok]
    if spec.mode == "open":  # arrivals stop at the window's end; count what those arrivals completed
        done_in_window, span = ok, max(max((r.end for r in ok), default=end) - begin, 1e-9)

    def good(r: RequestResult) -> bool:
        if not r.ok or 1e3 * r.latency > spec.slo_ms:
            return False
        return spec.slo_ttft_ms is None or (r.ttft is not None and 1e3 * r.ttft <= spec.slo_ttft_ms)

    n_good = sum(good(r) for r in measured)
    server_ms: dict[str, float] = {}
    stages = {stage for r in ok if r.server_ms for stage in r.server_ms}
    for stage in sorted(stages):
        server_ms[stage] = percentile([r.server_ms[stage] for r in ok if r.server_ms and stage in r.server_ms], 50)
    itl = [g for r in ok if r.itl for g in r.itl]
    summary: dict[str, Any] = {
        "mode": spec.mode,
        "clients": spec.clients if spec.mode == "closed" else None,
        "offered_rate": spec.rate if spec.mode == "open" else None,
        "requests": len(measured),
        "ok": len(ok),
        "errors": dict(Counter(r.error or f"http_{r.status}" for r in measured if not r.ok)),
        "rate_limited": sum(r.status == RATE_LIMITED_STATUS for r in measured),  # the server's limit, not its speed
        "window_s": span,
        "latency_ms": _dist_ms([r.latency for r in ok]),
        "ttft_ms": _dist_ms([r.ttft for r in ok if r.ttft is not None]),
        "itl_ms": _dist_ms(itl),
        "req_per_s": len(done_in_window) / span,
        "tokens_per_s": sum(r.completion_tokens for r in done_in_window) / span,
        "completion_tokens_mean": (sum(r.completion_tokens for r in ok) / len(ok)) if ok else 0.0,
        "goodput": {
            "slo_ms": spec.slo_ms,
            "slo_ttft_ms": spec.slo_ttft_ms,
            "good": n_good,
            "share": n_good / len(measured) if measured else 0.0,
            "req_per_s": (len(done_in_window) / span) * (n_good / len(measured)) if measured else 0.0,
        },
        "server_ms_p50": server_ms,
        "client_cpu_share": run.client_cpu_s / run.wall_s if run.wall_s > 0 else 0.0,
        "wall_s": run.wall_s,
    }
    if spec.mode == "open":
        lags = [r.start - r.scheduled for r in measured if r.scheduled is not None]
        summary["send_lag_ms_p99"] = 1e3 * percentile(lags, 99) if lags else None  # the generator kept up?
        summary["little"] = little_check(run)
    return summary
