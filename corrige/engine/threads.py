"""The `threads` policy: async front end + offload, each request unbatched on one of N workers.

Every worker takes a request with its own KV slot and runs it alone (prefill, then one
decode call per token), so throughput is bounded by N / T, and the workers contend for the
GIL and the BLAS cores between them. The engine's loop thread only admits requests into
slots, expires queue deadlines and retires what the workers finished; workers stream
tokens straight to the front end.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable

from corrige.engine.config import EngineConfig
from corrige.engine.core import SchedulerBackedCore, StepResult
from corrige.engine.errors import EngineError, InternalError
from corrige.engine.request import FinishReason, Request, RequestStatus, TokenEvent
from corrige.engine.runner import ModelRunner, RunnerOutput, record_logprobs
from corrige.engine.scheduler import Scheduler, SchedulerOutput
from corrige.engine.stats import StepStats
from corrige.model.numpy_gpt import RuntimeWeights

logger = logging.getLogger(__name__)

# Per-call step stats wait here for the loop thread; more than this between two loop wake-ups
# (which happen at least once per finished request) means nobody reads them, so old ones go.
_MAX_PENDING_STEP_STATS = 4096


class ThreadsScheduler(Scheduler):
    """Admission only: a request runs as soon as a worker (and so a slot) is free."""

    speculates = False  # each worker decodes its request one plain token at a time

    def schedule(self, now: float) -> SchedulerOutput:
        output = self._next_step()
        while self._can_admit(now):
            request = self.waiting.popleft()
            self._admit(request, now)
            output.add_prefill(request)
        return output

    def ready(self, now: float) -> bool:
        return now >= self._next_deadline or self._can_admit(now)

    def abort_request(self, request_id: str, now: float) -> list[Request]:
        request = self.requests.get(request_id)
        if request is not None and request.status is RequestStatus.RUNNING:
            request.abort_requested = True  # its worker stops before the next token and reports back
            return []
        return super().abort_request(request_id, now)

    def abort_all(self, now: float, error: EngineError) -> list[Request]:
        """Fail the waiting requests now; running ones stop at their next token and report back."""
        waiting = list(self.waiting)
        self.waiting.clear()
        for request in waiting:
            self._finish(request, FinishReason.ERROR, now, error)
        for request in self.running:
            request.error = error
            request.abort_requested = True
        return waiting

    def retire(self, request: Request, now: float) -> None:
        """A worker is done with `request`: free its slot and finish it."""
        self.running.remove(request)
        if request.error is not None:
            self._finish(request, FinishReason.ERROR, now, request.error)
        else:
            self._finish(request, request.finish_reason or FinishReason.ABORT, now)


class ThreadPoolCore(SchedulerBackedCore):
    """The threads policy's core: the same interface as `EngineCore`, with N workers doing
    the model calls. Its `step()` only retires, expires and admits; it never blocks."""

    scheduler: ThreadsScheduler

    def __init__(
        self,
        weights: RuntimeWeights,
        config: EngineConfig,
        emit_token: Callable[[Request, TokenEvent], None],
        notify: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(weights, config, clock)
        self.n_ctx = weights.cfg.n_ctx
        self.scheduler = ThreadsScheduler(config, self.pool, self.n_ctx)
        self.runner = ModelRunner(weights, self.pool.cache)
        self._emit_token = emit_token
        self._notify = notify
        self._jobs: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        self._done: deque[Request] = deque()  # workers append, the loop thread pops
        self._step_stats: deque[StepStats] = deque(maxlen=_MAX_PENDING_STEP_STATS)
        self._step_ids = itertools.count(1)
        self._workers = [
            threading.Thread(target=self._work, name=f"engine-worker-{i}", daemon=True) for i in range(config.n_threads)
        ]
        for worker in self._workers:
            worker.start()

    def ready(self) -> bool:
        # Step stats alone do not wake the loop: they ride along with the next completion.
        return bool(self._done) or self.scheduler.ready(self.clock())

    def step(self) -> StepResult:
        result = StepResult()
        now = self.clock()
        while self._done:
            request = self._done.popleft()
            self.scheduler.retire(request, now)
            result.events.append((request, request.output()))
        result.finish(self.scheduler.expire_waiting(now))
        for request_id in self.scheduler.schedule(now).prefill_ids:
            self._jobs.put(self.scheduler.requests[request_id])
        while self._step_stats:
            result.steps.append(self._step_stats.popleft())
        return result

    def close(self) -> None:
        """Stop the workers (after `abort_all`); a last `step()` then retires what they ran."""
        for request in self.scheduler.running:
            request.abort_requested = True
        for _ in self._workers:
            self._jobs.put(None)
        for worker in self._workers:
            worker.join(timeout=5.0)

    def _work(self) -> None:
        while (request := self._jobs.get()) is not None:
            self._run(request)
            self._done.append(request)
            self._notify()

    def _run(self, request: Request) -> None:
        """Prefill, then one decode call per token, until the request ends or is aborted."""
        output = SchedulerOutput(step_id=next(self._step_ids))
        output.add_prefill(request)
        try:
            while not request.abort_requested:
                start, start_cpu = time.perf_counter(), time.thread_time()
                ran = self.runner.execute(output, [request])
                if ran.errors:  # its sampling failed: caught below, like a model failure
                    raise ran.errors[0]
                now = self.clock()
                [[token]] = ran.sampled_token_ids  # no guesses: one row, one token
                request.record_step(1, ran.model_cpu_s)
                if 0 in ran.prompt_logprobs:  # a scoring request's prefill (no prefix reuse here)
                    request.prompt_logprobs = ran.prompt_logprobs[0]
                reason = request.append_token(token, now, self.n_ctx)
                record_logprobs([request], ran.logprobs, [len(request.output_token_ids) - 1])
                if request.stream:
                    self._emit_token(request, TokenEvent(request.request_id, token, len(request.output_token_ids) - 1))
                self._record_step(output, ran, time.perf_counter() - start, time.thread_time() - start_cpu, now)
                if reason is not None:
                    request.finish_reason = reason
                    return
                output = SchedulerOutput(step_id=next(self._step_ids))
                output.add_decode(request)
        except Exception as exc:  # fail this request; the worker lives on
            logger.exception("model call for request %s failed", request.request_id)
            request.error = InternalError(f"the model failed: {exc}")

    def _record_step(self, output: SchedulerOutput, ran: RunnerOutput, step_s: float, step_cpu_s: float, now: float):
        self._step_stats.append(
            StepStats(
                step_id=output.step_id,
                time=now,
                batch_size=1,
                num_prefill_requests=len(output.prefill_ids),
                num_prefill_tokens=output.num_prefill_tokens,
                num_decode_tokens=len(output.decode_ids),
                num_waiting=self.scheduler.num_waiting,
                num_running=self.scheduler.num_running,
                slots_used=self.pool.num_used,
                step_s=step_s,
                model_s=ran.model_s,
                sample_s=ran.sample_s,
                step_cpu_s=step_cpu_s,
                model_cpu_s=ran.model_cpu_s,
            )
        )
