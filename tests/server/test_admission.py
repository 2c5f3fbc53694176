"""Admission to the model (corrige/server/admission.py): the work budget counts sentences, not
requests, and goes below zero for a long text, which is then paid off at its rate; the engine's
places go to the clients in turn, and past `max_waiting` only a client that holds its share of
the waiting is refused.

The budgets refill at 0.001 sentences/s where a refusal is checked, and the schedule's waits are
computed from a clock the test moves: nothing here times anything."""

from __future__ import annotations

import asyncio
import math

import pytest
from server_support import error_of, run, served

from corrige.engine import DeadlineExceeded, Overloaded
from corrige.server.admission import Admission, FairGate, Schedule
from corrige.server.app import create_app
from corrige.server.guards import TokenBucketLimiter

URL = "/v1/grammar/correct"

# ---------------------------------------------------------------- the work budget


def test_a_charge_may_take_the_bucket_below_zero_and_a_take_waits_for_the_debt():
    now = [0.0]
    limiter = TokenBucketLimiter(rate=2.0, burst=3, clock=lambda: now[0])
    assert limiter.spend("a", 10) == 3.0  # what it held before: the burst
    assert limiter.acquire("a", 0) == pytest.approx(4.0)  # from -7 to one whole sentence at 2/s
    assert limiter.acquire("b", 0) == 0.0  # another client's bucket is full
    now[0] += 4.0
    assert limiter.acquire("a", 0) == 0.0  # a peek (cost 0) takes nothing
    assert limiter.acquire("a", 5) == 0.0  # one whole sentence held: granted, and it costs 5
    assert limiter.acquire("a", 1) == pytest.approx(2.5)  # from -4 to 1


def test_the_schedule_sends_the_burst_at_once_and_the_rest_at_the_rate():
    now = [100.0]
    schedule = Schedule(held=2.0, rate=10.0, at=now[0], clock=lambda: now[0])
    assert [schedule.next_delay() for _ in range(4)] == pytest.approx([0.0, 0.0, 0.1, 0.2])
    now[0] += 0.25  # the fifth sentence was due at 0.3 s
    assert schedule.next_delay() == pytest.approx(0.05)
    now[0] += 10
    assert schedule.next_delay() == 0.0  # long due


def test_the_settings_make_the_budget_and_rate_limit_zero_turns_it_off(make_settings):
    admission = Admission.from_settings(make_settings(rate_limit=20, work_rate_limit=4))
    assert admission.budget is not None and admission.budget.rate == 4
    assert admission.budget.limiter.burst == 20  # five seconds' worth
    assert Admission.from_settings(make_settings(rate_limit=0, work_rate_limit=4)).budget is None
    assert Admission.from_settings(make_settings(rate_limit=20, work_rate_limit=0)).budget is None


# ---------------------------------------------------------------- turns at the engine


async def queued(gate: FairGate, client: str, order: list[str], label: str) -> None:
    await gate.enter(client, None)
    order.append(label)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_freed_place_goes_to_the_clients_in_turn():
    async def scenario():
        gate = FairGate(places=1, max_waiting=100)
        await gate.enter("heavy", None)  # the one place
        order: list[str] = []
        tasks = [asyncio.ensure_future(queued(gate, "heavy", order, f"heavy-{i}")) for i in range(3)]
        await settle()
        tasks.append(asyncio.ensure_future(queued(gate, "light", order, "light")))
        await settle()
        assert (gate.in_engine, gate.waiting) == (1, 4)
        for _ in range(4):
            gate.leave()
            await settle()
        await asyncio.gather(*tasks)
        return order

    # the light client's one sentence waits for one of the heavy client's, not for its three
    assert run(scenario()) == ["heavy-0", "light", "heavy-1", "heavy-2"]


def test_past_max_waiting_only_a_client_that_holds_its_share_is_refused():
    async def scenario():
        gate = FairGate(places=1, max_waiting=4)
        await gate.enter("heavy", None)
        tasks = [asyncio.ensure_future(gate.enter("heavy", None)) for _ in range(4)]
        await settle()
        with pytest.raises(Overloaded, match=r"^4 requests are already waiting \(the limit\); try again shortly$"):
            await gate.enter("heavy", None)  # all of the waiting is its own: the engine's own words
        tasks.append(asyncio.ensure_future(gate.enter("light", None)))  # under its share: it waits
        tasks.append(asyncio.ensure_future(gate.enter("light", None)))
        await settle()
        assert gate.waiting == 6 and gate.waiting_for("light") == 2
        with pytest.raises(Overloaded, match="2 of them this client's .its share: 2."):
            await gate.enter("light", None)  # now it holds its share (4 over 2 clients)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return gate.waiting

    assert run(scenario()) == 0


