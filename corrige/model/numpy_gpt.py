"""The GPT-2 forward pass in NumPy over explicit weights and an explicit KV cache.

One block forward (`_block`: attention over the cache, then the MLP) serves four entry points,
which differ only in the cache places they write and read (a `_Plan`):

* `prefill(w, cache, prompts, slots)`: several prompts of different lengths into the given
  slots from position 0; the logits of each prompt's last token.
* `decode(w, cache, tokens, slots, positions)`: one new token for each of several sequences
  that sit in different slots at different positions.
* `verify(w, cache, chunks, slots, positions)`: several tokens per sequence (a token and a
  guess of what follows it), for speculative decoding; `extend` is its one-sequence case.

They are pure over their inputs except for the cache, which they write by index (the pool is
preallocated and never grows or concatenates). There is no Python loop over heads or batch
rows; the only loop is over layers. Weights are read-only and scratch buffers are per thread,
so several threads may run these functions at once on disjoint slots of one cache.

The weights come folded (`corrige/model/folded.py`: LayerNorm and biases inside the matmuls,
a centred stream whose extra constant feature makes a LayerNorm one `vecdot`); keys are
cached transposed (`(.., head_size, n_ctx)`) so attention is two batched matmuls with no
transposes in the layer loop.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corrige.model.config import GPTConfig
from corrige.model.folded import GELU_SHIFT, LayerWeights, RuntimeWeights, prepare

__all__ = ["KVCache", "RuntimeWeights", "decode", "extend", "prefill", "prepare", "verify"]

_ONE = np.float32(1.0)

_vecdot = getattr(np, "vecdot", None)  # NumPy >= 2.0; a row-wise dot in one call


def _row_sumsq(x: np.ndarray) -> np.ndarray:
    """(N, k) -> (N,): each row's sum of squares."""
    if _vecdot is not None:
        return _vecdot(x, x)
    return np.einsum("ij,ij->i", x, x)


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
    """out = gelu(u) * GELU_SCALE for z = GELU_SCALE * u (`corrige/model/folded.py`); z, tmp: (N, 4d), contiguous.

    The temporaries stay contiguous (elementwise loops on a strided view are ~4x slower);
    only the last divide writes into the strided `out`. exp overflows to inf for very
    negative u, where z / inf = 0 is the right limit.
    """
    np.multiply(z, z, out=tmp)
    tmp += GELU_SHIFT
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


@dataclass(slots=True)
class _Plan:
    """Where one call's rows sit in the cache: all that tells prefill, decode, verify and extend apart.

    The call feeds N rows, the tokens of B sequences (up to L consecutive positions each),
    packed in sequence order. Attention works on a (B, L) grid of them.
    """

    B: int
    L: int
    pos: np.ndarray  # (N,) each row's position
    # Where the rows' keys/values go: a block of slots by positions (two slices: basic indexing,
    # ~1 µs), a block of slots at one position (a slice and an int: the same, for decode), or one
    # (slot, position) pair per row (two (N,) arrays: a scatter, ~3-10 µs).
    write: tuple[slice, slice | int] | tuple[np.ndarray, np.ndarray]
    read: slice | np.ndarray  # the B sequences' slots: a slice (views) or an index array (copies)
    t: int  # keys 0..t-1 cover every row; a row's later keys are masked
    mask: np.ndarray | None  # additive, broadcast against (B, H, L, t); None: nothing masked
    grid: np.ndarray | None  # (N,) each row's index in the (B*L) grid; None: the rows fill it


class _Buffers:
    """One call's work buffers and the views the blocks read and write them through."""

    __slots__ = ("s", "q", "att", "k_new", "v_new", "scores", "q_grid", "att_grid")

    def __init__(self, p: _Plan, cfg: GPTConfig) -> None:
        d, H, hs = cfg.n_embd, cfg.n_head, cfg.head_size
        B, L, N = p.B, p.L, len(p.pos)
        s = self.s = _scratch(N, d)
        k_rows, v_rows = s.qkv[:, d : 2 * d], s.qkv[:, 2 * d :]  # views: heads are column blocks
        if isinstance(p.write[1], slice):  # the cache block's layout: (B, H, hs, L) keys, (B, H, L, hs) values
            self.k_new = k_rows.reshape(B, L, H, hs).transpose(0, 2, 3, 1)
            self.v_new = v_rows.reshape(B, L, H, hs).transpose(0, 2, 1, 3)
        else:  # a scatter's, or a slot block's at one position: (N, H, hs)
            self.k_new, self.v_new = k_rows.reshape(N, H, hs), v_rows.reshape(N, H, hs)
        if p.grid is None:  # the rows are the grid: attention reads queries and writes outputs in place
            self.q_grid = self.att_grid = None
            q, att = s.qkv[:, :d], s.att[:, :d]
        else:  # rows are scattered into it; padding queries stay 0 and their outputs are never read
            self.q_grid = q = np.zeros((B * L, d), dtype=np.float32)
            self.att_grid = att = np.empty((B * L, d), dtype=np.float32)
        self.q = q.reshape(B, L, H, hs).transpose(0, 2, 1, 3)  # (B, H, L, hs) views
        self.att = att.reshape(B, L, H, hs).transpose(0, 2, 1, 3)
        self.scores = np.empty((B, H, L, p.t), dtype=np.float32)


