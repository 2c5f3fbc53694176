"""Shared pieces of the engine tests: models, workloads, a fake clock and model runners that
block or fail on demand (so tests control steps without asserting on wall-clock time)."""

from __future__ import annotations

import asyncio
import functools
import threading

import numpy as np
import pytest

from corrige.engine import core as core_module
from corrige.engine import threads as threads_module
from corrige.engine.engine import Engine
from corrige.engine.runner import ModelRunner
from corrige.model import preset
from corrige.model.generate import greedy_generate_scored
from corrige.model.numpy_gpt import KVCache, RuntimeWeights, prepare
from corrige.model.weights import random_params

POLICIES = ["none", "threads", "static", "continuous"]
EOS = 5  # a stop token in the tests' mixes


@functools.cache
def weights(name: str = "tiny", seed: int = 3) -> RuntimeWeights:
    cfg = preset(name)
    return prepare(random_params(cfg, seed=seed), cfg)


def random_workload(w: RuntimeWeights, n: int, seed: int, max_prompt: int = 20) -> list[tuple[list[int], int]]:
    """`n` (prompt, max_tokens) pairs of mixed lengths that fit the context window."""
    cfg, rng = w.cfg, np.random.default_rng(seed)
    work = []
    for _ in range(n):
        length = int(rng.integers(1, max_prompt + 1))
        max_tokens = int(rng.integers(1, cfg.n_ctx - length + 1))
        work.append((rng.integers(0, cfg.vocab_size, length).tolist(), max_tokens))
    return work


def greedy_alone(w: RuntimeWeights, prompt: list[int], max_tokens: int, eos_id: int | None) -> list[int]:
    return greedy_generate_scored(w, KVCache.allocate(w.cfg, 1), [prompt], max_tokens, eos_id=eos_id)[0].tokens


def run(coro, timeout: float = 60.0):
    """Run a coroutine with a generous safety timeout, so a bug hangs no test run."""

    async def bounded():
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


async def wait_for_snapshot(engine: Engine, condition, what: str, timeout: float = 20.0):
    """Poll `engine.snapshot()` until `condition(snapshot)` holds; returns that snapshot."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while not condition(snapshot := engine.snapshot()):
        if loop.time() > give_up:
            raise AssertionError(f"engine never reached: {what}; last snapshot {snapshot}")
        await asyncio.sleep(0.001)
    return snapshot


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class GatedRunner(ModelRunner):
    """Each model step waits for a permit, so a test decides when steps happen."""

    gate: threading.Semaphore

    def execute(self, output, rows):
        self.gate.acquire()
        return super().execute(output, rows)


class PoisonRunner(ModelRunner):
    """Raises for any step that runs a request whose prompt starts with `POISON`."""

    POISON = 0

    def execute(self, output, rows):
        if any(r.prompt_token_ids[0] == self.POISON for r in rows):
            raise RuntimeError("injected model failure")
        return super().execute(output, rows)


@pytest.fixture
def gate(monkeypatch):
    """Make engines built in this test step only when `gate.release()` is called."""
    semaphore = threading.Semaphore(0)
    runner = type("Gated", (GatedRunner,), {"gate": semaphore})
    monkeypatch.setattr(core_module, "ModelRunner", runner)
    monkeypatch.setattr(threads_module, "ModelRunner", runner)
    yield semaphore
    semaphore.release(10_000)  # let a still-running engine finish and close


@pytest.fixture
def poison(monkeypatch):
    """Make engines built in this test fail the steps that run a poisoned prompt."""
    monkeypatch.setattr(core_module, "ModelRunner", PoisonRunner)
    monkeypatch.setattr(threads_module, "ModelRunner", PoisonRunner)
    return PoisonRunner.POISON
