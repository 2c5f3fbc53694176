"""The GPT-2 forward pass in NumPy over explicit weights and an explicit KV cache.

The engine calls three functions:

* `prefill(w, cache, prompts, slots)`: run several prompts of different lengths at once,
  writing their keys/values into the given cache slots from position 0, and return the
  logits of each prompt's last token.
* `decode(w, cache, tokens, slots, positions)`: one new token for each of several
  sequences that sit in different slots at different positions.
* `verify(w, cache, chunks, slots, positions)`: the same with several tokens per sequence (a
  token and a guess of what follows it), for speculative decoding.

Both are pure over their inputs except for the cache, which they write by index (the
pool is preallocated and never grows or concatenates). There is no Python loop over
heads or batch rows; the only loop is over layers. Weights are read-only and scratch
buffers are per thread, so several threads may run these functions at once on disjoint
slots of one cache.

Speed comes from doing less per call, since at this size each NumPy call costs about as
much as a small matmul. Every trick below is an algebraic identity, so the runtime stays
the same model as transformers' GPT-2 (to float32 rounding):

* LayerNorm gains and offsets are folded into the next linear layer, the attention scale
  into the query projection and the final LayerNorm into the LM head (`prepare`).
* Every weight that writes into the residual stream (embeddings, attention and MLP output
  projections) is centred so its output has zero mean over features. The stream then stays
  centred, LayerNorm's mean subtraction disappears, and the model is unchanged, because
  LayerNorm is the only reader of the stream and ignores its mean.
* The stream carries one extra feature, the constant `sqrt(d * eps)`, that no layer writes
  (their output column for it is zero). A row's sum of squares is then `sum(x²) + d*eps`,
  so a LayerNorm is one `vecdot`, one `sqrt` and one divide:
  `x / sqrt(mean(x²) + eps) = sqrt(d) * x / sqrt(sum(x²) + d*eps)`, with the `sqrt(d)`
  folded into the next weights and a zero weight row for the extra feature.
* Biases ride inside the matmuls: the inputs of the linear layers carry a trailing column
  of ones and each weight matrix a trailing bias row.
* GELU's pre-activation is pre-scaled (in the MLP's input weights, undone in its output
  weights) so its sigmoid argument is the cheapest polynomial: see `_GELU_SCALE`.
* Keys are cached transposed (`(.., head_size, n_ctx)`) so attention is two batched
  matmuls with no transposes in the decode loop.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corrige.model.config import GPTConfig
from corrige.model.weights import Params, check_params

# gelu_tanh(u) = u * sigmoid(2c (u + 0.044715 u³)) = u / (1 + exp(-2c u - 2c·0.044715 u³)),
# c = sqrt(2/pi); exp is about twice as fast as tanh in NumPy's float32 loops. With
# z = _GELU_SCALE * u (a negative scale, folded into the MLP's input weights) the exponent
# is exactly z (z² + _GELU_SHIFT), and gelu(u) = z / (1 + exp(..)) / _GELU_SCALE, the last
# division folded into the MLP's output weights.
_GELU_2C = 2.0 * math.sqrt(2.0 / math.pi)
_GELU_SCALE = -((_GELU_2C * 0.044715) ** (1.0 / 3.0))
_GELU_SHIFT = np.float32(-_GELU_2C / _GELU_SCALE)  # NumPy scalars: a Python float costs a dtype lookup
_ONE = np.float32(1.0)

_vecdot = getattr(np, "vecdot", None)  # NumPy >= 2.0; a row-wise dot in one call


def _row_sumsq(x: np.ndarray) -> np.ndarray:
    """(N, k) -> (N,): each row's sum of squares."""
    if _vecdot is not None:
        return _vecdot(x, x)
    return np.einsum("ij,ij->i", x, x)


