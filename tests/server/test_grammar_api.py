"""The grammar API's shape: single, streamed and batch corrections, request ids, timings."""

import json

import pytest
from server_support import error_of

from corrige.server.service import STAGES

FIELDS = {"request_id", "sentence", "corrected", "changed", "explanation", "abstained", "edits", "rules"}
FIELDS |= {"usage", "timings_ms"}


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


def test_correct_returns_the_structured_result_with_usage_and_stage_timings(client):
    response = client.post("/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == FIELDS
    assert body["request_id"] == response.headers["x-request-id"]
    assert body["sentence"] == "Yesterday I goed to the store"
    assert body["changed"] == (body["corrected"] != body["sentence"])
    assert body["usage"]["prompt_tokens"] > 2 and body["usage"]["completion_tokens"] >= 1
    # every stage, in pipeline order ("rules" only when there were edits to explain)
    expected = [s for s in STAGES if s != "rules" or body["edits"]]
    assert list(body["timings_ms"]) == expected
    assert all(v >= 0 for v in body["timings_ms"].values())
    assert body["timings_ms"]["total"] >= body["timings_ms"]["engine"]
    for edit in body["edits"]:
        assert set(edit) == {"start", "end", "original", "replacement", "category"}
        assert body["sentence"][edit["start"] : edit["end"]] == edit["original"]


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
