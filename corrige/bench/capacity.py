"""Capacity planning from a measured closed-loop curve: the largest sustainable rate, and how
many requests the server may hold (running + waiting) for a target p95.

The model is the flow-equivalent server of queueing theory (Chandy, Herzog and Woo, 1975):

1. **Service curve.** A closed-loop sweep measures, at n requests in the system (n clients
   with no think time), the throughput X(n) and the latency distribution D(n). With batching,
   X(n) grows with n until the batch is full: the server completes requests at rate
   mu(n) = X(n) when n are inside. We take mu non-decreasing in n (a running maximum: more
   requests in the system never make a batching server slower, so dips are noise), linear
   between measured counts and flat past the largest (the saturation rate mu_max).
2. **Open-loop arrivals.** Poisson arrivals at rate lambda then make the number in the system
   a birth-death chain (birth lambda, death mu(n)), truncated at K when the server refuses
   requests beyond K (503 `overloaded`): p(n) ~ prod_{k<=n} lambda / mu(k), n = 0..K. It is
   stable without a bound only if lambda < mu_max: **mu_max is the largest sustainable rate**.
3. **Response time.** An arrival sees the stationary state (PASTA). Finding n others, it is
   served as one of n + 1 and its latency follows D(n + 1), the measured distribution at n + 1
   clients (quantiles interpolated between measured counts); past the largest measured count
   M it also waits for the n + 1 - M requests ahead of it to leave, (n + 1 - M) / mu_max. The
   p95 is that of the mixture over n, weighted by p(n) among admitted arrivals.
4. **Queue bound.** A larger K admits more requests but lets each wait longer: the largest K
   whose p95 stays within the target is the bound to configure, as the server's `max_waiting`
   = K - (requests one step can run: 1 for `none`, the worker threads for `threads`,
   `max_batch` for the batching policies); the refused share at that K is the price.

What it leaves out: arrivals burstier than Poisson (the `gamma` arrivals of `corrige bench
load`) need a larger bound for the same p95; the service rate is assumed to depend only on
how many requests are inside, not on which (long sentences cost more); and requests that
wait past the server's queue timeout (504) are not modelled. `verify` runs an open-loop load
at a chosen rate and compares the prediction with the measurement.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

LEVELS = np.arange(1, 100) / 100.0  # the quantile levels stored per sweep point
DEFAULT_FRACTIONS = (0.5, 0.7, 0.8, 0.9, 0.95)
POLICY_CONCURRENCY = {"none": 1, "threads": 4, "static": 32, "continuous": 32}  # corrige serve's defaults
MAX_STATES = 200_000  # truncation of an unbounded queue (the geometric tail beyond is negligible)


@dataclass(frozen=True)
class Curve:
    """A measured closed-loop curve: at `clients[i]` in the system, `throughput[i]` req/s and latency quantiles."""

    clients: np.ndarray  # increasing
    throughput: np.ndarray  # req/s, made non-decreasing
    quantiles_ms: np.ndarray  # (len(clients), 99): percentiles 1..99

    @classmethod
    def from_sweep(cls, result: dict[str, Any], server: str) -> Curve:
        rows = sorted(
            (p for p in result["points"] if p["server"] == server and p.get("latency_quantiles_ms")),
            key=lambda p: p["clients"],
        )
        if len(rows) < 2:
            raise ValueError(f"the sweep has fewer than two measured points for {server!r}")
        return cls.from_points([(p["clients"], p["summary"]["req_per_s"], p["latency_quantiles_ms"]) for p in rows])

    @classmethod
    def from_points(cls, rows: list[tuple[int, float, list[float]]]) -> Curve:
        rows = sorted(rows)
        clients = np.array([r[0] for r in rows], dtype=float)
        throughput = np.maximum.accumulate(np.array([r[1] for r in rows], dtype=float))
        quantiles = np.maximum.accumulate(np.array([r[2] for r in rows], dtype=float), axis=1)  # monotone in level
        return cls(clients, throughput, quantiles)

    @property
    def mu_max(self) -> float:
        return float(self.throughput[-1])

    @property
    def largest(self) -> int:
        return int(self.clients[-1])

    def mu(self, n: np.ndarray) -> np.ndarray:
        """Service rate with n requests inside (n >= 1)."""
        return np.interp(n, self.clients, self.throughput)

    def quantiles_at(self, m: int) -> np.ndarray:
        """Latency percentiles (ms) of a request served as one of m, m <= largest measured count."""
        i = int(np.searchsorted(self.clients, m))
        if i == 0:
            return self.quantiles_ms[0]
        if i >= len(self.clients):
            return self.quantiles_ms[-1]
        lo, hi = self.clients[i - 1], self.clients[i]
        f = (m - lo) / (hi - lo)
        return (1 - f) * self.quantiles_ms[i - 1] + f * self.quantiles_ms[i]


def _cdf_points(quantiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An empirical CDF through the stored percentiles, from 0 at 0 ms to 1 a little past p99."""
    tail = quantiles[-1] + max(quantiles[-1] - quantiles[89], 1e-6)  # p99 + (p99 - p90)
    return np.concatenate([[0.0], quantiles, [tail]]), np.concatenate([[0.0], LEVELS, [1.0]])


@dataclass
class Prediction:
    rate: float
    bound: int | None  # None: unbounded queue
    L: float  # mean requests in the system
    W_ms: float  # mean latency of admitted requests (Little: L / admitted rate)
    p95_ms: float
    refused: float  # share of arrivals refused (finding the system full)

    def as_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in self.__dict__.items()}


