"""The grammar API's shape: single, streamed and batch corrections, request ids, timings."""

import json

import pytest
from fastapi.testclient import TestClient
from server_support import error_of

from corrige.server.app import create_app
from corrige.server.service import STAGES

FIELDS = {"request_id", "sentence", "corrected", "changed", "explanation", "abstained", "edits", "rules"}
FIELDS |= {"usage", "timings_ms", "more_errors"}


def parse_sse(text: str) -> list[tuple[str | None, str]]:
    events = []
    for block in text.strip().split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data.append(line[len("data: ") :])
        events.append((name, "\n".join(data)))
    return events


@pytest.fixture
def tutor_client(make_settings):
    """The bundled tutor model, which corrects the sentences here (the fixture model abstains)."""
    with TestClient(create_app(make_settings(model_dir=None))) as test_client:
        yield test_client


def test_correct_returns_the_structured_result_with_usage_and_stage_timings(tutor_client):
    response = tutor_client.post("/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == FIELDS
    assert body["request_id"] == response.headers["x-request-id"]
    assert body["sentence"] == "Yesterday I goed to the store"
    assert body["changed"] is True and body["corrected"] == "Yesterday I went to the store"
    assert body["usage"]["prompt_tokens"] > 2 and body["usage"]["completion_tokens"] >= 1
    # every stage, in pipeline order, "rules" included: there was an edit to explain
    assert list(body["timings_ms"]) == list(STAGES)
    t = body["timings_ms"]
    rounding = 0.001 * len(STAGES)  # each stage is rounded to a microsecond
    # the engine's own phases lie within the call to it, and the sequential stages within the request
    assert t["queue"] + t["prefill"] + t["decode"] <= t["engine"] + rounding
    sequential = ("ingress", "guards", "tokenize", "engine", "format", "rules")
    assert sum(t[s] for s in sequential) <= t["total"] + rounding
    assert t["prefill"] > 0  # the prompt went through the model
    assert body["edits"] == [
        {"start": 12, "end": 16, "original": "goed", "replacement": "went", "category": "past_irregular"}
    ]
    assert body["sentence"][12:16] == "goed"
    assert body["rules"] and body["rules"][0]["category"] == "past_irregular"


def test_the_course_path_is_the_same_endpoint(client):
    a = client.post("/correct", json={"sentence": "She like cats."}).json()
    b = client.post("/v1/grammar/correct", json={"sentence": "She like cats."}).json()
    for key in ("sentence", "corrected", "changed", "explanation", "edits", "usage"):
        assert a[key] == b[key]


def test_a_random_model_makes_the_tutor_abstain_not_fail(client):
    body = client.post("/v1/grammar/correct", json={"sentence": "I has a cat"}).json()
    assert body["abstained"] is True and body["changed"] is False and body["corrected"] == "I has a cat"


def test_streaming_sends_token_events_then_one_result_event(client):
    with client.stream("POST", "/v1/grammar/correct", json={"sentence": "I goed home", "stream": True}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-request-id"]
        text = response.read().decode()
    events = parse_sse(text)
    names = [name for name, _ in events]
    # the random model's garbage makes the tutor abstain: a `replace` takes back what the tokens spelled
    assert names[-3:] == ["replace", "gloss", "result"] and set(names[:-3]) <= {"token"}
    result = json.loads(events[-1][1])
    assert set(result) == FIELDS and result["request_id"] == response.headers["x-request-id"]
    assert json.loads(events[-3][1]) == {"text": result["corrected"], "reason": "unparsable"}
    assert json.loads(events[-2][1]) == {"text": result["explanation"]}
    tokens = [json.loads(data) for name, data in events if name == "token"]
    assert [t["index"] for t in tokens] == sorted(t["index"] for t in tokens)
    # the same sentence without streaming gives the same correction
    plain = client.post("/v1/grammar/correct", json={"sentence": "I goed home"}).json()
    assert (plain["corrected"], plain["explanation"]) == (result["corrected"], result["explanation"])


def test_streaming_refusals_are_plain_json_errors_before_any_event(client):
    response = client.post("/v1/grammar/correct", json={"sentence": "", "stream": True})
    assert response.status_code == 422 and error_of(response)["code"] == "empty_sentence"


def test_batch_corrects_each_sentence_in_order(client):
    sentences = ["I goed home.", "She like cats.", "We was late."]
    response = client.post("/v1/grammar/correct:batch", json={"sentences": sentences})
    assert response.status_code == 200
    body = response.json()
    assert body["request_id"] == response.headers["x-request-id"]
    assert [r["sentence"] for r in body["results"]] == sentences
    assert body["usage"]["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in body["results"])
    assert {"ingress", "engine", "total"} <= set(body["timings_ms"])


def test_batch_limits_and_names_the_offending_sentence(make_settings):
    from fastapi.testclient import TestClient

    from corrige.server.app import create_app

    with TestClient(create_app(make_settings(max_batch_sentences=2))) as client:
        response = client.post("/v1/grammar/correct:batch", json={"sentences": ["a.", "b.", "c."]})
        assert response.status_code == 422 and error_of(response)["code"] == "batch_too_large"
        response = client.post("/v1/grammar/correct:batch", json={"sentences": ["fine.", "bad\x00"]})
        assert response.status_code == 400
        assert error_of(response)["message"].startswith("sentences[1]:")
        response = client.post("/v1/grammar/correct:batch", json={"sentences": []})
        assert response.status_code == 422 and "sentences" in error_of(response)["message"]


def test_request_id_from_the_client_is_kept_when_valid_and_replaced_otherwise(client):
    kept = client.post("/v1/grammar/correct", json={"sentence": "Hi."}, headers={"X-Request-ID": "abc-123.x:y"})
    assert kept.headers["x-request-id"] == "abc-123.x:y" and kept.json()["request_id"] == "abc-123.x:y"
    for bad in ("has spaces", "x" * 200, "-starts-with-dash", "semi;colon"):
        replaced = client.post("/v1/grammar/correct", json={"sentence": "Hi."}, headers={"X-Request-ID": bad})
        assert replaced.headers["x-request-id"] != bad and len(replaced.headers["x-request-id"]) == 32
    generated = {client.get("/healthz").headers["x-request-id"] for _ in range(3)}
    assert len(generated) == 3


def test_a_client_reusing_its_request_id_concurrently_is_served(client):
    headers = {"X-Request-ID": "same-id"}
    body = client.post("/v1/grammar/correct:batch", json={"sentences": ["One.", "Two."]}, headers=headers)
    assert body.status_code == 200 and body.json()["request_id"] == "same-id"


def test_errors_carry_the_request_id_too(client):
    response = client.get("/no/such/route", headers={"X-Request-ID": "trace-me"})
    assert response.status_code == 404
    expected = {"code": "not_found", "message": "no route GET /no/such/route", "request_id": "trace-me"}
    assert error_of(response) == expected
    response = client.get("/v1/grammar/correct")
    assert response.status_code == 405 and error_of(response)["code"] == "method_not_allowed"


@pytest.mark.parametrize("batching", ["none", "threads", "static", "continuous"])
def test_every_batching_policy_serves_the_same_correction(make_settings, batching):
    from fastapi.testclient import TestClient

    from corrige.server.app import create_app

    with TestClient(create_app(make_settings(batching=batching, n_threads=2, max_wait_ms=1))) as client:
        single = client.post("/v1/grammar/correct", json={"sentence": "I goed home"}).json()
        batch = client.post("/v1/grammar/correct:batch", json={"sentences": ["I goed home", "She like cats."]}).json()
        assert client.get("/readyz").json()["batching"] == batching
    assert batch["results"][0]["corrected"] == single["corrected"]
    assert batch["results"][0]["usage"] == single["usage"]
