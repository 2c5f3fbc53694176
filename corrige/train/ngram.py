"""Count a corpus of clean sentences into a trigram language model (`corrige lm build`).

Interpolated Kneser-Ney with one discount per order, D = n1 / (n1 + 2 n2) (Ney et al., 1994),
where n1 and n2 are the numbers of n-grams seen once and twice (raw counts for trigrams,
continuation counts for the orders below):

    p3(w | u v) = max(c(u v w) - D3, 0) / c(u v .) + g(u v) p2(w | v),  g(u v) = D3 N1+(u v .) / c(u v .)
    p2(w | v)   = max(N1+(. v w) - D2, 0) / N1+(. v .) + g(v) p1(w),     g(v) = D2 N1+(v .) / N1+(. v .)
    p1(w)       = N1+(. w) / N1+(. .)

Written in backoff form (`corrige.model.ngram`): a kept n-gram stores its interpolated
probability, a context its weight g. Trigrams seen fewer than `min_trigram_count` times and
bigrams seen after fewer than `min_bigram_count` words (and no kept trigram's context) are
pruned: the model then backs off for them, which keeps the bundled tables small.

Counting is NumPy over one array of word ids (np.unique on packed keys), so 20M words take
about a minute and a few GB.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from corrige.model.ngram import BITS_PER_WORD, BOS, EOS, UNK, NgramLM, NgramTable, pack, words_of

log = logging.getLogger(__name__)

_MASK = (1 << BITS_PER_WORD) - 1
_FLOOR = -99.0  # ln p of a word the model never predicts (<s>)


@dataclass(frozen=True)
class NgramBuildConfig:
    min_word_count: int = 2  # rarer words are <unk>: a typo seen once is not a word
    min_trigram_count: int = 2  # a trigram seen once says little and doubles the tables
    min_bigram_count: int = 2  # continuation count: seen after at least this many different words
    max_vocab: int = 200_000


def _unpack(keys: np.ndarray, n: int) -> np.ndarray:
    """(K, n) word ids of packed keys."""
    cols = [(keys >> (BITS_PER_WORD * (n - 1 - k))) & _MASK for k in range(n)]
    return np.stack(cols, axis=1)


def _discount(counts: np.ndarray) -> float:
    n1, n2 = int((counts == 1).sum()), int((counts == 2).sum())
    return n1 / (n1 + 2 * n2) if n1 + n2 else 0.5


def _group(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique `keys` with the sum of `values` and the number of rows per key."""
    uniq, inverse = np.unique(keys, return_inverse=True)
    return uniq, np.bincount(inverse, weights=values), np.bincount(inverse)


