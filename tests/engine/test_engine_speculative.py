"""Speculative decoding by prompt lookup: the same tokens and log-probabilities in fewer steps."""

import asyncio
import functools

import pytest
from engine_support import EOS, FakeClock, random_workload, run, weights

from corrige.engine import Engine, EngineConfig, FinishReason, SamplingParams
from corrige.engine.core import EngineCore
from corrige.engine.request import Request
from corrige.model.generate import greedy_generate_scored
from corrige.model.numpy_gpt import KVCache
from corrige.tutor.agent import Tutor

SPECULATIVE_POLICIES = ["none", "static", "continuous"]


@functools.cache
def tutor() -> Tutor:
    return Tutor.load()


SENTENCES = [
    "Yesterday I goed to the store.",
    "She like cats very much.",
    "I am agree with you.",
    "We have been living here since ten years.",
    "He don't want to come to the party tonight.",
    "My sister is a engineer in a big company.",
    "They are very happy with the new house.",
    "I have 25 years.",
]


async def generate_all(engine: Engine, work, logprobs: bool = True):
    return await asyncio.gather(
        *(
            engine.generate(p, SamplingParams(max_tokens=n, stop_token_ids=(eos,), logprobs=logprobs))
            for p, n, eos in work
        )
    )


def tutor_work(copies: int = 7):
    t = tutor()
    prompts = [t.build_prompt(s) for s in SENTENCES] * copies
    return [(p, t.max_new_tokens_for(len(p)), t.tokenizer.special.eos) for p in prompts]


@pytest.mark.parametrize("policy", SPECULATIVE_POLICIES)
def test_tutor_answers_are_identical_with_fewer_steps(policy):
    t = tutor()
    work = tutor_work()  # 56 requests in flight at once
    # no queue deadline: all 56 wait for one of 16 slots at once, and on a busy machine (the other
    # test worker) the last ones wait more than the default 10 s; the answers are what is checked
    plain = EngineConfig(
        policy=policy, n_slots=16, max_batch=16, max_wait_ms=1, speculative_tokens=0, queue_timeout_s=None
    )
    speculative = EngineConfig(**{**vars(plain), "speculative_tokens": 8, "speculative_token_budget": 128})

    async def main(config):
        with Engine(t.weights, config, drafter=t.drafter) as engine:
            return await generate_all(engine, work), engine.snapshot()

    (want, before), (got, after) = run(main(plain)), run(main(speculative))
    for a, b in zip(got, want, strict=True):
        assert a.token_ids == b.token_ids and a.finish_reason == b.finish_reason == FinishReason.STOP
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)
        assert len(a.logprobs) == len(a.token_ids)
    assert after.generated_tokens == before.generated_tokens
    assert before.draft_tokens == before.accepted_tokens == 0
    assert 0 < after.accepted_tokens <= after.draft_tokens
    assert after.steps < before.steps / 2  # corrections mostly copy the sentence: most guesses hold


def test_random_prompts_stay_exactly_greedy_to_the_window_and_max_tokens():
    w = weights()
    work = random_workload(w, 60, seed=4)
    base = [(p + p, n) for p, n in work if 2 * len(p) + n <= w.cfg.n_ctx]  # repeats invite guesses
    expected = [greedy_generate_scored(w, KVCache.allocate(w.cfg, 1), [p], n, eos_id=EOS)[0] for p, n in base]

    async def main():
        config = EngineConfig(n_slots=8, max_batch=8, speculative_tokens=5, speculative_token_budget=16)
        with Engine(w, config) as engine:
            return await generate_all(engine, [(p, n, EOS) for p, n in base]), engine.snapshot()

    outputs, snapshot = run(main())
    for output, reference, (_, n) in zip(outputs, expected, base, strict=True):
        assert list(output.token_ids) == reference.tokens and len(output.token_ids) <= n
        assert output.logprobs == pytest.approx(reference.logprobs, abs=1e-5)
    assert snapshot.accepted_tokens > 0 and snapshot.slots_used == 0


