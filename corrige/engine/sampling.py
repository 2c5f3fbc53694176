"""Picking each row's next token from its logits: argmax, or temperature / top-k / top-p sampling.

A sampled row draws from its own request's generator (seeded from `SamplingParams.seed`),
so a seeded request gets the same tokens whatever else shares its batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corrige.engine.request import Request, SamplingParams


def sample_tokens(logits: Sequence[np.ndarray], requests: Sequence[Request]) -> tuple[list[int], dict[int, Exception]]:
    """One token id per logits row, and the rows whose sampling raised; `logits` is one or more
    (B_i, V) arrays whose rows, in order, belong to `requests`."""
    tokens = [t for part in logits for t in np.argmax(part, axis=-1).tolist()]  # every greedy row at once
    picks = [(row, _row_logits(logits, row)) for row, r in enumerate(requests) if r.params.temperature > 0]
    drawn, errors = sample_rows(requests, picks)
    for row, token in drawn.items():
        tokens[row] = token
    return tokens, errors


def sample_rows(
    requests: Sequence[Request], picks: Sequence[tuple[int, np.ndarray]]
) -> tuple[dict[int, int], dict[int, Exception]]:
    """Draw a token for each (row, logits) of `picks` from that row's request; a row whose draw
    raises (a seed NumPy refuses, say) is reported instead, so that only its own request fails
    and the rest of the step goes on."""
    drawn: dict[int, int] = {}
    errors: dict[int, Exception] = {}
    for row, row_logits in picks:
        request = requests[row]
        try:
            drawn[row] = sample_one(row_logits, request.params, request.generator)
        except Exception as exc:
            errors[row] = exc
    return drawn, errors


def _row_logits(parts: Sequence[np.ndarray], row: int) -> np.ndarray:
    for part in parts:
        if row < len(part):
            return part[row]
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
