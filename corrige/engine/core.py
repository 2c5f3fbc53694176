"""The engine core: one synchronous `step()` = `schedule()` → run the model → `update_from_output()`.

It knows nothing of threads or asyncio; `corrige.engine.loop.CoreLoop` drives it from its loop, and
tests drive it directly with a fake clock. Everything it returns is an *event* bound to
its request, for the front end to deliver.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from corrige.engine.config import EngineConfig
from corrige.engine.errors import EngineError, InternalError
from corrige.engine.kv_cache import SlotPool
from corrige.engine.request import Request, RequestOutput, TokenEvent, error_output
from corrige.engine.runner import ModelRunner, record_logprobs
from corrige.engine.scheduler import Scheduler, StepScheduler, make_scheduler
from corrige.engine.stats import StepStats
from corrige.model.lookup import LookupDrafter
from corrige.model.numpy_gpt import RuntimeWeights

logger = logging.getLogger(__name__)

Event = tuple[Request, TokenEvent | RequestOutput]


def finals(requests: list[Request]) -> list[Event]:
    """The final-output events of requests that just finished. A request whose output cannot be
    built still gets one (an error), and the others get theirs."""
    events: list[Event] = []
    for request in requests:
        try:
            events.append((request, request.output()))
        except Exception as exc:
            logger.exception("building the output of request %s failed", request.request_id)
            events.append((request, error_output(request.request_id, InternalError(f"the request failed: {exc}"))))
    return events


@dataclass(slots=True)
class StepResult:
    events: list[Event] = field(default_factory=list)
    steps: list[StepStats] = field(default_factory=list)

    def finish(self, requests: list[Request]) -> None:
        self.events.extend(finals(requests))


class Core(Protocol):
    """What the engine's loop thread needs from a policy's core."""

    pool: SlotPool

    @property
    def num_waiting(self) -> int: ...
    @property
    def num_running(self) -> int: ...
    @property
    def free_capacity(self) -> int: ...
    def has_unfinished(self) -> bool: ...
    def ready(self) -> bool: ...
    def wake_time(self) -> float | None: ...
    def add_request(self, request: Request) -> None: ...
    def abort_request(self, request_id: str) -> list[Event]: ...
    def abort_all(self, error: EngineError) -> list[Event]: ...
    def step(self) -> StepResult: ...
    def close(self) -> None: ...


class SchedulerBackedCore:
    """The part of a core that only asks its scheduler: the slot pool is made here, and subclasses
    set `scheduler` and `runner` (each module's own `ModelRunner`, which tests replace)."""

    scheduler: Scheduler

    def __init__(self, weights: RuntimeWeights, config: EngineConfig, clock: Callable[[], float]) -> None:
        self.config = config
        self.clock = clock
        self.pool = SlotPool(weights.cfg, config.n_slots)

    @property
    def num_waiting(self) -> int:
        return self.scheduler.num_waiting

    @property
    def num_running(self) -> int:
        return self.scheduler.num_running

    @property
    def free_capacity(self) -> int:
        return self.scheduler.free_capacity

    def has_unfinished(self) -> bool:
        return self.scheduler.has_unfinished()

    def ready(self) -> bool:
        return self.scheduler.ready(self.clock())

    def wake_time(self) -> float | None:
        return self.scheduler.wake_time()

    def add_request(self, request: Request) -> None:
        self.scheduler.add_request(request)

    def abort_request(self, request_id: str) -> list[Event]:
        return finals(self.scheduler.abort_request(request_id, self.clock()))

    def abort_all(self, error: EngineError) -> list[Event]:
        return finals(self.scheduler.abort_all(self.clock(), error))

    def close(self) -> None:
        pass


class EngineCore(SchedulerBackedCore):
    """Scheduler + slot pool + model runner for the none, static and continuous policies."""

    scheduler: StepScheduler

    def __init__(
        self,
        weights: RuntimeWeights,
        config: EngineConfig,
        clock: Callable[[], float] = time.monotonic,
        drafter: LookupDrafter | None = None,
    ) -> None:
        super().__init__(weights, config, clock)
        self.scheduler = make_scheduler(config, self.pool, weights.cfg.n_ctx, drafter)
        self.runner = ModelRunner(weights, self.pool.cache)

    def step(self) -> StepResult:
        start, start_cpu = time.perf_counter(), time.thread_time()
        scheduler = self.scheduler
        result = StepResult()
        result.finish(scheduler.expire_waiting(self.clock()))
        output = scheduler.schedule(self.clock())
        if output.is_empty:
            return result
        rows = [scheduler.requests[rid] for rid in output.row_ids]
        try:
            ran = self.runner.execute(output, rows)
        except Exception as exc:  # a model failure fails this step's requests, not the engine
            logger.exception("model step %d failed; failing its %d requests", output.step_id, len(rows))
            result.finish(scheduler.fail(output, InternalError(f"the model failed: {exc}"), self.clock()))
            return result
        now = self.clock()
        for row in rows:
            row.record_step(output.batch_size, ran.model_cpu_s)
        for i, fed in ran.prompt_logprobs.items():  # before the update frees the slots of finished rows
            scheduler.record_prompt(rows[i], fed)
        before = [len(r.output_token_ids) for r in rows]
        finished = scheduler.update_from_output(output, ran.sampled_token_ids, now, ran.errors)
        record_logprobs(rows, ran.logprobs, before)
        result.events.extend(
            (r, TokenEvent(r.request_id, r.output_token_ids[i], i))
            for r, n in zip(rows, before, strict=True)
            if r.stream
            for i in range(n, len(r.output_token_ids))
        )
        # without guesses every row took exactly one token
        new_tokens = sum(len(r.output_token_ids) for r in rows) - sum(before) if output.num_draft_tokens else len(rows)
        result.finish(finished)
        result.steps.append(
            StepStats(
                step_id=output.step_id,
                time=now,
                batch_size=output.batch_size,
                num_prefill_requests=len(output.prefill_ids),
                num_prefill_tokens=output.num_prefill_tokens,
                num_decode_tokens=len(output.decode_ids),
                num_waiting=scheduler.num_waiting,
                num_running=scheduler.num_running,
                slots_used=self.pool.num_used,
                step_s=time.perf_counter() - start,
                model_s=ran.model_s,
                sample_s=ran.sample_s,
                step_cpu_s=time.thread_time() - start_cpu,
                model_cpu_s=ran.model_cpu_s,
                num_output_tokens=new_tokens,
                num_draft_tokens=output.num_draft_tokens,
                num_accepted_tokens=new_tokens - output.batch_size,
                num_reused_tokens=output.num_reused_tokens,
            )
        )
        return result
