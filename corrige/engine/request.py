"""Requests: what a caller asks for (`SamplingParams`), the engine's internal state (`Request`),
and what the caller gets back (`TokenEvent` while generating, `RequestOutput` at the end).

Lifecycle: WAITING → RUNNING → FINISHED, with a `FinishReason` of stop, length, abort or error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from corrige.engine.errors import EngineError, InvalidRequest
from corrige.engine.stats import RequestStats
from corrige.model.lookup import PromptLookup


class RequestStatus(StrEnum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


class FinishReason(StrEnum):
    STOP = "stop"  # produced a stop token (kept in the output)
    LENGTH = "length"  # reached max_tokens or the context window
    ABORT = "abort"  # cancelled by the caller
    ERROR = "error"  # deadline, model failure or shutdown; see `RequestOutput.error`


MIN_TEMPERATURE = 1e-4  # a positive temperature below this is greedy (see `SamplingParams`)


@dataclass(frozen=True)
class SamplingParams:
    """How to pick tokens. Greedy (argmax) unless `temperature` reaches `MIN_TEMPERATURE`: below it
    the logits divided by the temperature overflow (1e-309 gives NaN probabilities), and sampling
    that cold is argmax anyway, so such a temperature is taken as 0.

    A sampled request with a `seed` draws from its own random generator, so it yields the
    same tokens whatever else shares its batch.
    """

    max_tokens: int = 16
    temperature: float = 0.0
    top_k: int = 0  # 0: no top-k cut
    top_p: float = 1.0  # 1.0: no nucleus cut
    seed: int | None = None
    stop_token_ids: tuple[int, ...] = ()
    ignore_eos: bool = False  # stop tokens do not end the request: exactly max_tokens (benchmarks)
    logprobs: bool = False  # also return each generated token's log-probability (`RequestOutput.logprobs`)
    # a scoring request: also return the log-probability of each prompt token after the first, given
    # the tokens before it (`RequestOutput.prompt_logprobs`; OpenAI's `echo` with `logprobs`). Its
    # prompt may reuse the keys and values of an earlier scored prompt that starts the same way
    # (`EngineConfig.prefix_reuse`): thirty candidate corrections of one sentence share their start.
    prompt_logprobs: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop_token_ids", tuple(int(t) for t in self.stop_token_ids))
        if self.max_tokens < 1:
            raise InvalidRequest(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.temperature < 0:
            raise InvalidRequest(f"temperature must not be negative, got {self.temperature}")
        if self.temperature < MIN_TEMPERATURE:
            object.__setattr__(self, "temperature", 0.0)
        if self.top_k < 0:
            raise InvalidRequest(f"top_k must be 0 (off) or positive, got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            raise InvalidRequest(f"top_p must lie in (0, 1], got {self.top_p}")
        if self.seed is not None and not 0 <= self.seed < 2**63:
            raise InvalidRequest(f"seed must lie in [0, 2**63), got {self.seed}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


@dataclass(frozen=True, slots=True)
class TokenEvent:
    """One generated token, streamed as soon as the step that produced it ends."""

    request_id: str
    token_id: int
    index: int  # 0 for the first generated token


@dataclass(frozen=True, slots=True)
class RequestOutput:
    """The final result of a request, delivered once."""

    request_id: str
    token_ids: tuple[int, ...]
    finish_reason: FinishReason
    stats: RequestStats
    error: EngineError | None = None
    # log softmax(logits)[token] of each generated token, under the model's raw logits (before any
    # temperature); only when `SamplingParams.logprobs` was asked for
    logprobs: list[float] | None = None
    # log P(prompt[i] | prompt[:i]) for i = 1 .. len(prompt) - 1; only when `SamplingParams.prompt_logprobs`
    prompt_logprobs: list[float] | None = None


@dataclass(eq=False)
class Request:
    """The engine's state for one request. Only the engine's loop thread changes it
    (in the threads policy, the worker that owns it while it runs)."""

    request_id: str
    prompt_token_ids: list[int]
    params: SamplingParams
    arrival_time: float
    deadline: float | None = None  # engine clock; past it a waiting request fails
    status: RequestStatus = RequestStatus.WAITING
    output_token_ids: list[int] = field(default_factory=list)
    output_logprobs: list[float] = field(default_factory=list)  # filled only when params.logprobs
    slot: int | None = None
    finish_reason: FinishReason | None = None  # set when generation ends; static holds it RUNNING
    error: EngineError | None = None
    abort_requested: bool = False  # threads policy: the worker checks it between tokens
    stream: bool = True  # emit a TokenEvent per token; generate() only needs the final output
    sink: object = None  # where the engine front end delivers this request's events
    scheduled_time: float | None = None
    finish_time: float | None = None
    token_times: list[float] = field(default_factory=list)
    # model steps this request went through, for traces and cost: how many, the batch sizes they
    # ran at (summed), the batch size of its prefill, and its share of the forward passes' CPU time
    num_steps: int = 0
    batch_size_sum: int = 0
    prefill_batch_size: int = 0
    model_cpu_s: float = 0.0
    lookup: PromptLookup | None = None  # prompt and output so far, indexed for guesses (speculative decoding)
    # prefix reuse (scoring requests): the prompt's first `prefill_start` tokens already sit in its
    # slot, copied from an earlier prompt, with their log-probabilities (`reused_logprobs`); its
    # prefill feeds the rest
    prefill_start: int = 0
    reused_logprobs: list[float] = field(default_factory=list)
    prompt_logprobs: list[float] | None = None  # filled after its prefill, when params.prompt_logprobs
    _generator: np.random.Generator | None = None

    @property
    def num_tokens(self) -> int:
        """Tokens of this sequence so far, prompt included."""
        return len(self.prompt_token_ids) + len(self.output_token_ids)

    @property
    def generating(self) -> bool:
        return self.status is RequestStatus.RUNNING and self.finish_reason is None

    @property
    def generator(self) -> np.random.Generator:
        if self._generator is None:
            self._generator = np.random.default_rng(self.params.seed)
        return self._generator

    def append_token(self, token_id: int, now: float, n_ctx: int) -> FinishReason | None:
        """Record a generated token; return why generation ends here, if it does."""
        self.output_token_ids.append(token_id)
        self.token_times.append(now)
        if self.lookup is not None:
            self.lookup.append(token_id)
        if not self.params.ignore_eos and token_id in self.params.stop_token_ids:
            return FinishReason.STOP
        if len(self.output_token_ids) >= self.params.max_tokens or self.num_tokens >= n_ctx:
            return FinishReason.LENGTH
        return None

    def record_step(self, batch_size: int, model_cpu_s: float) -> None:
        """Account one model step this request ran in (`model_cpu_s`: the step's forward CPU time)."""
        if self.num_steps == 0:
            self.prefill_batch_size = batch_size
        self.num_steps += 1
        self.batch_size_sum += batch_size
        self.model_cpu_s += model_cpu_s / batch_size

    def finish(self, reason: FinishReason, now: float, error: EngineError | None = None) -> None:
        self.status = RequestStatus.FINISHED
        self.finish_reason = reason
        self.finish_time = now
        self.error = error

    def stats(self) -> RequestStats:
        times = self.token_times
        first = times[0] if times else None
        return RequestStats(
            request_id=self.request_id,
            finish_reason=str(self.finish_reason),
            num_prompt_tokens=len(self.prompt_token_ids),
            num_output_tokens=len(self.output_token_ids),
            arrival_time=self.arrival_time,
            finish_time=self.finish_time if self.finish_time is not None else self.arrival_time,
            queue_s=None if self.scheduled_time is None else self.scheduled_time - self.arrival_time,
            ttft_s=None if first is None else first - self.arrival_time,
            prefill_s=None if first is None or self.scheduled_time is None else first - self.scheduled_time,
            decode_s=None if first is None else times[-1] - first,
            inter_token_s=tuple(b - a for a, b in zip(times, times[1:], strict=False)),
            num_steps=self.num_steps,
            mean_batch_size=self.batch_size_sum / self.num_steps if self.num_steps else 0.0,
            prefill_batch_size=self.prefill_batch_size,
            model_cpu_s=self.model_cpu_s,
            num_reused_tokens=self.prefill_start,
        )

    def output(self) -> RequestOutput:
        assert self.finish_reason is not None, "only a finished request has an output"
        return RequestOutput(
            request_id=self.request_id,
            token_ids=tuple(self.output_token_ids),
            finish_reason=self.finish_reason,
            stats=self.stats(),
            error=self.error,
            logprobs=list(self.output_logprobs) if self.params.logprobs else None,
            prompt_logprobs=self.prompt_logprobs if self.params.prompt_logprobs else None,
        )


def error_output(request_id: str, error: EngineError) -> RequestOutput:
    """The output of a request that ended with `error` and nothing more to show (no tokens, no stats)."""
    now = time.monotonic()
    stats = RequestStats(request_id, str(FinishReason.ERROR), 0, 0, now, now, None, None, None, None, ())
    return RequestOutput(request_id, (), FinishReason.ERROR, stats, error)


def validate_prompt(prompt_token_ids: Sequence[int], params: SamplingParams, vocab_size: int, n_ctx: int) -> list[int]:
    """The prompt as a list of ints, or an `InvalidRequest` that says what to change."""
    prompt = [int(t) for t in prompt_token_ids]
    if not prompt:
        raise InvalidRequest("the prompt is empty; send at least one token")
    bad = next((t for t in prompt if not 0 <= t < vocab_size), None)
    if bad is not None:
        raise InvalidRequest(f"token id {bad} is outside the model's vocabulary of {vocab_size} tokens")
    if len(prompt) + params.max_tokens > n_ctx:
        raise InvalidRequest(
            f"the prompt has {len(prompt)} tokens and asks for up to {params.max_tokens} more, but the model "
            f"sees at most {n_ctx} tokens at once; shorten the prompt or lower max_tokens "
            f"to {max(n_ctx - len(prompt), 0)} or less"
        )
    return prompt