@dataclass(frozen=True)
class LayerWeights:
    """One block's weights, folded; every matrix has a trailing bias row.

    The inputs of `qkv` and `fc` are normalised stream rows `[x / r, eps_col / r, 1]`
    (d + 2 columns); `proj` and `out` write d + 1 columns, the last always zero.
    """

    qkv: np.ndarray  # (d+2, 3d)    ln_1 and sqrt(d) folded in, queries pre-scaled by 1/sqrt(hs)
    proj: np.ndarray  # (d+1, d+1)   centred, zero last column
    fc: np.ndarray  # (d+2, 4d)     ln_2 and sqrt(d) folded in, times _GELU_SCALE
    out: np.ndarray  # (4d+1, d+1)  weight rows divided by _GELU_SCALE, centred, zero last column


@dataclass(frozen=True)
class RuntimeWeights:
    """Weights prepared for the NumPy runtime (see `prepare`); read-only, shared by threads."""

    cfg: GPTConfig
    wte: np.ndarray  # (V, d+1)      rows centred, last column sqrt(d * eps)
    wpe: np.ndarray  # (n_ctx, d+1)  rows centred, last column 0
    layers: tuple[LayerWeights, ...]
    head: np.ndarray  # (d+2, V)      ln_f and sqrt(d) folded in, tied to wte
    causal: np.ndarray  # (n_ctx, n_ctx) row p: 0 at keys 0..p, -inf after


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


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float32)
    a.setflags(write=False)
    return a


def _fold_layernorm(gain: np.ndarray, offset: np.ndarray, weight: np.ndarray, bias: np.ndarray):
    """(xhat * g + b) @ W + c  ==  xhat @ (g[:, None] * W) + (b @ W + c)."""
    g, b, W, c = (a.astype(np.float64) for a in (gain, offset, weight, bias))
    return g[:, None] * W, b @ W + c


