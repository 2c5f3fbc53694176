"""The engine pipe's typed messages: they cross a real pipe intact (errors keep their class and
code), anything else is refused with an error that names it, and an abort of an id the child does
not hold changes nothing."""

import asyncio
import functools
import logging
import multiprocessing

import pytest
from engine_support import EOS, greedy_alone, run, wait_for_snapshot, weights

from corrige.engine import DeadlineExceeded, EngineConfig, FinishReason, SamplingParams, TokenEvent, messages
from corrige.engine.process import EngineProcess, random_model
from corrige.engine.request import Request, RequestOutput
from corrige.engine.stats import EngineSnapshot, StepStats


def through_a_pipe(message):
    """`message` as the other end of a real multiprocessing pipe receives it."""
    sender, receiver = multiprocessing.Pipe()
    with sender, receiver:
        sender.send(message)
        return receiver.recv()


def finished_output(error=None) -> RequestOutput:
    request = Request("r-7", [1, 2, 3], SamplingParams(max_tokens=2, logprobs=True), arrival_time=10.0)
    request.output_token_ids, request.output_logprobs, request.token_times = [4, 5], [-0.25, -1.5], [10.5, 10.75]
    request.scheduled_time = 10.25
    request.finish(FinishReason.ERROR if error else FinishReason.LENGTH, 11.0, error)
    return request.output()


def test_requests_to_the_child_cross_a_pipe_intact():
    params = SamplingParams(max_tokens=9, temperature=0.5, top_k=3, seed=11, stop_token_ids=(5,), logprobs=True)
    add = messages.AddRequest("r-1", [1, 2, 3], params, 2.5, False)
    for message in (add, messages.AbortRequest("r-1"), messages.CloseEngine()):
        received = through_a_pipe(message)
        messages.expect(received, messages.TO_CORE)
        assert type(received) is type(message) and received == message


def test_outputs_from_the_child_cross_a_pipe_with_their_errors_typed():
    step = StepStats(3, 10.5, 2, 1, 3, 1, 0, 2, 2, 0.01, 0.008, 0.001, 0.01, 0.008, num_output_tokens=2)
    state = messages.CoreState(engine_snapshot(), received=4, free=6)  # what the parent's admission check reads
    failed = finished_output(DeadlineExceeded("waited 10.0 s for a slot"))
    received = through_a_pipe(messages.StepOutputs([TokenEvent("r-7", 4, 0), finished_output(), failed], [step], state))
    assert isinstance(received, messages.StepOutputs) and received.steps == [step] and received.state == state
    token, done, error = received.events
    assert token == TokenEvent("r-7", 4, 0) and done == finished_output()
    assert done.logprobs == [-0.25, -1.5] and done.stats.queue_s == 0.25
    # the error is the class it was raised as, so the server maps it by the same code
    assert type(error.error) is DeadlineExceeded and error.error.code == "deadline_exceeded"
    assert str(error.error) == "waited 10.0 s for a slot" and error.finish_reason is FinishReason.ERROR
    assert through_a_pipe(messages.Ready(state)) == messages.Ready(state)


def engine_snapshot() -> EngineSnapshot:
    return EngineSnapshot("continuous", 1, 2, 3, 8, 40, 9, 1, 2, 300, 280, 1.5, 1.2, 1.4, 1.1, 30, 20)


@pytest.mark.parametrize(
    "message",
    [
        ("add", "r-1", [1, 2], SamplingParams(), None, True),  # the old positional tuple
        ("abort", "r-1"),
        messages.Ready(messages.CoreState(engine_snapshot(), 0, 1)),  # a message of the other direction
        "close",
    ],
)
def test_anything_else_is_refused_naming_what_came_and_what_is_expected(message):
    with pytest.raises(messages.UnknownMessage) as refused:
        messages.expect(through_a_pipe(message), messages.TO_CORE)
    text = str(refused.value)
    assert type(message).__name__ in text
    assert all(kind.__name__ in text for kind in messages.TO_CORE)


def start() -> EngineProcess:
    config = EngineConfig(n_slots=4, max_batch=4, speculative_tokens=0)
    return EngineProcess(functools.partial(random_model, "tiny", 3), weights().cfg, config)


def test_a_child_refuses_unknown_messages_and_ignores_aborts_of_ids_it_does_not_hold(caplog):
    w = weights()
    prompt, n = [3, 1, 4, 1, 5], 12

    async def main():
        with start() as engine:
            pid = engine.pid
            engine.abort("no-such-request")  # the front end: not in flight, never sent
            assert engine._send(messages.AbortRequest("no-such-request"))  # the child: holds no such id
            assert engine._send(("add", "old-style", [1, 2], SamplingParams(), None, True))  # refused there
            engine._receive(("event", "from nowhere"))  # and here, a message that is not messages.StepOutputs
            output = await engine.generate(prompt, SamplingParams(max_tokens=n, stop_token_ids=(EOS,)))
            snapshot = await wait_for_snapshot(engine, lambda s: s.finished == 1, "one finished")
            await asyncio.sleep(0.1)  # an add the child took after all would show by now
            return output, engine.snapshot(), engine.pid == pid and engine.restarts == 0 and engine.running, snapshot

    with caplog.at_level(logging.ERROR, logger="corrige.engine.process"):
        output, later, same_child, snapshot = run(main())
    assert list(output.token_ids) == greedy_alone(w, prompt, n, EOS)
    assert same_child
    assert (snapshot.aborted, snapshot.failed, later.finished) == (0, 0, 1)
    assert (later.running, later.waiting, later.slots_used) == (0, 0, 0)
    assert any("refused" in r.getMessage() and "StepOutputs; got a tuple" in r.getMessage() for r in caplog.records)
