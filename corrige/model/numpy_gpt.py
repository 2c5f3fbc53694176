"""The GPT-2 forward pass in NumPy over explicit weights and an explicit KV cache.

The engine calls two functions:

* `prefill(w, cache, prompts, slots)`: run several prompts of different lengths at once,
  writing their keys/values into the given cache slots from position 0, and return the
  logits of each prompt's last token.
* `decode(w, cache, tokens, slots, positions)`: one new token for each of several
  sequences that sit in different slots at different positions.

Both are pure over their inputs except for the cache, which they write by index (the
pool is preallocated and never grows or concatenates). There is no Python loop over
heads or batch rows; the only loop is over layers.

Speed comes from doing less per call, since at this size each NumPy call costs about as
much as a small matmul:

* LayerNorm gains and offsets are folded into the next linear layer, the attention scale
  into the query projection, GELU's 0.5 into the MLP's output projection, and the final
  LayerNorm into the LM head, so a LayerNorm is a bare normalisation (`prepare`).
* Every weight that writes into the residual stream (embeddings, attention and MLP output
  projections) is centred so its output has zero mean over features. The stream then stays
  centred, LayerNorm's mean subtraction disappears, and the model is unchanged, because
  LayerNorm is the only reader of the stream and ignores its mean.
* Biases ride inside the matmuls: activations carry a trailing column of ones and each
  weight matrix a trailing bias row.
* Keys are cached transposed (`(.., head_size, n_ctx)`) so attention is two batched
  matmuls with no transposes in the decode loop.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corrige.model.config import GPTConfig
from corrige.model.weights import Params, check_params

# gelu_tanh(h) = h * sigmoid(2 * c * (h + 0.044715 h^3)), c = sqrt(2/pi); written with exp,
# which is about twice as fast as tanh in NumPy's float32 loops.
_GELU_2C = 2.0 * math.sqrt(2.0 / math.pi)


@dataclass(frozen=True)
class LayerWeights:
    """One block's weights, folded; each `*_aug` matrix has a trailing bias row."""

    qkv_aug: np.ndarray  # (d+1, 3d)   ln_1 folded in, queries pre-scaled by 1/sqrt(hs)
    proj_aug: np.ndarray  # (d+1, d)
    fc_aug: np.ndarray  # (d+1, 4d)    ln_2 folded in
    out_aug: np.ndarray  # (4d+1, d)


@dataclass(frozen=True)
class RuntimeWeights:
    """Weights prepared for the NumPy runtime (see `prepare`)."""

    cfg: GPTConfig
    wte: np.ndarray  # (V, d)      rows centred (for the residual stream, not the head)
    wpe: np.ndarray  # (n_ctx, d)  rows centred
    layers: tuple[LayerWeights, ...]
    head_aug: np.ndarray  # (d+1, V)   ln_f folded in, tied to wte
    mean_col: np.ndarray  # (d, 1) filled with 1/d: a mean as one matmul, cheaper than np.mean


@dataclass
class KVCache:
    """A fixed pool of `n_slots` sequences of up to `n_ctx` tokens each, for every layer.

    Keys are stored transposed so `q @ k` needs no transpose at run time.
    """

    k: np.ndarray  # (n_layer, n_slots, n_head, head_size, n_ctx)
    v: np.ndarray  # (n_layer, n_slots, n_head, n_ctx, head_size)

    @classmethod
    def allocate(cls, cfg: GPTConfig, n_slots: int) -> KVCache:
        if n_slots <= 0:
            raise ValueError("a KV cache needs at least one slot")
        L, H, hs, T = cfg.n_layer, cfg.n_head, cfg.head_size, cfg.n_ctx
        return cls(
            k=np.zeros((L, n_slots, H, hs, T), dtype=np.float32),
            v=np.zeros((L, n_slots, H, T, hs), dtype=np.float32),
        )

    @property
    def n_slots(self) -> int:
        return self.k.shape[1]

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes


