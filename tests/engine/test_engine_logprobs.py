"""Log-probabilities of the chosen tokens: the engine's batched values match the plain greedy loop's."""

import asyncio

import numpy as np
import pytest
from engine_support import EOS, POLICIES, random_workload, run, weights

from corrige.engine import Engine, EngineConfig, SamplingParams
from corrige.model.generate import greedy_generate_scored
from corrige.model.numpy_gpt import KVCache, decode, prefill


def log_softmax_at(logits: np.ndarray, token: int) -> float:
    row = logits[0].astype(np.float64)
    return float(row[token] - row.max() - np.log(np.exp(row - row.max()).sum()))


@pytest.mark.parametrize("policy", POLICIES)
def test_logprobs_match_greedy_generate_scored_under_every_policy(policy):
    w = weights()
    work = random_workload(w, 24, seed=21)
    expected = [greedy_generate_scored(w, KVCache.allocate(w.cfg, 1), [p], n, eos_id=EOS)[0] for p, n in work]
    # every other request asks for log-probabilities, so batches mix rows that do and rows that do not
    asks = [i % 2 == 0 for i in range(len(work))]

    async def main():
        config = EngineConfig(policy=policy, n_slots=8, max_batch=8, max_wait_ms=1)
        with Engine(w, config) as engine:
            return await asyncio.gather(
                *(
                    engine.generate(p, SamplingParams(max_tokens=n, stop_token_ids=(EOS,), logprobs=ask))
                    for (p, n), ask in zip(work, asks, strict=True)
                )
            )

    outputs = run(main())
    for output, reference, ask in zip(outputs, expected, asks, strict=True):
        assert list(output.token_ids) == reference.tokens
        if not ask:
            assert output.logprobs is None
            continue
        assert output.logprobs is not None and len(output.logprobs) == len(reference.logprobs)
        assert output.logprobs == pytest.approx(reference.logprobs, abs=1e-5)
        assert all(lp <= 0.0 for lp in output.logprobs)


def test_logprobs_of_sampled_tokens_are_their_log_softmax_under_the_raw_logits():
    w = weights()
    prompt = [3, 14, 15, 92, 65]

    async def main():
        with Engine(w, EngineConfig(policy="continuous")) as engine:
            return await engine.generate(prompt, SamplingParams(max_tokens=6, temperature=1.0, seed=7, logprobs=True))

    output = run(main())
    # replay the sampled tokens one at a time and score each under the untempered logits
    cache = KVCache.allocate(w.cfg, 1)
    logits = prefill(w, cache, [prompt], [0])
    expected = []
    for i, token in enumerate(output.token_ids):
        expected.append(log_softmax_at(logits, token))
        logits = decode(w, cache, [token], [0], [len(prompt) + i])
    assert output.logprobs == pytest.approx(expected, abs=1e-5)
