"""What the two engine front ends share: `Engine` (a loop thread in this process) and
`EngineProcess` (the same engine in a child process) check requests and build `submit`, `stream`
and `generate` the same way (`FrontEnd`), each admitting into its own engine (`_admit`), keep
their listeners in a `Listeners`, and hand events to event loops the same way."""

from __future__ import annotations

import asyncio
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Container, Iterator, Sequence
from typing import TypedDict, Unpack

from corrige.engine.errors import InvalidRequest, Overloaded
from corrige.engine.messages import AddRequest
from corrige.engine.request import RequestOutput, SamplingParams, TokenEvent, validate_prompt
from corrige.engine.stats import StepStats
from corrige.engine.stream import RequestStream, Sink, deliver, final_output
from corrige.model.config import GPTConfig

logger = logging.getLogger(__name__)

StepListener = Callable[[StepStats], None]
RequestListener = Callable[[RequestOutput], None]


class RequestOptions(TypedDict, total=False):
    """The keywords `submit`, `stream` and `generate` pass on to `add` as given: `request_id` (None
    or left out: the engine picks one) and `queue_timeout_s` (how long it may wait for a slot;
    None or left out: the engine's configured wait)."""

    request_id: str | None
    queue_timeout_s: float | None


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
    """The asyncio API of an engine: `add` checks a request's prompt and parameters, and the
    engine's own `_admit` admits it and hands it on; `submit`, `stream` and `generate` are built on
    `add`."""

    model_config: GPTConfig  # the model's vocabulary and window, which every prompt is checked against

    def __init__(self) -> None:
        self._listeners = Listeners()

    def submit(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams | None = None,
        *,
        stream: bool = True,
        **options: Unpack[RequestOptions],
    ) -> RequestStream:
        """Submit a request; with `stream=False` its stream yields no tokens, only the output.
        Raises `InvalidRequest`, `Overloaded` or `EngineClosed` at once (`EngineProcess`: also
        `EngineRestarting`, when its child died as the request was sent)."""
        sink = Sink(asyncio.get_running_loop())
        request_id = self.add(prompt_token_ids, params, sink, stream=stream, **options)
        return RequestStream(self, request_id, sink)

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

        def message(assigned_id: str) -> AddRequest:
            return AddRequest(assigned_id, prompt, params, queue_timeout_s, stream)

        return self._admit(request_id, message, sink)

    @abstractmethod
    def _admit(self, request_id: str | None, message: Callable[[str], AddRequest], sink: Sink) -> str:
        """Admit a checked request under the front end's lock (`admitted_id`: `Overloaded`, or
        `InvalidRequest` for an id in flight; `EngineClosed` once closing), register `sink` for its
        events and hand the engine `message(its id)`. Returns the id."""

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
        self, prompt_token_ids: Sequence[int], params: SamplingParams | None = None, **options: Unpack[RequestOptions]
    ) -> RequestStream:
        """Submit a request and stream its tokens. Raises `InvalidRequest` or `Overloaded` at once."""
        return self.submit(prompt_token_ids, params, **options)

    async def generate(
        self, prompt_token_ids: Sequence[int], params: SamplingParams | None = None, **options: Unpack[RequestOptions]
    ) -> RequestOutput:
        """Submit a request and wait for its output.

        Raises `InvalidRequest`, `Overloaded`, `DeadlineExceeded`, `InternalError` or
        `EngineClosed`; an aborted request returns with `finish_reason == "abort"`.
        """
        # No token events: they would wake the event loop once per token per request, and it
        # would then compete with the model for the GIL.
        request = self.submit(prompt_token_ids, params, stream=False, **options)
        return await final_output(request)

    def subscribe(
        self, on_step: StepListener | None = None, on_request: RequestListener | None = None
    ) -> Callable[[], None]:
        """Call `on_step(StepStats)` after every model step and `on_request(RequestOutput)` when a
        request finishes, on the engine's side (keep them quick). Returns an unsubscribe function."""
        return self._listeners.subscribe(on_step, on_request)
