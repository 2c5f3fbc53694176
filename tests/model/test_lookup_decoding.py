"""Prompt-lookup decoding gives exactly greedy decoding's tokens; `extend` equals prefill."""

import numpy as np
import pytest

from corrige.model import preset
from corrige.model.generate import greedy_generate_scored, lookup_greedy_generate_scored
from corrige.model.lookup import LookupDrafter, LookupTable, PromptLookup
from corrige.model.numpy_gpt import KVCache, extend, prefill, prepare, verify
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
    # each position's logits are those of a prefill of the sequence up to it
    ref = [prefill(weights, KVCache.allocate(weights.cfg, 1), [seq[: i + 1]], [0])[0] for i in range(3, len(seq))]
    np.testing.assert_allclose(got, ref, atol=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_lookup_decoding_is_exactly_greedy(weights, seed):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, weights.cfg.vocab_size, 6).tolist()
    prompt = base + base[:4]  # repeats, so guesses are made (and some are accepted)
    ref = greedy_generate_scored(weights, KVCache.allocate(weights.cfg, 1), [prompt], 20, eos_id=7)[0]
    got = lookup_greedy_generate_scored(
        weights, KVCache.allocate(weights.cfg, 1), prompt, 20, eos_id=7, drafter=LookupDrafter(base)
    )
    assert got.tokens == ref.tokens
    np.testing.assert_allclose(got.logprobs, ref.logprobs, atol=1e-5)


def _draft(context, k, corpus=()):
    return PromptLookup(context, LookupTable(corpus)).draft(k)


def test_draft_copies_what_followed_the_last_match():
    assert _draft([5, 6, 7, 8, 1, 5, 6], 2) == [7, 8]
    assert _draft([1, 2, 9], 3, corpus=[9, 4, 4, 4]) == [4, 4, 4]
    assert _draft([1, 2, 3], 3) == []
    assert _draft([4, 1, 8, 3, 5, 1, 9], 2) == [3, 5]  # 9 replaced 8: copy on after it
    assert _draft([7], 2) == [] and _draft([], 2) == []


def _reference_draft(context, k, corpus=()):
    """The plain scan the index replaces: latest earlier pair, then single, sequence before corpus."""
    n = len(context)
    for size in range(min(2, n - 1), 0, -1):
        tail = context[n - size :]
        for source, end in ((context, n - size - 1), (corpus, len(corpus) - size)):
            for start in range(end, -1, -1):
                if source[start : start + size] == tail and source[start + size : start + size + k]:
                    return source[start + size : start + size + k]
    if n >= 2:
        for start in range(n - 3, -1, -1):
            if context[start] == context[n - 2]:
                return context[start + 2 : start + 2 + k]
    return []


@pytest.mark.parametrize("seed", range(20))
def test_the_growing_index_guesses_what_a_full_scan_guesses(seed):
    rng = np.random.default_rng(seed)
    corpus = rng.integers(0, 6, 12).tolist()
    table = LookupTable(corpus)
    context = rng.integers(0, 6, 3).tolist()
    sequence = PromptLookup(context, table)
    for _ in range(25):
        k = int(rng.integers(1, 6))
        assert sequence.draft(k) == _reference_draft(context, k, corpus)
        token = int(rng.integers(0, 6))
        sequence.append(token)
        context.append(token)


@pytest.mark.parametrize("slots", [[0, 1, 2, 3], [3, 0, 2, 5]])
def test_verify_equals_extend_from_each_position(weights, slots):
    """Chunks of different lengths (a padded attention grid) agree, whatever the slots, up to the window's end."""
    n_ctx = weights.cfg.n_ctx
    rng = np.random.default_rng(len(slots) + slots[0])
    cached = [int(x) for x in rng.integers(1, 20, len(slots))]
    cached[-1] = n_ctx - 3  # this row's chunk ends at the window's last position
    chunks = [rng.integers(0, weights.cfg.vocab_size, n).tolist() for n in (1, 4, 2, 3)]
    a, b = KVCache.allocate(weights.cfg, 6), KVCache.allocate(weights.cfg, 6)
    history = [rng.integers(0, weights.cfg.vocab_size, n).tolist() for n in cached]
    for cache in (a, b):
        prefill(weights, cache, history, slots)
    got = verify(weights, a, chunks, slots, cached)
    want = np.concatenate([extend(weights, b, c, slot, n) for c, slot, n in zip(chunks, slots, cached, strict=True)])
    np.testing.assert_allclose(got, want, atol=1e-5)
    for slot, start, chunk in zip(slots, cached, chunks, strict=True):  # the same keys/values, nothing past the chunk
        end = start + len(chunk)
        np.testing.assert_allclose(a.k[:, slot, ..., :end], b.k[:, slot, ..., :end], atol=1e-5)
        np.testing.assert_array_equal(a.k[:, slot, ..., end:], b.k[:, slot, ..., end:])
    with pytest.raises(ValueError, match="window"):
        verify(weights, a, [[1, 2, 3, 4]], [0], [n_ctx - 3])


def test_the_lookup_module_examples_hold():
    import doctest

    import corrige.model.lookup

    assert doctest.testmod(corrige.model.lookup).failed == 0