def test_a_wait_past_the_queue_timeout_is_deadline_exceeded_and_a_cancelled_one_leaves_no_place_behind():
    async def scenario():
        gate = FairGate(places=1, max_waiting=10)
        await gate.enter("a", None)
        with pytest.raises(DeadlineExceeded):
            await gate.enter("b", 0.01)
        assert gate.waiting == 0 and gate.waiting_for("b") == 0
        cancelled = asyncio.ensure_future(gate.enter("c", None))
        waiting = asyncio.ensure_future(gate.enter("d", None))
        await settle()
        gate.leave()  # the place goes to c ...
        cancelled.cancel()  # ... which leaves before it runs: the place goes on to d
        await settle()
        await asyncio.wait_for(waiting, 5)
        assert cancelled.cancelled() and (gate.in_engine, gate.waiting) == (1, 0)
        gate.leave()
        return gate.in_engine

    assert run(scenario()) == 0


# ---------------------------------------------------------------- the app


def test_a_request_that_spends_the_budget_is_served_and_the_next_is_refused_with_the_budgets_retry_after(
    make_settings,
):
    # 3 sentences at once, then one every 1,000 s: the batch spends them all, whatever the machine's speed
    app = create_app(make_settings(rate_limit=100, work_rate_limit=0.001, work_rate_burst=3))
    batch = {"sentences": ["I goed home.", "She go to school.", "We was happy."]}

    async def scenario():
        async with served(app) as client:
            spent = await client.post("/v1/grammar/correct:batch", json=batch)
            refused = await client.post(URL, json={"sentence": "He go home."})
            completion = await client.post("/v1/completions", json={"model": "corrige-tutor", "prompt": "I goed"})
            return spent, refused, completion

    spent, refused, completion = run(scenario(), timeout=120)
    assert spent.status_code == 200, spent.text
    assert refused.status_code == 429 and error_of(refused)["code"] == "work_limited"
    assert "limit 0.001 sentences/s" in error_of(refused)["message"]
    assert refused.headers["retry-after"] == str(math.ceil(1 / 0.001))  # from zero to one sentence at 0.001/s
    assert completion.status_code == 429 and error_of(completion)["code"] == "work_limited"


def test_each_client_address_has_a_budget_of_its_own_and_the_answer_cache_is_free(make_settings):
    app = create_app(make_settings(rate_limit=100, work_rate_limit=0.001, work_rate_burst=2))
    text = {"text": "I goed home. She go to school."}

    async def scenario():
        import httpx

        async with served(app) as first:
            spent = await first.post(URL, json=text)  # two pieces: the whole budget
            transport = httpx.ASGITransport(app=app, client=("127.0.0.2", 50000))
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as second:
                # the same text from another address: its budget is untouched, and the answer cache
                # answers both pieces, so they cost nothing
                again = [await second.post(URL, json=text) for _ in range(3)]
            refused = await first.post(URL, json=text)
            return spent, again, refused

    spent, again, refused = run(scenario(), timeout=120)
    assert spent.status_code == 200, spent.text
    assert [r.status_code for r in again] == [200, 200, 200]
    assert refused.status_code == 429 and error_of(refused)["code"] == "work_limited"


def test_every_way_into_the_engine_gives_its_place_back(make_settings):
    """One place (an engine of one slot): a sentence, its stream, a batch, a text, a completion and its
    stream each get it in turn, which they do only if the one before gave it back."""
    app = create_app(make_settings(batching="none", n_slots=1, max_batch=1, warmup=False))
    completion = {"model": "corrige-tutor", "prompt": "I goed", "max_tokens": 4}

    async def scenario():
        async with served(app) as client:
            answers = [
                await client.post(URL, json={"sentence": "I goed home."}),
                await client.post(URL, json={"sentence": "I goed home.", "stream": True}),
                await client.post("/v1/grammar/correct:batch", json={"sentences": ["I goed.", "She go."]}),
                await client.post(URL, json={"text": "I goed home. She go to school."}),
                await client.post("/v1/completions", json=completion),
                await client.post("/v1/completions", json={**completion, "stream": True}),
            ]
            gate = app.state.admission.gate
            return answers, (gate.places, gate.in_engine, gate.waiting)

    answers, gate = run(scenario(), timeout=120)
    assert [r.status_code for r in answers] == [200] * 6, [r.text[:200] for r in answers]
    assert "event: result" in answers[1].text and "data: [DONE]" in answers[5].text
    assert gate == (1, 0, 0)