def _centre_rows(a: np.ndarray) -> np.ndarray:
    """Subtract each row's mean, so `x @ a` (or a looked-up row) has zero mean over features."""
    a = a.astype(np.float64)
    return a - a.mean(axis=-1, keepdims=True)


def _augment(weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.vstack([weight, bias[None, :]]), dtype=np.float32)


def _fold_layernorm(gain: np.ndarray, offset: np.ndarray, weight: np.ndarray, bias: np.ndarray):
    """(xhat * g + b) @ W + c  ==  xhat @ (g[:, None] * W) + (b @ W + c)."""
    g, b, W, c = (a.astype(np.float64) for a in (gain, offset, weight, bias))
    return g[:, None] * W, b @ W + c


def prepare(params: Params, cfg: GPTConfig) -> RuntimeWeights:
    """Fold the GPT-2 parameters into the runtime's layout (exact up to float rounding)."""
    check_params(params, cfg)
    d, hs = cfg.n_embd, cfg.head_size
    layers = []
    for i in range(cfg.n_layer):
        prefix = f"transformer.h.{i}."

        def p(name: str, prefix: str = prefix) -> np.ndarray:
            return params[prefix + name]

        qkv_w, qkv_b = _fold_layernorm(p("ln_1.weight"), p("ln_1.bias"), p("attn.c_attn.weight"), p("attn.c_attn.bias"))
        scale = 1.0 / math.sqrt(hs)
        qkv_w[:, :d] *= scale
        qkv_b[:d] *= scale
        fc_w, fc_b = _fold_layernorm(p("ln_2.weight"), p("ln_2.bias"), p("mlp.c_fc.weight"), p("mlp.c_fc.bias"))
        layers.append(
            LayerWeights(
                qkv_aug=_augment(qkv_w, qkv_b),
                proj_aug=_centre_rows(_augment(p("attn.c_proj.weight"), p("attn.c_proj.bias"))).astype(np.float32),
                fc_aug=_augment(fc_w, fc_b),
                out_aug=_centre_rows(_augment(p("mlp.c_proj.weight"), p("mlp.c_proj.bias"))).astype(np.float32),
            )
        )
    wte = params["transformer.wte.weight"]
    head_w, head_b = _fold_layernorm(
        params["transformer.ln_f.weight"], params["transformer.ln_f.bias"], wte.T, np.zeros(cfg.vocab_size)
    )
    return RuntimeWeights(
        cfg=cfg,
        wte=_centre_rows(wte).astype(np.float32),
        wpe=_centre_rows(params["transformer.wpe.weight"]).astype(np.float32),
        layers=tuple(layers),
        head_aug=_augment(head_w, head_b),
        mean_col=np.full((cfg.n_embd, 1), 1.0 / cfg.n_embd, dtype=np.float32),
    )


def _normalize_into(x: np.ndarray, out: np.ndarray, mean_col: np.ndarray, eps: float) -> None:
    """LayerNorm of a centred stream, gain/offset folded away: out = x / std(x)."""
    var = (x * x) @ mean_col  # (N, 1)
    var += eps
    np.sqrt(var, out=var)
    np.divide(x, var, out=out)


def _gelu_into(h: np.ndarray) -> None:
    """In place: h <- gelu_tanh(h). Overflow of exp for very negative h gives h / inf = -0."""
    t = h * h
    t *= -_GELU_2C * 0.044715
    t -= _GELU_2C
    t *= h
    np.exp(t, out=t)
    t += 1.0
    np.divide(h, t, out=h)


def _mlp_block(x: np.ndarray, w: RuntimeWeights, lw: LayerWeights, ln_buf: np.ndarray, fc_buf: np.ndarray) -> None:
    """In place: x <- x + MLP(LN(x)). Buffers carry a trailing column of ones."""
    d = x.shape[1]
    _normalize_into(x, ln_buf[:, :d], w.mean_col, w.cfg.layer_norm_eps)
    fc = fc_buf[:, :-1]
    np.matmul(ln_buf, lw.fc_aug, out=fc)  # (N, 4d)
    _gelu_into(fc)
    x += fc_buf @ lw.out_aug  # (N, d)