def _reads_normalised(weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """(d, n), (n,) -> (d+2, n) for inputs `[x / r, eps_col / r, 1]`, r = sqrt(sum(x²) + d*eps).

    x / r is the LayerNorm output divided by sqrt(d), so the weight rows take the sqrt(d);
    the extra feature's row is zero and the bias rides on the ones column.
    """
    d = weight.shape[0]
    return np.vstack([math.sqrt(d) * weight, np.zeros((1, weight.shape[1])), bias[None, :]])


def _writes_stream(weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """(k, d), (d,) -> (k+1, d+1): bias row appended, rows centred, a zero column for the extra feature."""
    aug = np.vstack([weight, bias[None, :]]).astype(np.float64)
    aug -= aug.mean(axis=1, keepdims=True)
    return np.hstack([aug, np.zeros((aug.shape[0], 1))])


def prepare(params: Params, cfg: GPTConfig) -> RuntimeWeights:
    """Fold the GPT-2 parameters into the runtime's layout (exact up to float rounding)."""
    check_params(params, cfg)
    d, hs = cfg.n_embd, cfg.head_size
    layers = []
    for i in range(cfg.n_layer):
        prefix = f"transformer.h.{i}."

        def p(name: str, prefix: str = prefix) -> np.ndarray:
            return params[prefix + name].astype(np.float64)

        qkv_w, qkv_b = _fold_layernorm(p("ln_1.weight"), p("ln_1.bias"), p("attn.c_attn.weight"), p("attn.c_attn.bias"))
        scale = 1.0 / math.sqrt(hs)
        qkv_w[:, :d] *= scale
        qkv_b[:d] *= scale
        fc_w, fc_b = _fold_layernorm(p("ln_2.weight"), p("ln_2.bias"), p("mlp.c_fc.weight"), p("mlp.c_fc.bias"))
        layers.append(
            LayerWeights(
                qkv=_frozen(_reads_normalised(qkv_w, qkv_b)),
                proj=_frozen(_writes_stream(p("attn.c_proj.weight"), p("attn.c_proj.bias"))),
                fc=_frozen(_reads_normalised(_GELU_SCALE * fc_w, _GELU_SCALE * fc_b)),
                out=_frozen(_writes_stream(p("mlp.c_proj.weight") / _GELU_SCALE, p("mlp.c_proj.bias"))),
            )
        )
    wte = params["transformer.wte.weight"].astype(np.float64)
    wpe = params["transformer.wpe.weight"].astype(np.float64)
    head_w, head_b = _fold_layernorm(
        params["transformer.ln_f.weight"], params["transformer.ln_f.bias"], wte.T, np.zeros(cfg.vocab_size)
    )
    eps_col = math.sqrt(d * cfg.layer_norm_eps)
    T = cfg.n_ctx
    return RuntimeWeights(
        cfg=cfg,
        wte=_frozen(np.hstack([wte - wte.mean(axis=1, keepdims=True), np.full((cfg.vocab_size, 1), eps_col)])),
        wpe=_frozen(np.hstack([wpe - wpe.mean(axis=1, keepdims=True), np.zeros((T, 1))])),
        layers=tuple(layers),
        head=_frozen(_reads_normalised(head_w, head_b)),
        causal=_frozen(np.triu(np.full((T, T), -np.inf), k=1)),
    )


def _with_ones_column(n: int, width: int) -> np.ndarray:
    """(n, width + 1) scratch whose last column is 1, for a bias row in the next matmul."""
    buf = np.empty((n, width + 1), dtype=np.float32)
    buf[:, width] = 1.0
    return buf


def _normalize_into(x: np.ndarray, out: np.ndarray) -> None:
    """out[:, :-1] = x / sqrt(sum(x²) + d*eps): a LayerNorm of the centred stream over sqrt(d).

    x is (N, d+1) with the constant sqrt(d*eps) as its last feature, so the row sum of
    squares already holds the epsilon; out is (N, d+2) with a ones column at the end.
    """
    r = _row_sumsq(x)  # (N,)
    np.sqrt(r, out=r)
    np.divide(x, r[:, None], out=out[:, :-1])


def _gelu_into(z: np.ndarray, tmp: np.ndarray, out: np.ndarray) -> None:
    """out = gelu(u) * _GELU_SCALE for z = _GELU_SCALE * u; z and tmp are (N, 4d), contiguous.

    The temporaries stay contiguous (elementwise loops on a strided view are ~4x slower);
    only the last divide writes into the strided `out`. exp overflows to inf for very
    negative u, where z / inf = 0 is the right limit.
    """
    np.multiply(z, z, out=tmp)
    tmp += _GELU_SHIFT
    tmp *= z  # the sigmoid's exponent, z (z² + shift)
    np.exp(tmp, out=tmp)
    tmp += _ONE
    np.divide(z, tmp, out=out)


def _exp_scores(scores: np.ndarray) -> np.ndarray:
    """In place: scores <- exp(scores - row max); returns the row sums (.., 1), the softmax's divisor.

    Softmax is unchanged by a per-row shift; the max keeps exp from overflowing, and a
    masked score (-inf) becomes exactly 0.
    """
    scores -= np.maximum.reduce(scores, axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    return np.add.reduce(scores, axis=-1, keepdims=True)


class _Scratch:
    """Work buffers for `rows` rows of a width-d model, reused by every layer.

    Buffers that feed a matmul end in a ones column for the weights' bias row.
    """

    __slots__ = ("rows", "d", "ln", "qkv", "att", "delta", "h", "tmp", "gelu")

    def __init__(self, rows: int, d: int) -> None:
        self.rows, self.d = rows, d
        self.ln = _with_ones_column(rows, d + 1)  # (rows, d+2)  normalised stream
        self.qkv = np.empty((rows, 3 * d), dtype=np.float32)
        self.att = _with_ones_column(rows, d)  # (rows, d+1)  attention output, heads side by side
        self.delta = np.empty((rows, d + 1), dtype=np.float32)  # a block's output, before the residual add
        self.h = np.empty((rows, 4 * d), dtype=np.float32)  # MLP pre-activation
        self.tmp = np.empty((rows, 4 * d), dtype=np.float32)
        self.gelu = _with_ones_column(rows, 4 * d)  # (rows, 4d+1)

    def first(self, n: int) -> _Scratch:
        """Views of the first n rows (rows are contiguous, so these stay BLAS-friendly)."""
        view = object.__new__(_Scratch)
        view.rows, view.d = n, self.d
        for name in _Scratch.__slots__[2:]:
            setattr(view, name, getattr(self, name)[:n])
        return view


# For prefill-sized calls each thread keeps its `_Scratch` between calls, grown to the
# most rows it has needed: fresh arrays over ~128 KiB are new pages from the OS, and
# faulting them in on every call cost prefill of 32x24 tokens 10-20% of its time. Small
# calls (decode) allocate afresh, which is cheaper than slicing views. Being thread-local,
# concurrent calls never share a buffer; nothing returned to a caller is a view of one.
_per_thread = threading.local()
_KEEP_ROWS = (64, 2048)  # ~7 KiB a row at d=96; outside this range buffers are one-off


def _scratch(n: int, d: int) -> _Scratch:
    """Buffers for n rows: one-off, or views into this thread's kept buffers for width d."""
    if not _KEEP_ROWS[0] <= n <= _KEEP_ROWS[1]:
        return _Scratch(n, d)
    kept = _per_thread.__dict__.setdefault("by_width", {})
    s = kept.get(d)
    if s is None or s.rows < n:
        s = kept[d] = _Scratch(n, d)
    return s if s.rows == n else s.first(n)


def _mlp_block(x: np.ndarray, lw: LayerWeights, s: _Scratch) -> None:
    """In place: x <- x + MLP(LN(x))."""
    _normalize_into(x, s.ln)
    np.matmul(s.ln, lw.fc, out=s.h)  # (N, 4d)
    _gelu_into(s.h, s.tmp, s.gelu[:, :-1])
    np.matmul(s.gelu, lw.out, out=s.delta)  # (N, d+1)
    x += s.delta


def _as_indices(values: Sequence[int] | np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.intp)  # no copy for an intp array


def _check_slots(cache: KVCache, slots: list[int]) -> None:
    if min(slots) < 0 or max(slots) >= cache.n_slots:
        raise ValueError(f"slots must lie in [0, {cache.n_slots}); got {min(slots)}..{max(slots)}")


def _is_run(values: list[int]) -> bool:
    """Whether the values are first, first+1, first+2, .. in this order."""
    return values == list(range(values[0], values[0] + len(values)))


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
    tokens, slots, positions = _as_indices(tokens), _as_indices(slots), _as_indices(positions)
    B = len(tokens)
    if not (len(slots) == len(positions) == B) or B == 0:
        raise ValueError("decode needs equally many tokens, slots and positions (at least one)")
    slot_list, pos_list = slots.tolist(), positions.tolist()  # Python ints: cheaper tests than NumPy calls
    lo, hi = min(pos_list), max(pos_list)
    if lo < 0 or hi >= cfg.n_ctx:
        raise ValueError(f"positions must lie in [0, {cfg.n_ctx}); got {lo}..{hi}")
    _check_slots(cache, slot_list)
    d, H, hs = cfg.n_embd, cfg.n_head, cfg.head_size
    t = hi + 1  # keys 0..hi cover every row; a row's later keys are masked
    run = _is_run(slot_list)
    s0 = slot_list[0]
    # Where the new keys/values go, (B, H, hs) either way. Basic indexing (a slot range and
    # one position) costs ~1 µs; a scatter by index arrays ~3-10 µs.
    if run and lo == hi:
        write_slots, write_pos = slice(s0, s0 + B), lo
    else:
        write_slots, write_pos = slots, positions
    # (B, 1, 1, t) additive mask; None when every row sees all t keys
    mask = None if lo == hi else w.causal[positions, :t][:, None, None, :]

    x = w.wte.take(tokens, axis=0)  # (B, d+1); `take` is cheaper than fancy indexing
    x += w.wpe.take(positions, axis=0)
    s = _scratch(B, d)
    q = s.qkv[:, :d].reshape(B, H, 1, hs)  # views: heads are column blocks
    k_new = s.qkv[:, d : 2 * d].reshape(B, H, hs)
    v_new = s.qkv[:, 2 * d :].reshape(B, H, hs)
    att = s.att[:, :d].reshape(B, H, 1, hs)
    for layer, lw in enumerate(w.layers):
        _normalize_into(x, s.ln)
        np.matmul(s.ln, lw.qkv, out=s.qkv)  # (B, 3d)
        cache.k[layer, write_slots, :, :, write_pos] = k_new
        cache.v[layer, write_slots, :, write_pos, :] = v_new
        if run:  # views
            k = cache.k[layer, s0 : s0 + B, :, :, :t]  # (B, H, hs, t)
            v = cache.v[layer, s0 : s0 + B, :, :t, :]  # (B, H, t, hs)
        else:  # copies; `take` of whole slots is faster than a fancy index with a slice
            k = cache.k[layer].take(slots, axis=0)[..., :t]
            v = cache.v[layer].take(slots, axis=0)[:, :, :t, :]
        scores = q @ k  # (B, H, 1, t)
        if mask is not None:
            scores += mask
        sums = _exp_scores(scores)  # (B, H, 1, 1)
        np.matmul(scores, v, out=att)  # (B, H, 1, hs) unnormalised
        att /= sums
        np.matmul(s.att, lw.proj, out=s.delta)  # (B, d+1)
        x += s.delta
        _mlp_block(x, lw, s)
    _normalize_into(x, s.ln)
    return s.ln @ w.head  # (B, V)


@_ignore_overflow
def verify(
    w: RuntimeWeights,
    cache: KVCache,
    chunks: Sequence[Sequence[int]],
    slots: Sequence[int] | np.ndarray,
    positions: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """`decode` for several tokens per sequence: row b feeds `chunks[b]` (its next token and a
    guess of what follows) at positions `positions[b]..`; returns the logits of every fed token,
    packed in row order (sum of chunk lengths, V). Speculative decoding checks guesses with it.

    Chunks are padded to the longest one, L, so every array has a fixed (B, L) shape and there
    is no packing. A padding entry repeats its row's last token at that token's position: it
    computes exactly the same key and value and writes them to the same place, so it changes
    nothing and never writes past the sequence or the window.
    """
    cfg = w.cfg
    slots, positions = _as_indices(slots), _as_indices(positions)
    lengths = np.array([len(c) for c in chunks], dtype=np.intp)
    B = len(lengths)
    if B == 0 or not (len(slots) == len(positions) == B) or lengths.min() < 1:
        raise ValueError("verify needs one non-empty chunk, one slot and one position per row")
    if positions.min() < 0 or (positions + lengths).max() > cfg.n_ctx:
        raise ValueError(f"every chunk must fit the {cfg.n_ctx}-token window from its position")
    slot_list = slots.tolist()
    _check_slots(cache, slot_list)
    if B == 1:  # one sequence: `extend` writes and reads the cache by basic slices, which is cheaper
        return extend(w, cache, chunks[0], slot_list[0], int(positions[0]))
    d, H, hs = cfg.n_embd, cfg.n_head, cfg.head_size
    L = int(lengths.max())
    offset = np.minimum(np.arange(L)[None, :], lengths[:, None] - 1)  # (B, L) index in the chunk, padding repeats
    flat = np.concatenate([np.asarray(c, dtype=np.intp) for c in chunks])
    tokens = flat[(np.cumsum(lengths) - lengths)[:, None] + offset]  # (B, L)
    pos = positions[:, None] + offset  # (B, L)
    t = int(pos.max()) + 1  # keys 0..t-1 cover every row; a row's later keys are masked
    mask = w.causal[pos, :t][:, None]  # (B, 1, L, t)
    run = _is_run(slot_list)
    s0 = slot_list[0]
    write_slots = slots[:, None]  # (B, 1), broadcast against pos

    x = w.wte.take(tokens.ravel(), axis=0)  # (B*L, d+1)
    x += w.wpe.take(pos.ravel(), axis=0)
    s = _scratch(B * L, d)
    q = s.qkv[:, :d].reshape(B, L, H, hs).transpose(0, 2, 1, 3)  # (B, H, L, hs) view
    k_new = s.qkv[:, d : 2 * d].reshape(B, L, H, hs)
    v_new = s.qkv[:, 2 * d :].reshape(B, L, H, hs)
    att = np.empty((B, L, H, hs), dtype=np.float32)
    att_heads = att.transpose(0, 2, 1, 3)  # (B, H, L, hs) view
    for layer, lw in enumerate(w.layers):
        _normalize_into(x, s.ln)
        np.matmul(s.ln, lw.qkv, out=s.qkv)  # (B*L, 3d)
        cache.k[layer, write_slots, :, :, pos] = k_new  # (B, L, H, hs)
        cache.v[layer, write_slots, :, pos, :] = v_new
        if run:  # views
            k = cache.k[layer, s0 : s0 + B, :, :, :t]  # (B, H, hs, t)
            v = cache.v[layer, s0 : s0 + B, :, :t, :]  # (B, H, t, hs)
        else:
            k = cache.k[layer].take(slots, axis=0)[..., :t]
            v = cache.v[layer].take(slots, axis=0)[:, :, :t, :]
        scores = q @ k  # (B, H, L, t)
        scores += mask
        sums = _exp_scores(scores)  # (B, H, L, 1)
        np.matmul(scores, v, out=att_heads)  # (B, H, L, hs) unnormalised, into (B, L, H, hs)
        att_heads /= sums
        s.att[:, :d] = att.reshape(B * L, d)
        np.matmul(s.att, lw.proj, out=s.delta)  # (B*L, d+1)
        x += s.delta
        _mlp_block(x, lw, s)
    fed = (np.arange(L)[None, :] < lengths[:, None]).ravel()  # (B*L,) real rows, in row order
    x = x[fed] if L * B != len(flat) else x
    last = _with_ones_column(len(x), d + 1)
    _normalize_into(x, last)
    return last @ w.head  # (sum of lengths, V)


@_ignore_overflow
def extend(
    w: RuntimeWeights,
    cache: KVCache,
    tokens: Sequence[int],
    slot: int,
    start: int,
) -> np.ndarray:
    """Feed T tokens to one sequence at positions `start..start+T-1`; returns logits (T, V).

    The sequence's positions `0..start-1` must be cached. This is `decode` for several
    consecutive tokens of one sequence (to check a guessed continuation in one pass): the
    slot and positions are a basic slice, so the cache is written and read as views, and
    the causal mask is a slice of the precomputed table.
    """
    cfg = w.cfg
    T = len(tokens)
    if T == 0 or start < 0 or start + T > cfg.n_ctx:
        raise ValueError(f"extend needs 1..{cfg.n_ctx - max(start, 0)} tokens from position {start}")
    _check_slots(cache, [slot])
    d, H, hs = cfg.n_embd, cfg.n_head, cfg.head_size
    end = start + T
    x = w.wte.take(np.asarray(tokens, dtype=np.intp), axis=0)  # (T, d+1)
    x += w.wpe[start:end]
    mask = w.causal[start:end, :end]  # (T, end): query start+i sees keys 0..start+i
    s = _scratch(T, d)
    q = s.qkv[:, :d].reshape(T, H, hs).transpose(1, 0, 2)  # (H, T, hs) view
    att = np.empty((H, T, hs), dtype=np.float32)
    for layer, lw in enumerate(w.layers):
        _normalize_into(x, s.ln)
        np.matmul(s.ln, lw.qkv, out=s.qkv)  # (T, 3d)
        cache.k[layer, slot, :, :, start:end] = s.qkv[:, d : 2 * d].reshape(T, H, hs).transpose(1, 2, 0)
        cache.v[layer, slot, :, start:end, :] = s.qkv[:, 2 * d :].reshape(T, H, hs).transpose(1, 0, 2)
        scores = q @ cache.k[layer, slot, :, :, :end]  # (H, T, end)
        scores += mask
        sums = _exp_scores(scores)  # (H, T, 1)
        np.matmul(scores, cache.v[layer, slot, :, :end, :], out=att)  # (H, T, hs) unnormalised
        att /= sums
        s.att[:, :d] = att.transpose(1, 0, 2).reshape(T, d)
        np.matmul(s.att, lw.proj, out=s.delta)  # (T, d+1)
        x += s.delta
        _mlp_block(x, lw, s)
    _normalize_into(x, s.ln)
    return s.ln @ w.head  # (T, V)


@_ignore_overflow
def prefill(
    w: RuntimeWeights,
    cache: KVCache,
    prompts: Sequence[Sequence[int]],
    slots: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """Run B prompts (any lengths ≥ 1) into the given slots from position 0; returns the last
    token's logits per prompt (B, V). Tokens are packed (no padding) for every matmul; only
    attention uses a padded (B, H, L, L) view. (Every position's logits of one sequence, or a
    continuation of a cached one: `extend`; several continuations at once: `verify`.)
    """
    cfg = w.cfg
    slots = _as_indices(slots)
    lengths = np.array([len(p) for p in prompts], dtype=np.intp)
    B = len(lengths)
    if B == 0 or len(slots) != B:
        raise ValueError("prefill needs one slot per prompt (at least one prompt)")
    if lengths.min() < 1:
        raise ValueError("every prompt needs at least one token")
    if lengths.max() > cfg.n_ctx:
        raise ValueError(f"a prompt of {lengths.max()} tokens does not fit the {cfg.n_ctx}-token window")
    slot_list = slots.tolist()
    _check_slots(cache, slot_list)
    d, H, hs = cfg.n_embd, cfg.n_head, cfg.head_size
    L = int(lengths.max())
    tokens = np.concatenate([np.asarray(p, dtype=np.intp) for p in prompts])  # (N,)
    N = len(tokens)
    starts = np.cumsum(lengths) - lengths  # (B,) first packed row of each prompt
    row = np.repeat(np.arange(B), lengths)  # (N,) which prompt
    local = np.arange(N) - starts[row]  # (N,) index in its prompt
    pos = local  # (N,) position in its sequence
    padded = row * L + local  # (N,) row in the (B*L, ..) padded layout
    Lk = L  # keys to attend over
    mask = w.causal[:L, :L]
    slot_of = slots[row]  # (N,)
    run = _is_run(slot_list)
    s0 = slot_list[0]

    x = w.wte.take(tokens, axis=0)  # (N, d+1)
    x += w.wpe.take(pos, axis=0)
    s = _scratch(N, d)
    q_pad = np.zeros((B, L, H, hs), dtype=np.float32)  # padding rows stay 0 and are never read back
    out_pad = np.empty((B, L, H, hs), dtype=np.float32)
    scores = np.empty((B, H, L, Lk), dtype=np.float32)
    for layer, lw in enumerate(w.layers):
        _normalize_into(x, s.ln)
        np.matmul(s.ln, lw.qkv, out=s.qkv)  # (N, 3d)
        cache.k[layer, slot_of, :, :, pos] = s.qkv[:, d : 2 * d].reshape(N, H, hs)
        cache.v[layer, slot_of, :, pos, :] = s.qkv[:, 2 * d :].reshape(N, H, hs)
        q_pad.reshape(B * L, d)[padded] = s.qkv[:, :d]
        if run:  # views
            k = cache.k[layer, s0 : s0 + B, :, :, :Lk]  # (B, H, hs, Lk)
            v = cache.v[layer, s0 : s0 + B, :, :Lk, :]  # (B, H, Lk, hs)
        else:
            k = cache.k[layer].take(slots, axis=0)[..., :Lk]
            v = cache.v[layer].take(slots, axis=0)[:, :, :Lk, :]
        # Keys past a prompt's length hold stale values, but the causal mask hides them
        # from that prompt's real queries; padding queries' outputs are never gathered.
        np.matmul(q_pad.transpose(0, 2, 1, 3), k, out=scores)  # (B, H, L, Lk)
        scores += mask
        scores /= _exp_scores(scores)
        np.matmul(scores, v, out=out_pad.transpose(0, 2, 1, 3))  # (B, H, L, hs) into (B, L, H, hs)
        s.att[:, :d] = out_pad.reshape(B * L, d)[padded]  # (N, d)
        np.matmul(s.att, lw.proj, out=s.delta)  # (N, d+1)
        x += s.delta
        _mlp_block(x, lw, s)
    x = x[starts + lengths - 1]  # (B, d+1) each prompt's last token
    last = _with_ones_column(len(x), d + 1)
    _normalize_into(x, last)
    return last @ w.head  # (B, V)
