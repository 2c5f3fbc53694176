"""The engine process's own side: build the engine, read the parent's requests from the pipe, and
send each step's events back (see `corrige.engine.process` for the parent's side).

The child's main thread only reads; the engine's loop thread and a ticker send, through
`_PipeOut`, which stands in for an event loop in the engine's sinks.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from corrige.engine.config import EngineConfig
from corrige.engine.errors import EngineError
from corrige.engine.request import RequestOutput, TokenEvent, error_output
from corrige.engine.stats import StepStats
from corrige.engine.stream import Sink

Build = Callable[[], tuple[Any, Any]]  # () -> (RuntimeWeights, LookupDrafter | None), run in the child


def child_main(
    build: Build,
    config: EngineConfig,
    conn: Connection,
    blas_threads: int,
    gil_switch_s: float | None,
    step_delay_s: float,
) -> None:
    from corrige.engine.engine import Engine
    from corrige.model.blas import limit_blas_threads

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the process group: the parent drains, then closes us
    limit_blas_threads(blas_threads)
    if gil_switch_s is not None:
        sys.setswitchinterval(gil_switch_s)
    weights, drafter = build()
    out = _PipeOut(conn)
    engine = Engine(weights, config, drafter=drafter)
    engine.subscribe(on_step=out.on_step)
    if step_delay_s:  # fault injection for tests: slow every model step down
        engine.subscribe(on_step=lambda _step: time.sleep(step_delay_s))
    conn.send(("ready", engine.snapshot(), engine.free_capacity()))
    out.start(engine)  # from here on only `out` sends
    try:
        _serve_requests(engine, conn, out)
    finally:
        engine.close()  # requests in flight end with EngineClosed, sent before the pipe closes
        out.stop()
        conn.close()


def _serve_requests(engine, conn: Connection, out: _PipeOut) -> None:
    """The child's main thread: take the parent's messages, and nothing else.

    It never sends (the engine's thread and `_PipeOut`'s ticker do): it must keep reading, or a
    parent blocked on a full pipe to us could stop reading our results while we wait on a full
    pipe to it."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        kind = message[0]
        if kind == "add":
            _, request_id, prompt, params, queue_timeout_s, stream = message
            sink = Sink(out)  # type: ignore[arg-type]  # events go to the pipe, not to an event loop
            try:
                engine.add(prompt, params, sink, request_id=request_id, queue_timeout_s=queue_timeout_s, stream=stream)
            except EngineError as exc:  # refused here after all (the parent's estimate was behind)
                out.post([("event", error_output(request_id, exc))])
            out.received += 1
        elif kind == "abort":
            engine.abort(message[1])
        elif kind == "close":
            return


_IDLE_FLUSH_S = 0.05  # step stats and refusals wait at most about this long to be sent


class _PipeOut:
    """Stands in for an event loop in the child's sinks: the engine hands each step's events to
    `call_soon_threadsafe`, and they go to the parent at once, with the step stats and whatever
    else is pending, and a snapshot. The rest goes out with the next send, or within about
    `_IDLE_FLUSH_S` from a ticker thread, which sends only when no other thread is sending."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.engine = None
        self.received = 0  # adds taken from the pipe, for the parent's queue-depth estimate
        self._pending_lock = threading.Lock()  # held only to touch the lists below, never while sending
        self._send_lock = threading.Lock()  # the engine's loop thread, threads-policy workers, the main thread
        self._pending: list[tuple] = []
        self._steps: list[StepStats] = []
        self.sent_at = 0.0  # monotonic time of the latest send
        self._stopped = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="engine-pipe-ticker", daemon=True)

    def start(self, engine) -> None:
        """Send for `engine` (its snapshots go with every message), and start the ticker."""
        self.engine = engine
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stopped.wait(_IDLE_FLUSH_S):
            if time.monotonic() - self.sent_at >= _IDLE_FLUSH_S:
                self.flush(wait=False)

    def stop(self) -> None:
        """Stop the ticker, then send what is left."""
        self._stopped.set()
        self._ticker.join()
        self.flush()

    def call_soon_threadsafe(self, _deliver: Callable, batch: list[tuple[Sink, TokenEvent | RequestOutput]]) -> None:
        self.post([("event", event) for _, event in batch])
        self.flush()

    def on_step(self, step: StepStats) -> None:
        with self._pending_lock:
            self._steps.append(step)

    def post(self, messages: list[tuple]) -> None:
        with self._pending_lock:
            self._pending += messages

    def flush(self, wait: bool = True) -> None:
        """Send what is pending (with a snapshot); `wait=False` gives up if another thread is sending."""
        if not self._send_lock.acquire(blocking=wait):
            return  # that send, or the next idle flush, takes ours along
        try:
            with self._pending_lock:
                messages, self._pending = self._pending, []
                if self._steps:
                    messages.append(("steps", self._steps))
                    self._steps = []
            if not messages and not wait:
                return  # an idle flush with nothing new
            # the snapshot counts the adds read so far; those still in the pipe are the parent's to add
            messages.append(("snapshot", self.engine.snapshot(), self.received, self.engine.free_capacity()))
            self.sent_at = time.monotonic()
            try:
                self.conn.send(messages)
            except (BrokenPipeError, OSError):
                pass  # the parent is gone; the main thread notices and stops
        finally:
            self._send_lock.release()
