"""Greedy generation over the NumPy runtime for a fixed batch (no scheduling).

The engine does the same with requests joining and leaving between steps; this is the
plain version used by benchmarks, tests, training-time evaluation and the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corrige.model.lookup import LookupDrafter, accept
from corrige.model.numpy_gpt import KVCache, RuntimeWeights, decode, extend, prefill


@dataclass
class Generation:
    tokens: list[int]
    logprobs: list[float]  # log-probability of each chosen token under the model


def chosen_logprobs(logits: np.ndarray, chosen: Sequence[int] | np.ndarray) -> np.ndarray:
    """log softmax(logits)[chosen] per row of logits (k, V), computed stably; logits are left as they are."""
    top = logits.max(axis=-1)
    lse = top + np.log(np.exp(logits - top[:, None]).sum(axis=-1))
    return logits[np.arange(len(chosen)), chosen] - lse


def greedy_generate_scored(
    w: RuntimeWeights,
    cache: KVCache,
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    eos_id: int | None = None,
    slots: Sequence[int] | None = None,
) -> list[Generation]:
    """Generate up to `max_new_tokens` per prompt, argmax each step, with each token's log-probability.

    A row stops at `eos_id` (kept in its output) or at the context window; finished rows
    leave the batch so later steps only pay for the rows still running.
    """
    n_ctx = w.cfg.n_ctx
    slots = list(range(len(prompts))) if slots is None else list(slots)
    outputs = [Generation([], []) for _ in prompts]
    if max_new_tokens <= 0:
        return outputs
    logits = prefill(w, cache, prompts, slots)
    active = list(range(len(prompts)))
    lengths = [len(p) for p in prompts]
    while True:
        chosen = np.argmax(logits, axis=-1)
        scores = chosen_logprobs(logits, chosen)
        still = []
        for row, tok, lp in zip(active, chosen.tolist(), scores.tolist(), strict=True):
            out = outputs[row]
            out.tokens.append(tok)
            out.logprobs.append(lp)
            n = len(out.tokens)
            if tok != eos_id and n < max_new_tokens and lengths[row] + n < n_ctx:
                still.append(row)
        active = still
        if not active:
            return outputs
        logits = decode(
            w,
            cache,
            [outputs[r].tokens[-1] for r in active],
            [slots[r] for r in active],
            [lengths[r] + len(outputs[r].tokens) - 1 for r in active],
        )


def lookup_greedy_generate_scored(
    w: RuntimeWeights,
    cache: KVCache,
    prompt: Sequence[int],
    max_new_tokens: int,
    eos_id: int | None = None,
    slot: int = 0,
    draft_tokens: int = 8,
    drafter: LookupDrafter | None = None,
) -> Generation:
    """Greedy generation for one sequence with prompt-lookup speculative decoding.

    Each step feeds the last token plus a guessed continuation (`PromptLookup.draft`) through one
    multi-token forward pass (`extend`), keeps the longest prefix of the guess that greedy
    decoding would have produced, and adds the model's own next token; with no guess it is a
    plain `decode` step. The output is exactly `greedy_generate_scored`'s: a guessed token is
    kept only where it equals the argmax. Keys/values written for rejected guesses lie past
    the sequence's end and are overwritten before anything reads them.
    """
    n_ctx = w.cfg.n_ctx
    out = Generation([], [])
    if max_new_tokens <= 0:
        return out
    sequence = (drafter or LookupDrafter()).start(prompt)
    context = sequence.tokens
    rows = prefill(w, cache, [context], [slot])
    draft: list[int] = []
    while True:
        kept = accept(np.argmax(rows, axis=-1).tolist(), draft)  # rows: (1 + len(draft), V)
        scores = chosen_logprobs(rows[: len(kept)], kept)
        for tok, lp in zip(kept, scores.tolist(), strict=True):
            out.tokens.append(tok)
            out.logprobs.append(lp)
            sequence.append(tok)
            if tok == eos_id or len(out.tokens) >= max_new_tokens or len(context) >= n_ctx:
                return out
        pos = len(context) - 1  # position of the last token, not yet in the cache
        room = min(draft_tokens, max_new_tokens - len(out.tokens) - 1, n_ctx - 1 - pos - 1)
        draft = sequence.draft(room)
        if draft:
            rows = extend(w, cache, [context[pos], *draft], slot, pos)
        else:
            rows = decode(w, cache, [context[pos]], [slot], [pos])