def _ones_column_buffer(n: int, width: int) -> np.ndarray:
    buf = np.empty((n, width + 1), dtype=np.float32)
    buf[:, width] = 1.0
    return buf


def _logits(x: np.ndarray, w: RuntimeWeights) -> np.ndarray:
    buf = _ones_column_buffer(x.shape[0], x.shape[1])
    _normalize_into(x, buf[:, :-1], w.mean_col, w.cfg.layer_norm_eps)
    return buf @ w.head_aug  # (N, V)


def _check_positions(cfg: GPTConfig, positions: np.ndarray) -> None:
    if positions.size and (positions.min() < 0 or positions.max() >= cfg.n_ctx):
        raise ValueError(f"positions must lie in [0, {cfg.n_ctx}); got {positions.min()}..{positions.max()}")


def _slot_index(slots: np.ndarray) -> slice | np.ndarray:
    """A basic slice when the slots are consecutive, so gathers become views."""
    first = int(slots[0])
    if np.array_equal(slots, np.arange(first, first + len(slots))):
        return slice(first, first + len(slots))
    return slots


def _ignore_overflow(fn):
    """GELU's exp may overflow to inf for very negative inputs; that is the right limit."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with np.errstate(over="ignore"):
            return fn(*args, **kwargs)

    return wrapper


@_ignore_overflow
def decode(
    w: RuntimeWeights,
    cache: KVCache,
    tokens: Sequence[int] | np.ndarray,
    slots: Sequence[int] | np.ndarray,
    positions: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """One decode step for B sequences; returns next-token logits (B, V).

    Row b feeds `tokens[b]` at `positions[b]` of the sequence in cache slot `slots[b]`,
    whose positions `0..positions[b]-1` must already be cached. Writes the new key/value.
    """
    cfg = w.cfg
    tokens = np.asarray(tokens, dtype=np.int64)
    slots = np.asarray(slots, dtype=np.int64)
    positions = np.asarray(positions, dtype=np.int64)
    B = len(tokens)
    if not (len(slots) == len(positions) == B) or B == 0:
        raise ValueError("decode needs equally many tokens, slots and positions (at least one)")
    _check_positions(cfg, positions)
    d, H, hs, eps = cfg.n_embd, cfg.n_head, cfg.head_size, cfg.layer_norm_eps
    t_max = int(positions.max()) + 1
    sl = _slot_index(slots)
    # (B, 1, 1, t_max) additive mask; None when every row sees all t_max positions
    mask = None
    if positions.min() != positions.max():
        mask = np.where(np.arange(t_max)[None, :] <= positions[:, None], 0.0, -np.inf).astype(np.float32)
        mask = mask[:, None, None, :]

    x = w.wte[tokens] + w.wpe[positions]  # (B, d)
    ln_buf = _ones_column_buffer(B, d)
    fc_buf = _ones_column_buffer(B, 4 * d)
    att_buf = _ones_column_buffer(B, d)
    att = att_buf[:, :d].reshape(B, H, 1, hs)
    for layer, lw in enumerate(w.layers):
        _normalize_into(x, ln_buf[:, :d], w.mean_col, eps)
        qkv = ln_buf @ lw.qkv_aug  # (B, 3d)
        q = qkv[:, :d].reshape(B, H, 1, hs)
        cache.k[layer, slots, :, :, positions] = qkv[:, d : 2 * d].reshape(B, H, hs)
        cache.v[layer, slots, :, positions, :] = qkv[:, 2 * d :].reshape(B, H, hs)
        k = cache.k[layer, sl, :, :, :t_max]  # (B, H, hs, t)
        v = cache.v[layer, sl, :, :t_max, :]  # (B, H, t, hs)
        scores = q @ k  # (B, H, 1, t)
        if mask is not None:
            scores += mask
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        np.matmul(scores, v, out=att)  # (B, H, 1, hs) unnormalised
        att /= scores.sum(axis=-1, keepdims=True)
        x += att_buf @ lw.proj_aug  # (B, d)
        _mlp_block(x, w, lw, ln_buf, fc_buf)
    return _logits(x, w)


@_ignore_overflow
def prefill(
    w: RuntimeWeights,
    cache: KVCache,
    prompts: Sequence[Sequence[int]],
    slots: Sequence[int] | np.ndarray,
    all_logits: bool = False,
) -> np.ndarray | list[np.ndarray]:
    """Run B prompts (any lengths ≥ 1) from position 0 into the given slots.

    Tokens are packed (no padding) for every matmul; only attention uses a padded
    (B, H, L, L) view. Returns the last token's logits per prompt (B, V), or with
    `all_logits` a list of (len_b, V) arrays.
    """
    cfg = w.cfg
    slots = np.asarray(slots, dtype=np.int64)
    lengths = np.array([len(p) for p in prompts], dtype=np.int64)
    B = len(lengths)
    if B == 0 or len(slots) != B:
        raise ValueError("prefill needs one slot per prompt (at least one prompt)")
    if lengths.min() < 1:
        raise ValueError("every prompt needs at least one token")
    if lengths.max() > cfg.n_ctx:
        raise ValueError(f"a prompt of {lengths.max()} tokens does not fit the {cfg.n_ctx}-token window")
    d, H, hs, eps = cfg.n_embd, cfg.n_head, cfg.head_size, cfg.layer_norm_eps
    L = int(lengths.max())
    tokens = np.concatenate([np.asarray(p, dtype=np.int64) for p in prompts])  # (N,)
    row = np.repeat(np.arange(B), lengths)  # (N,) which prompt
    pos = np.arange(len(tokens)) - np.repeat(np.cumsum(lengths) - lengths, lengths)  # (N,)
    slot_of = slots[row]
    N = len(tokens)
    sl = _slot_index(slots)
    causal = np.triu(np.full((L, L), -np.inf, dtype=np.float32), k=1)  # (L, L)

    x = w.wte[tokens] + w.wpe[pos]  # (N, d)
    ln_buf = _ones_column_buffer(N, d)
    fc_buf = _ones_column_buffer(N, 4 * d)
    att_buf = _ones_column_buffer(N, d)
    q_pad = np.zeros((B, L, H, hs), dtype=np.float32)
    for layer, lw in enumerate(w.layers):
        _normalize_into(x, ln_buf[:, :d], w.mean_col, eps)
        qkv = ln_buf @ lw.qkv_aug  # (N, 3d)
        cache.k[layer, slot_of, :, :, pos] = qkv[:, d : 2 * d].reshape(N, H, hs)
        cache.v[layer, slot_of, :, pos, :] = qkv[:, 2 * d :].reshape(N, H, hs)
        q_pad[row, pos] = qkv[:, :d].reshape(N, H, hs)
        k = cache.k[layer, sl, :, :, :L]  # (B, H, hs, L)
        v = cache.v[layer, sl, :, :L, :]  # (B, H, L, hs)
        scores = q_pad.transpose(0, 2, 1, 3) @ k  # (B, H, L, L)
        scores += causal
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        out = (scores @ v).transpose(0, 2, 1, 3)  # (B, L, H, hs)
        att_buf[:, :d] = out[row, pos].reshape(N, d)
        x += att_buf @ lw.proj_aug  # (N, d)
        _mlp_block(x, w, lw, ln_buf, fc_buf)
    if all_logits:
        return np.split(_logits(x, w), np.cumsum(lengths)[:-1])
    last = np.cumsum(lengths) - 1
    return _logits(x[last], w)  # (B, V)