def _at(table_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Index of each of `keys` in sorted `table_keys` (all must be there)."""
    idx = np.searchsorted(table_keys, keys)
    if len(keys) and not np.array_equal(table_keys[np.minimum(idx, len(table_keys) - 1)], keys):
        raise AssertionError("a context missing from its table")
    return idx


def build(
    sentences: Iterable[str],
    config: NgramBuildConfig | None = None,
    on_sentences: Callable[[int], None] | None = None,
    info: dict[str, object] | None = None,
) -> NgramLM:
    """The trigram model of `sentences` (clean text, one sentence each)."""
    config = config or NgramBuildConfig()
    tokenised: list[list[str]] = []
    counts: Counter[str] = Counter()
    for k, s in enumerate(sentences, start=1):
        words = words_of(s)
        tokenised.append(words)
        counts.update(words)
        if on_sentences and k % 10_000 == 0:
            on_sentences(10_000)
    kept = [w for w, c in counts.most_common(config.max_vocab) if c >= config.min_word_count]
    vocab = [UNK, BOS, EOS, *kept]
    index = {w: i for i, w in enumerate(vocab)}
    unk, bos, eos = 0, 1, 2
    n_sentences = len(tokenised)
    log.info("%d sentences, %d words, vocabulary %d", n_sentences, sum(counts.values()), len(vocab))

    flat: list[int] = []
    for words in tokenised:
        flat += [bos, bos, *(index.get(w, unk) for w in words), eos]
    del tokenised
    a = np.array(flat, dtype=np.int64)
    del flat
    # trigrams inside a sentence: the predicted word is never <s>, and nothing follows </s>
    u, v, w = a[:-2], a[1:-1], a[2:]
    valid = (w != bos) & (u != eos) & (v != eos)
    tri = np.stack([u[valid], v[valid], w[valid]], axis=1)
    del a, u, v, w, valid

    # order 3: raw counts
    k3, c3 = np.unique(pack(tri), return_counts=True)
    del tri
    t3 = _unpack(k3, 3)
    d3 = _discount(c3)
    ctx3, ctx3_total, ctx3_types = _group(pack(t3[:, :2]), c3.astype(np.float64))

    # order 2: continuation counts N1+(. v w), one per distinct trigram; plus the (<s>, <s>) context
    k2, cc2 = np.unique(pack(t3[:, 1:]), return_counts=True)
    start_ctx = pack(np.array([[bos, bos]], dtype=np.int64))
    if start_ctx[0] not in k2:
        at = int(np.searchsorted(k2, start_ctx[0]))
        k2, cc2 = np.insert(k2, at, start_ctx[0]), np.insert(cc2, at, 0)
    t2 = _unpack(k2, 2)
    d2 = _discount(cc2[cc2 > 0])
    ctx2_total = np.bincount(t2[:, 0], weights=cc2.astype(np.float64), minlength=len(vocab))
    ctx2_types = np.bincount(t2[:, 0], weights=(cc2 > 0).astype(np.float64), minlength=len(vocab))

    # order 1: N1+(. w), one per distinct bigram
    cc1 = np.bincount(t2[:, 1], weights=(cc2 > 0).astype(np.float64), minlength=len(vocab))
    p1 = cc1 / cc1.sum()
    lp1 = np.where(p1 > 0, np.log(np.maximum(p1, 1e-300)), _FLOOR)
    with np.errstate(divide="ignore", invalid="ignore"):
        g2 = np.where(ctx2_total > 0, d2 * ctx2_types / ctx2_total, 1.0)
        p2 = (
            np.where(ctx2_total[t2[:, 0]] > 0, np.maximum(cc2 - d2, 0) / ctx2_total[t2[:, 0]], 0.0)
            + g2[t2[:, 0]] * p1[t2[:, 1]]
        )
    lp2 = np.log(np.maximum(p2, 1e-300))

    g3 = d3 * ctx3_types / ctx3_total
    ci = _at(ctx3, pack(t3[:, :2]))
    p2_of_tri = p2[_at(k2, pack(t3[:, 1:]))]
    p3 = np.maximum(c3 - d3, 0) / ctx3_total[ci] + g3[ci] * p2_of_tri
    lp3 = np.log(p3)

    # prune, keeping every context a kept trigram backs off from
    keep3 = c3 >= config.min_trigram_count
    bow2 = np.zeros(len(k2))
    bow2[_at(k2, ctx3)] = np.log(g3)
    is_ctx = np.zeros(len(k2), dtype=bool)
    is_ctx[_at(k2, np.unique(pack(t3[keep3][:, :2])))] = True
    keep2 = (cc2 >= config.min_bigram_count) | is_ctx
    log.info(
        "trigrams %d -> %d kept, bigrams %d -> %d kept (D3 %.3f, D2 %.3f)",
        len(k3), int(keep3.sum()), len(k2), int(keep2.sum()), d3, d2,
    )  # fmt: skip

    uni_keys = np.arange(len(vocab), dtype=np.int64)
    tables = [
        NgramTable(uni_keys, lp1.astype(np.float32), np.log(g2).astype(np.float32)),
        NgramTable(k2[keep2], lp2[keep2].astype(np.float32), bow2[keep2].astype(np.float32)),
        NgramTable(k3[keep3], lp3[keep3].astype(np.float32), np.zeros(int(keep3.sum()), dtype=np.float32)),
    ]
    meta = dict(info or {})
    meta |= {
        "order": 3,
        "smoothing": "interpolated Kneser-Ney, backoff form",
        "sentences": n_sentences,
        "words": int(sum(counts.values())),
        "vocabulary": len(vocab),
        "bigrams": int(keep2.sum()),
        "trigrams": int(keep3.sum()),
        "discounts": {"D2": round(d2, 4), "D3": round(d3, 4)},
        "config": config.__dict__,
    }
    return NgramLM(vocab, tables, meta)
