"""`BulkHistogram` exposes what prometheus-client's `Histogram` would for the same values."""

import random

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from corrige.obs.metrics import TOKEN_BUCKETS, BulkHistogram


def _series(registry: CollectorRegistry) -> dict[str, float]:
    lines = generate_latest(registry).decode().splitlines()
    return {k: float(v) for k, v in (line.rsplit(" ", 1) for line in lines if not line.startswith("#"))}


def test_bulk_observations_give_the_reference_buckets_count_and_sum():
    rng = random.Random(4)
    values = [rng.choice([0.0, 0.0002, 0.001]) if rng.random() < 0.3 else rng.expovariate(200) for _ in range(700)]
    values += [3.0, 1.0]  # past the last bound, and on it
    reference, ours = CollectorRegistry(), CollectorRegistry()
    histogram = Histogram("gap_seconds", "gaps", buckets=TOKEN_BUCKETS, registry=reference)
    for value in values:
        histogram.observe(value)
    bulk = BulkHistogram("gap_seconds", "gaps", TOKEN_BUCKETS, registry=ours)
    for start in range(0, len(values), 27):  # a request's worth at a time
        bulk.observe_many(values[start : start + 27])
    bulk.observe_many([])
    want, got = _series(reference), _series(ours)
    assert set(got) == {k for k in want if not k.endswith("_created")}
    for name, value in got.items():
        assert value == pytest.approx(want[name], rel=1e-9), name
    assert got['gap_seconds_bucket{le="+Inf"}'] == len(values)
