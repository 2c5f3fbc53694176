"""The engine's core loop: take requests from an inbox, step the core, hand each step's events on.

Both ways of running the engine drive this one loop: `Engine` on its `engine-loop` thread, in
the caller's process, and the engine child (`corrige.engine.child`) on its main thread. What
differs is where the results go, so the owner passes two callables: `publish`, called on the
loop's thread once per iteration with all of that iteration's events and step stats, and
`token_now`, called by a threads-policy worker for each token it streams.

The loop trusts what it is handed: an `AddRequest`, the message the engine child is sent too.
The front end in front of it (`FrontEnd.add` and `_admit`: `Engine`'s, or `EngineProcess`'s in the
server's process) has checked each prompt against the model (`validate_prompt`), refused what
`max_waiting` does not admit, and made request ids unique; the loop checks none of that again and
refuses nothing. An abort for an id it does not hold (one
that finished meanwhile, or never came) changes nothing.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from corrige.engine.config import EngineConfig, Policy
from corrige.engine.core import Core, EngineCore, Event
from corrige.engine.errors import EngineClosed, InternalError
from corrige.engine.frontend import waiting_and_free
from corrige.engine.messages import AddRequest
from corrige.engine.request import Request, RequestOutput, TokenEvent
from corrige.engine.stats import EngineSnapshot, EngineTotals, StepStats
from corrige.engine.threads import ThreadPoolCore
from corrige.model.lookup import LookupDrafter
from corrige.model.numpy_gpt import RuntimeWeights

logger = logging.getLogger(__name__)

Publish = Callable[[list[Event], list[StepStats], list[RequestOutput]], None]  # events, steps, finished
TokenNow = Callable[[Request, TokenEvent], None]


class CoreLoop:
    """A policy's core, its inbox and its totals; `run` is the loop (see the module's docstring)."""

    def __init__(
        self,
        weights: RuntimeWeights,
        config: EngineConfig,
        publish: Publish,
        token_now: TokenNow,
        *,
        clock: Callable[[], float] = time.monotonic,
        drafter: LookupDrafter | None = None,
    ) -> None:
        self.config = config
        self._publish_to = publish
        self._clock = clock
        self._cond = threading.Condition()
        self._adds: list[Request] = []  # inbox, guarded by _cond
        self._aborts: set[str] = set()  # inbox, guarded by _cond; emptied every iteration
        self._closing = False
        self._core: Core
        if config.policy is Policy.THREADS:
            self._core = ThreadPoolCore(weights, config, token_now, self._wake, clock)
        else:
            self._core = EngineCore(weights, config, clock, drafter)
        self._queued_in_core = 0  # the core's waiting count as of the loop's last look; guarded by _cond
        self._free_in_core = self._core.free_capacity  # likewise
        self._totals = EngineTotals()
        self._snapshot = self._take_snapshot()

    # ---- from any thread ----

    def add(self, message: AddRequest, sink: object = None) -> None:
        """Queue a request for the next iteration, as handed (see the module's docstring); its
        `queue_timeout_s` is how long it may wait for a slot (None: the config's). `sink`: where
        the owner's `publish` sends its events (none in the engine child: the pipe takes them)."""
        timeout = self.config.queue_timeout_s if message.queue_timeout_s is None else message.queue_timeout_s
        now = self._clock()
        deadline = None if timeout is None or math.isinf(timeout) else now + timeout
        request = Request(
            message.request_id,
            message.prompt_token_ids,
            message.params,
            now,
            deadline=deadline,
            stream=message.stream,
            sink=sink,
        )
        with self._cond:
            self._adds.append(request)
            self._cond.notify()

    def abort(self, request_id: str) -> None:
        """Abort a request, waiting or running, before the next step; an unknown id is a no-op."""
        with self._cond:
            if not self._closing:  # shutting down ends every request anyway
                self._aborts.add(request_id)
                self._cond.notify()

    def close(self) -> None:
        """Ask `run` to end every request in flight with `EngineClosed` and return."""
        with self._cond:
            self._closing = True
            self._cond.notify()

    def waiting_and_free(self) -> tuple[int, int]:
        """Requests that will wait for a slot (the inbox counted), and the places still free."""
        return waiting_and_free(len(self._adds) + self._queued_in_core, self._free_in_core)

    def snapshot(self) -> EngineSnapshot:
        """State as of the latest iteration; `waiting` also counts the requests queued since that
        will find no free slot at the next step. Cheap, from any thread."""
        snapshot = self._snapshot
        waiting = self.waiting_and_free()[0]
        return replace(snapshot, waiting=waiting) if waiting != snapshot.waiting else snapshot

    def free_capacity(self) -> int:
        """How many more requests the next step would admit without their waiting."""
        return self.waiting_and_free()[1]

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    # ---- the loop's own thread ----

    def run(self) -> None:
        """Serve until `close`; then end what is in flight and return. When there is nothing to do
        it sleeps on a condition variable (with a timeout only when a queue deadline or a static
        batch window is pending)."""
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
            if aborted:  # the freed slots show before the next step runs
                self._publish(aborted, [], 0.0, 0.0)
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
        """Update the totals and the snapshot, then hand the results to the owner: a caller that
        has its output then also sees its slot freed."""
        finished = [event for _, event in events if isinstance(event, RequestOutput)]
        self._totals.add(steps, (output.stats for output in finished), busy_s, busy_cpu_s)
        with self._cond:
            self._queued_in_core = self._core.num_waiting
            self._free_in_core = self._core.free_capacity
        self._snapshot = self._take_snapshot()
        self._publish_to(events, steps, finished)

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