def test_streams_get_every_token_once_in_order():
    t = tutor()
    work = tutor_work(copies=2)

    async def main():
        config = EngineConfig(n_slots=8, max_batch=8, speculative_tokens=8)
        with Engine(t.weights, config, drafter=t.drafter) as engine:

            async def one(prompt, n, eos):
                events = []
                async with engine.stream(prompt, SamplingParams(max_tokens=n, stop_token_ids=(eos,))) as stream:
                    async for event in stream:
                        events.append(event)
                return events, stream.output

            return await asyncio.gather(*(one(*item) for item in work))

    for events, output in run(main()):
        assert [e.index for e in events] == list(range(len(output.token_ids)))
        assert tuple(e.token_id for e in events) == output.token_ids


def test_sampled_requests_are_never_guessed_for_and_keep_their_seeded_tokens():
    t = tutor()
    prompt = t.build_prompt(SENTENCES[0])
    params = SamplingParams(max_tokens=20, temperature=0.8, seed=7)

    async def main(k):
        with Engine(t.weights, EngineConfig(speculative_tokens=k)) as engine:
            outputs = await asyncio.gather(*(engine.generate(prompt, params) for _ in range(4)))
            return outputs, engine.snapshot()

    (plain, _), (speculative, snapshot) = run(main(0)), run(main(8))
    assert [o.token_ids for o in plain] == [o.token_ids for o in speculative]
    assert snapshot.draft_tokens == 0


def test_the_step_budget_shares_guesses_between_the_running_requests():
    t = tutor()
    config = EngineConfig(n_slots=16, max_batch=16, speculative_tokens=8, speculative_token_budget=24)
    core = EngineCore(t.weights, config, FakeClock())
    for i, (prompt, n, eos) in enumerate(tutor_work(copies=2)):
        core.add_request(Request(f"r{i}", prompt, SamplingParams(max_tokens=n, stop_token_ids=(eos,)), 0.0))
    core.step()  # prefills all 16
    output = core.scheduler.schedule(0.0)
    assert len(output.decode_ids) == 16
    assert all(len(d) <= 24 // 16 for d in output.decode_drafts) and output.num_draft_tokens <= 24


def test_a_new_request_checks_a_guess_of_its_answer_in_its_prefill_step():
    """The prompt's own step feeds the tutor's guess (the sentence copied) after the prompt: it
    gives several tokens at once, the same as greedy decoding, where it used to give one."""
    t = tutor()
    prompt = t.build_prompt("They are very happy with the new house.")
    n, eos = t.max_new_tokens_for(len(prompt)), t.tokenizer.special.eos
    expected = greedy_generate_scored(t.weights, KVCache.allocate(t.weights.cfg, 1), [prompt], n, eos_id=eos)[0]
    config = EngineConfig(n_slots=4, max_batch=4, speculative_tokens=8)
    core = EngineCore(t.weights, config, FakeClock(), drafter=t.drafter)
    request = Request("r0", prompt, SamplingParams(max_tokens=n, stop_token_ids=(eos,), logprobs=True), 0.0)
    core.add_request(request)
    core.step()
    first = list(request.output_token_ids)
    assert len(first) > 1 and first == expected.tokens[: len(first)]
    assert request.output_logprobs == pytest.approx(expected.logprobs[: len(first)], abs=1e-5)
    while request.finish_reason is None:
        core.step()
    assert list(request.output_token_ids) == expected.tokens


def test_a_full_batch_gives_new_requests_no_guess_either():
    """With no share of the step's guesses left for the decode rows, a new request's prefill is not
    guessed for: one guess would move every decode row of the step to the checking pass."""
    t = tutor()
    config = EngineConfig(
        n_slots=32, max_batch=32, speculative_tokens=8, speculative_token_budget=24, prefill_token_budget=4096
    )
    core = EngineCore(t.weights, config, FakeClock(), drafter=t.drafter)
    work = tutor_work(copies=4)
    for i, (prompt, n, eos) in enumerate(work[:30]):
        core.add_request(Request(f"r{i}", prompt, SamplingParams(max_tokens=n, stop_token_ids=(eos,)), 0.0))
    core.step()  # prefills the 30
    for i, (prompt, n, eos) in enumerate(work[30:32]):
        core.add_request(Request(f"n{i}", prompt, SamplingParams(max_tokens=n, stop_token_ids=(eos,)), 0.0))
    output = core.scheduler.schedule(0.0)
    assert len(output.decode_ids) == 30 and len(output.prefill_ids) == 2
    assert output.num_draft_tokens == 0 and not any(output.prefill_drafts)
