"""The NumPy runtime's fast paths give the same results as its general paths.

`decode` and `prefill` take shortcuts when slots are consecutive (cache views instead of
copies) or positions are equal (basic-index writes instead of scatters), and keep scratch
buffers per thread for large calls. These tests run the same work down both paths.
"""

import threading
import warnings

import numpy as np
import pytest

from corrige.model import numpy_gpt as ng
from corrige.model import preset
from corrige.model.folded import GELU_SCALE
from corrige.model.numpy_gpt import KVCache, decode, prefill, prepare
from corrige.model.weights import random_params

TOL = 1e-5  # same arithmetic; views and copies may take different BLAS kernels (10x under the 1e-4 to transformers)


@pytest.fixture(scope="module", params=["tiny", "seed"])
def model(request):
    cfg = preset(request.param)
    return cfg, prepare(random_params(cfg, seed=11), cfg)


def run(w, cfg, prompts, slots, n_slots, steps):
    """Prefill then greedy decode; returns the logits of every step and the cache."""
    cache = KVCache.allocate(cfg, n_slots)
    logits = [prefill(w, cache, prompts, slots)]
    lengths = [len(p) for p in prompts]
    for i in range(steps):
        tokens = np.argmax(logits[-1], axis=-1)
        logits.append(decode(w, cache, tokens, slots, [n + i for n in lengths]))
    return logits, cache


@pytest.mark.parametrize("lengths", [(6, 6, 6, 6), (3, 9, 1, 6)], ids=["equal positions", "mixed positions"])
def test_consecutive_and_scattered_slots_agree(model, lengths):
    cfg, w = model
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, cfg.vocab_size, n).tolist() for n in lengths]
    steps = 8
    run_slots = [2, 3, 4, 5]  # views and, for equal positions, basic-index writes
    scattered = [5, 0, 3, 1]  # copies and scatters
    fast, fast_cache = run(w, cfg, prompts, run_slots, 6, steps)
    slow, slow_cache = run(w, cfg, prompts, scattered, 6, steps)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, atol=TOL, rtol=0)
    for i, (f, s) in enumerate(zip(run_slots, scattered, strict=True)):
        n = lengths[i] + steps
        np.testing.assert_allclose(fast_cache.k[:, f, ..., :n], slow_cache.k[:, s, ..., :n], atol=TOL, rtol=0)
        np.testing.assert_allclose(fast_cache.v[:, f, :, :n], slow_cache.v[:, s, :, :n], atol=TOL, rtol=0)


def test_a_batch_equals_its_rows_one_by_one(model):
    cfg, w = model
    rng = np.random.default_rng(1)
    prompts = [rng.integers(0, cfg.vocab_size, n).tolist() for n in (5, 2, 7)]
    batched, _ = run(w, cfg, prompts, [0, 1, 2], 3, 6)
    for i, prompt in enumerate(prompts):
        alone, _ = run(w, cfg, [prompt], [0], 1, 6)
        for step_batched, step_alone in zip(batched, alone, strict=True):
            np.testing.assert_allclose(step_batched[i], step_alone[0], atol=1e-5, rtol=0)


