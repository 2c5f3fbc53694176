"""StepHistory: engine steps folded into 250 ms buckets, a bounded ring, idle time as zeros, and
fed by a real engine through `Engine.subscribe(on_step=...)`."""

from __future__ import annotations

import asyncio
import threading

import pytest

from corrige.engine import Engine, EngineConfig, SamplingParams
from corrige.engine.stats import StepStats
from corrige.model import preset
from corrige.model.numpy_gpt import prepare
from corrige.model.weights import random_params
from corrige.obs.timeseries import StepHistory


class Clock:
    """A settable engine clock (the engine's own `clock` argument takes the same kind)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def step(t: float, batch: int, waiting: int, running: int | None = None, step_s: float = 0.01) -> StepStats:
    return StepStats(
        step_id=0,
        time=t,
        batch_size=batch,
        num_prefill_requests=0,
        num_prefill_tokens=0,
        num_decode_tokens=batch,
        num_waiting=waiting,
        num_running=batch if running is None else running,
        slots_used=batch,
        step_s=step_s,
        model_s=step_s / 2,
        sample_s=0.0,
        step_cpu_s=step_s,
        model_cpu_s=step_s / 2,
    )


def test_steps_are_aggregated_per_bucket_and_idle_buckets_are_zero():
    clock = Clock(1000.0)
    history = StepHistory(bucket_s=0.25, window_s=2.0, clock=clock)
    for t, batch, waiting in [(1000.01, 2, 4), (1000.02, 4, 0), (1000.24, 6, 2), (1000.60, 1, 1)]:
        history.on_step(step(t, batch, waiting, step_s=0.05))
    clock.now = 1000.9
    snap = history.snapshot()
    assert len(snap["t"]) == 8 and snap["bucket_s"] == 0.25
    # buckets end at the one holding `now` (1000.75–1001.0); 1000.0 is the 5th, 1000.5 the 7th
    assert snap["steps"] == [0, 0, 0, 0, 3, 0, 1, 0]
    assert snap["batch_mean"][4] == pytest.approx(4.0) and snap["batch_max"][4] == 6
    assert snap["waiting_mean"][4] == pytest.approx(2.0) and snap["waiting_max"][4] == 4
    assert snap["tokens"][4] == 12
    assert snap["busy"][4] == pytest.approx(0.15 / 0.25)
    assert snap["batch_max"][6] == 1 and snap["waiting_max"][6] == 1
    # bucket starts on the wall clock, a bucket apart, the last one holding now
    gaps = {round(b - a, 3) for a, b in zip(snap["t"], snap["t"][1:], strict=False)}
    assert gaps == {0.25}
    assert snap["t"][-1] <= snap["now"] < snap["t"][-1] + 0.25 + 0.01


def test_the_ring_keeps_only_the_window():
    clock = Clock(0.0)
    history = StepHistory(bucket_s=0.5, window_s=2.0, clock=clock)  # 4 buckets
    for i in range(40):
        history.on_step(step(i * 0.5 + 0.1, batch=i, waiting=0))
    clock.now = 39 * 0.5 + 0.2
    snap = history.snapshot()
    assert snap["batch_max"] == [36, 37, 38, 39]
    assert len(history._done) <= history.capacity  # the ring is bounded, whatever the run length
    assert history.snapshot(window_s=1.0)["batch_max"] == [38, 39]


def test_concurrent_steps_and_snapshots_lose_nothing():
    clock = Clock(0.0)
    history = StepHistory(bucket_s=0.25, window_s=600.0, clock=clock)
    n_threads, per_thread = 4, 2_000

    def feed(k: int) -> None:
        for i in range(per_thread):
            history.on_step(step(1.0 + (i % 7) * 0.01, batch=1, waiting=k))

    threads = [threading.Thread(target=feed, args=(k,)) for k in range(n_threads)]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        history.snapshot()
    for thread in threads:
        thread.join()
    clock.now = 1.1
    assert sum(history.snapshot()["steps"]) == n_threads * per_thread


def test_fed_by_a_real_engine():
    cfg = preset("tiny")
    weights = prepare(random_params(cfg, seed=1), cfg)
    history = StepHistory()
    engine = Engine(weights, EngineConfig(n_slots=8, max_batch=8))
    engine.subscribe(on_step=history.on_step)
    try:

        async def burst():
            params = SamplingParams(max_tokens=12)
            return await asyncio.gather(*(engine.generate([1, 2, 3, i + 4], params) for i in range(6)))

        outputs = asyncio.run(asyncio.wait_for(burst(), 60))
    finally:
        engine.close()
    snap = history.snapshot()
    steps = engine.snapshot().steps
    assert sum(snap["steps"]) == steps > 0
    assert sum(snap["tokens"]) == sum(len(o.token_ids) for o in outputs)
    assert max(snap["batch_max"]) >= 2  # six requests at once share steps
