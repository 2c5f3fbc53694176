"""The load generator's workload: learner sentences from the tutor's held-out test split.

Sentence lengths follow a long tail, as real traffic does: a word count is drawn from a
lognormal (median `median_words`, shape `tail`) and a test sentence of that length (or the
nearest length the split has) is picked at random. With the defaults the mix has a median
of 7 words, a p95 near 12 and a few sentences of 15-16 words, the longest the tutor takes.

The pool is the test split of `corrige.synth.data.make_splits` (data seed 0, the split the
model card evaluates on), less the few sentences whose prompt does not fit the served model's
window (the server would refuse them with 422 `prompt_too_long`; the bundled model's 64-token
window drops about 6 in 2000). It takes under a second to build and is kept for the life of
the process, so building a workload of thousands of requests is instant after that.
Everything is seeded: the same `seed` gives the same sentences in the same order.
"""

from __future__ import annotations

import bisect
import logging
import math
import random
import statistics
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

POOL_SIZE = 2000  # test examples generated (the model card's synthetic test split)
DATA_SEED = 0  # the bundled model's data seed


@lru_cache(maxsize=4)
def sentence_pool(
    model: str | None = None, n: int = POOL_SIZE, data_seed: int = DATA_SEED
) -> dict[int, tuple[str, ...]]:
    """Test-split source sentences that fit `model` (a directory; None: the bundled tutor), by word count."""
    from corrige.synth.data import make_splits
    from corrige.tutor.agent import Tutor, normalize_sentence

    sources = [example.source for example in make_splits(data_seed, 0, 0, n)["test"]]
    tutor = Tutor.load(model)
    room = tutor.n_ctx - tutor.min_answer_tokens() - 2  # <bos> and <sep> around the sentence
    encoded = tutor.tokenizer.encode_batch([normalize_sentence(s)[0] for s in sources])
    by_words: dict[int, list[str]] = defaultdict(list)
    for source, ids in zip(sources, encoded, strict=True):
        if len(ids) <= room:
            by_words[len(source.split())].append(source)
    kept = sum(len(group) for group in by_words.values())
    log.debug("sentence pool: %d of %d sentences fit, %d to %d words", kept, n, min(by_words), max(by_words))
    return {words: tuple(group) for words, group in sorted(by_words.items())}


@dataclass(frozen=True)
class Workload:
    """The sentences to send, in order; clients take them round-robin."""

    sentences: tuple[str, ...]
    seed: int
    median_words: float
    tail: float

    def __len__(self) -> int:
        return len(self.sentences)

    def __getitem__(self, index: int) -> str:
        return self.sentences[index % len(self.sentences)]

    def describe(self) -> dict[str, float | int]:
        """Word-count summary of the mix (what a reader needs to judge the workload)."""
        words = sorted(len(s.split()) for s in self.sentences)
        return {
            "sentences": len(words),
            "words_p50": statistics.median(words),
            "words_p95": words[min(len(words) - 1, math.ceil(0.95 * len(words)) - 1)],
            "words_max": words[-1],
            "chars_mean": round(statistics.fmean(len(s) for s in self.sentences), 1),
        }


def build_workload(
    n: int = 4096, seed: int = 0, median_words: float = 7.0, tail: float = 0.35, model: Path | None = None
) -> Workload:
    """`n` sentences with a lognormal word count (median `median_words`, sigma `tail`) that fit `model`."""
    if n < 1:
        raise ValueError("a workload needs at least one sentence")
    pool = sentence_pool(str(model) if model is not None else None)
    lengths = sorted(pool)
    rng = random.Random(seed)
    sentences = []
    for _ in range(n):
        want = rng.lognormvariate(math.log(median_words), tail)
        sentences.append(rng.choice(pool[_nearest(lengths, want)]))
    return Workload(tuple(sentences), seed, median_words, tail)


def _nearest(sorted_values: list[int], x: float) -> int:
    i = bisect.bisect_left(sorted_values, x)
    if i == 0:
        return sorted_values[0]
    if i == len(sorted_values):
        return sorted_values[-1]
    below, above = sorted_values[i - 1], sorted_values[i]
    return below if x - below <= above - x else above
