"""The answer cache: a text sent again (an editor re-checking it) runs the model only for the
sentences that changed, with the same answer; single sentences and `Cache-Control: no-cache`
always run it; `answer_cache_size=0` turns it off."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from server_support import bundled_model_available

from corrige.engine import FinishReason, RequestOutput
from corrige.obs import spans as S
from corrige.obs.records import RequestStats
from corrige.server.answer_cache import MAX_READINGS, AnswerCache
from corrige.server.app import create_app
from corrige.server.settings import Settings
from corrige.tutor.agent import Correction

EMAIL = (
    "Dear Ana,\n\nYesterday I goed to the market with my sister. She like the fresh fruit there.\n"
    "People is very friendly in this town. Can you tell me what time the party start?"
)
EDITED = EMAIL.replace("the party start?", "the party starts?")


def output(tokens: tuple[int, ...], finish: FinishReason = FinishReason.STOP, error=None) -> RequestOutput:
    stats = RequestStats("r", finish.value, 3, len(tokens), 0.0, 1.0, 0.1, 0.2, 0.1, 0.7, ())
    return RequestOutput("r", tokens, finish, stats, error=error, logprobs=[-0.1] * len(tokens))


def test_the_cache_keeps_the_most_recently_used_answers_and_counts_lookups():
    cache = AnswerCache(2)
    cache.put([1, 2], output((5, 6)))
    cache.put([1, 3], output((7,)))
    assert cache.get([1, 2], "a") is not None  # [1, 2] is now the most recent
    cache.put([1, 4], output((8,)))  # evicts [1, 3]
    assert cache.get([1, 3], "b") is None
    hit = cache.get([1, 2], "c")
    assert hit is not None and hit.token_ids == (5, 6) and hit.logprobs == [-0.1, -0.1]
    assert hit.request_id == "c" and hit.finish_reason is FinishReason.STOP
    assert hit.stats.queue_s is None and hit.stats.num_steps == 0  # no model step ran for it
    assert (cache.hits, cache.misses, len(cache)) == (2, 1, 2)
    with pytest.raises(ValueError):
        AnswerCache(0)


def test_failed_answers_are_not_kept_and_readings_go_with_their_answer():
    cache = AnswerCache(4)
    cache.put([1], output((), FinishReason.ERROR, error=RuntimeError("x")))
    cache.put([2], output((3,), FinishReason.ABORT))
    assert len(cache) == 0
    reading = Correction("a b", "a b", "sin errores")
    cache.keep_reading([9], "a b", reading)  # no answer kept for [9]: nothing to keep it with
    assert cache.reading([9], "a b") is None
    cache.put([9], output((4,)))
    cache.keep_reading([9], "a b", reading)
    assert cache.reading([9], "a b") is reading and cache.reading([9], "a  b") is None
    cache.put([9], output((5,)))  # a new answer: the old reading no longer holds
    assert cache.reading([9], "a b") is None
    spacings = [f"a{' ' * n}b" for n in range(1, 8)]  # one prompt, many ways of typing it
    for text in spacings:
        cache.keep_reading([9], text, reading)
    assert [cache.reading([9], t) for t in spacings].count(reading) == MAX_READINGS
    assert cache.reading([9], spacings[-1]) is reading and cache.reading([9], spacings[0]) is None


needs_model = pytest.mark.skipif(not bundled_model_available(), reason="no model in corrige/models/reader")


def make_client(**settings) -> TestClient:
    base = {"rate_limit": 0, "access_log": False, "blas_threads": 0, "engine_process": False}
    return TestClient(create_app(Settings(**base, **settings)))


def steps(client: TestClient) -> int:
    return client.get("/v1/engine/stats").json()["engine"]["steps"]


def without_ids(body: dict) -> dict:
    """The answer but its id, timings and rule cards (whose search runs in a cheaper mode while the engine is busy)."""
    kept = {k: v for k, v in body.items() if k not in ("request_id", "timings_ms")}
    kept["sentences"] = [{k: v for k, v in s.items() if k != "rules"} for s in body["sentences"]]
    return kept


def cache_series(client: TestClient) -> dict[str, float]:
    lines = client.get("/metrics").text.splitlines()
    return {line.split(" ")[0]: float(line.split(" ")[1]) for line in lines if line.startswith("corrige:answer_cache")}


HIT, MISS = 'corrige:answer_cache_lookups_total{result="hit"}', 'corrige:answer_cache_lookups_total{result="miss"}'


@needs_model
def test_a_text_sent_again_runs_the_model_only_for_what_changed(tmp_path):
    with make_client(trace_store=tmp_path / "traces.sqlite", portal_db=tmp_path / "portal.sqlite") as client:
        first = client.post("/v1/grammar/correct", json={"text": EMAIL})
        assert first.status_code == 200, first.text
        pieces = cache_series(client)[MISS]  # what went to the model
        assert pieces >= 4 and cache_series(client)[HIT] == 0
        before = steps(client)
        again = client.post("/v1/grammar/correct", json={"text": EMAIL})
        assert steps(client) == before  # every sentence answered from the cache
        assert without_ids(again.json()) == without_ids(first.json())
        assert cache_series(client)[HIT] == pieces

        edited = client.post("/v1/grammar/correct", json={"text": EDITED}).json()
        assert steps(client) > before  # the edited sentence went to the model
        assert without_ids(edited)["sentences"][:-1] == without_ids(first.json())["sentences"][:-1]  # as before
        assert edited["sentences"][-1]["sentence"] == "Can you tell me what time the party starts?"
        series = cache_series(client)
        assert (series[HIT], series[MISS]) == (2 * pieces - 1, pieces + 1)
        assert series["corrige:answer_cache_size"] == pieces + 1

        fresh_before = steps(client)
        fresh = client.post("/v1/grammar/correct", json={"text": EMAIL}, headers={"Cache-Control": "no-cache"})
        assert steps(client) > fresh_before  # read afresh
        assert without_ids(fresh.json()) == without_ids(first.json())
        assert cache_series(client)[HIT] == 2 * pieces - 1  # no lookup at all


@needs_model
def test_single_sentences_always_run_the_model_and_a_cached_sentence_says_so_in_its_trace(tmp_path):
    with make_client(trace_store=tmp_path / "traces.sqlite", portal_db=tmp_path / "portal.sqlite") as client:
        sentence = {"sentence": "Yesterday I goed to the market with my sister."}
        client.post("/v1/grammar/correct", json=sentence)
        before = steps(client)
        client.post("/v1/grammar/correct", json=sentence)
        assert steps(client) > before

        client.post("/v1/grammar/correct", json={"text": "She like the fresh fruit there."})
        response = client.post("/v1/grammar/correct", json={"text": "She like the fresh fruit there."})
        request_id = response.headers["x-request-id"]
        state = client.app.state
        assert state.tracing.flush()
        (trace,) = [t for t in state.trace_store.traces() if t.root is not None and t.root.request_id == request_id]
        model_spans = [s for s in trace.spans if s.name in (S.PREFILL, S.DECODE)]
        assert sorted(s.name for s in model_spans) == sorted([S.PREFILL, S.DECODE])
        assert all(s.attributes[S.MODEL_CACHED] is True for s in model_spans)
        assert [s.attributes[S.STEPS] for s in model_spans if s.name == S.DECODE] == [0]


@needs_model
def test_a_zero_size_turns_the_cache_off(tmp_path):
    settings = {"trace_store": tmp_path / "t.sqlite", "portal_db": tmp_path / "p.sqlite", "answer_cache_size": 0}
    with make_client(**settings) as client:
        client.post("/v1/grammar/correct", json={"text": EMAIL})
        before = steps(client)
        assert client.post("/v1/grammar/correct", json={"text": EMAIL}).status_code == 200
        assert steps(client) > before
        assert cache_series(client) == {}
