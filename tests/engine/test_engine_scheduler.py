"""The policies, driven step by step through the synchronous core with a fake clock."""

import pytest
from engine_support import FakeClock, PoisonRunner, weights

from corrige.engine.config import EngineConfig
from corrige.engine.core import EngineCore
from corrige.engine.errors import DeadlineExceeded, InternalError
from corrige.engine.request import FinishReason, Request, RequestOutput, SamplingParams


def make_core(policy: str, clock: FakeClock, **config) -> EngineCore:
    # one token per step, so the tests can count steps (the engine's default guesses tokens too)
    return EngineCore(weights(), EngineConfig(policy=policy, **{"speculative_tokens": 0, **config}), clock)


def add(core: EngineCore, clock: FakeClock, request_id: str, max_tokens: int, prompt_len: int = 4, timeout=None):
    prompt = [(7 * i + len(request_id)) % 90 + 1 for i in range(prompt_len)]
    params = SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    deadline = None if timeout is None else clock() + timeout
    core.add_request(Request(request_id, prompt, params, clock(), deadline=deadline))


def run_to_end(core: EngineCore, clock: FakeClock, on_step=None):
    """Step until nothing is left; returns ({request_id: (step, output)}, [step stats])."""
    finished, stats = {}, []
    step = 0
    while core.has_unfinished():
        clock.advance(1.0)
        result = core.step()
        step += 1
        stats += result.steps
        for _, event in result.events:
            if isinstance(event, RequestOutput):
                finished[event.request_id] = (step, event)
        if on_step:
            on_step(step)
        assert step < 1000, "the core never finished"
    return finished, stats


def test_static_keeps_early_finishers_until_the_batch_ends():
    clock = FakeClock()
    core = make_core("static", clock, n_slots=4, max_batch=4, max_wait_ms=0)
    for request_id, n in (("short", 2), ("mid", 4), ("long", 7)):
        add(core, clock, request_id, n)
    used = []

    def on_step(step):
        used.append(core.pool.num_used)
        if step == 2:
            add(core, clock, "late", 1)  # arrives while the batch runs: must wait for it to end

    finished, stats = run_to_end(core, clock, on_step)
    assert {rid: step for rid, (step, _) in finished.items()} == {"short": 7, "mid": 7, "long": 7, "late": 8}
    outputs = {rid: out for rid, (_, out) in finished.items()}
    assert [len(outputs[r].token_ids) for r in ("short", "mid", "long")] == [2, 4, 7]
    assert outputs["short"].stats.finish_time == outputs["long"].stats.finish_time
    assert outputs["short"].stats.latency_s == outputs["long"].stats.latency_s
    assert used[:6] == [3] * 6  # the early finishers keep their slots
    assert [s.batch_size for s in stats] == [3, 3, 2, 2, 1, 1, 1, 1]  # but stop being decoded
    assert core.pool.num_used == 0


def test_continuous_retires_at_once_and_admits_between_steps():
    clock = FakeClock()
    core = make_core("continuous", clock, n_slots=3, max_batch=3)
    for request_id, n in (("short", 2), ("mid", 4), ("long", 7)):
        add(core, clock, request_id, n)
    used = []

    def on_step(step):
        used.append(core.pool.num_used)
        if step == 2:
            add(core, clock, "late", 1)

    finished, _ = run_to_end(core, clock, on_step)
    assert {rid: step for rid, (step, _) in finished.items()} == {"short": 2, "mid": 4, "long": 7, "late": 3}
    assert used == [3, 2, 2, 1, 1, 1, 0]


@pytest.mark.parametrize("policy", ["continuous", "static"])
def test_by_default_a_batch_takes_half_the_kv_slots(policy):
    """The default `max_batch` (32) is half the slot pool: the rest wait their turn, so the engine
    decodes one half while the server reads the other half's answers."""
    clock = FakeClock()
    core = make_core(policy, clock, max_wait_ms=0)
    config = EngineConfig()
    assert core.pool.num_total == config.n_slots == 2 * config.max_batch and config.batch_capacity == config.max_batch
    for i in range(config.n_slots):
        add(core, clock, f"r{i}", 8, prompt_len=2)  # 2-token prompts: the whole batch fits the prefill budget
    stats = core.step().steps
    assert core.pool.num_used == core.num_running == config.max_batch and stats[0].batch_size == config.max_batch
    assert core.num_waiting == config.n_slots - config.max_batch


