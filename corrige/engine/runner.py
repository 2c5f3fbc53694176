"""The model runner: a `SchedulerOutput` in, one sampled token id per row out.

Prefill rows go through one `prefill` call and decode rows through one `decode` call. It
keeps no state between steps beyond the weights and the KV cache it writes, so the
threads policy shares one runner between its workers (each writes only its own slot).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

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
        return RunnerOutput(
            tokens, forward_done - start, forward_done_cpu - start_cpu, time.perf_counter() - forward_done
        )
