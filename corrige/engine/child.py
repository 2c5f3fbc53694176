"""The engine process's own side (see `corrige.engine.process` for the parent's): build the model,
run the core loop, and talk to the parent over one pipe in the messages of `corrige.engine.messages`.

    main thread:            CoreLoop.run: inbox → scheduler step → model runner → PipeOutput.publish
    engine-pipe-reader:     _read_requests: AddRequest | AbortRequest | CloseEngine → the loop's inbox
    engine-pipe-ticker:     PipeOutput._tick: step stats that no step with events carried, within ~50 ms

The child checks nothing the parent's front end already checked: an `AddRequest` goes into the
loop as it is (see `corrige.engine.loop`).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from corrige.engine import messages
from corrige.engine.config import EngineConfig
from corrige.engine.core import Event
from corrige.engine.loop import CoreLoop
from corrige.engine.request import Request, RequestOutput, TokenEvent
from corrige.engine.stats import StepStats

logger = logging.getLogger(__name__)

Build = Callable[[], tuple[Any, Any]]  # () -> (RuntimeWeights, LookupDrafter | None), run in the child


def child_main(
    build: Build,
    config: EngineConfig,
    conn: Connection,
    blas_threads: int,
    gil_switch_s: float | None,
    step_delay_s: float,
) -> None:
    from corrige.model.blas import limit_blas_threads

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the process group: the parent drains, then closes us
    limit_blas_threads(blas_threads)
    if gil_switch_s is not None:
        sys.setswitchinterval(gil_switch_s)
    weights, drafter = build()  # the only place the served model is loaded
    out = PipeOutput(conn, step_delay_s)
    loop = CoreLoop(weights, config, out.publish, out.token_now, drafter=drafter)
    out.start(loop)
    conn.send(messages.Ready(out.state()))
    reader = threading.Thread(target=_read_requests, args=(conn, loop, out), name="engine-pipe-reader", daemon=True)
    reader.start()
    try:
        loop.run()  # until the parent closes us or goes away
    finally:
        out.stop()  # the last outputs (requests ended with EngineClosed) go before the pipe closes
        conn.close()


def _read_requests(conn: Connection, loop: CoreLoop, out: PipeOutput) -> None:
    """The reader thread: the parent's messages into the loop's inbox, and nothing else.

    It never sends: it must keep reading, or a parent blocked on a full pipe to us could stop
    reading our results while we wait on a full pipe to it."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            break
        try:
            if not take(message, loop, out):
                break
        except messages.UnknownMessage as exc:  # a parent of another version, or a bug: say so, and keep serving
            logger.error("the engine process refused a message: %s", exc)
    loop.close()


def take(message: object, loop: CoreLoop, out: PipeOutput) -> bool:
    """Apply one message from the parent; False once it asks us to close. Raises `UnknownMessage`."""
    messages.expect(message, messages.TO_CORE)
    if isinstance(message, messages.AddRequest):
        loop.add(message)
        out.received += 1
    elif isinstance(message, messages.AbortRequest):
        loop.abort(message.request_id)
    elif isinstance(message, messages.CloseEngine):
        return False
    return True


_IDLE_FLUSH_S = 0.05  # step stats of steps without events wait at most about this long to be sent


class PipeOutput:
    """The child's sending side. Each step with events goes to the parent at once, as one
    `StepOutputs` with the stats of the steps since the last send and the loop's state; so does a
    threads-policy worker's token. Steps without events (requests that stream no tokens, between
    their first and last step) only add their stats, which go with the next send, or within
    about `_IDLE_FLUSH_S` from a ticker thread that sends only when no other thread is sending."""

    def __init__(self, conn: Connection, step_delay_s: float = 0.0) -> None:
        self.conn = conn
        self.loop: CoreLoop | None = None
        self.received = 0  # adds taken from the pipe, for the parent's queue-depth estimate
        self._step_delay_s = step_delay_s  # fault injection for tests: slow every model step down
        self._pending_lock = threading.Lock()  # held only to touch the lists below, never while sending
        self._send_lock = threading.Lock()  # the loop (main thread), threads-policy workers, the ticker
        self._events: list[TokenEvent | RequestOutput] = []
        self._steps: list[StepStats] = []
        self.sent_at = 0.0  # monotonic time of the latest send
        self._stopped = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="engine-pipe-ticker", daemon=True)

    def start(self, loop: CoreLoop) -> None:
        """Send for `loop` (its state goes with every message), and start the ticker."""
        self.loop = loop
        self._ticker.start()

    def state(self) -> messages.CoreState:
        """The loop's state; `received` counts the adds read so far: those still in the pipe are
        the parent's to count."""
        assert self.loop is not None, "start() first"
        return messages.CoreState(self.loop.snapshot(), self.received, self.loop.free_capacity())

    def publish(self, events: list[Event], steps: list[StepStats], finished: list[RequestOutput]) -> None:
        """The loop's results of one iteration (on the loop's thread)."""
        with self._pending_lock:
            self._events += [event for _, event in events]
            self._steps += steps
        if events:
            self.flush()
        if self._step_delay_s and steps:
            time.sleep(self._step_delay_s * len(steps))

    def token_now(self, request: Request, event: TokenEvent) -> None:
        """Threads policy: a worker's token goes at once, from the worker's thread."""
        with self._pending_lock:
            self._events.append(event)
        self.flush()

    def _tick(self) -> None:
        while not self._stopped.wait(_IDLE_FLUSH_S):
            if time.monotonic() - self.sent_at >= _IDLE_FLUSH_S:
                self.flush(wait=False)

    def stop(self) -> None:
        """Stop the ticker, then send what is left."""
        self._stopped.set()
        self._ticker.join()
        self.flush()

    def flush(self, wait: bool = True) -> None:
        """Send what is pending (with the state); `wait=False` gives up if another thread is sending,
        or when nothing is pending."""
        if not self._send_lock.acquire(blocking=wait):
            return  # that send, or the next idle flush, takes ours along
        try:
            with self._pending_lock:
                events, self._events = self._events, []
                steps, self._steps = self._steps, []
            if not (events or steps or wait):
                return  # an idle flush with nothing new
            self.sent_at = time.monotonic()
            try:
                self.conn.send(messages.StepOutputs(events, steps, self.state()))
            except (BrokenPipeError, OSError):
                pass  # the parent is gone; the reader notices and closes the loop
        finally:
            self._send_lock.release()
