"""The capacity model against queueing results with closed forms."""

import numpy as np
import pytest

from corrige.bench.capacity import CapacityModel, Curve, capacity_report


def single_server_curve(mu: float = 100.0, top: int = 64) -> Curve:
    """One request at a time at mu req/s: throughput mu at every count, latency n / mu at n clients
    (a narrow spread around it, as a measured distribution would have)."""
    rows = []
    for n in (1, 2, 4, 8, 16, 32, top):
        mean_ms = 1e3 * n / mu
        rows.append((n, mu, list(np.linspace(0.9 * mean_ms, 1.1 * mean_ms, 99))))
    return Curve.from_points(rows)


def test_unbounded_single_server_is_mm1():
    model = CapacityModel(single_server_curve(mu=100.0))
    for rho in (0.3, 0.6, 0.9):
        prediction = model.predict(rho * 100.0)
        assert prediction.L == pytest.approx(rho / (1 - rho), rel=1e-3)
        assert prediction.W_ms == pytest.approx(1e3 / (100.0 - rho * 100.0), rel=1e-3)  # M/M/1: 1 / (mu - lambda)


def test_bounded_single_server_refuses_like_mm1k():
    model = CapacityModel(single_server_curve(mu=100.0))
    rho, K = 0.9, 5
    expected = (1 - rho) * rho**K / (1 - rho ** (K + 1))  # M/M/1/K blocking probability
    assert model.predict(90.0, bound=K).refused == pytest.approx(expected, rel=1e-6)


def test_the_bound_is_the_largest_that_keeps_the_target():
    model = CapacityModel(single_server_curve(mu=100.0))
    chosen = model.bound_for(95.0, p95_ms=120.0)
    assert chosen is not None and chosen.p95_ms <= 120.0
    assert model.predict(95.0, chosen.bound + 1).p95_ms > 120.0


def test_batching_raises_the_sustainable_rate_and_the_report_says_so():
    rows = [(n, min(40.0 * n, 320.0), list(np.linspace(20, 30, 99) * (1 + n / 32))) for n in (1, 2, 4, 8, 16, 32)]
    curve = Curve.from_points(rows)
    assert curve.mu_max == 320.0
    report = capacity_report(curve, p95_ms=100.0, policy="continuous")
    assert report["mu_max"] == 320.0
    best = report["max_rate_for_target"]
    assert best is not None and 0 < best < 320.0
    assert CapacityModel(curve).predict(best).p95_ms <= 100.0 + 1e-6
    assert [row["rate"] for row in report["rates"]] == pytest.approx([160.0, 224.0, 256.0, 288.0, 304.0])


def test_a_throughput_dip_is_treated_as_noise():
    rows = [(1, 50.0, [10.0] * 99), (2, 45.0, [20.0] * 99), (4, 80.0, [30.0] * 99)]
    assert list(Curve.from_points(rows).throughput) == [50.0, 50.0, 80.0]
