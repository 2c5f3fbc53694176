"""The engine in the caller's process: its core loop on a dedicated thread, an asyncio API in front.

    engine = Engine(weights, EngineConfig(policy="continuous"))
    output = await engine.generate(prompt_ids, SamplingParams(max_tokens=20))
    async for event in engine.stream(prompt_ids, params): ...
    engine.abort(request_id)

`Engine` is the front end: it checks each request (`validate_prompt`, `max_waiting`, unique ids)
and hands it to a `CoreLoop` (`corrige.engine.loop`) running on the `engine-loop` thread, which
trusts it. The loop hands results back with `loop.call_soon_threadsafe`, once per step for all
of that step's events. Cancelling the task that awaits a request aborts it, which frees its
slot before the next step. `EngineProcess` runs the same core loop in a child process.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable

from corrige.engine.config import EngineConfig
from corrige.engine.core import Event
from corrige.engine.errors import EngineClosed
from corrige.engine.frontend import FrontEnd, admitted_id, hand_over
from corrige.engine.loop import CoreLoop
from corrige.engine.messages import AddRequest
from corrige.engine.request import Request, RequestOutput, TokenEvent
from corrige.engine.stats import EngineSnapshot, StepStats
from corrige.engine.stream import Sink
from corrige.model.lookup import LookupDrafter
from corrige.model.numpy_gpt import RuntimeWeights


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
        # held while a request is checked and queued, so that admissions count each other; a
        # reentrant lock: a stream abandoned to the garbage collector aborts on whatever thread
        self._lock = threading.RLock()
        self._active_ids: set[str] = set()  # guarded by _lock
        self._closing = False
        self._ids = itertools.count()
        self._loop = CoreLoop(
            weights, self.config, self._publish, self._deliver_token_now, clock=clock, drafter=drafter
        )
        self._thread = threading.Thread(target=self._loop.run, name="engine-loop", daemon=True)
        self._thread.start()

    # ---- the API: `FrontEnd`'s `submit`, `stream` and `generate` (from a running event loop) over `_admit` ----

    def abort(self, request_id: str) -> None:
        """Abort a request, waiting or running (from any thread). Unknown ids are ignored."""
        if request_id in self._active_ids and not self._closing:  # shutting down ends them anyway
            self._loop.abort(request_id)

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
        return self._loop.snapshot()

    def free_capacity(self) -> int:
        """How many more requests the next step would admit without their waiting."""
        return self._loop.free_capacity()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the loop; unfinished requests end with `EngineClosed`."""
        with self._lock:
            self._closing = True
        self._loop.close()
        self._thread.join(timeout)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- admission: after `FrontEnd.add` checked the prompt, before the loop takes the request ----

    def _admit(self, request_id: str | None, message: Callable[[str], AddRequest], sink: Sink) -> str:
        with self._lock:
            if self._closing:
                raise EngineClosed("the engine is shut down")
            waiting = self._loop.waiting_and_free()[0]  # not those about to take a free slot
            request_id = admitted_id(request_id, self._ids, self._active_ids, waiting, self.config.max_waiting)
            self._active_ids.add(request_id)
            self._loop.add(message(request_id), sink)
        return request_id

    # ---- the loop thread's results ----

    def _publish(self, events: list[Event], steps: list[StepStats], finished: list[RequestOutput]) -> None:
        """Hand events to their event loops (one call per loop), then tell the listeners."""
        batches: dict[asyncio.AbstractEventLoop, list[tuple[Sink, TokenEvent | RequestOutput]]] = {}
        for request, event in events:
            sink = request.sink
            if isinstance(sink, Sink):
                batches.setdefault(sink.loop, []).append((sink, event))
        if finished:
            with self._lock:
                self._active_ids.difference_update(o.request_id for o in finished)
        hand_over(batches)  # after the bookkeeping, so a caller that has its output also sees its slot freed
        self._listeners.notify(steps, finished)

    def _deliver_token_now(self, request: Request, event: TokenEvent) -> None:
        """Threads policy: a worker streams its token without waiting for the loop thread."""
        sink = request.sink
        if isinstance(sink, Sink):
            hand_over({sink.loop: [(sink, event)]})
