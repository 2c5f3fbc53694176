"""The engine in a child process: the same answers, errors and slot accounting as in process."""

import asyncio
import functools
import os
import signal

import pytest
from engine_support import EOS, greedy_alone, random_workload, run, wait_for_snapshot, weights

from corrige.engine import (
    EngineClosed,
    EngineConfig,
    EngineRestarting,
    FinishReason,
    InvalidRequest,
    Overloaded,
    SamplingParams,
)
from corrige.engine.process import EngineProcess, random_model


def start(step_delay_s: float = 0.0, **config) -> EngineProcess:
    """The child builds the same random weights as `weights()` here; a step delay keeps requests
    running long enough to be seen running."""
    config = EngineConfig(**{"n_slots": 8, "max_batch": 8, "speculative_tokens": 0, **config})
    return EngineProcess(functools.partial(random_model, "tiny", 3), weights().cfg, config, step_delay_s=step_delay_s)


@pytest.mark.parametrize(
    ("policy", "speculative_tokens"), [("continuous", 0), ("continuous", 4), ("static", 4), ("none", 4), ("threads", 0)]
)
def test_greedy_answers_match_the_plain_loop_for_50_concurrent_requests(policy, speculative_tokens):
    w = weights()
    work = random_workload(w, 50, seed=8)
    expected = [greedy_alone(w, p, n, EOS) for p, n in work]

    async def main():
        with start(policy=policy, speculative_tokens=speculative_tokens, max_wait_ms=1, n_threads=2) as engine:
            params = [SamplingParams(max_tokens=n, stop_token_ids=(EOS,), logprobs=True) for _, n in work]
            outputs = await asyncio.gather(*(engine.generate(p, s) for (p, _), s in zip(work, params, strict=True)))
            return outputs, await wait_for_snapshot(engine, lambda s: s.finished == 50, "all finished")

    outputs, snapshot = run(main())
    assert [list(o.token_ids) for o in outputs] == expected
    assert all(len(o.logprobs) == len(o.token_ids) for o in outputs)
    assert (snapshot.slots_used, snapshot.running, snapshot.waiting) == (0, 0, 0)


def test_streams_cancellation_and_subscribers_cross_the_process_boundary():
    steps, finished = [], []

    async def main():
        with start(step_delay_s=0.005) as engine:
            engine.subscribe(on_step=steps.append, on_request=finished.append)
            async with engine.stream([1, 2, 3], SamplingParams(max_tokens=6)) as stream:
                tokens = [event.token_id async for event in stream]
            assert tuple(tokens) == stream.output.token_ids and len(tokens) == 6
            # a caller that goes away aborts its request, and its slot comes back
            task = asyncio.create_task(engine.generate([4, 5], SamplingParams(max_tokens=30)))
            await wait_for_snapshot(engine, lambda s: s.running == 1, "the long request runs")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return await wait_for_snapshot(engine, lambda s: s.aborted == 1 and s.slots_used == 0, "abort frees")

    snapshot = run(main())
    assert snapshot.finished == 2 and len(finished) == 2
    assert {o.finish_reason for o in finished} == {FinishReason.LENGTH, FinishReason.ABORT}
    assert sum(s.batch_size for s in steps) >= 6


def test_refusals_are_typed_and_immediate():
    async def main():
        with start(max_waiting=2, n_slots=1, max_batch=1) as engine:
            with pytest.raises(InvalidRequest, match="at most"):
                engine.stream(list(range(10)), SamplingParams(max_tokens=weights().cfg.n_ctx))
            # one takes the only slot, two wait: the queue is full
            long = [asyncio.create_task(engine.generate([1], SamplingParams(max_tokens=30))) for _ in range(3)]
            await asyncio.sleep(0)
            with pytest.raises(Overloaded):
                engine.stream([1], SamplingParams(max_tokens=2))
            await asyncio.gather(*long)
        with pytest.raises(EngineClosed):
            engine.stream([1], SamplingParams())

    run(main())


def test_closing_ends_requests_in_flight_with_engine_closed():
    async def main():
        engine = start(step_delay_s=0.005, n_slots=1, max_batch=1)
        tasks = [asyncio.create_task(engine.generate([i + 1], SamplingParams(max_tokens=30))) for i in range(4)]
        await wait_for_snapshot(engine, lambda s: s.running == 1, "one runs")
        await asyncio.to_thread(engine.close)
        return await asyncio.gather(*tasks, return_exceptions=True), engine

    results, engine = run(main())
    assert any(isinstance(r, EngineClosed) for r in results)
    assert all(isinstance(r, EngineClosed) or r.finish_reason is FinishReason.LENGTH for r in results)
    assert not engine.running


async def kill_mid_request(engine: EngineProcess) -> int:
    """SIGKILL the child while a request runs: that request fails with `EngineRestarting`, and the
    engine does not run until a new child is ready. Returns the dead child's pid."""
    task = asyncio.create_task(engine.generate([1], SamplingParams(max_tokens=30)))
    await wait_for_snapshot(engine, lambda s: s.running == 1, "it runs")
    dead = engine.pid
    os.kill(dead, signal.SIGKILL)
    with pytest.raises(EngineRestarting, match="restarting"):
        await task
    return dead


