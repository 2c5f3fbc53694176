"""A dead engine process is replaced: requests in flight fail with `EngineRestarting`, requests
sent meanwhile wait for the new child, and a child that dies too often is given up."""

import asyncio
import functools
import os
import signal
import subprocess
import sys
import threading

import pytest
from engine_support import FakeClock, run, wait_for_snapshot, weights
from test_engine_process import kill_mid_request

from corrige.engine import EngineClosed, EngineConfig, FinishReason, SamplingParams
from corrige.engine.process import EngineProcess, random_model
from corrige.engine.restarts import RestartBudget, RestartPolicy


def start(restarts: RestartPolicy, on_give_up=None) -> EngineProcess:
    config = EngineConfig(n_slots=4, max_batch=4, speculative_tokens=0)  # one token per step
    build = functools.partial(random_model, "tiny", 3)
    return EngineProcess(build, weights().cfg, config, step_delay_s=0.005, restarts=restarts, on_give_up=on_give_up)


async def until(condition, what: str, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while not condition():
        assert loop.time() < give_up, f"never happened: {what}"
        await asyncio.sleep(0.005)


async def kill_twice(engine: EngineProcess) -> set[int]:
    """Kill the child, let the first restart (at once) serve, and kill that one: the next restart
    waits `backoff_s`, which gives a test time to look at an engine between children."""
    first = await kill_mid_request(engine)
    await until(lambda: engine.running, "the first restart serves")
    second = await kill_mid_request(engine)
    assert engine.restarting and not engine.running  # readiness fails meanwhile
    return {first, second}


def test_the_first_restart_is_at_once_then_the_waits_double_and_too_many_give_up():
    clock = FakeClock()
    budget = RestartBudget(RestartPolicy(max_per_minute=4, backoff_s=0.5, max_backoff_s=1.5), clock)
    delays = []
    for _ in range(5):
        delays.append(budget.next_delay())
        clock.advance(1.0)
    assert delays == [0.0, 0.5, 1.0, 1.5, None]
    clock.advance(60.0)  # a quiet minute: the count starts again
    assert budget.next_delay() == 0.0
    assert RestartBudget(RestartPolicy(max_per_minute=0), clock).next_delay() is None


def test_a_killed_child_is_replaced_and_requests_sent_meanwhile_wait_for_the_new_one():
    async def main():
        engine = start(RestartPolicy(backoff_s=1.0))
        try:
            dead = await kill_twice(engine)
            waiting = await asyncio.gather(*(engine.generate([2, 3], SamplingParams(max_tokens=4)) for _ in range(6)))
            snapshot = await wait_for_snapshot(engine, lambda s: s.finished == 6, "the new child counts them")
            return dead | {engine.pid}, waiting, snapshot, engine.restarts, engine.running, engine.failed
        finally:
            await asyncio.to_thread(engine.close)

    pids, waiting, snapshot, restarts, running, failed = run(main())
    assert all(o.finish_reason is FinishReason.LENGTH and len(o.token_ids) == 4 for o in waiting)
    assert len(pids) == 3 and restarts == 2 and running and not failed
    assert (snapshot.slots_used, snapshot.waiting) == (0, 0)


def test_a_request_abandoned_while_the_child_restarts_is_dropped_and_the_count_stays_right():
    async def main():
        engine = start(RestartPolicy(backoff_s=1.0))
        try:
            await kill_twice(engine)
            abandoned = asyncio.create_task(engine.generate([2, 3], SamplingParams(max_tokens=4)))
            await asyncio.sleep(0)  # submitted: held for the new child
            abandoned.cancel()
            await until(lambda: engine.running, "the new child serves")
            output = await engine.generate([4, 5], SamplingParams(max_tokens=3))
            await asyncio.sleep(0.1)  # time for a wrongly sent abandoned request to show up as a second one
            return output, await wait_for_snapshot(engine, lambda s: s.finished >= 1, "one finished"), engine.restarts
        finally:
            await asyncio.to_thread(engine.close)

    output, snapshot, restarts = run(main())
    assert output.finish_reason is FinishReason.LENGTH and restarts == 2
    assert (snapshot.finished, snapshot.aborted, snapshot.waiting, snapshot.slots_used) == (1, 0, 0, 0)


def test_a_child_that_dies_too_often_is_given_up():
    gave_up = threading.Event()

    async def main():
        engine = start(RestartPolicy(max_per_minute=1), on_give_up=gave_up.set)
        try:
            await kill_mid_request(engine)
            await until(lambda: engine.running, "the first restart serves")
            task = asyncio.create_task(engine.generate([1], SamplingParams(max_tokens=30)))
            await wait_for_snapshot(engine, lambda s: s.running == 1, "it runs")
            os.kill(engine.pid, signal.SIGKILL)
            with pytest.raises(EngineClosed, match="will not be restarted"):
                await task
            with pytest.raises(EngineClosed):
                engine.stream([1], SamplingParams())
            return engine.failed, engine.running, engine.restarting, engine.restarts
        finally:
            await asyncio.to_thread(engine.close)

    assert run(main()) == (True, False, False, 1)
    assert gave_up.is_set()


def start_with_standby(restarts: RestartPolicy | None = None, on_give_up=None) -> EngineProcess:
    config = EngineConfig(n_slots=4, max_batch=4, speculative_tokens=0)
    build = functools.partial(random_model, "tiny", 3)
    return EngineProcess(
        build, weights().cfg, config, step_delay_s=0.005, restarts=restarts, on_give_up=on_give_up, standby=True
    )


def test_a_standby_child_takes_over_when_the_serving_one_dies_and_another_is_started():
    async def main():
        engine = start_with_standby()
        try:
            await until(lambda: engine.standby_pid is not None, "a standby is ready")
            standby = engine.standby_pid
            assert standby != engine.pid
            dead = await kill_mid_request(engine)
            await until(lambda: engine.running, "the standby serves")
            served_by = engine.pid
            output = await engine.generate([2, 3], SamplingParams(max_tokens=4))
            await until(lambda: engine.standby_pid is not None, "the next standby is ready")
            return dead, standby, served_by, engine.standby_pid, output, engine.restarts
        finally:
            await asyncio.to_thread(engine.close)

    dead, standby, served_by, next_standby, output, restarts = run(main())
    assert served_by == standby and restarts == 1  # the standby itself took over, no child was started for it
    assert next_standby not in (dead, standby)
    assert output.finish_reason is FinishReason.LENGTH and len(output.token_ids) == 4


def test_closing_stops_the_standby_and_a_dead_standby_is_not_used():
    async def main():
        engine = start_with_standby()
        try:
            await until(lambda: engine.standby_pid is not None, "a standby is ready")
            first_standby = engine.standby_pid
            os.kill(first_standby, signal.SIGKILL)  # the standby dies while it waits
            await asyncio.sleep(0.1)
            dead = await kill_mid_request(engine)
            await until(lambda: engine.running, "a new child serves")
            output = await engine.generate([2, 3], SamplingParams(max_tokens=4))
            await until(lambda: engine.standby_pid is not None, "a new standby is ready")
            children = (engine._process, engine._standby[0])
            return first_standby, dead, engine.pid, engine.standby_pid, output, engine, children
        finally:
            await asyncio.to_thread(engine.close)

    first_standby, dead, serving, standby, output, engine, children = run(main())
    assert serving not in (first_standby, dead) and standby not in (first_standby, dead, serving)
    assert output.finish_reason is FinishReason.LENGTH
    assert not any(child.is_alive() for child in children)  # closed: neither child is left running
    assert not engine.running and engine.standby_pid is None


def test_no_standby_when_restarts_are_off_and_none_once_given_up():
    gave_up = threading.Event()

    async def main():
        off = start_with_standby(RestartPolicy(max_per_minute=0))
        try:
            assert off.standby_pid is None and not off._standby_wanted
        finally:
            await asyncio.to_thread(off.close)
        engine = start_with_standby(RestartPolicy(max_per_minute=1), on_give_up=gave_up.set)
        try:
            await until(lambda: engine.standby_pid is not None, "a standby is ready")
            await kill_mid_request(engine)
            await until(lambda: engine.running, "the standby serves")
            await until(lambda: engine.standby_pid is not None, "the next standby is ready")
            standby = engine.standby_pid
            os.kill(engine.pid, signal.SIGKILL)  # one death more than the minute allows
            await until(lambda: engine.failed, "given up")
            return standby, engine.standby_pid, engine.failed
        finally:
            await asyncio.to_thread(engine.close)

    standby, after, failed = run(main())
    assert failed and gave_up.is_set() and after is None


def test_the_engine_child_imports_neither_the_tutors_word_tables_nor_torch(with_torch):
    """A child starts in about a second: it imports what it runs, not spaCy and torch (5 s of a start).
    Torch is importable here (`with_torch`), so that importing it would show."""
    script = (
        "import pickle, sys, functools\n"
        "from corrige.tutor.bundled import engine_parts\n"
        "build = pickle.loads(pickle.dumps(functools.partial(engine_parts, None)))\n"
        "import corrige.engine.child\n"
        "build()\n"
        "heavy = [m for m in ('spacy', 'lemminflect', 'torch', 'corrige.tutor.agent') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]", found.stdout + found.stderr
