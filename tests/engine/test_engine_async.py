"""The asyncio engine: exactness under load, streaming, cancellation, admission control, stats."""

import asyncio

import pytest
from engine_support import EOS, POLICIES, FakeClock, greedy_alone, random_workload, run, wait_for_snapshot, weights

from corrige.engine import (
    DeadlineExceeded,
    Engine,
    EngineClosed,
    EngineConfig,
    FinishReason,
    InternalError,
    InvalidRequest,
    Overloaded,
    SamplingParams,
)


def config(policy: str, **overrides) -> EngineConfig:
    # Fewer slots than requests, so requests queue, join mid-flight and reuse slots.
    # One token per step; no queue deadline unless a test sets one: the gate holds the model, and a
    # loaded machine must not turn a waiting request into a DeadlineExceeded the test did not ask for.
    base = {"n_slots": 16, "max_batch": 16, "max_wait_ms": 1, "speculative_tokens": 0, "queue_timeout_s": None}
    return EngineConfig(policy=policy, **{**base, **overrides})


@pytest.mark.parametrize("policy", POLICIES)
def test_greedy_output_is_the_same_alone_or_among_60_concurrent_requests(policy):
    w = weights()
    work = random_workload(w, 60, seed=11)
    stops = [(EOS,) if i % 2 else () for i in range(len(work))]  # half may stop early at EOS
    expected = [greedy_alone(w, p, n, s[0] if s else None) for (p, n), s in zip(work, stops, strict=True)]

    async def main():
        with Engine(w, config(policy)) as engine:
            outputs = await asyncio.gather(
                *(
                    engine.generate(p, SamplingParams(max_tokens=n, stop_token_ids=s))
                    for (p, n), s in zip(work, stops, strict=True)
                )
            )
            return outputs, engine.snapshot()

    outputs, snapshot = run(main())
    assert [list(o.token_ids) for o in outputs] == expected
    assert {o.finish_reason for o in outputs} <= {FinishReason.STOP, FinishReason.LENGTH}
    assert (snapshot.slots_used, snapshot.running, snapshot.waiting, snapshot.finished) == (0, 0, 0, 60)


def test_greedy_exactness_with_the_seed_model_under_continuous_batching():
    w = weights("seed")
    work = random_workload(w, 24, seed=5, max_prompt=30)
    expected = [greedy_alone(w, p, n, None) for p, n in work]

    async def main():
        with Engine(w, EngineConfig(policy="continuous", n_slots=8, prefill_token_budget=64)) as engine:
            return await asyncio.gather(*(engine.generate(p, SamplingParams(max_tokens=n)) for p, n in work))

    assert [list(o.token_ids) for o in run(main())] == expected


@pytest.mark.parametrize("policy", ["static", "continuous"])
def test_seeded_sampling_is_reproducible_whatever_the_batch(policy):
    w = weights()
    params = SamplingParams(max_tokens=12, temperature=0.9, top_k=30, top_p=0.9, seed=1234)
    prompt = [3, 14, 15, 92, 65]

    async def alone():
        with Engine(w, config(policy)) as engine:
            return await engine.generate(prompt, params)

    async def in_a_crowd():
        noise = [
            engine_params
            for i in range(20)
            for engine_params in [SamplingParams(max_tokens=1 + i % 9, temperature=1.0 if i % 2 else 0.0, seed=i)]
        ]
        with Engine(w, config(policy)) as engine:
            crowd = [engine.generate([i % 90 + 1] * (1 + i % 7), p) for i, p in enumerate(noise)]
            outputs = await asyncio.gather(*crowd[:10], engine.generate(prompt, params), *crowd[10:])
            return outputs[10]

    first, again, crowded = run(alone()), run(alone()), run(in_a_crowd())
    assert first.token_ids == again.token_ids == crowded.token_ids
    unseeded = SamplingParams(max_tokens=12, temperature=0.9, seed=None)
    assert len(run(_generate(w, prompt, unseeded)).token_ids) == 12


async def _generate(w, prompt, params, policy="continuous"):
    with Engine(w, config(policy)) as engine:
        return await engine.generate(prompt, params)


@pytest.mark.parametrize("policy", POLICIES)
def test_stream_yields_every_token_then_the_output(policy):
    w = weights()
    prompt, params = [5, 6, 7], SamplingParams(max_tokens=9)

    async def main():
        with Engine(w, config(policy)) as engine:
            stream = engine.stream(prompt, params)
            events = [event async for event in stream]
            return events, stream.output

    events, output = run(main())
    assert [e.token_id for e in events] == list(output.token_ids) == greedy_alone(w, prompt, 9, None)
    assert [e.index for e in events] == list(range(9))
    stats = output.stats
    assert stats.num_output_tokens == 9 and len(stats.inter_token_s) == 8
    assert stats.num_steps == 9  # one token per step: each one stamped by its own step
    assert all(gap > 0 for gap in stats.inter_token_s)
    # the phases split the request's time: waiting, then the prompt, then the other tokens
    assert stats.queue_s + stats.prefill_s == pytest.approx(stats.ttft_s)
    assert sum(stats.inter_token_s) == pytest.approx(stats.decode_s)
    assert stats.ttft_s + stats.decode_s <= stats.latency_s  # the last token, then the finish (threads: retired later)