def _block(x: np.ndarray, lw: LayerWeights, k_cache: np.ndarray, v_cache: np.ndarray, p: _Plan, b: _Buffers) -> None:
    """One transformer block over the call's rows, in place: x <- x + attention(LN(x)), then the MLP.

    `k_cache`, `v_cache` are this layer's cache, (n_slots, H, hs, n_ctx) and (n_slots, H, n_ctx, hs).
    The rows' keys and values are written before attention reads the cache, so each row sees
    its sequence's earlier keys (cached or fed in this call) and its own.
    """
    s = b.s
    _normalize_into(x, s.ln)
    np.matmul(s.ln, lw.qkv, out=s.qkv)  # (N, 3d)
    slots, positions = p.write
    k_cache[slots, :, :, positions] = b.k_new
    v_cache[slots, :, positions, :] = b.v_new
    if isinstance(p.read, slice):  # views
        k, v = k_cache[p.read, :, :, : p.t], v_cache[p.read, :, : p.t]  # (B, H, hs, t), (B, H, t, hs)
    else:  # copies; `take` of whole slots is faster than a fancy index with a slice
        k, v = k_cache.take(p.read, axis=0)[..., : p.t], v_cache.take(p.read, axis=0)[:, :, : p.t]
    if b.q_grid is not None:
        b.q_grid[p.grid] = s.qkv[:, : s.d]
    np.matmul(b.q, k, out=b.scores)  # (B, H, L, t)
    if p.mask is not None:
        b.scores += p.mask
    sums = _exp_scores(b.scores)  # (B, H, L, 1)
    np.matmul(b.scores, v, out=b.att)  # (B, H, L, hs) unnormalised
    b.att /= sums
    if b.att_grid is not None:
        s.att[:, : s.d] = b.att_grid[p.grid]
    np.matmul(s.att, lw.proj, out=s.delta)  # (N, d+1)
    x += s.delta
    _mlp_block(x, lw, s)


def _forward(w: RuntimeWeights, cache: KVCache, tokens: np.ndarray, p: _Plan, rows: np.ndarray | None = None):
    """Every block over the call's rows, then the LM head over `rows` of them (None: all); returns logits."""
    x = w.wte.take(tokens, axis=0)  # (N, d+1); `take` is cheaper than fancy indexing
    x += w.wpe.take(p.pos, axis=0)
    b = _Buffers(p, w.cfg)
    with np.errstate(over="ignore"):  # GELU's exp overflows to inf for very negative inputs, the right limit
        for layer, lw in enumerate(w.layers):
            _block(x, lw, cache.k[layer], cache.v[layer], p, b)
    if rows is None:
        _normalize_into(x, b.s.ln)
        return b.s.ln @ w.head  # (N, V)
    x = x[rows]
    last = _with_ones_column(len(x), w.cfg.n_embd + 1)
    _normalize_into(x, last)
    return last @ w.head  # (len(rows), V)


def _as_indices(values: Sequence[int] | np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.intp)  # no copy for an intp array


def _check_slots(cache: KVCache, slots: list[int]) -> None:
    if min(slots) < 0 or max(slots) >= cache.n_slots:
        raise ValueError(f"slots must lie in [0, {cache.n_slots}); got {min(slots)}..{max(slots)}")


def _is_run(values: list[int]) -> bool:
    """Whether the values are first, first+1, first+2, .. in this order."""
    return values == list(range(values[0], values[0] + len(values)))


