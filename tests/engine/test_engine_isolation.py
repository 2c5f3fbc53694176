"""One bad request fails alone: when a request's sampling or bookkeeping raises, that request
ends with `InternalError` and the requests that shared its model steps get their answers."""

import asyncio
import functools

import pytest
from engine_support import FakeClock, run, weights

from corrige.engine import EngineConfig, FinishReason, InternalError, RequestOutput, SamplingParams
from corrige.engine.core import EngineCore
from corrige.engine.process import EngineProcess
from corrige.engine.request import Request
from corrige.tutor.agent import SEED_MODEL, Tutor, engine_parts

SENTENCES = [
    "Yesterday I goed to the store.",
    "She like cats very much.",
    "I am agree with you.",
    "He don't want to come to the party tonight.",
    "My sister is a engineer in a big company.",
    "We was late for the meeting.",
]
CLIENTS, ROUNDS, POISONED = 8, 13, 100


def bypassing(params: SamplingParams, **fields) -> SamplingParams:
    """`params` with fields set past `SamplingParams`' checks, as a bug upstream could let them
    through (and the HTTP schema before them): what the engine itself must survive."""
    for name, value in fields.items():
        object.__setattr__(params, name, value)
    return params


@pytest.mark.parametrize("policy", ["continuous", "static"])
def test_100_poisoned_requests_fail_none_of_8_concurrent_clients_corrections(policy):
    # the seed model: real corrections, and its smaller steps keep 204 requests short
    tutor = Tutor.load(SEED_MODEL)
    prompts = {s: tutor.build_prompt(s) for s in SENTENCES}
    eos = tutor.tokenizer.special.eos

    def params(prompt):
        return SamplingParams(max_tokens=tutor.max_new_tokens_for(len(prompt)), stop_token_ids=(eos,), logprobs=True)

    finished: list[RequestOutput] = []

    async def main():
        loop = asyncio.get_running_loop()
        config = EngineConfig(policy=policy, speculative_tokens=8, max_wait_ms=2)
        build = functools.partial(engine_parts, SEED_MODEL)
        engine = await asyncio.to_thread(EngineProcess, build, tutor.weights.cfg, config, loop=loop)
        try:
            alone = {s: (await engine.generate(p, params(p))).token_ids for s, p in prompts.items()}
            engine.subscribe(on_request=finished.append)
            poisoned = []

            async def client(k):
                answers = []
                for i in range(ROUNDS):
                    sentence = SENTENCES[(k + i) % len(SENTENCES)]
                    prompt = prompts[sentence]
                    if len(poisoned) < POISONED:  # submitted with the correction, so they share its steps
                        bad = bypassing(SamplingParams(max_tokens=8, temperature=1.0), seed=-1)
                        poisoned.append(
                            asyncio.ensure_future(engine.generate(prompt, bad, request_id=f"poison-{k}-{i}"))
                        )
                    answers.append((sentence, await engine.generate(prompt, params(prompt))))
                return answers

            answers = [a for batch in await asyncio.gather(*(client(k) for k in range(CLIENTS))) for a in batch]
            failures = await asyncio.gather(*poisoned, return_exceptions=True)
            return alone, answers, failures, engine.snapshot()
        finally:
            await asyncio.to_thread(engine.close)

    alone, answers, failures, snapshot = run(main(), timeout=120.0)
    assert len(answers) == CLIENTS * ROUNDS
    assert all(output.token_ids == alone[sentence] for sentence, output in answers)  # 0 failures, same answers
    went = next(o for s, o in answers if s == SENTENCES[0])
    assert tutor.interpret(SENTENCES[0], went.token_ids, went.logprobs, len(prompts[SENTENCES[0]])).corrected == (
        "Yesterday I went to the store."
    )
    assert len(failures) == POISONED and all(isinstance(f, InternalError) for f in failures)
    # ...and they did fail inside batches shared with the corrections, not on their own
    shared = [o for o in finished if o.request_id.startswith("poison") and o.stats.prefill_batch_size > 1]
    assert len(shared) >= POISONED // 2
    assert (snapshot.failed, snapshot.slots_used, snapshot.running, snapshot.waiting) == (POISONED, 0, 0, 0)


@pytest.mark.parametrize("policy", ["none", "static", "continuous"])
def test_a_request_whose_bookkeeping_raises_fails_alone_in_its_step(policy):
    """Not sampling this time: recording its token breaks (its stop tokens are not a tuple)."""
    clock = FakeClock()
    core = EngineCore(weights(), EngineConfig(policy=policy, n_slots=4, max_batch=4, max_wait_ms=0), clock)
    broken = bypassing(SamplingParams(max_tokens=5), stop_token_ids=None)
    for request_id, params in (
        ("a", SamplingParams(max_tokens=5)),
        ("bad", broken),
        ("b", SamplingParams(max_tokens=5)),
    ):
        core.add_request(Request(request_id, [3, 4, 5], params, clock()))
    outputs, batch_sizes = {}, []
    while core.has_unfinished():
        clock.advance(1.0)
        result = core.step()
        batch_sizes += [s.batch_size for s in result.steps]
        outputs |= {e.request_id: e for _, e in result.events if isinstance(e, RequestOutput)}
        assert len(batch_sizes) < 100, "the core never finished"
    assert isinstance(outputs["bad"].error, InternalError) and outputs["bad"].finish_reason is FinishReason.ERROR
    assert [len(outputs[r].token_ids) for r in ("a", "b")] == [5, 5]
    assert outputs["a"].finish_reason is outputs["b"].finish_reason is FinishReason.LENGTH
    if policy != "none":
        assert batch_sizes[0] == 3  # the bad request was in the first step with the others
    assert core.pool.num_used == 0
