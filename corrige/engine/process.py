"""The engine in a process of its own, behind the same asyncio API as `Engine`.

In one server process the event loop (HTTP, validation, JSON, tracing) and the engine's loop
thread share one interpreter lock, so under load they take turns on one core. `EngineProcess`
runs the engine in a child process instead, as vLLM's v1 splits its API server from its
engine core; the parent's event loop only sends requests and receives results:

    parent: EngineProcess                          child: an `Engine`, its main thread reading the pipe
    generate / stream / abort ── ("add" | "abort" | "close") ──►  engine.add / engine.abort
    event loop (or a reader thread) ◄── [events, step stats, snapshot] ──  one send per engine step with events

The child is spawned (a forked copy of a process with threads is unsafe) and builds its own
weights and drafter by calling `build()`, a picklable function. Requests are checked and
admitted in the parent as `Engine` does (`InvalidRequest`, `Overloaded` at once), using the
child's latest snapshot for the queue depth: the requests sent since take the free slots it
reported first, and only the rest count as waiting. The server hands over its event loop, which then
reads the pipe itself (`add_reader`); without one, a reader thread hands results to the loops.
If the child dies, every request in flight fails with `InternalError` and `running` turns
false, so readiness checks fail.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from corrige.engine.config import EngineConfig
from corrige.engine.errors import EngineClosed, EngineError, InternalError, InvalidRequest, Overloaded
from corrige.engine.frontend import FrontEnd, hand_over, waiting_and_free
from corrige.engine.request import RequestOutput, SamplingParams, TokenEvent, error_output, validate_prompt
from corrige.engine.stats import EngineSnapshot, StepStats
from corrige.engine.stream import RequestStream, Sink, deliver
from corrige.model.config import GPTConfig

logger = logging.getLogger(__name__)

Build = Callable[[], tuple[Any, Any]]  # () -> (RuntimeWeights, LookupDrafter | None), run in the child
_START_TIMEOUT_S = 120.0


class EngineProcess(FrontEnd):
    """`Engine`'s API (generate, stream, submit, abort, snapshot, subscribe, close) over a child process;
    listeners run where the results are read: on its reader thread, or on `loop`."""

    def __init__(
        self,
        build: Build,
        model_config: GPTConfig,
        config: EngineConfig | None = None,
        *,
        blas_threads: int = 1,
        gil_switch_s: float | None = None,
        step_delay_s: float = 0.0,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """With `loop`, that event loop reads the child's results itself (`add_reader` on the pipe):
        no reader thread, no hand-off between threads per result. Then `close` must not be called
        on that loop's thread (use `asyncio.to_thread`): the loop has to read the last results."""
        super().__init__()
        self.config = config or EngineConfig()
        self.model_config = model_config
        context = multiprocessing.get_context("spawn")
        self._conn, child_conn = context.Pipe()
        child_args = (build, self.config, child_conn, blas_threads, gil_switch_s, step_delay_s)
        self._process = context.Process(target=_child_main, args=child_args, name="corrige-engine", daemon=True)
        self._process.start()
        child_conn.close()
        if not self._conn.poll(_START_TIMEOUT_S):
            self._process.kill()
            raise RuntimeError("the engine process did not start")
        try:
            kind, snapshot, free = self._conn.recv()
        except EOFError:
            raise RuntimeError(f"the engine process exited while starting (code {self._process.exitcode})") from None
        assert kind == "ready"
        self._snapshot: EngineSnapshot = snapshot
        self._free = free  # places the child can still fill at its next step, as of that snapshot
        self._lock = threading.Lock()  # guards the sinks and the counters
        self._send_lock = threading.Lock()
        self._sinks: dict[str, Sink] = {}
        self._sent = 0  # adds sent to the child
        self._sent_since_snapshot = 0  # ...that its latest snapshot does not count yet (still in the pipe)
        self._closing = False
        self._gone = False  # the reader saw the pipe close: the child exited (or is exiting)
        self._ids = itertools.count()
        self._done = threading.Event()  # set once the pipe closed and everything in flight ended
        self._loop = loop
        if loop is None:
            threading.Thread(target=self._read, name="engine-process-reader", daemon=True).start()
        else:
            loop.call_soon_threadsafe(self._watch)

    # ---- the asyncio API (call from a running event loop) ----

    def submit(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams | None = None,
        *,
        request_id: str | None = None,
        queue_timeout_s: float | None = None,
        stream: bool = True,
    ) -> RequestStream:
        params = params or SamplingParams()
        prompt = validate_prompt(prompt_token_ids, params, self.model_config.vocab_size, self.model_config.n_ctx)
        sink = Sink(asyncio.get_running_loop())
        with self._lock:
            if self._closing or self._gone:
                raise EngineClosed("the engine is shut down")
            waiting = self._waiting_and_free()[0]
            if waiting >= self.config.max_waiting:
                raise Overloaded(f"{waiting} requests are already waiting (the limit); try again shortly")
            request_id = f"req-{next(self._ids)}" if request_id is None else request_id
            if request_id in self._sinks:
                raise InvalidRequest(f"request id {request_id!r} is already in flight; ids must be unique")
            self._sinks[request_id] = sink
            self._sent += 1
            self._sent_since_snapshot += 1
        if not self._send(("add", request_id, prompt, params, queue_timeout_s, stream)):
            with self._lock:
                self._sinks.pop(request_id, None)
            raise EngineClosed("the engine process is gone")
        return RequestStream(self, request_id, sink)

    def abort(self, request_id: str) -> None:
        """Abort a request, waiting or running (from any thread). Unknown ids are ignored."""
        if request_id in self._sinks and not self._closing:
            self._send(("abort", request_id))

    @property
    def running(self) -> bool:
        return not (self._gone or self._closing) and self._process.is_alive()

    def snapshot(self) -> EngineSnapshot:
        """The child's state after its latest step; `waiting` also counts the requests sent since
        that will find no free slot."""
        snapshot = self._snapshot
        waiting = self._waiting_and_free()[0]
        return replace(snapshot, waiting=waiting) if waiting != snapshot.waiting else snapshot

    def _waiting_and_free(self) -> tuple[int, int]:
        """The child's waiting requests and those sent since that will find no free slot; and the
        free places left (the child's own waiting have had their share of its free places)."""
        waiting, free = waiting_and_free(self._sent_since_snapshot, self._free)
        return self._snapshot.waiting + waiting, free

    def close(self, timeout: float = 10.0) -> None:
        """Stop the child; unfinished requests end with `EngineClosed`."""
        with self._lock:
            closing, self._closing = self._closing, True
        if not closing:
            self._send(("close",))
        self._done.wait(timeout)
        self._process.join(timeout)
        if self._process.is_alive():
            self._process.kill()

    def __enter__(self) -> EngineProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- plumbing ----

    def _send(self, message: tuple) -> bool:
        """Send to the child; False when it is gone (the reader then fails its requests).

        Its own lock, never held by the reader thread: a send that waits for the child to read
        cannot hold up the results coming back."""
        try:
            with self._send_lock:
                self._conn.send(message)
            return True
        except (BrokenPipeError, OSError):
            logger.debug("engine process is gone; dropped %s", message[0])
            return False

    def _read(self) -> None:
        """The reader thread (without a `loop`): hand the child's results to their event loops."""
        while True:
            try:
                messages = self._conn.recv()
            except (EOFError, OSError):
                break
            self._receive(messages)
        self._gone_now()

    def _watch(self) -> None:
        """On the loop's thread: read the pipe whenever it is readable. uvloop makes a watched file
        descriptor non-blocking, but `Connection.recv` must wait for the rest of a message that has
        only partly arrived (a step's results can outgrow the socket's buffer, and a busy child can
        be descheduled in the middle of sending them); non-blocking, it raised BlockingIOError
        and the child looked dead. So the descriptor is made blocking again."""
        fd = self._conn.fileno()
        self._loop.add_reader(fd, self._on_readable)
        os.set_blocking(fd, True)

    def _on_readable(self) -> None:
        """The event loop's reader (with a `loop`)."""
        try:
            while self._conn.poll():
                self._receive(self._conn.recv())
        except (EOFError, OSError) as exc:
            logger.debug("engine pipe closed: %r", exc)
            self._loop.remove_reader(self._conn.fileno())
            self._gone_now()

    def _receive(self, messages: list[tuple]) -> None:
        """One message from the child: its events go to their event loops, the stats to the listeners."""
        batches: dict[asyncio.AbstractEventLoop, list[tuple[Sink, TokenEvent | RequestOutput]]] = {}
        finished: list[RequestOutput] = []
        steps: list[StepStats] = []
        with self._lock:
            for message in messages:
                kind = message[0]
                if kind == "event":
                    event = message[1]
                    final = isinstance(event, RequestOutput)
                    sink = self._sinks.pop(event.request_id, None) if final else self._sinks.get(event.request_id)
                    if final:
                        finished.append(event)
                    if sink is not None:
                        batches.setdefault(sink.loop, []).append((sink, event))
                elif kind == "steps":
                    steps += message[1]
                elif kind == "snapshot":
                    _, self._snapshot, received, self._free = message
                    self._sent_since_snapshot = self._sent - received
        mine = batches.pop(self._loop, None) if self._loop is not None else None
        if mine:
            deliver(mine)  # we are on that loop
        hand_over(batches)
        self._listeners.notify(steps, finished)

    def _gone_now(self) -> None:
        if not self._closing:
            self._process.join(0.2)  # its exit code says how it went (a negative one: killed by that signal)
            logger.error("engine process %d exited (exit code %s)", self._process.pid, self._process.exitcode)
        self._fail_all(InternalError("the engine process exited; please retry") if not self._closing else None)
        self._done.set()

    def _fail_all(self, error: EngineError | None) -> None:
        """The child is gone: end every request still in flight."""
        with self._lock:
            self._gone = True
            sinks, self._sinks = self._sinks, {}
            self._snapshot = replace(self._snapshot, running=0, waiting=0, slots_used=0)
            self._sent_since_snapshot = 0
        if sinks:
            error = error or EngineClosed("the engine shut down before the request finished")
            logger.warning("engine process gone: failing %d requests in flight", len(sinks))
        batches: dict[asyncio.AbstractEventLoop, list] = {}
        for request_id, sink in sinks.items():
            batches.setdefault(sink.loop, []).append((sink, error_output(request_id, error)))
        hand_over(batches)


def random_model(preset: str = "tiny", seed: int = 0) -> tuple[Any, Any]:
    """A `build` for random weights of a preset (tests, benchmarks): `partial(random_model, "seed", 3)`."""
    from corrige.model import preset as preset_config
    from corrige.model.lookup import LookupDrafter
    from corrige.model.numpy_gpt import prepare
    from corrige.model.weights import random_params

    cfg = preset_config(preset)
    return prepare(random_params(cfg, seed=seed), cfg), LookupDrafter()


# ---- the child ----


def _child_main(
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