class CapacityModel:
    """The flow-equivalent server built on a `Curve` (see the module docstring)."""

    def __init__(self, curve: Curve) -> None:
        self.curve = curve
        self._cdfs = {}  # m -> CDF points, for m up to the largest measured count

    def _states(self, rate: float, bound: int | None) -> np.ndarray:
        """p(n), n = 0..K (K = bound, or a truncation where the unbounded tail is negligible)."""
        mu_max = self.curve.mu_max
        if bound is None:
            if rate >= mu_max:
                raise ValueError(f"{rate:.1f} req/s is not sustainable without a queue bound (mu_max {mu_max:.1f})")
            r = rate / mu_max
            bound = min(MAX_STATES, self.curve.largest + math.ceil(math.log(1e-12) / math.log(r)) + 1)
        n = np.arange(1, bound + 1)
        log_terms = np.cumsum(np.log(rate) - np.log(self.curve.mu(n)))
        log_p = np.concatenate([[0.0], log_terms])
        p = np.exp(log_p - log_p.max())
        return p / p.sum()

    def _cdf(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        if m not in self._cdfs:
            self._cdfs[m] = _cdf_points(self.curve.quantiles_at(m))
        return self._cdfs[m]

    def _admitted_cdf(self, weights: np.ndarray, t_ms: float) -> float:
        """P(latency <= t) for an arrival that finds n with probability weights[n] (n = 0..K-1)."""
        M = self.curve.largest
        head = weights[: min(len(weights), M)]
        total = sum(w * np.interp(t_ms, *self._cdf(n + 1)) for n, w in enumerate(head) if w > 1e-15)
        if len(weights) > M:  # beyond the measured counts: D(M) shifted by the wait for the extra requests ahead
            extra = np.arange(M, len(weights)) + 1 - M
            xs, us = self._cdf(M)
            total += float(np.dot(weights[M:], np.interp(t_ms - 1e3 * extra / self.curve.mu_max, xs, us)))
        return float(total)

    def predict(self, rate: float, bound: int | None = None) -> Prediction:
        p = self._states(rate, bound)
        refused = float(p[-1]) if bound is not None else 0.0
        arrivals = p[:-1] if bound is not None else p  # an arrival finding K in the system is refused
        weights = arrivals / arrivals.sum()
        L = float(np.dot(np.arange(len(p)), p))
        W_ms = 1e3 * L / (rate * (1 - refused)) if rate > 0 else math.nan
        hi = float(self._cdf(min(len(weights), self.curve.largest))[0][-1])
        if len(weights) > self.curve.largest:
            hi += 1e3 * (len(weights) - self.curve.largest) / self.curve.mu_max
        lo = 0.0
        for _ in range(60):  # bisection on the mixture's CDF
            mid = (lo + hi) / 2
            if self._admitted_cdf(weights, mid) < 0.95:
                lo = mid
            else:
                hi = mid
        return Prediction(rate, bound, L, W_ms, hi, refused)

    def max_rate_for(self, p95_ms: float) -> float | None:
        """The largest Poisson rate whose p95 (unbounded queue) stays within `p95_ms`; None if none does."""
        lo, hi = 0.0, 0.999 * self.curve.mu_max
        if self.predict(1e-3 * self.curve.mu_max).p95_ms > p95_ms:
            return None
        for _ in range(40):
            mid = (lo + hi) / 2
            if self.predict(mid).p95_ms <= p95_ms:
                lo = mid
            else:
                hi = mid
        return lo

    def bound_for(self, rate: float, p95_ms: float, largest: int = 4096) -> Prediction | None:
        """The largest bound K (requests in the server) whose admitted p95 stays within `p95_ms` at `rate`."""
        if self.predict(rate, 1).p95_ms > p95_ms:
            return None
        lo, hi = 1, largest
        if self.predict(rate, hi).p95_ms <= p95_ms:
            return self.predict(rate, hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.predict(rate, mid).p95_ms <= p95_ms:
                lo = mid
            else:
                hi = mid
        return self.predict(rate, lo)


def capacity_report(
    curve: Curve, p95_ms: float, policy: str, rates: list[float] | None = None, concurrency: int | None = None
) -> dict[str, Any]:
    """The sustainable rate, the best rate for the target, and per rate the queue bound it needs."""
    model = CapacityModel(curve)
    c = concurrency or POLICY_CONCURRENCY.get(policy, 1)
    rates = rates or [f * curve.mu_max for f in DEFAULT_FRACTIONS]
    rows = []
    for rate in rates:
        unbounded = model.predict(rate) if rate < curve.mu_max else None
        needed = unbounded is None or unbounded.p95_ms > p95_ms
        bounded = model.bound_for(rate, p95_ms) if needed else None
        row = {
            "rate": rate,
            "utilisation": rate / curve.mu_max,
            "unbounded": unbounded.as_dict() if unbounded else None,
            "bound_needed": needed,
            "bound": bounded.bound if bounded else None,
            "bounded": bounded.as_dict() if bounded else None,
            "setting": None,
        }
        if bounded and bounded.bound is not None:
            K = bounded.bound  # below one step's capacity the bound must cap the batch itself
            row["setting"] = f"max_waiting {K - c}" if K >= c else f"max_batch {K}, max_waiting 0"
        rows.append(row)
    return {
        "policy": policy,
        "target_p95_ms": p95_ms,
        "mu_max": curve.mu_max,
        "concurrency": c,
        "curve": {"clients": curve.clients.tolist(), "req_per_s": curve.throughput.tolist()},
        "max_rate_for_target": model.max_rate_for(p95_ms),
        "rates": rows,
    }
