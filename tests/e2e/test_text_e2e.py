"""A whole learner email through a real uvicorn server: `POST /v1/grammar/correct` with `text`,
answered at once and streamed. Offsets point into the text as sent (line breaks, the greeting
line, the list kept), applying the edits gives `corrected`, and the stream sends one `sentence`
event per sentence before the `result`, which is the plain answer's."""

from __future__ import annotations

import httpx
from server_support import bundled_model_available
from test_server_e2e import sse_events
from test_text_api import check_offsets

from corrige.bench.text import EMAIL  # the email `corrige bench text` times

URL = "/v1/grammar/correct"


def test_the_email_has_the_shape_of_one():
    lines = EMAIL.splitlines()
    assert lines[0] == "Dear Ana," and lines[1] == ""
    assert sum(line.startswith("- ") for line in lines) >= 2  # a list
    assert 140 <= len(EMAIL.split()) <= 160


def test_an_email_is_corrected_with_offsets_into_the_text_as_sent(server):
    response = httpx.post(f"{server.url}{URL}", json={"text": EMAIL}, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    check_offsets(EMAIL, body)  # text[offset:offset + length] == original; the edits applied give `corrected`
    sentences = body["sentences"]
    assert 8 <= len(sentences) <= 10
    assert [s["index"] for s in sentences] == list(range(len(sentences)))
    assert sentences[0]["sentence"] == "Dear Ana,"
    assert [s["sentence"] for s in sentences if s["sentence"].startswith("- ")] == [
        line for line in EMAIL.splitlines() if line.startswith("- ")
    ]
    assert body["corrected"].count("\n") == EMAIL.count("\n")
    for edit in body["edits"]:
        sentence = sentences[edit["sentence"]]
        assert (
            sentence["offset"]
            <= edit["offset"]
            <= edit["offset"] + edit["length"]
            <= sentence["offset"] + sentence["length"]
        )
    if bundled_model_available():
        assert body["changed"] and body["edits"]  # the bundled tutor corrects some of it
        assert all(s["rules"] for s in sentences if s["status"] == "corrected")


def test_a_streamed_email_sends_each_sentence_then_the_result(server):
    plain = httpx.post(f"{server.url}{URL}", json={"text": EMAIL}, timeout=60).json()
    with httpx.stream("POST", f"{server.url}{URL}", json={"text": EMAIL, "stream": True}, timeout=60) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response.iter_lines())
    names = [name for name, _ in events]
    assert names == ["sentence"] * len(plain["sentences"]) + ["result"]
    streamed = [data for _, data in events[:-1]]
    assert sorted(s["index"] for s in streamed) == list(range(len(plain["sentences"])))
    result = events[-1][1]
    check_offsets(EMAIL, result)
    assert sorted(streamed, key=lambda s: s["index"]) == result["sentences"]
    # greedy decoding: the stream's answer is the plain one (the second time from the answer cache); the
    # rule cards may rank differently, their search taking a cheaper mode while the engine is busy
    assert (result["corrected"], result["edits"], without_rules(result)) == (
        plain["corrected"],
        plain["edits"],
        without_rules(plain),
    )


def without_rules(body: dict) -> list[dict]:
    return [{k: v for k, v in s.items() if k != "rules"} for s in body["sentences"]]
