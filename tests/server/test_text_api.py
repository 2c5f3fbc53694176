"""`POST /v1/grammar/correct` with `text`: a whole text through the HTTP API with the bundled tutor,
per sentence and per edit with offsets into the text as sent, streamed per sentence, and bad texts
refused with stable codes (never a 500)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from server_support import bundled_model_available, error_of
from test_grammar_api import parse_sse

from corrige.server.app import create_app
from corrige.server.settings import Settings

pytestmark = pytest.mark.skipif(not bundled_model_available(), reason="no model in corrige/models/reader")

EMAIL = (
    "Dear Mrs. Brown,\n\nYesterday I goed to the beach with my family.  My father work in a factory.\n"
    'He said: "I love the nature." I have 25 years.\n\nBest regards,\nAna'
)


@pytest.fixture(scope="module")
def client():
    settings = Settings(rate_limit=0, access_log=False, blas_threads=0)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def check_offsets(text: str, body: dict) -> None:
    assert body["text"] == text
    assert body["edits"] == [e for s in body["sentences"] for e in s["edits"]]
    out = text
    for edit in sorted(body["edits"], key=lambda e: e["offset"], reverse=True):
        assert text[edit["offset"] : edit["offset"] + edit["length"]] == edit["original"]
        out = out[: edit["offset"]] + edit["replacement"] + out[edit["offset"] + edit["length"] :]
    assert out == body["corrected"]
    for s in body["sentences"]:
        assert text[s["offset"] : s["offset"] + s["length"]] == s["sentence"]


def test_a_text_is_corrected_per_sentence_with_offsets_glosses_and_rules(client):
    response = client.post("/v1/grammar/correct", json={"text": EMAIL})
    assert response.status_code == 200, response.text
    body = response.json()
    check_offsets(EMAIL, body)
    assert [s["sentence"] for s in body["sentences"]] == [
        "Dear Mrs. Brown,",
        "Yesterday I goed to the beach with my family.",
        "My father work in a factory.",
        'He said: "I love the nature."',
        "I have 25 years.",
        "Best regards,",
        "Ana",
    ]
    originals = {e["original"]: e for e in body["edits"]}
    assert originals["goed"]["replacement"] == "went" and originals["goed"]["gloss"] == "pasado irregular: goed → went"
    assert originals["goed"]["category"] == "past_irregular"
    assert "\n\n" in body["corrected"] and "family.  My" in body["corrected"]
    corrected = [s for s in body["sentences"] if s["status"] == "corrected"]
    assert corrected and all(s["rules"] for s in corrected)
    assert body["usage"]["prompt_tokens"] > 0 and body["timings_ms"]["total"] >= body["timings_ms"]["split"]


def test_the_sentence_path_keeps_working_and_one_input_is_required(client):
    one = client.post("/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"})
    assert one.status_code == 200 and one.json()["corrected"] == "Yesterday I went to the store"
    for body in ({}, {"sentence": "I goed home.", "text": "I goed home."}):
        response = client.post("/v1/grammar/correct", json=body)
        assert response.status_code == 422 and error_of(response)["code"] == "validation_error"


def test_streaming_sends_each_sentence_then_the_result(client):
    with client.stream("POST", "/v1/grammar/correct", json={"text": EMAIL, "stream": True}) as response:
        assert response.status_code == 200
        events = parse_sse(response.read().decode())
    names = [name for name, _ in events]
    assert names == ["sentence"] * 7 + ["result"]
    result = json.loads(events[-1][1])
    check_offsets(EMAIL, result)
    streamed = sorted((json.loads(data) for name, data in events[:-1]), key=lambda s: s["index"])
    assert streamed == result["sentences"]


@pytest.mark.parametrize(
    ("text", "status", "code", "says"),
    [
        ("", 422, "empty_text", "empty"),
        (" \n\n ", 422, "empty_text", "empty"),
        ("a" * 5001, 413, "text_too_long", "5000"),
        ("!!! ... 42 :-)", 422, "no_words", "no words"),
        ("Hola, me llamo Ana y vivo en Madrid con mi familia.", 422, "not_english", "Spanish (es)"),
        ("Привет, как дела? Я живу в Москве.", 422, "not_english", "Cyrillic"),
        ("I like\x00 cats.", 400, "invalid_characters", "U+0000"),
    ],
)
def test_bad_texts_get_a_clear_answer(client, text, status, code, says):
    response = client.post("/v1/grammar/correct", json={"text": text})
    assert response.status_code == status, response.text
    error = error_of(response)
    assert error["code"] == code and says in error["message"]


def test_a_long_sentence_and_mixed_scripts_never_refuse_the_text(client):
    text = "I " + " ".join(["really"] * 150) + " like it. My name is Иван. She go to the gym every day."
    response = client.post("/v1/grammar/correct", json={"text": text})
    assert response.status_code == 200
    statuses = [(s["status"], s["reason"]) for s in response.json()["sentences"]]
    assert statuses[:2] == [("too_long", "too_long"), ("skipped", "mixed_scripts")]
    check_offsets(text, response.json())
