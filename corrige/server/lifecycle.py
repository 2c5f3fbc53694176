"""Start-up and shutdown of the service.

Start-up (the lifespan): load the tutor (the bundled model unless `model_dir` says
otherwise; its weights only when the engine runs on a thread of the server), start the
engine, build the correction service, and only then report ready.

Shutdown (`drain`): stop admitting (new requests get 503 `draining`, `/readyz` fails), let
the requests in flight finish within the grace period, then close the engine, which ends
whatever is left with `engine_closed` (503). `corrige serve` drains on the first SIGTERM or
SIGINT while still listening; under a plain `uvicorn` the lifespan's shutdown drains.

A dead engine process is restarted by `EngineProcess` itself (a standby process, loaded in
advance, takes over at once: `engine_standby`); one that dies too often is given up, and then
`/healthz` answers 503 `engine_failed` for `engine_failed_drain_s` and the server stops with a
non-zero exit status (`fail_server`), so that whatever runs it sees why and starts a fresh one
instead of keeping a server that can only refuse.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from corrige.engine import Engine
from corrige.engine.process import EngineProcess
from corrige.engine.restarts import RestartPolicy
from corrige.model.blas import limit_blas_threads
from corrige.obs.timeseries import StepHistory
from corrige.portal.state import close_portal, open_portal
from corrige.server.context import RequestMeta
from corrige.server.observe import load_rules, start_observability
from corrige.server.service import CorrectionService
from corrige.server.settings import Settings
from corrige.tutor.agent import Tutor, TutorFront
from corrige.tutor.bundled import engine_parts

logger = logging.getLogger(__name__)

_POLL_S = 0.01
ENGINE_FAILED_EXIT_STATUS = 1


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state = app.state
    settings = state.settings
    limit_blas_threads(settings.blas_threads)
    # The engine thread drops the GIL at every NumPy call; when the event loop takes it for pure
    # Python (parsing, validation, formatting) the engine then waits up to the switch interval
    # before its next model step. Python's 5 ms is most of a batch-32 step here.
    sys.setswitchinterval(settings.gil_switch_ms / 1000)
    started = time.perf_counter()
    tutor = await asyncio.to_thread(load_tutor, settings)
    # with the warm-up on, the tutor's word tables and speller index (a few seconds with the
    # reader) build while the portal, the engine child and the rule cards load
    tutor_warmed = asyncio.ensure_future(asyncio.to_thread(tutor.warm_up)) if settings.warmup else None
    # learner portal: audit log, sessions, and quiz questions the model can take
    state.portal = await asyncio.to_thread(open_portal, settings, tutor.fits)
    loop = asyncio.get_running_loop()
    engine = await asyncio.to_thread(start_engine, settings, tutor, loop, given_up_on(loop, state))
    state.step_history = StepHistory()  # queue depth and batch size over time, for the dashboard
    engine.subscribe(on_step=state.step_history.on_step)
    stop_observability = start_observability(state, settings, engine)
    rules = await asyncio.to_thread(load_rules, settings)
    requests = state.drain  # counts the HTTP requests in flight
    service = CorrectionService(tutor, engine, settings, rules, others_in_flight=lambda: requests.in_flight > 1)
    if state.metrics is not None and service.answers is not None:
        answers = service.answers
        state.metrics.answer_cache = lambda: (answers.hits, answers.misses, len(answers))
    try:
        if tutor_warmed is not None:
            await tutor_warmed
        if settings.warmup:
            await warm_up(service)
        if state.portal is not None:
            await state.portal.bank_settled()  # built while the engine started; ready means done
        state.tutor, state.engine, state.service = tutor, engine, service
        cfg = tutor.cfg
        logger.info(
            "model loaded in %.2f s (%d layers, d=%d, window %d, vocab %d); engine %s, max_batch %d",
            time.perf_counter() - started,
            cfg.n_layer,
            cfg.n_embd,
            cfg.n_ctx,
            cfg.vocab_size,
            settings.batching,
            settings.batch_limit,
        )
        yield
        await drain(state, settings.drain_grace_s)
    finally:
        await asyncio.to_thread(engine.close)
        logger.info("engine closed")
        await asyncio.to_thread(close_portal, state.portal)  # after the drain: answers acknowledged are on disk
        if rules is not None:
            rules.close()
        await asyncio.to_thread(stop_observability)  # writes the last spans


def load_tutor(settings: Settings) -> TutorFront:
    """The server's tutor. The model is loaded once, where it runs: with the engine in a child process
    (which loads the weights itself, `engine_parts`), the server reads the tokenizer and the model's
    configuration only; with the engine on a thread of the server, the whole model."""
    if settings.engine_process:
        return TutorFront.load(settings.model_dir)
    return Tutor.load(settings.model_dir)


def start_engine(
    settings: Settings,
    tutor: TutorFront,
    loop: asyncio.AbstractEventLoop,
    on_give_up: Callable[[], None] | None = None,
) -> Engine | EngineProcess:
    """The engine the settings ask for: in a child process (the default), whose results `loop`
    reads itself and which is restarted when it dies (`on_give_up` once it died too often), or
    on a thread of this one."""
    config = settings.engine_config()
    delay_s = settings.debug_step_delay_ms / 1000
    if delay_s:
        logger.warning("debug_step_delay_ms=%g: every model step is slowed down (testing only)", delay_s * 1000)
    if settings.engine_process:
        build = functools.partial(engine_parts, settings.model_dir)
        switch_s = settings.gil_switch_ms / 1000
        return EngineProcess(
            build,
            tutor.cfg,
            config,
            blas_threads=settings.blas_threads,
            gil_switch_s=switch_s,
            step_delay_s=delay_s,
            loop=loop,
            restarts=RestartPolicy(settings.engine_max_restarts, settings.engine_restart_backoff_s),
            on_give_up=on_give_up,
            standby=settings.engine_standby,
        )
    if not isinstance(tutor, Tutor):
        raise TypeError("an engine on a thread of the server needs the tutor's weights (Tutor.load)")
    engine = Engine(tutor.weights, config, drafter=tutor.drafter)
    if delay_s:
        engine.subscribe(on_step=lambda _step: time.sleep(delay_s))
    return engine


def given_up_on(loop: asyncio.AbstractEventLoop, state: Any) -> Callable[[], None]:
    """The engine's `on_give_up`: called on one of its threads, it hands `fail_server` to `loop`."""

    def given_up() -> None:
        try:
            loop.call_soon_threadsafe(fail_server, state)
        except RuntimeError:  # the loop is closed: the server is stopping anyway
            pass

    return given_up


