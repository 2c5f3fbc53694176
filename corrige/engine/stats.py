"""Plain records the engine hands to metrics and tracing: per step, per request, and a snapshot.

Subscribers receive `StepStats`, and `RequestOutput`s (whose `stats` is a `RequestStats`), on
the engine's loop thread, so they
must be quick (append to a list, bump a counter) and must not block.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StepStats:
    """One model step. Times are seconds; `step_s` covers scheduling, the model and bookkeeping.

    Wall-clock times include waiting for the GIL (e.g. while the event loop runs callers' code)
    and for a core; the `*_cpu_s` times are the stepping thread's own CPU time, without those.
    """

    step_id: int
    time: float  # engine clock at the end of the step
    batch_size: int  # requests through the model this step (prefills + decodes)
    num_prefill_requests: int
    num_prefill_tokens: int
    num_decode_tokens: int
    num_waiting: int  # queue depth after scheduling
    num_running: int
    slots_used: int
    step_s: float
    model_s: float  # the forward passes alone
    sample_s: float  # picking the next tokens from the logits
    step_cpu_s: float
    model_cpu_s: float
    num_output_tokens: int = 0  # tokens the step added to its requests' outputs (0: one per row)
    num_draft_tokens: int = 0  # speculative decoding: guessed tokens checked this step
    num_accepted_tokens: int = 0  # ... and kept (each row also gets the model's own next token)

    @property
    def overhead_s(self) -> float:
        """Everything in the step but the forward passes: scheduling, sampling, bookkeeping."""
        return max(self.step_s - self.model_s, 0.0)

    @property
    def overhead_cpu_s(self) -> float:
        return max(self.step_cpu_s - self.model_cpu_s, 0.0)


@dataclass(frozen=True, slots=True)
class RequestStats:
    """Timings of one finished request, on the engine clock. None where the phase never happened."""

    request_id: str
    finish_reason: str
    num_prompt_tokens: int
    num_output_tokens: int
    arrival_time: float
    finish_time: float
    queue_s: float | None  # arrival to admission into a slot
    ttft_s: float | None  # arrival to the first token
    prefill_s: float | None  # admission to the first token
    decode_s: float | None  # first token to the last token
    inter_token_s: tuple[float, ...]  # gaps between consecutive tokens
    num_steps: int = 0  # model steps it ran in (prefill included)
    mean_batch_size: float = 0.0  # mean batch size of those steps
    prefill_batch_size: int = 0  # batch size of the step that prefilled it
    model_cpu_s: float = 0.0  # its share of those steps' forward CPU time (step CPU / batch size)

    @property
    def latency_s(self) -> float:
        """Arrival to finish: what a client that waits for the whole answer sees."""
        return self.finish_time - self.arrival_time


@dataclass(frozen=True, slots=True)
class EngineSnapshot:
    """The engine's state after its latest loop iteration; cheap to read from any thread."""

    policy: str
    running: int
    waiting: int
    slots_used: int
    slots_total: int
    steps: int
    finished: int  # requests that ended, whatever the reason
    aborted: int
    failed: int  # ended with an error (deadline, model failure, shutdown)
    prompt_tokens: int  # prefilled
    generated_tokens: int
    busy_s: float  # loop time spent working (not waiting for requests), wall clock
    model_s: float  # forward passes, wall clock (summed over workers in the threads policy)
    busy_cpu_s: float  # the loop thread's CPU time while working
    model_cpu_s: float  # forward passes' CPU time
    draft_tokens: int  # speculative decoding: guessed tokens checked
    accepted_tokens: int  # ... and kept


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
