"""`FastHistogram` exposes what prometheus-client's `Histogram` would for the same values."""

import random

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from corrige.obs.metrics import STAGE_BUCKETS, TOKEN_BUCKETS, FastHistogram


def _series(registry: CollectorRegistry) -> dict[str, float]:
    lines = generate_latest(registry).decode().splitlines()
    return {k: float(v) for k, v in (line.rsplit(" ", 1) for line in lines if not line.startswith("#"))}


def _same(reference: CollectorRegistry, ours: CollectorRegistry) -> dict[str, float]:
    want, got = _series(reference), _series(ours)
    assert set(got) == {k for k in want if not k.split("{")[0].endswith("_created")}
    for name, value in got.items():
        assert value == pytest.approx(want[name], rel=1e-9), name
    return got


def _values(seed: int, n: int) -> list[float]:
    rng = random.Random(seed)
    values = [rng.choice([0.0, 0.0002, 0.001]) if rng.random() < 0.3 else rng.expovariate(200) for _ in range(n)]
    return values + [3.0, 1.0]  # past the last bound, and on it


@pytest.mark.parametrize("chunk", [1, 27, 700])  # one at a time, a request's worth, NumPy's path
def test_bulk_observations_give_the_reference_buckets_count_and_sum(chunk):
    values = _values(4, 700)
    reference, ours = CollectorRegistry(), CollectorRegistry()
    histogram = Histogram("gap_seconds", "gaps", buckets=TOKEN_BUCKETS, registry=reference)
    for value in values:
        histogram.observe(value)
    fast = FastHistogram("gap_seconds", "gaps", TOKEN_BUCKETS, registry=ours)
    for start in range(0, len(values), chunk):
        if chunk == 1:
            fast.observe(values[start])
        else:
            fast.observe_many(values[start : start + chunk])
    fast.observe_many([])
    got = _same(reference, ours)
    assert got['gap_seconds_bucket{le="+Inf"}'] == len(values)


def test_labelled_series_match_the_reference_and_refuse_a_wrong_label_count():
    rng = random.Random(7)
    stages = ["validate.body", "tokenize.bpe", "model.decode"]
    pairs = [(rng.choice(stages), v) for v in _values(5, 300)]
    reference, ours = CollectorRegistry(), CollectorRegistry()
    histogram = Histogram("stage_seconds", "stages", ["stage"], buckets=STAGE_BUCKETS, registry=reference)
    for stage, value in pairs:
        histogram.labels(stage).observe(value)
    fast = FastHistogram("stage_seconds", "stages", STAGE_BUCKETS, ours, ["stage"])
    fast.observe_each(pairs[:100])
    for stage, value in pairs[100:]:
        fast.observe(value, stage)
    got = _same(reference, ours)
    assert sum(v for k, v in got.items() if k.startswith('stage_seconds_bucket{le="+Inf"')) == len(pairs)
    with pytest.raises(ValueError, match="takes labels"):
        fast.observe(0.1)
