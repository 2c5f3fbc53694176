"""The engine: one dedicated loop thread steps the model; an asyncio API serves callers.

    engine = Engine(weights, EngineConfig(policy="continuous"))
    output = await engine.generate(prompt_ids, SamplingParams(max_tokens=20))
    async for event in engine.stream(prompt_ids, params): ...
    engine.abort(request_id)

Callers on the event loop hand requests to the loop thread through a locked inbox; the
loop thread hands results back with `loop.call_soon_threadsafe`, once per step for all
of that step's events. When there is nothing to do the loop thread sleeps on a condition
variable (with a timeout only when a queue deadline or a static batch window is pending).
Cancelling the task that awaits a request aborts it, which frees its slot before the next step.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from corrige.engine.config import EngineConfig, Policy
from corrige.engine.core import Core, EngineCore, Event
from corrige.engine.errors import EngineClosed, InternalError, InvalidRequest, Overloaded
from corrige.engine.frontend import FrontEnd, hand_over, waiting_and_free
from corrige.engine.request import (
    Request,
    RequestOutput,
    SamplingParams,
    TokenEvent,
    validate_prompt,
)
from corrige.engine.stats import EngineSnapshot, EngineTotals, StepStats
from corrige.engine.stream import RequestStream, Sink
from corrige.engine.threads import ThreadPoolCore
from corrige.model.lookup import LookupDrafter
from corrige.model.numpy_gpt import RuntimeWeights

logger = logging.getLogger(__name__)


class Engine(FrontEnd):
    """Serves token-id requests with one of four policies (see `EngineConfig.policy`)."""

    def __init__(
        self,
        weights: RuntimeWeights,
        config: EngineConfig | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        drafter: LookupDrafter | None = None,
    ) -> None:
        """`drafter`: how speculative decoding guesses a request's next tokens (default: prompt
        lookup in the request's own tokens; see `EngineConfig.speculative_tokens`)."""
        super().__init__()
        self.config = config or EngineConfig()
        self.model_config = weights.cfg
        self._clock = clock
        self._cond = threading.Condition()
        self._adds: list[Request] = []  # inbox, guarded by _cond
        self._aborts: set[str] = set()  # inbox, guarded by _cond; only ids in flight, so bounded
        self._active_ids: set[str] = set()  # guarded by _cond
        self._queued_in_core = 0  # core's waiting count as of the loop's last look; guarded by _cond
        self._closing = False
        self._ids = itertools.count()
        self._core: Core
        if self.config.policy is Policy.THREADS:
            self._core = ThreadPoolCore(weights, self.config, self._deliver_token_now, self._wake, clock)
        else:
            self._core = EngineCore(weights, self.config, clock, drafter)
        self._free_in_core = self._core.free_capacity  # as of the loop's last look; guarded by _cond
        self._totals = EngineTotals()
        self._snapshot = self._take_snapshot()
        self._thread = threading.Thread(target=self._run, name="engine-loop", daemon=True)
        self._thread.start()

    # ---- asyncio API (call from a running event loop) ----

    def submit(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams | None = None,
        *,
        request_id: str | None = None,
        queue_timeout_s: float | None = None,
        stream: bool = True,
    ) -> RequestStream:
        sink = Sink(asyncio.get_running_loop())
        request_id = self.add(
            prompt_token_ids, params, sink, request_id=request_id, queue_timeout_s=queue_timeout_s, stream=stream
        )
        return RequestStream(self, request_id, sink)

    def abort(self, request_id: str) -> None:
        """Abort a request, waiting or running (from any thread). Unknown ids are ignored."""
        with self._cond:
            if request_id in self._active_ids and not self._closing:  # shutting down ends them anyway
                self._aborts.add(request_id)
                self._cond.notify()

    @property
    def running(self) -> bool:
        """Whether the engine takes requests: its loop thread is alive and it is not closing."""
        return self._thread.is_alive() and not self._closing

    @property
    def failed(self) -> bool:
        """Its loop thread died of a bug: nothing will serve the requests sent here."""
        return not self._thread.is_alive() and not self._closing

    def snapshot(self) -> EngineSnapshot:
        """State as of the loop's latest iteration; `waiting` also counts the requests submitted since
        that will find no free slot at the next step. Cheap, from any thread."""
        snapshot = self._snapshot
        waiting = self._waiting_and_free()[0]
        return replace(snapshot, waiting=waiting) if waiting != snapshot.waiting else snapshot

    def free_capacity(self) -> int:
        """How many more requests the next step would admit without their waiting."""
        return self._waiting_and_free()[1]

    def _waiting_and_free(self) -> tuple[int, int]:
        return waiting_and_free(len(self._adds) + self._queued_in_core, self._free_in_core)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the loop; unfinished requests end with `EngineClosed`."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join(timeout)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- front end → loop thread ----

    def add(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams | None,
        sink: Sink,
        *,
        request_id: str | None = None,
        queue_timeout_s: float | None = None,
        stream: bool = True,
    ) -> str:
        """Submit with a sink of the caller's own, from any thread: its `loop` gets this request's
        events through `call_soon_threadsafe(deliver, batch)`. Returns the request id."""
        params = params or SamplingParams()
        prompt = validate_prompt(prompt_token_ids, params, self.model_config.vocab_size, self.model_config.n_ctx)
        timeout = self.config.queue_timeout_s if queue_timeout_s is None else queue_timeout_s
        now = self._clock()
        deadline = None if timeout is None or math.isinf(timeout) else now + timeout
        with self._cond:
            if self._closing:
                raise EngineClosed("the engine is shut down")
            waiting = self._waiting_and_free()[0]  # not those about to take a free slot
            if waiting >= self.config.max_waiting:
                raise Overloaded(f"{waiting} requests are already waiting (the limit); try again shortly")
            request_id = f"req-{next(self._ids)}" if request_id is None else request_id
            if request_id in self._active_ids:
                raise InvalidRequest(f"request id {request_id!r} is already in flight; ids must be unique")
            self._active_ids.add(request_id)
            self._adds.append(Request(request_id, prompt, params, now, deadline=deadline, stream=stream, sink=sink))
            self._cond.notify()
        return request_id

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    # ---- the loop thread ----

    def _run(self) -> None:
        core = self._core
        while True:
            with self._cond:
                adds, self._adds = self._adds, []
                aborts, self._aborts = self._aborts, set()
                closing = self._closing
                self._queued_in_core += len(adds)
            start, start_cpu = time.perf_counter(), time.thread_time()
            for request in adds:
                core.add_request(request)
            if closing:
                break
            try:
                events, steps = self._iterate(aborts)
            except Exception:  # a bug, not a model failure: fail what is in flight and keep serving
                logger.exception("engine loop iteration failed; failing every request in flight")
                events, steps = core.abort_all(InternalError("the engine failed; please retry")), []
            if events or steps or adds:
                self._publish(events, steps, time.perf_counter() - start, time.thread_time() - start_cpu)
                continue
            with self._cond:
                if not (self._adds or self._aborts or self._closing or core.ready()):
                    wake = core.wake_time()
                    self._cond.wait(None if wake is None else max(wake - self._clock(), 0.0))
        self._shut_down()

    def _iterate(self, aborts: set[str]) -> tuple[list[Event], list[StepStats]]:
        """Apply aborts, then run one step if there is work."""
        core = self._core
        if aborts:
            aborted = [event for request_id in aborts for event in core.abort_request(request_id)]
            self._publish(aborted, [], 0.0, 0.0)  # the freed slots show before the next step runs
        if not core.ready():
            return [], []
        result = core.step()
        return result.events, result.steps

    def _shut_down(self) -> None:
        core = self._core
        events = core.abort_all(EngineClosed("the engine shut down before the request finished"))
        core.close()
        result = core.step()  # threads: retire what the stopped workers hand back
        self._publish(events + result.events, result.steps, 0.0, 0.0)

    def _publish(self, events: list[Event], steps: list[StepStats], busy_s: float, busy_cpu_s: float) -> None:
        """Hand events to their event loops (one call per loop), update totals and listeners."""
        batches: dict[asyncio.AbstractEventLoop, list[tuple[Sink, TokenEvent | RequestOutput]]] = {}
        finished: list[RequestOutput] = []
        for request, event in events:
            if isinstance(event, RequestOutput):
                finished.append(event)
            sink = request.sink
            if isinstance(sink, Sink):
                batches.setdefault(sink.loop, []).append((sink, event))
        self._totals.add(steps, (output.stats for output in finished), busy_s, busy_cpu_s)
        with self._cond:
            self._active_ids.difference_update(o.request_id for o in finished)
            self._queued_in_core = self._core.num_waiting
            self._free_in_core = self._core.free_capacity
        self._snapshot = self._take_snapshot()
        hand_over(batches)  # after the bookkeeping, so a caller that has its output also sees its slot freed
        self._listeners.notify(steps, finished)

    def _deliver_token_now(self, request: Request, event: TokenEvent) -> None:
        """Threads policy: a worker streams its token without waiting for the loop thread."""
        sink = request.sink
        if isinstance(sink, Sink):
            hand_over({sink.loop: [(sink, event)]})

    def _take_snapshot(self) -> EngineSnapshot:
        core, totals = self._core, self._totals
        return EngineSnapshot(
            policy=str(self.config.policy),
            running=core.num_running,
            waiting=core.num_waiting,
            slots_used=core.pool.num_used,
            slots_total=core.pool.num_total,
            **vars(totals),
        )
