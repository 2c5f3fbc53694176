"""Greedy generation over the NumPy runtime for a fixed batch (no scheduling).

The engine does the same with requests joining and leaving between steps; this is the
plain version used by benchmarks, tests and the command line.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from corrige.model.numpy_gpt import KVCache, RuntimeWeights, decode, prefill


def greedy_generate(
    w: RuntimeWeights,
    cache: KVCache,
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos_id: int | None = None,
    slots: Sequence[int] | None = None,
) -> list[list[int]]:
    """Generate up to `max_new_tokens` per prompt, argmax each step.

    A row stops at `eos_id` (kept in its output) or at the context window; finished rows
    leave the batch so later steps only pay for the rows still running.
    """
    n_ctx = w.cfg.n_ctx
    slots = list(range(len(prompts))) if slots is None else list(slots)
    outputs: list[list[int]] = [[] for _ in prompts]
    if max_new_tokens <= 0:
        return outputs
    logits = prefill(w, cache, prompts, slots)
    active = list(range(len(prompts)))
    lengths = [len(p) for p in prompts]
    next_tokens = np.argmax(logits, axis=-1)
    while True:
        still = []
        for row, tok in zip(active, next_tokens.tolist(), strict=True):
            outputs[row].append(tok)
            done = tok == eos_id or len(outputs[row]) >= max_new_tokens or lengths[row] + len(outputs[row]) >= n_ctx
            if not done:
                still.append(row)
        active = still
        if not active:
            return outputs
        logits = decode(
            w,
            cache,
            [outputs[r][-1] for r in active],
            [slots[r] for r in active],
            [lengths[r] + len(outputs[r]) - 1 for r in active],
        )
        next_tokens = np.argmax(logits, axis=-1)
