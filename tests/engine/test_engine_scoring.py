"""Scoring requests (`SamplingParams.prompt_logprobs`): each prompt token's log-probability given
the tokens before it, equal to one whole forward pass over the prompt, under every policy, with
and without prefix reuse, mixed with generation; the prefix a scored prompt leaves in its slot is
reused by later prompts that start the same way, and no slot is leaked."""

import asyncio

import numpy as np
import pytest
from engine_support import EOS, POLICIES, run, weights

from corrige.engine import Engine, EngineConfig, SamplingParams
from corrige.engine.kv_cache import SlotPool
from corrige.model.generate import chosen_logprobs
from corrige.model.numpy_gpt import KVCache, extend

SCORE = SamplingParams(max_tokens=1, prompt_logprobs=True)


def reference(w, prompt: list[int]) -> list[float]:
    """log P(prompt[i] | prompt[:i]), i >= 1, from one forward pass over the whole prompt in a fresh cache."""
    logits = extend(w, KVCache.allocate(w.cfg, 1), prompt, 0, 0)
    return chosen_logprobs(logits[:-1], prompt[1:]).tolist()


def candidates(rng: np.random.Generator, vocab: int, n_bases: int, per_base: int) -> list[list[int]]:
    """Prompts in groups that share a start: each base, then variants that change one token
    somewhere after its first few (as candidate corrections of one sentence do)."""
    prompts = []
    for _ in range(n_bases):
        base = rng.integers(0, vocab, int(rng.integers(6, 20))).tolist()
        prompts.append(base)
        for _ in range(per_base):
            variant = list(base)
            at = int(rng.integers(3, len(base)))
            variant[at] = int(rng.integers(0, vocab))
            if rng.random() < 0.3:
                variant.insert(at, int(rng.integers(0, vocab)))  # a word put in
            prompts.append(variant)
    return prompts


async def score_all(w, config: EngineConfig, prompts: list[list[int]], generate: list[list[int]] = ()):
    with Engine(w, config) as engine:
        scored = [engine.generate(p, SCORE) for p in prompts]
        others = [engine.generate(p, SamplingParams(max_tokens=12, stop_token_ids=(EOS,))) for p in generate]
        outputs = await asyncio.gather(*scored, *others)
        return outputs[: len(prompts)], outputs[len(prompts) :], engine.snapshot()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("reuse", [True, False])
def test_prompt_logprobs_equal_one_forward_pass_under_every_policy(policy, reuse):
    w = weights()
    rng = np.random.default_rng(5)
    prompts = candidates(rng, w.cfg.vocab_size, 4, 5)
    generate = [rng.integers(0, w.cfg.vocab_size, int(rng.integers(2, 15))).tolist() for _ in range(10)]
    config = EngineConfig(policy=policy, n_slots=8, max_batch=8, max_wait_ms=1, prefix_reuse=reuse)
    scored, generated, snapshot = run(score_all(w, config, prompts, generate))
    for prompt, output in zip(prompts, scored, strict=True):
        assert output.prompt_logprobs == pytest.approx(reference(w, prompt), abs=1e-4)
        assert len(output.token_ids) == 1 and output.logprobs is None
    assert all(o.prompt_logprobs is None for o in generated)  # only scoring requests get them
    assert snapshot.slots_used == 0


def test_candidates_sent_together_start_from_the_first_ones_positions():
    w = weights()
    base = list(range(10, 40))
    variants = [base[:20] + [7, *base[21:]], base[:25] + [9, *base[26:]], base[:12] + [3, 4, *base[12:28]]]
    prompts = [base, *variants]
    config = EngineConfig(policy="continuous", n_slots=8)
    scored, _, snapshot = run(score_all(w, config, prompts))
    reused = [o.stats.num_reused_tokens for o in scored]
    # the base is computed whole; each variant reuses the positions before the token it changes,
    # less one (fed again so that its logits score the changed token)
    assert reused == [0, 19, 24, 11]
    assert snapshot.prompt_tokens == sum(len(p) for p in prompts) - sum(reused)
    for prompt, output in zip(prompts, scored, strict=True):
        assert output.prompt_logprobs == pytest.approx(reference(w, prompt), abs=1e-4)


def test_without_prefix_reuse_every_prompt_is_computed_whole():
    w = weights()
    base = list(range(10, 40))
    prompts = [base, base[:20] + [7, *base[21:]]]
    scored, _, snapshot = run(score_all(w, EngineConfig(policy="continuous", prefix_reuse=False), prompts))
    assert [o.stats.num_reused_tokens for o in scored] == [0, 0]
    assert snapshot.prompt_tokens == sum(map(len, prompts))


