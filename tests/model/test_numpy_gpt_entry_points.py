"""prefill, decode, verify and extend agree with one another on the bundled models.

They run one block forward over different cache places, so feeding a sequence in one call,
in pieces, or one token at a time must give the same logits and leave the same keys and values.
"""

import functools
from pathlib import Path

import numpy as np
import pytest

from corrige.model.numpy_gpt import KVCache, decode, extend, prefill, prepare, verify
from corrige.model.weights import load_model

MODELS = Path(__file__).resolve().parents[2] / "corrige" / "models"
ATOL = 1e-4  # float32: the same sums in other batch shapes (trained logits reach tens)


@functools.cache
def weights(name):
    cfg, params = load_model(MODELS / name)
    return prepare(params, cfg)


@pytest.fixture(params=["seed", "tutor", "reader"])
def w(request):
    return weights(request.param)


def sequences(w, lengths, seed):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, w.cfg.vocab_size, n).tolist() for n in lengths]


def test_a_prompt_in_one_call_in_pieces_and_token_by_token(w):
    n, k = min(40, w.cfg.n_ctx), 9
    (seq,) = sequences(w, [n], seed=1)
    whole = prefill(w, KVCache.allocate(w.cfg, 1), [seq], [0])[0]
    pieces = KVCache.allocate(w.cfg, 3)
    head = prefill(w, pieces, [seq[:k]], [2])[0]
    rest = extend(w, pieces, seq[k:], 2, k)  # (n - k, V): every later position
    steps = KVCache.allocate(w.cfg, 2)
    stepped = [prefill(w, steps, [seq[:1]], [1])[0]]
    stepped += [decode(w, steps, [tok], [1], [i])[0] for i, tok in enumerate(seq[1:], start=1)]
    np.testing.assert_allclose(rest[-1], whole, atol=ATOL, rtol=0)
    np.testing.assert_allclose(head, stepped[k - 1], atol=ATOL, rtol=0)
    np.testing.assert_allclose(rest, np.stack(stepped[k:]), atol=ATOL, rtol=0)
    np.testing.assert_allclose(pieces.k[:, 2, ..., :n], steps.k[:, 1, ..., :n], atol=ATOL, rtol=0)
    np.testing.assert_allclose(pieces.v[:, 2, :, :n], steps.v[:, 1, :, :n], atol=ATOL, rtol=0)


@pytest.mark.parametrize("slots", [[0, 1, 2, 3], [4, 0, 3, 1]], ids=["consecutive", "scattered"])
def test_verify_of_drafted_tokens_equals_as_many_decodes(w, slots):
    history = sequences(w, [7, 12, 3, 20], seed=2)
    chunks = sequences(w, [1, 5, 3, 8], seed=3)  # a token and its guesses, of different lengths
    starts = [len(h) for h in history]
    verified, stepped = KVCache.allocate(w.cfg, 5), KVCache.allocate(w.cfg, 5)
    for cache in (verified, stepped):
        prefill(w, cache, history, slots)
    got = verify(w, verified, chunks, slots, starts)  # (sum of lengths, V), in row order
    want = []
    for chunk, slot, start in zip(chunks, slots, starts, strict=True):
        want += [decode(w, stepped, [tok], [slot], [start + i])[0] for i, tok in enumerate(chunk)]
    np.testing.assert_allclose(got, np.stack(want), atol=ATOL, rtol=0)
    np.testing.assert_allclose(verified.k, stepped.k, atol=ATOL, rtol=0)
    np.testing.assert_allclose(verified.v, stepped.v, atol=ATOL, rtol=0)


def test_one_batch_of_every_shape_equals_its_rows_alone(w):
    """Mixed prompt lengths (a padded attention grid) in scattered slots, then a step at mixed positions."""
    prompts = sequences(w, [5, 17, 1, 11], seed=4)
    slots = [3, 0, 5, 2]
    cache = KVCache.allocate(w.cfg, 6)
    first = prefill(w, cache, prompts, slots)
    nxt = np.argmax(first, axis=-1)
    second = decode(w, cache, nxt, slots, [len(p) for p in prompts])
    for i, prompt in enumerate(prompts):
        alone = extend(w, KVCache.allocate(w.cfg, 1), [*prompt, int(nxt[i])], 0, 0)
        np.testing.assert_allclose(first[i], alone[-2], atol=ATOL, rtol=0)
        np.testing.assert_allclose(second[i], alone[-1], atol=ATOL, rtol=0)
