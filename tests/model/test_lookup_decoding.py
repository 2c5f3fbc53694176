"""Prompt-lookup decoding gives exactly greedy decoding's tokens; `extend` equals prefill."""

import numpy as np
import pytest

from corrige.model import preset
from corrige.model.generate import _lookup_draft, greedy_generate_scored, lookup_greedy_generate_scored
from corrige.model.numpy_gpt import KVCache, extend, prefill, prepare
from corrige.model.weights import random_params


@pytest.fixture(scope="module")
def weights():
    cfg = preset("tiny")
    return prepare(random_params(cfg, seed=3, std=0.3), cfg)


def test_extend_matches_a_full_prefill(weights):
    seq = [3, 9, 4, 4, 17, 2, 60, 5]
    cache = KVCache.allocate(weights.cfg, 2)
    prefill(weights, cache, [seq[:3]], [1])
    got = extend(weights, cache, seq[3:], 1, 3)
    ref = prefill(weights, KVCache.allocate(weights.cfg, 1), [seq], [0], all_logits=True)[0][3:]
    np.testing.assert_allclose(got, ref, atol=1e-5)


def test_prefill_from_an_offset_matches_extend(weights):
    cache = KVCache.allocate(weights.cfg, 1)
    prefill(weights, cache, [[1, 2, 3]], [0])
    a = prefill(weights, cache, [[4, 5]], [0], all_logits=True, start_positions=[3])[0]
    b = extend(weights, cache, [4, 5], 0, 3)
    np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_lookup_decoding_is_exactly_greedy(weights, seed):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, weights.cfg.vocab_size, 6).tolist()
    prompt = base + base[:4]  # repeats, so guesses are made (and some are accepted)
    ref = greedy_generate_scored(weights, KVCache.allocate(weights.cfg, 1), [prompt], 20, eos_id=7)[0]
    got = lookup_greedy_generate_scored(weights, KVCache.allocate(weights.cfg, 1), prompt, 20, eos_id=7, corpus=base)
    assert got.tokens == ref.tokens
    np.testing.assert_allclose(got.logprobs, ref.logprobs, atol=1e-5)


def test_draft_copies_what_followed_the_last_match():
    assert _lookup_draft([5, 6, 7, 8, 1, 5, 6], 2) == [7, 8]
    assert _lookup_draft([1, 2, 9], 3, corpus=[9, 4, 4, 4]) == [4, 4, 4]
    assert _lookup_draft([1, 2, 3], 3) == []
    assert _lookup_draft([4, 1, 8, 3, 5, 1, 9], 2) == [3, 5]  # 9 replaced 8: copy on after it