def test_cancelling_the_awaiting_task_frees_the_slot_within_one_step(gate):
    w = weights()

    async def main():
        with Engine(w, config("continuous")) as engine:
            params = SamplingParams(max_tokens=25)
            victim = asyncio.create_task(engine.generate([1, 2, 3], params))
            other = asyncio.create_task(engine.generate([4, 5, 6], params))
            gate.release(2)
            await wait_for_snapshot(engine, lambda s: s.steps == 2, "two steps with both requests running")
            victim.cancel()  # the client went away, mid-generation
            with pytest.raises(asyncio.CancelledError):
                await victim
            assert engine.snapshot().slots_used == 2  # the loop is held inside step 3
            gate.release(1)  # step 3 ends; the abort lands before step 4
            freed = await wait_for_snapshot(engine, lambda s: s.slots_used == 1, "the victim's slot freed")
            assert freed.steps == 3 and freed.aborted == 1 and freed.running == 1
            gate.release(10_000)
            output = await other
            assert len(output.token_ids) == 25
            return await wait_for_snapshot(engine, lambda s: s.slots_used == 0, "all slots free")

    run(main())


@pytest.mark.parametrize("policy", POLICIES)
def test_cancelled_and_abandoned_requests_free_their_slots_under_every_policy(policy, gate):
    w = weights()

    async def main():
        with Engine(w, config(policy, n_threads=2)) as engine:
            params = SamplingParams(max_tokens=20)
            tasks = [asyncio.create_task(engine.generate([i + 1, 2, 3], params)) for i in range(6)]
            stream = engine.stream([9, 9, 9], params)
            await asyncio.sleep(0)  # every task submits its request
            if policy == "threads":  # two workers: the stream and the first task run, five wait
                await wait_for_snapshot(engine, lambda s: s.running == 2 and s.waiting == 5, "two running")
            gate.release(2)  # some steps, nobody near the end
            await stream.aclose()  # the client leaves without reading
            for task in tasks[::2]:
                task.cancel()
            await asyncio.sleep(0)  # the cancelled tasks send their aborts
            if policy == "threads":
                # Its loop thread is free, and its workers may already wait for their next permit.
                # The waiting victims' aborts were sent last, so once both count, the loop has also
                # flagged the running victims, which stop before their next token.
                await wait_for_snapshot(engine, lambda s: s.aborted >= 2, "the waiting victims aborted")
            gate.release(10_000)
            results = await asyncio.gather(*tasks, return_exceptions=True)
            assert [isinstance(r, asyncio.CancelledError) for r in results] == [True, False] * 3
            assert all(r.finish_reason is FinishReason.LENGTH for r in results[1::2])
            return await wait_for_snapshot(
                engine, lambda s: s.finished == 7 and s.slots_used == s.running == s.waiting == 0, "all slots free"
            )

    assert run(main()).aborted == 4


def test_breaking_out_of_a_stream_aborts_the_request(gate):
    w = weights()

    async def main():
        with Engine(w, config("continuous")) as engine:
            stream = engine.stream([1, 2, 3], SamplingParams(max_tokens=25))
            gate.release(1)
            async with stream:
                async for _ in stream:
                    break  # the client leaves after one token
            gate.release(10_000)
            return await wait_for_snapshot(engine, lambda s: s.finished == 1 and s.slots_used == 0, "slot freed")

    assert run(main()).aborted == 1


def test_abort_by_id_ends_the_request_with_reason_abort(gate):
    w = weights()

    async def main():
        with Engine(w, config("continuous")) as engine:
            task = asyncio.create_task(engine.generate([1, 2], SamplingParams(max_tokens=20), request_id="mine"))
            gate.release(1)
            await wait_for_snapshot(engine, lambda s: s.steps == 1, "first step")
            engine.abort("mine")
            engine.abort("nobody")  # unknown ids are ignored
            gate.release(10_000)
            return await task

    output = run(main())
    assert output.finish_reason is FinishReason.ABORT and 1 <= len(output.token_ids) < 20


def test_a_full_queue_refuses_at_once_with_overloaded(gate):
    w = weights()

    async def main():
        with Engine(w, config("none", max_waiting=3)) as engine:
            running = asyncio.create_task(engine.generate([1, 2], SamplingParams(max_tokens=4)))
            gate.release(1)  # one step, then the loop holds inside the next
            await wait_for_snapshot(engine, lambda s: s.running == 1, "the first request running")
            queued = [engine.stream([3, 4], SamplingParams(max_tokens=2)) for _ in range(3)]
            with pytest.raises(Overloaded) as refused:
                engine.stream([5, 6], SamplingParams(max_tokens=2))  # raised at submission, not later
            with pytest.raises(Overloaded):
                await engine.generate([5, 6], SamplingParams(max_tokens=2))
            assert refused.value.code == "overloaded" and "waiting" in str(refused.value)
            gate.release(10_000)
            await running
            for stream in queued:
                async for _ in stream:
                    pass
                assert stream.output.finish_reason is FinishReason.LENGTH
            # room again once the queue drained
            return await engine.generate([5, 6], SamplingParams(max_tokens=2))

    assert run(main()).finish_reason is FinishReason.LENGTH


