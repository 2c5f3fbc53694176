"""The caller's side of a request: its tokens as they arrive, and the final output.

The engine's loop thread posts events with `loop.call_soon_threadsafe(deliver, batch)`;
`deliver` runs on the caller's event loop and fills each request's queue.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from corrige.engine.request import RequestOutput, TokenEvent

if TYPE_CHECKING:
    from typing import Protocol

    class Engine(Protocol):  # `Engine` or `EngineProcess`: what a stream needs of its engine
        def abort(self, request_id: str) -> None: ...


class Sink:
    """Where one request's events land on its caller's event loop."""

    __slots__ = ("loop", "queue")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[TokenEvent | RequestOutput] = asyncio.Queue()


def deliver(batch: list[tuple[Sink, TokenEvent | RequestOutput]]) -> None:
    """Runs on the event loop."""
    for sink, event in batch:
        sink.queue.put_nowait(event)


class RequestStream:
    """One request's tokens as they are generated; `output` holds the final result afterwards.

    Leaving early (break then `aclose()`, `async with` exit, or cancelling the task) aborts
    the request; an abandoned stream is aborted when garbage-collected.
    """

    def __init__(self, engine: Engine, request_id: str, sink: Sink) -> None:
        self.engine = engine
        self.request_id = request_id
        self.output: RequestOutput | None = None
        self._sink = sink

    def __aiter__(self) -> RequestStream:
        return self

    async def __anext__(self) -> TokenEvent:
        if self.output is not None:
            raise StopAsyncIteration
        try:
            event = await self._sink.queue.get()
        except asyncio.CancelledError:
            self.engine.abort(self.request_id)  # the client went away
            raise
        if isinstance(event, TokenEvent):
            return event
        self.output = event
        if event.error is not None:
            raise event.error
        raise StopAsyncIteration

    async def aclose(self) -> None:
        if self.output is None:
            self.engine.abort(self.request_id)

    async def __aenter__(self) -> RequestStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        if self.output is None:
            try:
                self.engine.abort(self.request_id)
            except Exception:  # interpreter shutdown: nothing left to free
                pass


async def final_output(stream: RequestStream) -> RequestOutput:
    """Wait for a request's output, skipping its tokens; raises its error, if it ended with one."""
    async for _ in stream:
        pass
    assert stream.output is not None
    return stream.output