def _chunk_plan(w: RuntimeWeights, cache: KVCache, lengths: list[int], slots: np.ndarray, starts: np.ndarray) -> _Plan:
    """Sequence b feeds `lengths[b]` tokens at positions `starts[b]..` of slot `slots[b]`.

    Rows are packed, so matmuls never pay for padding; only attention's (B, L) grid is padded.
    """
    slot_list, start_list = slots.tolist(), starts.tolist()
    _check_slots(cache, slot_list)
    B, L = len(lengths), max(lengths)
    run = _is_run(slot_list)
    read = slice(slot_list[0], slot_list[0] + B) if run else slots
    t = max(s + n for s, n in zip(start_list, lengths, strict=True))
    p0 = start_list[0]
    same_start = min(start_list) == max(start_list)
    if min(lengths) == L:  # the rows fill the grid
        grid, pos = None, (starts[:, None] + np.arange(L)).ravel()
    else:
        row = np.repeat(np.arange(B), lengths)
        local = np.arange(len(row)) - (np.cumsum(lengths) - lengths)[row]
        grid, pos = row * L + local, starts[row] + local
    if run and same_start and grid is None:
        write: tuple = (read, slice(p0, p0 + L))
    else:
        write = (np.repeat(slots, lengths), pos)
    if same_start:  # (L, t); a padding query's row is never read
        mask = w.causal[p0 : p0 + L, :t]
    else:  # (B, 1, L, t); padding queries take their sequence's last position, a row the table has
        offset = np.minimum(np.arange(L)[None, :], np.array(lengths)[:, None] - 1)
        mask = w.causal[starts[:, None] + offset, :t][:, None]
    return _Plan(B, L, pos, write, read, t, mask, grid)


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
    # The plan `_chunk_plan` makes for chunks of one token, made here with fewer NumPy calls: the
    # step a one-client request repeats. `corrige bench model --no-reference` (seed, 4 paired runs):
    # decode step at batch 1 0.149 ms here against 0.161 ms through `_chunk_plan` (+8%), batch 8 +5%.
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
    run = _is_run(slot_list)
    read = slice(slot_list[0], slot_list[0] + B) if run else slots
    write = (read, lo) if run and lo == hi else (slots, positions)  # (B, H, hs) either way
    mask = None if lo == hi else w.causal[positions, : hi + 1][:, None, None, :]  # (B, 1, 1, t)
    return _forward(w, cache, tokens, _Plan(B, 1, positions, write, read, hi + 1, mask, None))


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
    """
    slots, positions = _as_indices(slots), _as_indices(positions)
    lengths = [len(c) for c in chunks]
    B = len(lengths)
    if B == 0 or not (len(slots) == len(positions) == B) or min(lengths) < 1:
        raise ValueError("verify needs one non-empty chunk, one slot and one position per row")
    if positions.min() < 0 or max(p + n for p, n in zip(positions.tolist(), lengths, strict=True)) > w.cfg.n_ctx:
        raise ValueError(f"every chunk must fit the {w.cfg.n_ctx}-token window from its position")
    tokens = np.concatenate([_as_indices(c) for c in chunks])
    return _forward(w, cache, tokens, _chunk_plan(w, cache, lengths, slots, positions))


def extend(w: RuntimeWeights, cache: KVCache, tokens: Sequence[int], slot: int, start: int) -> np.ndarray:
    """Feed T tokens to one sequence at positions `start..start+T-1`; returns logits (T, V).

    The sequence's positions `0..start-1` must be cached. This is `verify` for one sequence
    (to check a guessed continuation in one pass): its slot and positions are a basic slice,
    so the cache is written and read as views.
    """
    T = len(tokens)
    if T == 0 or start < 0 or start + T > w.cfg.n_ctx:
        raise ValueError(f"extend needs 1..{w.cfg.n_ctx - max(start, 0)} tokens from position {start}")
    plan = _chunk_plan(w, cache, [T], _as_indices([slot]), _as_indices([start]))
    return _forward(w, cache, _as_indices(tokens), plan)


def prefill(
    w: RuntimeWeights, cache: KVCache, prompts: Sequence[Sequence[int]], slots: Sequence[int] | np.ndarray
) -> np.ndarray:
    """Run B prompts (any lengths ≥ 1) into the given slots from position 0; returns the last
    token's logits per prompt (B, V). (Every position's logits of one sequence, or a
    continuation of a cached one: `extend`; several continuations at once: `verify`.)
    """
    slots = _as_indices(slots)
    lengths = [len(p) for p in prompts]
    B = len(lengths)
    if B == 0 or len(slots) != B:
        raise ValueError("prefill needs one slot per prompt (at least one prompt)")
    if min(lengths) < 1:
        raise ValueError("every prompt needs at least one token")
    if max(lengths) > w.cfg.n_ctx:
        raise ValueError(f"a prompt of {max(lengths)} tokens does not fit the {w.cfg.n_ctx}-token window")
    tokens = np.concatenate([_as_indices(p) for p in prompts])
    plan = _chunk_plan(w, cache, lengths, slots, np.zeros(B, dtype=np.intp))
    return _forward(w, cache, tokens, plan, rows=np.cumsum(lengths) - 1)  # each prompt's last row