def test_max_batch_0_lets_every_kv_slot_run_a_request():
    clock = FakeClock()
    core = make_core("continuous", clock, max_batch=0)
    slots = EngineConfig().n_slots
    for i in range(slots + 1):
        add(core, clock, f"r{i}", 8, prompt_len=2)
    core.step()
    assert core.pool.num_used == core.num_running == slots and core.num_waiting == 1


def test_a_smaller_max_batch_still_caps_the_batch():
    clock = FakeClock()
    core = make_core("continuous", clock, n_slots=8, max_batch=3)
    for i in range(5):
        add(core, clock, f"r{i}", 4)
    core.step()
    assert core.pool.num_used == 3


def test_none_runs_one_request_at_a_time_in_arrival_order():
    clock = FakeClock()
    core = make_core("none", clock, n_slots=4)
    for request_id, n in (("a", 3), ("b", 1), ("c", 2)):
        add(core, clock, request_id, n)
    finished, stats = run_to_end(core, clock)
    assert {rid: step for rid, (step, _) in finished.items()} == {"a": 3, "b": 4, "c": 6}
    assert {s.batch_size for s in stats} == {1}


def test_continuous_bounds_prefill_by_the_token_budget():
    clock = FakeClock()
    core = make_core("continuous", clock, n_slots=8, prefill_token_budget=12)
    for i in range(5):
        add(core, clock, f"r{i}", 8, prompt_len=6)
    _, stats = run_to_end(core, clock)
    assert [s.num_prefill_requests for s in stats[:3]] == [2, 2, 1]
    assert all(s.num_prefill_tokens <= 12 for s in stats)
    # a prompt longer than the whole budget is still admitted, alone
    add(core, clock, "long-prompt", 1, prompt_len=20)
    _, stats = run_to_end(core, clock)
    assert stats[0].num_prefill_tokens == 20


def test_a_waiting_request_past_its_deadline_fails_and_the_rest_go_on():
    clock = FakeClock()
    core = make_core("none", clock, n_slots=2)
    add(core, clock, "running", 5, timeout=1.0)
    add(core, clock, "waiting", 5, timeout=1.0)
    core.step()
    clock.advance(2.0)
    events = core.step().events
    expired = [e for _, e in events if isinstance(e, RequestOutput)]
    assert [(o.request_id, o.finish_reason) for o in expired] == [("waiting", FinishReason.ERROR)]
    assert isinstance(expired[0].error, DeadlineExceeded) and expired[0].error.code == "deadline_exceeded"
    assert "waited" in str(expired[0].error)
    finished, _ = run_to_end(core, clock)
    assert finished["running"][1].finish_reason is FinishReason.LENGTH


def test_a_failing_model_step_fails_its_requests_and_frees_their_slots():
    clock = FakeClock()
    core = make_core("continuous", clock, n_slots=4)
    core.runner = PoisonRunner(core.runner.weights, core.runner.cache)
    add(core, clock, "fine", 3)
    core.step()
    core.add_request(Request("bad", [PoisonRunner.POISON, 1, 2], SamplingParams(max_tokens=3), clock()))
    events = core.step().events
    failed = {e.request_id: e for _, e in events if isinstance(e, RequestOutput)}
    assert set(failed) == {"fine", "bad"}  # one batch, one failure
    assert all(isinstance(o.error, InternalError) and o.error.code == "internal_error" for o in failed.values())
    assert core.pool.num_used == 0 and not core.has_unfinished()
    add(core, clock, "after", 2)
    finished, _ = run_to_end(core, clock)
    assert finished["after"][1].finish_reason is FinishReason.LENGTH


def test_abort_frees_the_slot_before_the_next_step():
    clock = FakeClock()
    for policy in ("none", "static", "continuous"):
        core = make_core(policy, clock, n_slots=4, max_wait_ms=0)
        add(core, clock, "victim", 10)
        add(core, clock, "other", 10)
        core.step()
        used = core.pool.num_used
        [(_, output)] = core.abort_request("victim")
        assert output.finish_reason is FinishReason.ABORT
        assert core.pool.num_used == used - 1
        assert core.abort_request("victim") == []  # twice, or unknown: ignored
        run_to_end(core, clock)
        assert core.pool.num_used == 0
