"""The records the engine hands to metrics and tracing: per step, per request, and a snapshot.

They are plain data, defined here so that `obs`, below the engine (the engine and the server
may use it; it imports neither), reads the same types the engine writes;
`corrige.engine.stats` re-exports them. Subscribers receive `StepStats`, and the engine's
`RequestOutput`s (whose `stats` is a `RequestStats`), on the engine's loop thread, so they must
be quick (append to a list, bump a counter) and must not block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


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
    num_reused_tokens: int = 0  # prompt tokens not computed: their keys and values came from an earlier prompt

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
    num_reused_tokens: int = 0  # prompt tokens whose keys and values came from an earlier prompt (prefix reuse)

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


class FinishedRecord(Protocol):
    """A finished request (`corrige.engine.RequestOutput`): its timings."""

    @property
    def stats(self) -> RequestStats: ...
