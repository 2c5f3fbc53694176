"""Training pairs from a TSV file (`corrige corpus pairs`): real sentences with injected errors.

The file has a header naming at least `source`, `corrected` and `gloss` (extra columns such as
`categories` are ignored). The pairs are already shuffled when they are made, so dev and test
are simply the file's last rows; a training row whose source is also held out is dropped.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from corrige.tokenizer import BPETokenizer
from corrige.tutor.token_codec import EncodedExample, encode_answer

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("source", "corrected", "gloss")


@dataclass(frozen=True)
class TextPair:
    """One training example: what the learner wrote, its correction, and the Spanish gloss."""

    source: str
    corrected: str
    gloss: str


def read_pairs(path: str | Path, limit: int | None = None) -> Iterator[TextPair]:
    """Rows of a pairs TSV, in file order; raises `ValueError` when a required column is missing."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: missing columns {missing} (found {reader.fieldnames})")
        for i, row in enumerate(reader):
            if limit is not None and i >= limit:
                return
            yield TextPair(row["source"], row["corrected"], row["gloss"])


def pair_splits(path: str | Path, n_dev: int, n_test: int, limit: int | None = None) -> dict[str, list[TextPair]]:
    """train / dev / test: the last `n_test` rows are test, the `n_dev` before them dev."""
    rows = list(read_pairs(path, limit))
    if len(rows) <= n_dev + n_test:
        raise ValueError(f"{path}: {len(rows)} rows leave nothing to train on after {n_dev} dev + {n_test} test")
    cut_dev, cut_test = len(rows) - n_dev - n_test, len(rows) - n_test
    held_out = {p.source for p in rows[cut_dev:]}
    train = [p for p in rows[:cut_dev] if p.source not in held_out]  # no held-out sentence is trained on
    if not train:
        raise ValueError(f"{path}: every training row repeats a held-out sentence")
    log.info("pairs: %d train, %d dev, %d test from %s", len(train), n_dev, n_test, path)
    return {"train": train, "dev": rows[cut_dev:cut_test], "test": rows[cut_test:]}


def encode_pairs(
    tok: BPETokenizer, pairs: list[TextPair], n_ctx: int, chunk: int = 4096
) -> tuple[list[EncodedExample], int]:
    """Encode in batches (the tokenizer's Rust side does the work); ids are int32 arrays.

    Returns the examples that fit the window and how many did not.
    """
    encoded: list[EncodedExample] = []
    dropped = 0
    bos, sep, eos = tok.special.bos, tok.special.sep, tok.special.eos
    for start in range(0, len(pairs), chunk):
        part = pairs[start : start + chunk]
        sources = tok.encode_batch([p.source for p in part])
        if tok.special.gloss is None:
            answers = [encode_answer(tok, p.corrected, p.gloss) for p in part]
        else:
            corrected = tok.encode_batch([p.corrected for p in part])
            glosses = tok.encode_batch([p.gloss for p in part])
            answers = [[*c, tok.special.gloss, *g] for c, g in zip(corrected, glosses, strict=True)]
        for src, answer in zip(sources, answers, strict=True):
            n_prompt = len(src) + 2
            if n_prompt + len(answer) + 1 > n_ctx:
                dropped += 1
                continue
            ids = np.array([bos, *src, sep, *answer, eos], dtype=np.int32)
            encoded.append(EncodedExample(ids=ids, n_prompt=n_prompt))  # type: ignore[arg-type]
    return encoded, dropped
