"""Health, readiness, engine refusals (503 overloaded, 504 deadline) and draining, in process.

A gate holds the engine's model steps, so queues fill exactly as the tests say; the only
waiting is for the engine to reach a state, never an assertion on elapsed time. (The engine's
snapshot is taken between steps, so a test lets the first step through before reading it.)
"""

import asyncio

from server_support import error_of, run, served, wait_until

from corrige.server.app import create_app
from corrige.server.lifecycle import drain
from corrige.tutor.agent import BUNDLED_MODEL

URL = "/v1/grammar/correct"


def test_health_and_readiness(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_create_app_builds_nothing_until_the_lifespan_runs(make_settings):
    from fastapi.testclient import TestClient

    app = create_app(make_settings())
    assert app.state.engine is None and app.state.tutor is None
    with TestClient(app, raise_server_exceptions=False) as client:
        assert app.state.engine.running
        assert client.get("/readyz").status_code == 200
    assert not app.state.engine.running  # the lifespan closed it


def test_the_warm_up_runs_one_rule_search_before_ready_and_leaves_the_cache_empty(make_settings, caplog):
    from fastapi.testclient import TestClient

    caplog.set_level("INFO", logger="corrige.server.lifecycle")
    for warmup in (True, False):
        app = create_app(make_settings(warmup=warmup, rules="hybrid"))
        with TestClient(app):
            rules = app.state.service.rules
            assert (rules.warm_ms is not None) is warmup
            assert (rules.hits, rules.misses, len(rules._cache)) == (0, 0, 0)
    assert sum("rule cards warmed: first search" in r.getMessage() for r in caplog.records) == 1


def test_the_warm_up_builds_the_speller_index_of_a_model_that_spells(make_settings):
    from fastapi.testclient import TestClient

    reader = BUNDLED_MODEL.parent / "reader"
    for warmup in (True, False):
        app = create_app(make_settings(model_dir=reader, warmup=warmup, rules="off"))
        with TestClient(app):
            speller = app.state.service.tutor.speller
            assert speller is not None and (speller._built is not None) is warmup


def test_before_the_model_is_loaded_routes_answer_503_not_ready(make_settings):
    from fastapi.testclient import TestClient

    app = create_app(make_settings())
    client = TestClient(app)  # no `with`: the lifespan never runs
    response = client.post(URL, json={"sentence": "Hi."})
    assert response.status_code == 503 and error_of(response)["code"] == "not_ready"
    ready = client.get("/readyz")
    assert ready.status_code == 503 and error_of(ready)["code"] == "not_ready"
    assert ready.headers["retry-after"] == "1"
    assert client.get("/healthz").json() == {"status": "ok"}


def test_a_full_queue_answers_503_overloaded_with_retry_after(make_settings, gate):
    settings = make_settings(batching="none", n_slots=1, max_batch=1, max_waiting=1, warmup=False)
    app = create_app(settings)

    async def main():
        async with served(app) as client:
            engine = app.state.engine
            first = asyncio.create_task(client.post(URL, json={"sentence": "First."}))
            gate.release()  # its prefill runs; its next step waits at the gate
            await wait_until(lambda: engine.snapshot().running == 1, "the first request runs")
            second = asyncio.create_task(client.post(URL, json={"sentence": "Second."}))
            # it waits for its turn in the server (corrige.server.admission), the engine's one place taken
            await wait_until(lambda: app.state.admission.gate.waiting == 1, "the second request waits")
            refused = await client.post(URL, json={"sentence": "Third."})
            gate.release(100_000)
            return refused, await first, await second

    refused, first, second = run(main())
    assert refused.status_code == 503
    assert error_of(refused)["code"] == "overloaded"
    assert refused.headers["retry-after"] == "1"
    assert (first.status_code, second.status_code) == (200, 200)


def test_waiting_past_the_queue_deadline_answers_504(make_settings, gate):
    settings = make_settings(batching="none", n_slots=1, max_batch=1, queue_timeout_s=0.05, warmup=False)
    app = create_app(settings)

    async def main():
        async with served(app) as client:
            engine = app.state.engine
            first = asyncio.create_task(client.post(URL, json={"sentence": "First."}))
            gate.release()  # its prefill runs; its next step waits at the gate
            await wait_until(lambda: engine.snapshot().running == 1, "the first request runs")
            late = asyncio.create_task(client.post(URL, json={"sentence": "Second."}))
            # it waits for its turn in the server (corrige.server.admission), the engine's one place taken
            await wait_until(lambda: app.state.admission.gate.waiting == 1, "the second request waits")
            await asyncio.sleep(0.2)  # past its 50 ms deadline while the first holds the only slot
            gate.release(100_000)
            return await first, await late

    first, late = run(main())
    assert first.status_code == 200
    assert late.status_code == 504 and error_of(late)["code"] == "deadline_exceeded"


def test_draining_refuses_new_requests_fails_readiness_and_lets_in_flight_ones_finish(make_settings, gate):
    app = create_app(make_settings(warmup=False))

    async def main():
        async with served(app) as client:
            engine = app.state.engine
            in_flight = asyncio.create_task(client.post(URL, json={"sentence": "First."}))
            gate.release()
            await wait_until(lambda: engine.snapshot().running == 1, "the request runs")
            draining = asyncio.create_task(drain(app.state, grace_s=30))
            await wait_until(lambda: app.state.drain.draining, "draining starts")
            refused = await client.post(URL, json={"sentence": "Too late."})
            ready = await client.get("/readyz")
            alive = await client.get("/healthz")
            assert not draining.done()  # it waits for the request in flight
            gate.release(100_000)
            done = await in_flight
            await draining
            return refused, ready, alive, done

    refused, ready, alive, done = run(main())
    assert refused.status_code == 503 and error_of(refused)["code"] == "draining"
    assert refused.headers["retry-after"] == "1"
    assert ready.status_code == 503 and error_of(ready)["code"] == "draining"
    assert alive.status_code == 200
    assert done.status_code == 200 and done.json()["sentence"] == "First."


def test_requests_still_running_after_the_grace_period_end_with_503(make_settings):
    # every model step sleeps 50 ms: the request outlives a 50 ms grace period
    app = create_app(make_settings(warmup=False, debug_step_delay_ms=50))

    async def main():
        async with served(app) as client:
            engine = app.state.engine
            in_flight = asyncio.create_task(client.post(URL, json={"sentence": "A slow one."}))
            await wait_until(lambda: engine.snapshot().running == 1, "the request runs")
            await drain(app.state, grace_s=0.05)
            return await in_flight, app.state.drain.in_flight

    response, left = run(main())
    assert response.status_code == 503 and error_of(response)["code"] == "engine_closed"
    assert left == 0


def test_engine_stats_report_slots_queue_and_totals(client):
    client.post(URL, json={"sentence": "Count me."})
    stats = client.get("/v1/engine/stats").json()
    # an engine thread: no process id, no restarts
    expected = {"in_flight": 0, "draining": False, "engine_pid": None, "engine_standby_pid": None, "engine_restarts": 0}
    assert stats["server"] == expected
    engine = stats["engine"]
    assert engine["policy"] == "continuous"
    assert engine["slots_used"] == 0 and engine["running"] == 0 and engine["waiting"] == 0
    assert engine["finished"] >= 2  # the warm-up and this request


def test_an_unexpected_exception_is_a_logged_500_in_the_error_model(make_settings, caplog):
    from fastapi.testclient import TestClient

    app = create_app(make_settings())

    async def boom() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/boom", boom)
    with TestClient(app) as client:
        response = client.get("/boom", headers={"X-Request-ID": "bug-1"})
    assert response.status_code == 500
    assert error_of(response) == {
        "code": "internal_error",
        "message": "the server failed; please retry",
        "request_id": "bug-1",
    }
    assert any("bug-1" in record.getMessage() for record in caplog.records)


def test_the_openapi_document_lists_every_route(client):
    paths = set(client.get("/openapi.json").json()["paths"])
    assert {
        "/v1/grammar/correct",
        "/correct",
        "/v1/grammar/correct:batch",
        "/v1/models",
        "/v1/completions",
        "/v1/chat/completions",
        "/healthz",
        "/readyz",
        "/v1/engine/stats",
    } <= paths


def test_the_server_is_ready_only_once_the_quiz_bank_is_checked(make_settings, monkeypatch):
    """The bank's check is seconds of CPU in the server's process on a machine without its cache:
    ready means it is done, so the first requests (and a benchmark started at ready) do not share
    the machine with it."""
    import threading

    from corrige.portal.quiz import QuestionBank

    checked = threading.Event()
    real = QuestionBank.cached.__func__

    def held(cls, *args, **kwargs):
        checked.wait(30)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(QuestionBank, "cached", classmethod(held))
    app = create_app(make_settings(warmup=False))

    async def main():
        async with app.router.lifespan_context(app):
            return app.state.tutor is not None

    async def probe():
        starting = asyncio.create_task(main())
        # the engine started (the step history comes right after it), then the rules load
        await wait_until(lambda: getattr(app.state, "step_history", None) is not None, "the engine starts", 60)
        await asyncio.sleep(2.0)
        waiting = not starting.done() and app.state.tutor is None
        checked.set()
        return waiting, await starting

    assert run(probe()) == (True, True)
