"""The engine's records (defined in `corrige.obs.records`, which metrics and tracing read) and
the running totals the engine keeps of them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from corrige.obs.records import EngineSnapshot, RequestStats, StepStats

__all__ = ["EngineSnapshot", "EngineTotals", "RequestStats", "StepStats"]


@dataclass
class EngineTotals:
    """Running totals, kept by the loop thread; the counters part of `EngineSnapshot`."""

    steps: int = 0
    finished: int = 0
    aborted: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    busy_s: float = 0.0
    model_s: float = 0.0
    busy_cpu_s: float = 0.0
    model_cpu_s: float = 0.0
    draft_tokens: int = 0
    accepted_tokens: int = 0

    def add(self, steps: list[StepStats], finished: Iterable[RequestStats], busy_s: float, busy_cpu_s: float) -> None:
        self.busy_s += busy_s
        self.busy_cpu_s += busy_cpu_s
        for step in steps:
            self.steps += 1
            self.prompt_tokens += step.num_prefill_tokens
            self.generated_tokens += step.num_output_tokens or step.batch_size
            self.draft_tokens += step.num_draft_tokens
            self.accepted_tokens += step.num_accepted_tokens
            self.model_s += step.model_s
            self.model_cpu_s += step.model_cpu_s
        for stats in finished:
            self.finished += 1
            self.aborted += stats.finish_reason == "abort"
            self.failed += stats.finish_reason == "error"
