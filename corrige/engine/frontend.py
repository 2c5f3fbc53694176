"""What the two engine front ends share: `Engine` (a loop thread in this process) and
`EngineProcess` (the same engine in a child process) both build `stream` and `generate` on
their own `submit`, keep their listeners in a `Listeners`, and hand events to event loops the
same way."""

from __future__ import annotations

import asyncio
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Container, Iterator, Sequence

from corrige.engine.errors import InvalidRequest, Overloaded
from corrige.engine.request import RequestOutput, SamplingParams, TokenEvent
from corrige.engine.stats import StepStats
from corrige.engine.stream import RequestStream, Sink, deliver, final_output

logger = logging.getLogger(__name__)

StepListener = Callable[[StepStats], None]
RequestListener = Callable[[RequestOutput], None]


class Listeners:
    """Step and request listeners; subscribed from any thread, called from the engine's side."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: tuple[StepListener, ...] = ()
        self._requests: tuple[RequestListener, ...] = ()

    def subscribe(
        self, on_step: StepListener | None = None, on_request: RequestListener | None = None
    ) -> Callable[[], None]:
        with self._lock:
            if on_step is not None:
                self._steps += (on_step,)
            if on_request is not None:
                self._requests += (on_request,)

        def unsubscribe() -> None:
            with self._lock:
                self._steps = tuple(f for f in self._steps if f is not on_step)
                self._requests = tuple(f for f in self._requests if f is not on_request)

        return unsubscribe

    def notify(self, steps: list[StepStats], finished: list[RequestOutput]) -> None:
        for listeners, items in ((self._steps, steps), (self._requests, finished)):
            for listener in listeners:
                for item in items:
                    try:
                        listener(item)
                    except Exception:  # a broken listener must not stop the engine
                        logger.exception("engine listener %r failed", listener)


def waiting_and_free(pending: int, free: int) -> tuple[int, int]:
    """Of `pending` requests not yet in a slot, how many will really wait for one, and how many
    free places are left for more: the next step admits pending requests into the `free` places
    first, so only the rest count against `max_waiting`."""
    return max(0, pending - free), max(0, free - pending)


def admitted_id(
    request_id: str | None, fresh_ids: Iterator[int], in_flight: Container[str], waiting: int, max_waiting: int
) -> str:
    """Admission, under the front end's lock so that admissions count each other: the request's id
    (a fresh `req-N` when it brings none), or `Overloaded` when `waiting` requests already wait
    (the limit), or `InvalidRequest` when its id is already in flight."""
    if waiting >= max_waiting:
        raise Overloaded(f"{waiting} requests are already waiting (the limit); try again shortly")
    request_id = f"req-{next(fresh_ids)}" if request_id is None else request_id
    if request_id in in_flight:
        raise InvalidRequest(f"request id {request_id!r} is already in flight; ids must be unique")
    return request_id


def hand_over(batches: dict[asyncio.AbstractEventLoop, list[tuple[Sink, TokenEvent | RequestOutput]]]) -> None:
    """Post each event loop its events in one call (from any thread)."""
    for loop, batch in batches.items():
        try:
            loop.call_soon_threadsafe(deliver, batch)
        except RuntimeError:  # that event loop is closed: its callers are gone
            logger.debug("dropped %d events for a closed event loop", len(batch))


class FrontEnd(ABC):
    """The asyncio API of an engine, over its `submit`."""

    def __init__(self) -> None:
        self._listeners = Listeners()

    @abstractmethod
    def submit(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams | None = None,
        *,
        request_id: str | None = None,
        queue_timeout_s: float | None = None,
        stream: bool = True,
    ) -> RequestStream:
        """Submit a request; with `stream=False` its stream yields no tokens, only the output.
        Raises `InvalidRequest`, `Overloaded` or `EngineClosed` at once."""

    @abstractmethod
    def abort(self, request_id: str) -> None: ...

    @property
    def restarting(self) -> bool:
        """The engine died and is coming back: requests wait for it (readiness fails meanwhile)."""
        return False

    @property
    def failed(self) -> bool:
        """The engine died for good (not closed): it serves no more, and its server should go."""
        return False

    def stream(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams | None = None,
        *,
        request_id: str | None = None,
        queue_timeout_s: float | None = None,
    ) -> RequestStream:
        """Submit a request and stream its tokens. Raises `InvalidRequest` or `Overloaded` at once."""
        return self.submit(prompt_token_ids, params, request_id=request_id, queue_timeout_s=queue_timeout_s)

    async def generate(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams | None = None,
        *,
        request_id: str | None = None,
        queue_timeout_s: float | None = None,
    ) -> RequestOutput:
        """Submit a request and wait for its output.

        Raises `InvalidRequest`, `Overloaded`, `DeadlineExceeded`, `InternalError` or
        `EngineClosed`; an aborted request returns with `finish_reason == "abort"`.
        """
        # No token events: they would wake the event loop once per token per request, and it
        # would then compete with the model for the GIL.
        request = self.submit(
            prompt_token_ids, params, request_id=request_id, queue_timeout_s=queue_timeout_s, stream=False
        )
        return await final_output(request)

    def subscribe(
        self, on_step: StepListener | None = None, on_request: RequestListener | None = None
    ) -> Callable[[], None]:
        """Call `on_step(StepStats)` after every model step and `on_request(RequestOutput)` when a
        request finishes, on the engine's side (keep them quick). Returns an unsubscribe function."""
        return self._listeners.subscribe(on_step, on_request)
