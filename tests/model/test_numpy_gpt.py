"""The NumPy runtime is the same model as transformers' GPT2LMHeadModel on the same weights."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from corrige.model import preset  # noqa: E402
from corrige.model.generate import greedy_generate_scored  # noqa: E402
from corrige.model.numpy_gpt import KVCache, decode, extend, prefill, prepare  # noqa: E402
from corrige.model.weights import random_params, save_model  # noqa: E402

TOL = 1e-4


@pytest.fixture(scope="module", params=["tiny", "seed"])
def models(request, tmp_path_factory):
    cfg = preset(request.param)
    params = random_params(cfg, seed=7)
    directory = save_model(tmp_path_factory.mktemp(request.param), params, cfg)
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel.from_pretrained(directory).eval()
    return cfg, prepare(params, cfg), hf


def hf_logits(hf, tokens):
    with torch.no_grad():
        return hf(torch.tensor([tokens])).logits[0].numpy()  # (T, V)


def test_prefill_of_mixed_lengths_and_extend_at_every_position_match(models):
    cfg, w, hf = models
    rng = np.random.default_rng(1)
    lengths = [1, 5, cfg.n_ctx // 2, 3, cfg.n_ctx]
    prompts = [rng.integers(0, cfg.vocab_size, n).tolist() for n in lengths]
    cache = KVCache.allocate(cfg, 8)
    slots = [6, 0, 3, 7, 1]  # out of order, not consecutive
    last = prefill(w, cache, prompts, slots)  # each prompt's last position, batched
    per_prompt = [extend(w, KVCache.allocate(cfg, 1), p, 0, 0) for p in prompts]  # every position, one at a time
    for i, (prompt, got) in enumerate(zip(prompts, per_prompt, strict=True)):
        ref = hf_logits(hf, prompt)
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, atol=TOL, rtol=0)
        np.testing.assert_allclose(last[i], ref[-1], atol=TOL, rtol=0)


def test_batched_decode_at_mixed_positions_matches_every_step(models):
    cfg, w, hf = models
    rng = np.random.default_rng(2)
    prompts = [rng.integers(0, cfg.vocab_size, n).tolist() for n in (2, 9, 4, 1)]
    slots = [5, 2, 3, 4]  # 2,3,4,5 in a shuffled order
    cache = KVCache.allocate(cfg, 6)
    seqs = [list(p) for p in prompts]
    logits = prefill(w, cache, prompts, slots)
    steps = cfg.n_ctx - max(len(p) for p in prompts)
    for _ in range(steps):
        for s, row in zip(seqs, logits, strict=True):
            s.append(int(np.argmax(row)))
        logits = decode(w, cache, [s[-1] for s in seqs], slots, [len(s) - 1 for s in seqs])
        for s, row in zip(seqs, logits, strict=True):
            np.testing.assert_allclose(row, hf_logits(hf, s)[-1], atol=TOL, rtol=0)


def test_cached_decode_equals_full_recompute(models):
    cfg, w, _ = models
    rng = np.random.default_rng(3)
    seq = rng.integers(0, cfg.vocab_size, 12).tolist()
    cache = KVCache.allocate(cfg, 1)
    prefill(w, cache, [seq[:4]], [0])
    for t in range(4, len(seq)):
        step = decode(w, cache, [seq[t]], [0], [t])[0]
        full = prefill(w, KVCache.allocate(cfg, 1), [seq[: t + 1]], [0])[0]
        np.testing.assert_allclose(step, full, atol=TOL, rtol=0)


def test_other_slots_are_untouched(models):
    cfg, w, _ = models
    cache = KVCache.allocate(cfg, 4)
    prefill(w, cache, [[1, 2, 3]], [2])
    k_before, v_before = cache.k.copy(), cache.v.copy()
    prefill(w, cache, [[4, 5]], [0])
    decode(w, cache, [6], [0], [2])
    np.testing.assert_array_equal(cache.k[:, 2], k_before[:, 2])
    np.testing.assert_array_equal(cache.v[:, 2], v_before[:, 2])


def test_greedy_generation_equals_transformers_generate(models):
    cfg, w, hf = models
    rng = np.random.default_rng(4)
    prompts = [rng.integers(0, cfg.vocab_size, n).tolist() for n in (3, 7, 5)]
    new = min(20, cfg.n_ctx - 7)
    ours = greedy_generate_scored(w, KVCache.allocate(cfg, 3), prompts, max_new_tokens=new)
    for prompt, got in zip(prompts, (g.tokens for g in ours), strict=True):
        with torch.no_grad():
            ref = hf.generate(
                torch.tensor([prompt]),
                attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                max_new_tokens=new,
                do_sample=False,
                pad_token_id=0,
                eos_token_id=None,
            )[0, len(prompt) :].tolist()
        assert got == ref


def test_generation_stops_at_eos_and_at_the_window(models):
    cfg, w, _ = models
    prompt = [1, 2, 3]
    free = greedy_generate_scored(w, KVCache.allocate(cfg, 1), [prompt], max_new_tokens=cfg.n_ctx)[0].tokens
    assert len(prompt) + len(free) == cfg.n_ctx  # the window ends it
    eos = free[2]
    stopped = greedy_generate_scored(w, KVCache.allocate(cfg, 1), [prompt], max_new_tokens=cfg.n_ctx, eos_id=eos)[
        0
    ].tokens
    assert stopped[-1] == eos and len(stopped) == free.index(eos) + 1


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda w, c: prefill(w, c, [[]], [0]), "at least one token"),
        (lambda w, c: prefill(w, c, [[1] * 1000], [0]), "does not fit"),
        (lambda w, c: prefill(w, c, [[1], [2]], [0]), "one slot per prompt"),
        (lambda w, c: decode(w, c, [1], [0], [10_000]), "positions must lie"),
        (lambda w, c: decode(w, c, [1, 2], [0], [0]), "equally many"),
        (lambda w, c: decode(w, c, [1], [2], [0]), "slots must lie"),
        (lambda w, c: prefill(w, c, [[1]], [-1]), "slots must lie"),
    ],
)
def test_bad_calls_raise_clear_errors(models, call, match):
    cfg, w, _ = models
    with pytest.raises(ValueError, match=match):
        call(w, KVCache.allocate(cfg, 2))
