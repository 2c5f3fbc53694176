"""A word n-gram language model: how likely a sentence is, for scoring candidate corrections.

Interpolated Kneser-Ney (Chen & Goodman, 1998), stored in backoff form as an ARPA file would
hold it: each kept n-gram has its log-probability (the interpolated one) and each context its
backoff weight, so that an n-gram the table lacks costs its context's backoff weight plus the
shorter n-gram's log-probability. The tables are sorted int64 keys (a word id every
`BITS_PER_WORD` bits) beside float32 values, and a whole batch of sentences is scored with one
`np.searchsorted` per order: no Python loop per n-gram, no dictionary of millions of entries.

`corrige.train.ngram` counts a corpus into these tables; this module only reads them, and needs
NumPy alone (the server loads it).

Words are lowercased and split as the tutor's edits split them (`\\w+('\\w+)*` and single
punctuation marks); a sentence is `<s> <s> w1 ... wn </s>`, so the first word has a context too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BITS_PER_WORD = 21  # three words in one int64 key: up to 2,097,152 word ids
MAX_ORDER = 3
UNK, BOS, EOS = "<unk>", "<s>", "</s>"
TABLES_FILE = "ngram.npz"
VOCAB_FILE = "vocab.txt"
INFO_FILE = "ngram.json"

_WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def words_of(sentence: str) -> list[str]:
    """The model's words of a sentence: lowercased words and punctuation marks."""
    return [w.replace("’", "'") for w in _WORD.findall(sentence.lower())]


def pack(ids: np.ndarray) -> np.ndarray:
    """Keys of n-grams: `ids` is (N, n) int64 word ids, the result (N,) int64."""
    key = np.zeros(ids.shape[0], dtype=np.int64)
    for k in range(ids.shape[1]):
        key = (key << BITS_PER_WORD) | ids[:, k]
    return key