def test_the_child_builds_with_the_tutor_parts():
    from corrige.tutor.agent import Tutor, engine_parts

    tutor = Tutor.load()
    prompt = tutor.build_prompt("Yesterday I goed to the store.")
    eos = tutor.tokenizer.special.eos
    params = SamplingParams(max_tokens=tutor.max_new_tokens_for(len(prompt)), stop_token_ids=(eos,), logprobs=True)

    async def main():
        config = EngineConfig(speculative_tokens=8)
        with EngineProcess(functools.partial(engine_parts, None), tutor.weights.cfg, config) as engine:
            return await engine.generate(prompt, params), engine.snapshot()

    output, snapshot = run(main())
    correction = tutor.interpret("Yesterday I goed to the store.", output.token_ids, output.logprobs, len(prompt))
    assert correction.corrected == "Yesterday I went to the store." and snapshot.accepted_tokens > 0


def test_an_event_loop_can_read_the_results_itself():
    """`loop=`: the server's event loop reads the pipe (no reader thread); answers and deaths arrive the same."""
    w = weights()
    work = random_workload(w, 20, seed=9)
    expected = [greedy_alone(w, p, n, EOS) for p, n in work]

    async def main():
        loop = asyncio.get_running_loop()
        config = EngineConfig(
            n_slots=8, max_batch=8, speculative_tokens=0
        )  # one token a step: the kill lands mid-request
        engine = await asyncio.to_thread(
            EngineProcess, functools.partial(random_model, "tiny", 3), w.cfg, config, step_delay_s=0.005, loop=loop
        )
        outputs = await asyncio.gather(
            *(engine.generate(p, SamplingParams(max_tokens=n, stop_token_ids=(EOS,))) for p, n in work)
        )
        async with engine.stream([1, 2, 3], SamplingParams(max_tokens=5)) as stream:
            assert len([event async for event in stream]) == 5
        await kill_mid_request(engine)
        # a new child answers the same, through the same loop
        again = await engine.generate(work[0][0], SamplingParams(max_tokens=work[0][1], stop_token_ids=(EOS,)))
        assert list(again.token_ids) == expected[0] and engine.restarts == 1
        await asyncio.to_thread(engine.close)
        return outputs

    assert [list(o.token_ids) for o in run(main())] == expected


def test_under_uvloop_the_pipe_stays_blocking_and_big_steps_arrive_whole():
    """uvicorn runs on uvloop, whose `add_reader` makes the descriptor non-blocking; a step's
    results larger than the socket's buffer then arrived in pieces and the first `recv` raised
    BlockingIOError, which looked like a dead child. 64 answers with log-probabilities finishing
    in one static batch make such a message."""
    uvloop = pytest.importorskip("uvloop")
    w = weights()
    work = [(list(range(1, 9)), 24) for _ in range(64)]
    expected = greedy_alone(w, work[0][0], 24, None)

    async def main():
        loop = asyncio.get_running_loop()
        config = EngineConfig(policy="static", n_slots=64, max_batch=64, max_wait_ms=200)
        engine = await asyncio.to_thread(
            EngineProcess, functools.partial(random_model, "tiny", 3), w.cfg, config, loop=loop
        )
        await wait_for_snapshot(engine, lambda s: s.slots_total == 64, "the child is ready")
        await asyncio.sleep(0.05)  # the loop has registered its reader
        assert os.get_blocking(engine._conn.fileno())
        params = SamplingParams(max_tokens=24, ignore_eos=True, logprobs=True)
        outputs = await asyncio.gather(*(engine.generate(p, params) for p, _ in work))
        assert engine.running
        await asyncio.to_thread(engine.close)
        return outputs

    outputs = uvloop.run(asyncio.wait_for(main(), 60))
    assert all(list(o.token_ids) == expected for o in outputs)


def test_a_flood_of_streams_fills_both_pipes_and_everything_still_comes_back():
    """Hundreds of streams at once: the child sends a token event per token while the parent keeps
    sending adds; neither side may wait on the other (each pipe holds only ~64 KiB)."""
    w = weights()
    work = random_workload(w, 400, seed=12)

    async def main():
        with start(n_slots=32, max_batch=32, max_waiting=1000, speculative_tokens=4) as engine:

            async def one(prompt, n):
                async with engine.stream(prompt, SamplingParams(max_tokens=n)) as stream:
                    count = sum([1 async for _ in stream])
                return count, stream.output

            results = await asyncio.gather(*(one(p, n) for p, n in work))
            return results, await wait_for_snapshot(engine, lambda s: s.finished == 400, "all finished")

    results, snapshot = run(main(), timeout=120.0)
    assert [count for count, _ in results] == [n for _, n in work]
    assert all(len(output.token_ids) == n for (_, output), (_, n) in zip(results, work, strict=True))
    assert (snapshot.slots_used, snapshot.running, snapshot.waiting) == (0, 0, 0)
