"""Real corrections through the HTTP API, with the bundled tutor model (skipped without it)."""

import json

import pytest
from fastapi.testclient import TestClient
from server_support import bundled_model_available

from corrige.server.app import create_app
from corrige.server.settings import Settings

pytestmark = pytest.mark.skipif(not bundled_model_available(), reason="no model in corrige/models/reader")


@pytest.fixture(scope="module")
def bundled_client():
    settings = Settings(rate_limit=0, access_log=False, blas_threads=0)  # model_dir None: the bundled tutor
    with TestClient(create_app(settings)) as client:
        yield client


def test_an_irregular_past_is_corrected_and_explained_in_spanish(bundled_client):
    body = bundled_client.post("/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"}).json()
    assert body["changed"] is True and not body["abstained"]
    assert "went" in body["corrected"] and "goed" not in body["corrected"]
    assert any(e["original"] == "goed" and e["replacement"] == "went" for e in body["edits"])
    assert "goed" in body["explanation"] and "went" in body["explanation"]


def test_a_correct_sentence_is_left_alone(bundled_client):
    body = bundled_client.post("/v1/grammar/correct", json={"sentence": "She likes cats."}).json()
    assert body["changed"] is False and body["edits"] == []


def test_streamed_tokens_spell_the_corrected_sentence_and_the_gloss_comes_apart(bundled_client):
    with bundled_client.stream(
        "POST", "/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store.", "stream": True}
    ) as response:
        text = response.read().decode()
    blocks = text.strip().split("\n\n")
    names = [b.split("\n", 1)[0].removeprefix("event: ") for b in blocks]
    data = [json.loads(b.split("data: ", 1)[1]) for b in blocks]
    result = data[-1]
    assert not result["abstained"] and names[-2:] == ["gloss", "result"] and set(names[:-2]) == {"token"}
    assert "".join(d["text"] for d in data[:-2]) == result["corrected"] == "Yesterday I went to the store."
    assert data[-2] == {"text": result["explanation"]}


def test_the_tutor_says_which_sentences_fit_its_window():
    from corrige.tutor.agent import Tutor

    tutor = Tutor.load()
    assert tutor.fits("Yesterday I goed to the store")
    story = "Our grandfather will open a bank account but he won't write a story"
    assert not tutor.fits(" ".join([story] * 16))  # 224 words