@dataclass(frozen=True)
class NgramTable:
    """The n-grams of one order: sorted keys, their log-probabilities and backoff weights (ln)."""

    keys: np.ndarray  # (K,) int64, sorted
    logprob: np.ndarray  # (K,) float32
    backoff: np.ndarray  # (K,) float32; 0 where the n-gram is never a context

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(found, logprob, backoff) for each of `keys` (zeros where not found)."""
        if len(self.keys) == 0:
            z = np.zeros(len(keys), dtype=np.float32)
            return np.zeros(len(keys), dtype=bool), z, z
        at = np.searchsorted(self.keys, keys)
        at = np.minimum(at, len(self.keys) - 1)
        found = self.keys[at] == keys
        return found, np.where(found, self.logprob[at], 0.0), np.where(found, self.backoff[at], 0.0)


class NgramLM:
    """Scores sentences with a trigram model (`corrige lm build` writes its directory)."""

    def __init__(self, vocab: Sequence[str], tables: Sequence[NgramTable], info: dict[str, object] | None = None):
        if len(tables) != MAX_ORDER:
            raise ValueError(f"an n-gram model has {MAX_ORDER} tables (orders 1..{MAX_ORDER}), not {len(tables)}")
        self.vocab = list(vocab)
        self.index = {w: i for i, w in enumerate(self.vocab)}
        for special in (UNK, BOS, EOS):
            if special not in self.index:
                raise ValueError(f"the vocabulary lacks {special}")
        self.tables = list(tables)
        self.info = info or {}
        # unigram log-probabilities by word id, so order 1 needs no search
        uni = tables[0]
        self._uni_logprob = np.full(len(self.vocab), -99.0, dtype=np.float32)
        self._uni_backoff = np.zeros(len(self.vocab), dtype=np.float32)
        self._uni_logprob[uni.keys] = uni.logprob
        self._uni_backoff[uni.keys] = uni.backoff

    @classmethod
    def load(cls, directory: str | Path) -> NgramLM:
        directory = Path(directory)
        vocab = (directory / VOCAB_FILE).read_text(encoding="utf-8").split("\n")
        with np.load(directory / TABLES_FILE) as z:
            tables = [
                NgramTable(
                    z[f"keys{n}"].astype(np.int64),
                    z[f"logprob{n}"].astype(np.float32),
                    z[f"backoff{n}"].astype(np.float32),
                )
                for n in range(1, MAX_ORDER + 1)
            ]
        info_path = directory / INFO_FILE
        info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.is_file() else {}
        return cls(vocab, tables, info)

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / VOCAB_FILE).write_text("\n".join(self.vocab), encoding="utf-8")
        arrays: dict[str, np.ndarray] = {}
        for n, t in enumerate(self.tables, start=1):
            arrays[f"keys{n}"] = t.keys
            arrays[f"logprob{n}"] = t.logprob.astype(np.float16)
            arrays[f"backoff{n}"] = t.backoff.astype(np.float16)
        np.savez_compressed(directory / TABLES_FILE, **arrays)  # type: ignore[arg-type]
        (directory / INFO_FILE).write_text(json.dumps(self.info, indent=2) + "\n", encoding="utf-8")

    def unigram_logprob(self, word: str) -> float:
        """ln p(word) with no context (`<unk>`'s for a word the model lacks: the share of all the
        words it lacks, together)."""
        return float(self._uni_logprob[self.index.get(word, self.index[UNK])])

    def ids(self, words: Sequence[str]) -> np.ndarray:
        unk = self.index[UNK]
        return np.array([self.index.get(w, unk) for w in words], dtype=np.int64)

    def padded(self, words: Sequence[str]) -> np.ndarray:
        """`<s> <s> words </s>` as word ids."""
        bos, eos = self.index[BOS], self.index[EOS]
        return np.concatenate([[bos, bos], self.ids(words), [eos]]).astype(np.int64)

    def _trigram_logprobs(self, tri: np.ndarray) -> np.ndarray:
        """ln p(w | u v) for rows (u, v, w) of `tri`, backing off as the tables say."""
        t2, t3 = self.tables[1], self.tables[2]
        f3, lp3, _ = t3.lookup(pack(tri))
        f2, lp2, _ = t2.lookup(pack(tri[:, 1:]))
        _, _, bow_uv = t2.lookup(pack(tri[:, :2]))
        w, v = tri[:, 2], tri[:, 1]
        # p(w | v): the bigram's own, else v's backoff weight times p(w)
        bigram = np.where(f2, lp2, self._uni_backoff[v] + self._uni_logprob[w])
        return np.where(f3, lp3, bow_uv + bigram)

    def score_many(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """Total ln-probability of each sentence (a list of the model's words), in one batch."""
        if not sentences:
            return np.zeros(0, dtype=np.float64)
        rows = []
        owner = []
        for k, words in enumerate(sentences):
            p = self.padded(words)
            rows.append(np.stack([p[:-2], p[1:-1], p[2:]], axis=1))
            owner.append(np.full(len(p) - 2, k))
        lp = self._trigram_logprobs(np.concatenate(rows))
        return np.bincount(np.concatenate(owner), weights=lp.astype(np.float64), minlength=len(sentences))

    def change_gains(self, words: Sequence[str], changes: Sequence[tuple[int, int, Sequence[str]]]) -> np.ndarray:
        """How much each change raises the sentence's ln-probability: a change replaces `words[i:j]`
        by its new words (none: a deletion; i == j: an insertion). Only the trigrams a change
        touches are scored (its new words and the two after), all changes in one batch."""
        if not changes:
            return np.zeros(0, dtype=np.float64)
        ids = self.padded(words).tolist()  # two <s> first: word k is ids[k + 2]
        unk = self.index[UNK]
        rows: list[tuple[int, int, int]] = []
        sign: list[float] = []
        owner: list[int] = []
        for n, (i, j, new) in enumerate(changes):
            tail = ids[j + 2 : j + 4]  # the two words after the change (or </s>) see it in their context
            for seq, s in (([*ids[i : i + 2], *(self.index.get(w, unk) for w in new), *tail], 1.0),
                           (ids[i : j + 2 + len(tail)], -1.0)):  # fmt: skip
                for k in range(2, len(seq)):
                    rows.append((seq[k - 2], seq[k - 1], seq[k]))
                    sign.append(s)
                    owner.append(n)
        lp = self._trigram_logprobs(np.array(rows, dtype=np.int64)).astype(np.float64)
        return np.bincount(np.array(owner), weights=lp * np.array(sign), minlength=len(changes))

    def score(self, sentence: str) -> float:
        """Total ln-probability of a sentence as text."""
        return float(self.score_many([words_of(sentence)])[0])

    def perplexity(self, sentences: Sequence[str]) -> float:
        """exp of the mean negative ln-probability per word (`</s>` counted) over `sentences`."""
        words = [words_of(s) for s in sentences]
        total = float(self.score_many(words).sum())
        n = sum(len(w) + 1 for w in words)
        return float(np.exp(-total / max(n, 1)))