def test_kept_and_one_off_scratch_agree(model, monkeypatch):
    cfg, w = model
    rng = np.random.default_rng(2)
    prompts = [rng.integers(0, cfg.vocab_size, n).tolist() for n in (cfg.n_ctx, cfg.n_ctx // 2, 3) * 8]
    assert sum(map(len, prompts)) >= ng._KEEP_ROWS[0]  # large enough to use the kept buffers
    slots = list(range(len(prompts)))
    kept = prefill(w, KVCache.allocate(cfg, len(prompts)), prompts, slots)
    smaller = prefill(w, KVCache.allocate(cfg, 2), prompts[:2], [1, 0])  # reuses a prefix of them
    monkeypatch.setattr(ng, "_KEEP_ROWS", (0, 0))
    one_off = prefill(w, KVCache.allocate(cfg, len(prompts)), prompts, slots)
    np.testing.assert_array_equal(kept, one_off)
    np.testing.assert_allclose(smaller, kept[:2], atol=1e-5, rtol=0)  # other batch, other rounding


def test_threads_on_disjoint_slots_match_one_thread(model):
    """A serving policy runs workers that each prefill and decode their own slots of one cache."""
    cfg, w = model
    n_threads, steps = 4, 10
    rng = np.random.default_rng(3)
    # Two prompts per worker, long enough (together) for prefill to use kept buffers.
    prompts = [[rng.integers(0, cfg.vocab_size, n).tolist() for n in (cfg.n_ctx // 2, 40)] for _ in range(n_threads)]
    prompts = [[p[: cfg.n_ctx - steps] for p in pair] for pair in prompts]

    def work(cache, i, out):
        slots = [2 * i, 2 * i + 1]
        for _ in range(3):  # repeat so the workers overlap
            logits = [prefill(w, cache, prompts[i], slots)]
            for step in range(steps):
                positions = [len(p) + step for p in prompts[i]]
                logits.append(decode(w, cache, np.argmax(logits[-1], axis=-1), slots, positions))
            out[i] = logits

    expected: dict[int, list] = {}
    cache = KVCache.allocate(cfg, 2 * n_threads)
    for i in range(n_threads):
        work(cache, i, expected)
    got: dict[int, list] = {}
    shared = KVCache.allocate(cfg, 2 * n_threads)
    threads = [threading.Thread(target=work, args=(shared, i, got)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(n_threads):
        for a, b in zip(got[i], expected[i], strict=True):
            np.testing.assert_allclose(a, b, atol=TOL, rtol=0)
    np.testing.assert_allclose(shared.k, cache.k, atol=TOL, rtol=0)


def test_weights_are_read_only(model):
    _, w = model
    for array in (w.wte, w.wpe, w.head, w.causal, w.layers[0].qkv, w.layers[-1].out):
        with pytest.raises(ValueError):
            array[0] = 0.0


def test_gelu_matches_the_tanh_formula_including_its_limits():
    u = np.concatenate([np.linspace(-8, 8, 1001), [-1e4, -200.0, -50.0, -12.0, 12.0, 50.0, 200.0]])
    ref = 0.5 * u * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (u + 0.044715 * u**3)))
    z = (GELU_SCALE * u).astype(np.float32)[None, :]
    out = np.empty_like(z)
    with np.errstate(over="ignore"):  # as decode and prefill run it
        ng._gelu_into(z, np.empty_like(z), out)
    np.testing.assert_allclose(out[0] / GELU_SCALE, ref, rtol=2e-6, atol=1e-6)


def test_large_activations_raise_no_floating_point_warnings():
    cfg = preset("tiny")
    params = random_params(cfg, seed=4)
    for name in params:
        if name.endswith("mlp.c_fc.weight"):
            params[name] = params[name] * 400.0  # GELU inputs far below -10: exp overflows to inf
    w = prepare(params, cfg)
    cache = KVCache.allocate(cfg, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        logits = prefill(w, cache, [[1, 2, 3], [4, 5]], [0, 1])
        logits = decode(w, cache, np.argmax(logits, axis=-1), [0, 1], [3, 2])
    assert np.isfinite(logits).all()


def test_older_numpy_fallback_for_the_row_sum_of_squares(model, monkeypatch):
    cfg, w = model
    prompts, slots = [[1, 2, 3], [4]], [0, 1]
    expected = prefill(w, KVCache.allocate(cfg, 2), prompts, slots)
    monkeypatch.setattr(ng, "_vecdot", None)  # NumPy < 2.0 has no vecdot
    got = prefill(w, KVCache.allocate(cfg, 2), prompts, slots)
    np.testing.assert_allclose(got, expected, atol=TOL, rtol=0)  # another summation order
