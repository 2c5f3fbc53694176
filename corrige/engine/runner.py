"""The model runner: a `SchedulerOutput` in, one sampled token id per row out.

Prefill rows go through one `prefill` call and decode rows through one `decode` call. It
keeps no state between steps beyond the weights and the KV cache it writes, so the
threads policy shares one runner between its workers (each writes only its own slot).

Rows whose request asked for log-probabilities also get log softmax(logits)[token], computed
for those rows only, one vectorised pass per logits array.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from corrige.engine.request import Request
from corrige.engine.sampling import sample_tokens
from corrige.engine.scheduler import SchedulerOutput
from corrige.model.numpy_gpt import KVCache, RuntimeWeights, decode, prefill


@dataclass(slots=True)
class RunnerOutput:
    sampled_token_ids: list[int]  # aligned with `SchedulerOutput.row_ids`
    model_s: float  # forward passes, wall clock
    model_cpu_s: float  # forward passes, this thread's CPU time
    sample_s: float
    logprobs: list[float | None] | None = None  # aligned with the rows; None when no row asked


def chosen_logprobs(
    logits: Sequence[np.ndarray], rows: Sequence[Request], tokens: Sequence[int]
) -> list[float | None] | None:
    """log softmax(logits)[token] for the rows whose request asked for it (None for the others);
    None when no row asked. `logits` is one or more (B_i, V) arrays whose rows, in order, are `rows`."""
    asked = [i for i, request in enumerate(rows) if request.params.logprobs]
    if not asked:
        return None
    out: list[float | None] = [None] * len(rows)
    offset = 0
    for part in logits:
        n = len(part)
        local = [i - offset for i in asked if offset <= i < offset + n]
        if local:
            x = part if len(local) == n else part[local]  # (k, V)
            top = x.max(axis=-1, keepdims=True)  # (k, 1)
            shifted = x - top  # (k, V), a new array: the logits are left as they are
            picked = shifted[np.arange(len(local)), [tokens[offset + i] for i in local]]  # (k,)
            np.exp(shifted, out=shifted)
            values = picked - np.log(shifted.sum(axis=-1))  # (k,) log softmax at the chosen tokens
            for i, value in zip(local, values.tolist(), strict=True):
                out[offset + i] = value
        offset += n
    return out


def record_logprobs(rows: Sequence[Request], logprobs: list[float | None] | None) -> None:
    """Append each row's log-probability to its request (before the scheduler records the token)."""
    if logprobs is None:
        return
    for request, value in zip(rows, logprobs, strict=True):
        if value is not None:
            request.output_logprobs.append(value)


class ModelRunner:
    def __init__(self, weights: RuntimeWeights, cache: KVCache) -> None:
        self.weights = weights
        self.cache = cache

    def execute(self, output: SchedulerOutput, rows: Sequence[Request]) -> RunnerOutput:
        """Run one step; `rows` are the requests of `output.row_ids`, in that order."""
        start, start_cpu = time.perf_counter(), time.thread_time()
        logits = []
        if output.prefill_ids:
            prompts = [request.prompt_token_ids for request in rows[: len(output.prefill_ids)]]
            logits.append(prefill(self.weights, self.cache, prompts, output.prefill_slots))
        if output.decode_ids:
            logits.append(
                decode(self.weights, self.cache, output.decode_tokens, output.decode_slots, output.decode_positions)
            )
        forward_done, forward_done_cpu = time.perf_counter(), time.thread_time()
        tokens = sample_tokens(logits, rows)  # prefill and decode logits stay apart: no copy
        logprobs = chosen_logprobs(logits, rows, tokens)
        return RunnerOutput(
            tokens, forward_done - start, forward_done_cpu - start_cpu, time.perf_counter() - forward_done, logprobs
        )
