"""The reader model over real HTTP: what its `tutor.json` adds to the model's answers (spelling fixes,
glosses written from the edits) reaches the learner, each edit explained, on every route."""

from __future__ import annotations

import json

import httpx

SENTENCE = "We have to take care of the enviroment."


def explained(body: dict) -> None:
    """Every edit has a category and the explanation names its words."""
    assert body["changed"] and not body["abstained"]
    for edit in body["edits"]:
        assert edit["category"] != "other"
        assert f"{edit['original']} → {edit['replacement']}" in body["explanation"]
        assert body["sentence"][edit["start"] : edit["end"]] == edit["original"]


def test_a_non_word_is_fixed_and_explained_as_spelling(reader_server):
    with httpx.Client(base_url=reader_server.url, timeout=30) as client:
        body = client.post("/v1/grammar/correct", json={"sentence": SENTENCE, "rules": False}).json()
        assert body["corrected"] == "We have to take care of the environment."
        assert [e["category"] for e in body["edits"]] == ["spelling"]
        explained(body)


def test_a_text_gets_the_same_fixes_at_offsets_into_it(reader_server):
    text = f"Dear Ana,\n\n{SENTENCE} My cousin Carlos lives in Valencia."
    with httpx.Client(base_url=reader_server.url, timeout=30) as client:
        body = client.post("/v1/grammar/correct", json={"text": text, "rules": False}).json()
    spelled = [e for e in body["edits"] if e["category"] == "spelling"]
    assert [(e["original"], e["replacement"]) for e in spelled] == [("enviroment", "environment")]
    assert all(text[e["offset"] : e["offset"] + e["length"]] == e["original"] for e in body["edits"])
    assert "Carlos" in body["corrected"] and "Valencia" in body["corrected"]  # names are not spelled


def test_the_stream_ends_with_the_checked_answer(reader_server):
    body = {"sentence": SENTENCE, "stream": True, "rules": False}
    with httpx.Client(base_url=reader_server.url, timeout=30) as client:
        with client.stream("POST", "/v1/grammar/correct", json=body) as response:
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    result = json.loads(lines[-1][len("data: ") :])
    assert result["corrected"] == "We have to take care of the environment."
    explained(result)