def test_reuse_survives_slots_moved_and_handed_to_generation():
    """Waves of candidates while generation requests decode, are packed into the low slots and take
    freed slots: whatever a slot holds when it is reused must be what its record says."""
    w = weights()
    rng = np.random.default_rng(11)

    async def main():
        config = EngineConfig(policy="continuous", n_slots=6, max_batch=6)
        with Engine(w, config) as engine:
            outputs = []
            for _ in range(6):
                prompts = candidates(rng, w.cfg.vocab_size, 2, 3)
                gen = [rng.integers(0, w.cfg.vocab_size, int(rng.integers(2, 10))).tolist() for _ in range(4)]
                jobs = [engine.generate(p, SCORE) for p in prompts]
                jobs += [engine.generate(p, SamplingParams(max_tokens=int(rng.integers(1, 20)))) for p in gen]
                done = await asyncio.gather(*jobs)
                outputs += list(zip(prompts, done[: len(prompts)], strict=True))
            return outputs, engine.snapshot()

    outputs, snapshot = run(main())
    assert sum(o.stats.num_reused_tokens for _, o in outputs) > 0
    for prompt, output in outputs:
        assert output.prompt_logprobs == pytest.approx(reference(w, prompt), abs=1e-4)
    assert snapshot.slots_used == 0


def test_a_one_token_prompt_has_no_prompt_logprobs_and_a_repeated_prompt_reuses_all_but_its_last():
    w = weights()
    scored, _, _ = run(score_all(w, EngineConfig(policy="none"), [[42], list(range(20, 30)), list(range(20, 30))]))
    assert scored[0].prompt_logprobs == []
    assert scored[1].stats.num_reused_tokens == 0
    assert scored[2].stats.num_reused_tokens == 9  # only the last token is fed again
    assert scored[2].prompt_logprobs == pytest.approx(scored[1].prompt_logprobs, abs=1e-5)


# ---- the slot pool's records ----


def test_pool_finds_the_longest_held_prefix_and_prefers_a_free_slot_on_a_tie():
    pool = SlotPool(weights().cfg, 4)
    a, b = pool.allocate("a"), pool.allocate("b")
    pool.hold(a, [1, 2, 3, 4], [-1.0, -2.0, -3.0])
    pool.hold(b, [1, 2, 3, 9], [-1.0, -2.0, -5.0])
    assert pool.longest_prefix([7, 8]) is None
    slot, n, held = pool.longest_prefix([1, 2, 3, 4, 5])
    assert (slot, n, held.tokens) == (a, 4, (1, 2, 3, 4))
    pool.free(b)
    assert pool.longest_prefix([1, 2, 3, 0])[:2] == (b, 3)  # a and b share 3: b is free
    assert pool.allocate("c", spare=b, keep=2) == 2  # the lowest free slot that holds nothing
    assert pool.allocate("d", spare=b, keep=2) == 3
    assert pool.allocate("e", spare=b, keep=2) == b  # no other is free: b is taken, its start kept
    assert pool.longest_prefix([1, 2, 3, 9])[:2] == (a, 3)  # b now vouches for its first 2 only
    assert pool.longest_prefix([1, 2, 7])[:2] == (a, 2)  # a tie, and neither is free


def test_pool_moves_records_with_swaps_and_forgets_a_slot_handed_out_whole():
    cfg = weights().cfg
    pool = SlotPool(cfg, 4)
    s0, s1, s2 = pool.allocate("x"), pool.allocate("y"), pool.allocate("z")
    pool.cache.k[:, s2] = 2.0
    pool.hold(s2, [5, 6, 7], [-0.5, -0.25])
    pool.free(s0)
    pool.swap(s2, s0)  # z moves to the free slot 0; slot 2 is free and keeps a copy
    assert pool.owner(s0) == "z" and pool.is_free(s2)
    assert pool.longest_prefix([5, 6, 7])[0] == s2  # both hold it; the free one wins
    assert float(pool.cache.k[:, s0].min()) == 2.0
    assert pool.allocate("w") == 3  # a free slot that holds nothing comes first
    assert pool.allocate("v") == s2  # then a held one, whose record goes
    assert pool.longest_prefix([5, 6, 7])[0] == s0
    pool.swap(s0, s1)  # both owned: records follow their contents
    assert pool.longest_prefix([5, 6, 7])[0] == s1 and pool.owner(s1) == "z"
    pool.copy_prefix(s1, s2, 2)
    assert np.array_equal(pool.cache.k[:, s2, :, :, :2], pool.cache.k[:, s1, :, :, :2])