def test_a_request_that_waits_past_its_deadline_gets_deadline_exceeded(gate):
    w = weights()
    clock = FakeClock()

    async def main():
        with Engine(w, config("none", queue_timeout_s=5.0), clock=clock) as engine:
            running = asyncio.create_task(engine.generate([1, 2], SamplingParams(max_tokens=3)))
            gate.release(1)
            await wait_for_snapshot(engine, lambda s: s.running == 1, "the first request running")
            late = asyncio.create_task(engine.generate([3, 4], SamplingParams(max_tokens=3)))
            patient = asyncio.create_task(engine.generate([3, 4], SamplingParams(max_tokens=3), queue_timeout_s=60))
            await wait_for_snapshot(engine, lambda s: s.waiting == 2, "two requests queued")
            clock.advance(10.0)
            gate.release(10_000)
            with pytest.raises(DeadlineExceeded) as expired:
                await late
            assert expired.value.code == "deadline_exceeded"
            return await running, await patient

    first, patient = run(main())
    assert first.finish_reason is patient.finish_reason is FinishReason.LENGTH


def test_requests_that_cannot_fit_are_invalid_with_a_clear_message():
    w = weights()  # a 32-token window

    async def main():
        with Engine(w, config("continuous")) as engine:
            with pytest.raises(InvalidRequest) as too_long:
                engine.stream(list(range(1, 30)), SamplingParams(max_tokens=8))
            with pytest.raises(InvalidRequest, match="empty"):
                await engine.generate([], SamplingParams())
            with pytest.raises(InvalidRequest, match="vocabulary"):
                await engine.generate([1, 10_000], SamplingParams())
            with pytest.raises(InvalidRequest, match="max_tokens"):
                SamplingParams(max_tokens=0)
            await engine.generate([1], SamplingParams(max_tokens=3), request_id="same")
            first = engine.stream([1], SamplingParams(max_tokens=3), request_id="dup")
            with pytest.raises(InvalidRequest, match="already in flight"):
                engine.stream([1], SamplingParams(max_tokens=3), request_id="dup")
            await first.aclose()
            return too_long.value

    error = run(main())
    assert error.code == "invalid_request"
    assert "29 tokens" in str(error) and "32 tokens" in str(error) and "max_tokens" in str(error)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_model_failure_fails_its_requests_and_the_engine_keeps_serving(policy, poison):
    w = weights()

    async def main():
        with Engine(w, config(policy)) as engine:
            with pytest.raises(InternalError) as failed:
                await engine.generate([poison, 1, 2], SamplingParams(max_tokens=4))
            assert failed.value.code == "internal_error"
            output = await engine.generate([1, 2], SamplingParams(max_tokens=4))
            return output, engine.snapshot()

    output, snapshot = run(main())
    assert output.finish_reason is FinishReason.LENGTH
    assert snapshot.failed == 1 and snapshot.slots_used == 0


@pytest.mark.parametrize("policy", POLICIES)
def test_closing_fails_requests_in_flight_with_engine_closed(policy, gate):
    w = weights()

    async def main():
        engine = Engine(w, config(policy, n_threads=2))
        tasks = [asyncio.create_task(engine.generate([i + 1], SamplingParams(max_tokens=10))) for i in range(4)]
        gate.release(1)
        await wait_for_snapshot(engine, lambda s: s.running >= 1, "a request running")
        gate.release(10_000)
        await asyncio.to_thread(engine.close)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        with pytest.raises(EngineClosed):
            engine.stream([1], SamplingParams())
        return results, engine.snapshot()

    results, snapshot = run(main())
    assert all(isinstance(r, EngineClosed) or r.finish_reason is FinishReason.LENGTH for r in results)
    assert snapshot.slots_used == 0


@pytest.mark.parametrize("policy", POLICIES)
def test_subscribers_see_every_step_and_every_request(policy):
    w = weights()
    steps, finished = [], []

    async def main():
        with Engine(w, config(policy)) as engine:
            engine.subscribe(on_step=steps.append, on_request=finished.append)
            await asyncio.gather(*(engine.generate([i + 1, 2], SamplingParams(max_tokens=5)) for i in range(8)))
            return engine.snapshot()

    snapshot = run(main())
    assert len(finished) == 8 and {o.stats.num_output_tokens for o in finished} == {5}
    assert sum(s.batch_size for s in steps) == 40 == snapshot.generated_tokens
    assert sum(s.num_prefill_tokens for s in steps) == 16 == snapshot.prompt_tokens
    assert all(s.step_s >= s.model_s >= 0 and s.slots_used <= 16 for s in steps)
    assert snapshot.steps == len(steps) and snapshot.model_s > 0
