"""The engine in a process of its own, behind the same asyncio API as `Engine`.

In one server process the event loop (HTTP, validation, JSON, tracing) and the engine's loop
thread share one interpreter lock, so under load they take turns on one core. `EngineProcess`
runs the engine in a child process instead, as vLLM's v1 splits its API server from its
engine core; the parent's event loop only sends requests and receives results:

    parent: EngineProcess (the front end)              child: the core loop (`CoreLoop.run`)
    generate / stream / abort ── AddRequest | AbortRequest | CloseEngine ──►  its inbox
    event loop (or a reader thread) ◄── StepOutputs (events, step stats, CoreState) ──  one per step with events

The messages are the typed classes of `corrige.engine.messages`. The child
(`corrige.engine.child`) is spawned (a forked copy of a process with threads is unsafe) and
builds the weights and drafter by calling `build()`, a picklable function; this process needs
only the model's config (`model_config`), to check prompts. Every check a request gets happens
here, once (`InvalidRequest`, `Overloaded` at once): the prompt (`validate_prompt`), unique ids,
and admission against `max_waiting` from the child's latest `CoreState`, in which the requests
sent since take the free slots it reported first and only the rest count as waiting. The child
takes what it is sent as it is. The server hands over its event loop, which then reads the pipe
itself (`add_reader`); without one, a reader thread hands results to the loops.

If the child dies, the requests in flight fail with `EngineRestarting` (their state died with
it) and a new child takes over; requests submitted meanwhile wait in the parent and go to the new
child. `running` is false until it is ready, so readiness checks fail meanwhile. A child that dies
too often is given up: what is in flight ends with `EngineClosed`, `failed` turns true and
`on_give_up` is called.

Starting a child takes about a second of a core (a fresh interpreter, NumPy, the weights), and
more on a busy machine. With `standby` a second child is started in advance and waits, idle, with
its weights loaded and its loop running: when the serving child dies, the standby takes over at
once (the time it takes is the parent seeing the pipe close and sending the held requests), and
another standby is started in the background, after the backoff (`RestartPolicy`) when deaths
come close together. Without a ready standby (none, or the last one still starting) the new
child is started then, after that backoff.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from corrige.engine.child import Build, child_main
from corrige.engine.config import EngineConfig
from corrige.engine.errors import EngineClosed, EngineError, EngineRestarting
from corrige.engine.frontend import FrontEnd, admitted_id, hand_over, waiting_and_free
from corrige.engine.messages import (
    AbortRequest,
    AddRequest,
    CloseEngine,
    CoreState,
    Ready,
    StepOutputs,
    ToCore,
    UnknownMessage,
    expect,
)
from corrige.engine.request import RequestOutput, TokenEvent, error_output
from corrige.engine.restarts import RestartBudget, RestartPolicy
from corrige.engine.stats import EngineSnapshot
from corrige.engine.stream import Sink, deliver
from corrige.model.config import GPTConfig

logger = logging.getLogger(__name__)

_START_TIMEOUT_S = 120.0
Child = tuple[BaseProcess, Connection, CoreState]  # process, pipe, its state when ready


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
        restarts: RestartPolicy | None = None,
        on_give_up: Callable[[], None] | None = None,
        standby: bool = False,
    ) -> None:
        """With `loop`, that event loop reads the child's results itself (`add_reader` on the pipe):
        no reader thread, no hand-off between threads per result. Then `close` must not be called
        on that loop's thread (use `asyncio.to_thread`): the loop has to read the last results.

        `restarts`: when to start a new child after one died (default `RestartPolicy()`);
        `on_give_up` is called, from a thread of ours, once one died too often. `standby`: keep a
        second child ready to take over (see the module's docstring); not when restarts are off."""
        super().__init__()
        self.config = config or EngineConfig()
        self.model_config = model_config
        self._child_args = (build, self.config, blas_threads, gil_switch_s, step_delay_s)
        self._restarts = RestartBudget(restarts or RestartPolicy())
        self._on_give_up = on_give_up
        self._lock = threading.Lock()  # guards the sinks, the held adds, the counters and the states
        self._send_lock = threading.Lock()
        self._sinks: dict[str, Sink] = {}
        self._held: list[tuple[AddRequest, float]] = []  # adds submitted while restarting, and when
        self._abandoned: set[str] = set()  # ...of those, the ids their callers aborted
        self._closing = False
        self._gone = False  # the reader saw the pipe close: the child exited (or is exiting)
        self._restarting = False  # ...and a new one is on its way
        self._failed = False  # ...and none will come: it died too often
        self.restarts = 0  # children started after the first
        self._ids = itertools.count()
        self._done = threading.Event()  # set once the last child is gone and everything in flight ended
        self._stop = threading.Event()  # set by close: a restart under way gives up
        self._loop = loop
        self._standby_wanted = standby and self._restarts.policy.max_per_minute > 0
        self._standby_cond = threading.Condition()  # guards the three below
        self._standby: Child | None = None  # a child that is ready and waits to take over
        self._standby_coming = False  # ...or one on its way (waiting for its backoff, or starting)
        self._starting: set[BaseProcess] = set()  # children started that are not ready yet
        self._attach(self._spawn())
        self._prepare_standby(0.0)

    # ---- the API: `FrontEnd`'s `submit`, `stream` and `generate` (from a running event loop) over `_admit` ----

    def _admit(self, request_id: str | None, message: Callable[[str], AddRequest], sink: Sink) -> str:
        """Requests wait here while a new child starts; one that cannot be sent (the child died meanwhile)
        raises `EngineRestarting`."""
        with self._lock:
            if self._closing or (self._gone and not self._restarting):
                raise EngineClosed("the engine is shut down")
            waiting = self._waiting_and_free()[0]
            request_id = admitted_id(request_id, self._ids, self._sinks, waiting, self.config.max_waiting)
            self._sinks[request_id] = sink
            self._sent += 1
            self._sent_since_snapshot += 1
            add = message(request_id)
            held = self._restarting
            if held:  # the new child takes it once it is ready
                self._held.append((add, time.monotonic()))
        if not held and not self._send(add):
            with self._lock:
                self._sinks.pop(request_id, None)
            raise EngineRestarting("the engine process died and is restarting; retry shortly")
        return request_id

    def abort(self, request_id: str) -> None:
        """Abort a request, waiting or running (from any thread). Unknown ids are ignored.

        It takes no lock: an abandoned stream aborts from `__del__`, which the garbage collector
        can run on a thread that holds one already."""
        if request_id not in self._sinks or self._closing:
            return
        if self._restarting:  # no child to tell: the new one never gets it (see `_attach`)
            self._abandoned.add(request_id)
            if self._restarting:
                return
        self._send(AbortRequest(request_id))  # (also when the new child came meanwhile, and may have it)

    @property
    def running(self) -> bool:
        return not (self._gone or self._closing) and self._process.is_alive()

    @property
    def restarting(self) -> bool:
        """The child died and a new one is starting: requests wait for it."""
        return self._restarting and not self._closing

    @property
    def failed(self) -> bool:
        """The child died too often and was given up: this engine serves no more."""
        return self._failed

    @property
    def pid(self) -> int | None:
        """The current child's process id."""
        return self._process.pid

    @property
    def standby_pid(self) -> int | None:
        """The standby child's process id, while one is ready."""
        standby = self._standby
        return None if standby is None else standby[0].pid

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
            live = not self._gone
        self._stop.set()
        standby = self._drop_standby()
        if not closing and live:
            self._send(CloseEngine())
        if not live:  # between children (or given up): no reader will end what waits
            self._end_all(None)
            self._done.set()
        self._done.wait(timeout)
        self._process.join(timeout)
        if self._process.is_alive():
            self._process.kill()
        if standby is not None:
            _stop_child(standby)

    def __enter__(self) -> EngineProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- children ----

    def _spawn(self) -> Child:
        """Start a child and wait until its engine is ready (blocks: call it off the event loop)."""
        build, config, *rest = self._child_args
        context = multiprocessing.get_context("spawn")
        conn, child_conn = context.Pipe()
        process = context.Process(
            target=child_main, args=(build, config, child_conn, *rest), name="corrige-engine", daemon=True
        )
        process.start()
        child_conn.close()
        with self._standby_cond:
            self._starting.add(process)  # `close` kills it
        try:
            if not conn.poll(_START_TIMEOUT_S):
                process.kill()
                raise RuntimeError("the engine process did not start")
            try:
                ready = conn.recv()
            except EOFError:
                process.join(1.0)
                raise RuntimeError(f"the engine process exited while starting (code {process.exitcode})") from None
            if not isinstance(ready, Ready):
                process.kill()
                raise RuntimeError(f"the engine process sent {type(ready).__name__} before Ready")
        finally:
            with self._standby_cond:
                self._starting.discard(process)
        return process, conn, ready.state

    def _prepare_standby(self, delay: float) -> None:
        """Start a standby child after `delay` on a thread of its own, unless one is ready or coming."""
        if not self._standby_wanted:
            return
        with self._standby_cond:
            if self._standby is not None or self._standby_coming or self._closing or self._failed:
                return
            self._standby_coming = True
        threading.Thread(target=self._start_standby, args=(delay,), name="engine-process-standby", daemon=True).start()

    def _start_standby(self, delay: float) -> None:
        child = None
        try:
            if not self._stop.wait(delay):
                child = self._spawn()
        except Exception:
            if not (self._stop.is_set() or self._failed):  # (closing and giving up kill a child that is starting)
                logger.exception("the standby engine process did not start; a restart will start a new one")
        with self._standby_cond:
            self._standby_coming = False
            # `close` and `_give_up` set their flag, then drop the standby: one of us stops this child
            keep = child is not None and not (self._closing or self._failed)
            if keep:
                self._standby = child
            self._standby_cond.notify_all()
        if child is not None and not keep:
            _stop_child(child)
        elif child is not None:
            logger.info("standby engine process %d ready", child[0].pid)

    def _take_standby(self) -> Child | None:
        """The standby child, once it is ready if it is on its way; None if there is none, or it died."""
        with self._standby_cond:
            while self._standby is None and self._standby_coming and not self._stop.is_set():
                self._standby_cond.wait(0.1)
            child, self._standby = self._standby, None
        if child is not None and not child[0].is_alive():
            logger.warning("the standby engine process %d had exited (exit code %s)", child[0].pid, child[0].exitcode)
            _stop_child(child)
            return None
        return child

    def _drop_standby(self) -> Child | None:
        """Take the standby away (closing, or given up) and kill any child still starting."""
        with self._standby_cond:
            child, self._standby = self._standby, None
            starting = list(self._starting)
        for process in starting:
            process.kill()
        if child is not None:
            child[1].close()  # it reads EOF and stops; `_stop_child` waits for it
        return child

    def _attach(self, child: Child) -> bool:
        """Serve through a new child, then send it the requests that waited for it. False when
        we are closing meanwhile: that child is stopped instead."""
        process, conn, state = child
        with self._lock:
            attach = not self._closing
            if attach:
                self._process, self._conn = process, conn
                self._snapshot, self._free = state.snapshot, state.free  # places it can still fill at its next step
                held = [h for h in self._held if h[0].request_id not in self._abandoned]
                for request_id in self._abandoned:
                    self._sinks.pop(request_id, None)
                self._held, self._abandoned = [], set()
                self._sent = self._sent_since_snapshot = len(held)  # adds sent ...that it has not read yet
                self._gone = self._restarting = False
                self._done.clear()
        if not attach:
            conn.close()  # it reads EOF and stops
            process.join(5.0)
            return False
        if self._loop is None:
            threading.Thread(target=self._read, args=(conn,), name="engine-process-reader", daemon=True).start()
        else:
            self._loop.call_soon_threadsafe(self._watch, conn)
        now = time.monotonic()
        for add, since in held:
            timeout = self.config.queue_timeout_s if add.queue_timeout_s is None else add.queue_timeout_s
            left = None if timeout is None else max(timeout - (now - since), 0.0)  # 0: it fails at the next step
            self._send(replace(add, queue_timeout_s=left))
        return True

    def _child_gone(self, conn: Connection) -> None:
        """The reader saw the pipe close: the child exited. Start another, or end what was in flight."""
        conn.close()
        if self._closing:
            self._end_all(None)
            self._done.set()
            return
        process = self._process
        process.join(0.2)  # its exit code says how it went (a negative one: killed by that signal)
        logger.error("engine process %d exited (exit code %s)", process.pid, process.exitcode)
        delay = self._restarts.next_delay()
        if delay is None:
            self._give_up()
            return
        self._end_all(EngineRestarting("the engine process died and is restarting; retry shortly"), restarting=True)
        threading.Thread(target=self._restart, args=(delay,), name="engine-process-restart", daemon=True).start()

    def _restart(self, delay: float) -> None:
        """A thread of its own: serve through the standby child and start the next one after `delay`;
        without a standby, wait `delay`, start a child, and serve through it."""
        standby = self._take_standby()
        if standby is not None:
            if self._attach(standby):
                self.restarts += 1
                logger.warning("standby engine process %d serving (restart %d)", standby[0].pid, self.restarts)
                self._prepare_standby(delay)
            return
        logger.warning("starting a new engine process in %.1f s", delay)
        while not self._stop.wait(delay):
            try:
                child = self._spawn()
            except Exception:  # it could not even start: that counts as one more death
                if self._stop.is_set():  # closing killed it
                    break
                logger.exception("the new engine process did not start")
                next_delay = self._restarts.next_delay()
                if next_delay is None:
                    self._give_up()
                    return
                delay = next_delay
                continue
            if self._attach(child):
                self.restarts += 1
                logger.warning("engine process %d serving (restart %d)", child[0].pid, self.restarts)
                self._prepare_standby(0.0)
            return
        self._end_all(None)  # closed meanwhile: whatever waited for the new child ends
        self._done.set()

    def _give_up(self) -> None:
        logger.critical("the engine process died too often (%s); giving up", self._restarts.policy)
        with self._lock:
            self._failed = True
        standby = self._drop_standby()
        if standby is not None:
            threading.Thread(target=_stop_child, args=(standby,), name="engine-process-stop", daemon=True).start()
        if self._on_give_up is not None:  # first: whoever sees a request fail now sees the server going
            try:
                self._on_give_up()
            except Exception:
                logger.exception("on_give_up failed")
        self._end_all(EngineClosed("the engine process failed and will not be restarted"))
        self._done.set()

    # ---- plumbing ----

    def _send(self, message: ToCore) -> bool:
        """Send to the child; False when it is gone (the reader then fails its requests).

        Its own lock, never held by the reader thread: a send that waits for the child to read
        cannot hold up the results coming back."""
        try:
            with self._send_lock:
                self._conn.send(message)
            return True
        except (BrokenPipeError, OSError):
            logger.debug("engine process is gone; dropped %s", type(message).__name__)
            return False

    def _read(self, conn: Connection) -> None:
        """The reader thread (without a `loop`): hand the child's results to their event loops."""
        while True:
            try:
                messages = conn.recv()
            except (EOFError, OSError):
                break
            self._receive(messages)
        self._child_gone(conn)

    def _watch(self, conn: Connection) -> None:
        """On the loop's thread: read the pipe whenever it is readable. uvloop makes a watched file
        descriptor non-blocking, but `Connection.recv` must wait for the rest of a message that has
        only partly arrived (a step's results can outgrow the socket's buffer, and a busy child can
        be descheduled in the middle of sending them); non-blocking, it raised BlockingIOError
        and the child looked dead. So the descriptor is made blocking again."""
        fd = conn.fileno()
        assert self._loop is not None, "only with a loop"
        self._loop.add_reader(fd, self._on_readable, conn)
        os.set_blocking(fd, True)

    def _on_readable(self, conn: Connection) -> None:
        """The event loop's reader (with a `loop`)."""
        try:
            while conn.poll():
                self._receive(conn.recv())
        except (EOFError, OSError) as exc:
            logger.debug("engine pipe closed: %r", exc)
            assert self._loop is not None, "only with a loop"
            self._loop.remove_reader(conn.fileno())
            self._child_gone(conn)

    def _receive(self, message: object) -> None:
        """One message from the child: its events go to their event loops, the stats to the listeners.
        Anything but `StepOutputs` is refused (logged, and nothing changes)."""
        try:
            expect(message, (StepOutputs,))
        except UnknownMessage as exc:
            logger.error("refused a message from engine process %s: %s", self._process.pid, exc)
            return
        assert isinstance(message, StepOutputs)
        batches: dict[asyncio.AbstractEventLoop, list[tuple[Sink, TokenEvent | RequestOutput]]] = {}
        finished: list[RequestOutput] = []
        with self._lock:
            for event in message.events:
                if isinstance(event, RequestOutput):
                    sink = self._sinks.pop(event.request_id, None)
                    finished.append(event)
                else:
                    sink = self._sinks.get(event.request_id)
                if sink is not None:
                    batches.setdefault(sink.loop, []).append((sink, event))
            state = message.state
            self._snapshot, self._free = state.snapshot, state.free
            self._sent_since_snapshot = self._sent - state.received
        mine = batches.pop(self._loop, None) if self._loop is not None else None
        if mine:
            deliver(mine)  # we are on that loop
        hand_over(batches)
        self._listeners.notify(message.steps, finished)

    def _end_all(self, error: EngineError | None, restarting: bool = False) -> None:
        """The child is gone: end every request in flight (or waiting for a new child) with `error`."""
        with self._lock:
            self._gone = True
            self._restarting = restarting and not self._closing
            sinks, self._sinks = self._sinks, {}
            self._held, self._abandoned = [], set()
            # a new child starts empty, every place free
            self._snapshot = replace(self._snapshot, running=0, waiting=0, slots_used=0)
            self._sent = self._sent_since_snapshot = 0
            self._free = min(self.config.batch_capacity, self.config.n_slots)
        ending = error or EngineClosed("the engine shut down before the request finished")
        if sinks:
            logger.warning("engine process gone: ending %d requests in flight (%s)", len(sinks), ending.code)
        batches: dict[asyncio.AbstractEventLoop, list] = {}
        for request_id, sink in sinks.items():
            batches.setdefault(sink.loop, []).append((sink, error_output(request_id, ending)))
        hand_over(batches)


def _stop_child(child: Child) -> None:
    """Stop a child that serves nothing (a standby): closing its pipe makes it exit."""
    process, conn, _ = child
    conn.close()
    process.join(5.0)
    if process.is_alive():
        process.kill()
        process.join(1.0)


def random_model(preset: str = "tiny", seed: int = 0) -> tuple[Any, Any]:
    """A `build` for random weights of a preset (tests, benchmarks): `partial(random_model, "seed", 3)`."""
    from corrige.model import preset as preset_config
    from corrige.model.lookup import LookupDrafter
    from corrige.model.numpy_gpt import prepare
    from corrige.model.weights import random_params

    cfg = preset_config(preset)
    return prepare(random_params(cfg, seed=seed), cfg), LookupDrafter()
