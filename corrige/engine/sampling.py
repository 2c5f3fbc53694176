"""Picking each row's next token from its logits: argmax, or temperature / top-k / top-p sampling.

A sampled row draws from its own request's generator (seeded from `SamplingParams.seed`),
so a seeded request gets the same tokens whatever else shares its batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corrige.engine.request import Request, SamplingParams


def sample_tokens(logits: Sequence[np.ndarray], requests: Sequence[Request]) -> list[int]:
    """One token id per logits row; `logits` is one or more (B_i, V) arrays whose rows, in
    order, belong to `requests`."""
    tokens = [t for part in logits for t in np.argmax(part, axis=-1).tolist()]  # every greedy row at once
    for row in [i for i, r in enumerate(requests) if r.params.temperature > 0]:
        part, index = _locate(logits, row)
        tokens[row] = sample_one(part[index], requests[row].params, requests[row].generator)
    return tokens


def _locate(parts: Sequence[np.ndarray], row: int) -> tuple[np.ndarray, int]:
    for part in parts:
        if row < len(part):
            return part, row
        row -= len(part)
    raise IndexError("row beyond the logits")


def sample_one(logits: np.ndarray, params: SamplingParams, generator: np.random.Generator) -> int:
    x = logits.astype(np.float64) / params.temperature
    if 0 < params.top_k < x.size:
        kth_largest = np.partition(x, -params.top_k)[-params.top_k]
        x = np.where(x >= kth_largest, x, -np.inf)
    probs = np.exp(x - x.max())
    probs /= probs.sum()
    if params.top_p < 1.0:
        order = np.argsort(-probs, kind="stable")
        # the smallest set of most likely tokens whose mass reaches top_p
        n_keep = int(np.searchsorted(np.cumsum(probs[order]), params.top_p)) + 1
        kept = np.zeros_like(probs)
        kept[order[:n_keep]] = probs[order[:n_keep]]
        probs = kept / kept.sum()
    cumulative = np.cumsum(probs)
    index = int(np.searchsorted(cumulative, generator.random() * cumulative[-1], side="right"))
    return min(index, probs.size - 1)