def fail_server(state: Any) -> None:
    """The engine was given up: keep listening for `engine_failed_drain_s`, while `/healthz` answers
    503 `engine_failed` (so a probe or a load balancer sees why), then stop serving with a non-zero
    exit status. Called on the event loop's thread."""
    drain_s = state.settings.engine_failed_drain_s
    logger.critical(
        "the engine was given up; /healthz answers 503 engine_failed for %.1f s, then the server stops "
        "(exit status %d)",
        drain_s,
        ENGINE_FAILED_EXIT_STATUS,
    )
    stop = getattr(state, "stop_server", None)
    if stop is not None:  # `corrige serve`: its exit status is set now, a SIGTERM meanwhile keeps it
        stop(ENGINE_FAILED_EXIT_STATUS, drain_s)
    elif _uvicorn_handles_sigterm():
        # a plain uvicorn stops on SIGTERM, then raises the signal again once it has stopped: the
        # process ends with status 143 (-15), not 0. Under any other handler (the app inside a test
        # client, or a host that installed its own) the signal could end the host, so nothing is sent.
        asyncio.get_running_loop().call_later(drain_s, signal.raise_signal, signal.SIGTERM)


def _uvicorn_handles_sigterm() -> bool:
    """Whether SIGTERM goes to a uvicorn server's handler (`Server.handle_exit`, a bound method)."""
    from uvicorn.server import Server

    return isinstance(getattr(signal.getsignal(signal.SIGTERM), "__self__", None), Server)


async def warm_up(service: CorrectionService) -> None:
    """One correction through every stage, and one rule-card search, before reporting ready, so
    the first client does not pay for first-call costs (allocations, lazy imports, the encoder's
    first forward pass, the tutor's word tables and speller index: a second with the reader model).
    The correction takes the pipeline as a request does (`rules` off: the search is warmed on its
    own, and timed)."""
    await asyncio.to_thread(service.tutor.warm_up)
    await service.correct("I goed home.", RequestMeta("warmup", time.perf_counter()), rules=False)
    if service.rules is not None:
        logger.info("rule cards warmed: first search %.1f ms (%s)", await service.rules.warm(), service.rules.mode)


async def drain(state: Any, grace_s: float) -> None:
    """Refuse new requests, give those in flight `grace_s` to finish, then close the engine on the rest."""
    drain_state = state.drain
    if drain_state.drained:
        return
    logger.info("draining: %d requests in flight, grace %.1f s", drain_state.in_flight, grace_s)
    drain_state.begin()
    loop = asyncio.get_running_loop()
    give_up = loop.time() + grace_s
    while drain_state.in_flight > 0 and loop.time() < give_up:
        await asyncio.sleep(_POLL_S)
    engine = getattr(state, "engine", None)
    if drain_state.in_flight > 0 and engine is not None:
        logger.warning("grace period over: ending %d requests still in flight", drain_state.in_flight)
        await asyncio.to_thread(engine.close)  # they end with engine_closed (503)
        give_up = loop.time() + 2.0  # time for those answers to go out
        while drain_state.in_flight > 0 and loop.time() < give_up:
            await asyncio.sleep(_POLL_S)
    drain_state.drained = True
    logger.info("drained")
