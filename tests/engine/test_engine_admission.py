"""Admission control counts what really waits for a slot: a burst first fills the free KV slots,
and only the requests beyond them count against `max_waiting` (in process and in a child)."""

import asyncio
import functools

from engine_support import run, wait_for_snapshot, weights

from corrige.engine import Engine, EngineConfig, FinishReason, Overloaded, SamplingParams
from corrige.engine.process import EngineProcess, random_model

SLOTS, BUSY, MAX_WAITING, BURST = 64, 24, 16, 500
LONG = SamplingParams(max_tokens=30, ignore_eos=True)  # still running when the burst comes
SHORT = SamplingParams(max_tokens=3, ignore_eos=True)


def config() -> EngineConfig:
    return EngineConfig(n_slots=SLOTS, max_batch=SLOTS, max_waiting=MAX_WAITING)


def burst(engine) -> tuple[list, int]:
    """Submit `BURST` requests in one go (no await, so no step or snapshot comes in between)."""
    admitted, refused = [], 0
    for i in range(BURST):
        try:
            admitted.append(engine.stream([1 + i % 50, 2], SHORT))
        except Overloaded:
            refused += 1
    return admitted, refused


async def drain(streams) -> list:
    for stream in streams:
        async for _ in stream:
            pass
    return [stream.output for stream in streams]


def test_a_burst_fills_the_free_slots_then_max_waiting_in_process(gate):
    async def main():
        with Engine(weights(), config()) as engine:
            busy = [engine.stream([3, 4], LONG) for _ in range(BUSY)]
            # their prefill; the loop then holds inside the next step. On a loaded machine the loop may
            # schedule a step while the requests are still being added: then a second step takes the rest
            for _ in range(3):
                gate.release(1)
                try:
                    await wait_for_snapshot(engine, lambda s: s.running == BUSY, "the busy requests run", timeout=2.0)
                    break
                except AssertionError:
                    continue
            await wait_for_snapshot(engine, lambda s: s.running == BUSY, "the busy requests run")
            admitted, refused = burst(engine)
            gate.release(2)  # the held step, then the one that admits the burst
            state = await wait_for_snapshot(engine, lambda s: s.running == SLOTS, "the free slots filled")
            gate.release(100_000)
            outputs = await drain(busy + admitted)
            return len(admitted), refused, state, outputs

    admitted, refused, state, outputs = run(main())
    assert admitted == SLOTS - BUSY + MAX_WAITING and refused == BURST - admitted
    assert state.waiting == MAX_WAITING  # the bound was what really waited for a slot
    assert all(o.finish_reason is FinishReason.LENGTH for o in outputs)


def test_a_burst_fills_the_free_slots_then_max_waiting_through_the_engine_process():
    async def main():
        loop = asyncio.get_running_loop()  # the loop reads the pipe: no snapshot lands during the burst
        build = functools.partial(random_model, "tiny", 3)
        engine = await asyncio.to_thread(EngineProcess, build, weights().cfg, config(), step_delay_s=0.02, loop=loop)
        try:
            busy = [engine.stream([3, 4], LONG) for _ in range(BUSY)]
            await wait_for_snapshot(engine, lambda s: s.running == BUSY, "the busy requests run")
            admitted, refused = burst(engine)
            full = await wait_for_snapshot(engine, lambda s: s.running == SLOTS and s.waiting > 0, "slots filled")
            outputs = await drain(busy + admitted)
            return len(admitted), refused, full, outputs
        finally:
            await asyncio.to_thread(engine.close)

    admitted, refused, full, outputs = run(main())
    assert admitted == SLOTS - BUSY + MAX_WAITING and refused == BURST - admitted
    assert full.waiting == MAX_WAITING
    # the child took every request the parent admitted (none refused there after all)
    assert all(o.finish_reason is FinishReason.LENGTH for o in outputs)
