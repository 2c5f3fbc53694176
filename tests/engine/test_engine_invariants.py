"""Whatever happens (adds, steps, aborts, model failures, expired deadlines), every slot ends free."""

import asyncio

from engine_support import POLICIES, FakeClock, PoisonRunner, run, wait_for_snapshot, weights
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corrige.engine import Engine, EngineConfig, FinishReason, InternalError, SamplingParams
from corrige.engine.core import EngineCore
from corrige.engine.request import Request, RequestOutput, RequestStatus, TokenEvent

N_CTX = weights().cfg.n_ctx

requests = st.tuples(st.integers(1, 12), st.integers(1, 10), st.booleans())  # prompt length, max_tokens, poisoned
operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), requests),
        st.tuples(st.just("step"), st.none()),
        st.tuples(st.just("abort"), st.integers(0, 40)),
        st.tuples(st.just("wait"), st.sampled_from([0.001, 0.01, 0.1])),
    ),
    max_size=60,
)
configs = st.builds(
    EngineConfig,
    policy=st.sampled_from(["none", "static", "continuous"]),
    n_slots=st.integers(1, 6),
    max_batch=st.integers(1, 6),
    max_wait_ms=st.sampled_from([0.0, 5.0]),
    prefill_token_budget=st.integers(1, 30),
    queue_timeout_s=st.sampled_from([None, 0.05]),
    speculative_tokens=st.sampled_from([0, 0, 3]),  # the prompts repeat, so guesses are made and taken
    speculative_token_budget=st.integers(1, 12),
)


def check_consistent(core: EngineCore) -> None:
    """Slots are owned exactly by the running requests; nothing else holds one."""
    scheduler, pool = core.scheduler, core.pool
    assert pool.num_used + pool.num_free == pool.num_total
    assert sorted(r.slot for r in scheduler.running) == sorted(s for s in range(pool.num_total) if pool.owner(s))
    for request in scheduler.running:
        assert request.status is RequestStatus.RUNNING and pool.owner(request.slot) == request.request_id
    assert all(r.status is RequestStatus.WAITING and r.slot is None for r in scheduler.waiting)
    assert len(scheduler.requests) == len(scheduler.running) + len(scheduler.waiting)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs, ops=operations)
def test_every_slot_ends_free_whatever_the_schedule(config, ops):
    clock = FakeClock()
    core = EngineCore(weights(), config, clock)
    core.runner = PoisonRunner(core.runner.weights, core.runner.cache)
    added: list[str] = []
    tokens: dict[str, list[int]] = {}
    outputs: dict[str, RequestOutput] = {}

    def collect(events):
        for request, event in events:
            if isinstance(event, TokenEvent):
                tokens.setdefault(request.request_id, []).append(event.token_id)
            else:
                assert event.request_id not in outputs, "a request finished twice"
                outputs[event.request_id] = event

    for op, arg in ops:
        if op == "add":
            prompt_len, max_tokens, poisoned = arg
            prompt = [PoisonRunner.POISON if poisoned else 1] + [2] * (prompt_len - 1)
            request_id = f"r{len(added)}"
            deadline = None if config.queue_timeout_s is None else clock() + config.queue_timeout_s
            params = SamplingParams(max_tokens=min(max_tokens, N_CTX - prompt_len), stop_token_ids=(7,))
            core.add_request(Request(request_id, prompt, params, clock(), deadline=deadline))
            added.append(request_id)
        elif op == "step":
            collect(core.step().events)
        elif op == "abort" and added:
            collect(core.abort_request(added[arg % len(added)]))
        elif op == "wait":
            clock.advance(arg)
        check_consistent(core)

    for _ in range(10 * N_CTX * max(len(added), 1)):
        if not core.has_unfinished():
            break
        clock.advance(0.01)
        collect(core.step().events)
        check_consistent(core)

    assert core.pool.num_free == config.n_slots and core.pool.num_used == 0
    assert not core.has_unfinished() and core.num_waiting == core.num_running == 0
    assert sorted(outputs) == sorted(added)
    for request_id, output in outputs.items():
        assert list(output.token_ids) == tokens.get(request_id, [])
        if output.finish_reason is FinishReason.ERROR:
            assert output.error is not None


# Through the real threaded engine and its asyncio front end: concurrent callers that finish,
# get cancelled, abort by id, leave a stream early, or hit a model failure.
behaviours = st.lists(
    st.tuples(st.sampled_from(["finish", "cancel", "abort", "leave_stream", "poison"]), st.integers(1, 12)),
    min_size=1,
    max_size=24,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],  # `poison` stays on
)
@given(policy=st.sampled_from(POLICIES), n_slots=st.integers(2, 6), plan=behaviours)
def test_every_slot_ends_free_through_the_async_engine(poison, policy, n_slots, plan):
    w = weights()
    config = EngineConfig(policy=policy, n_slots=n_slots, max_batch=n_slots, n_threads=2, max_wait_ms=1)

    async def client(engine: Engine, index: int, behaviour: str, max_tokens: int):
        prompt = [poison if behaviour == "poison" else 1 + index % 50, 2, 3]
        params = SamplingParams(max_tokens=max_tokens)
        try:
            if behaviour == "leave_stream":
                async with engine.stream(prompt, params) as stream:
                    async for _ in stream:
                        break
                return
            task = asyncio.create_task(engine.generate(prompt, params, request_id=f"c{index}"))
            await asyncio.sleep(0)
            if behaviour == "cancel":
                task.cancel()
            elif behaviour == "abort":
                engine.abort(f"c{index}")
            await task
        except (asyncio.CancelledError, InternalError):  # cancelled, or batched with a poisoned request
            pass

    async def main():
        with Engine(w, config) as engine:
            await asyncio.gather(*(client(engine, i, b, n) for i, (b, n) in enumerate(plan)))
            return await wait_for_snapshot(
                engine, lambda s: s.finished == len(plan), "every request finished", timeout=20.0
            )

    snapshot = run(main())
    assert snapshot.slots_used == snapshot.running == snapshot.waiting == 0
