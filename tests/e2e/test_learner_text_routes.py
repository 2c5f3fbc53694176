"""Every route that takes learner text, against a real server: Spanish is never "corrected" as
English (one `not_english` answer everywhere), and a chat message of several sentences is a
text, corrected as the `text` path corrects it (the `openai` client, streamed or not)."""

from __future__ import annotations

import httpx
import openai
import pytest

SPANISH = ["Yo tengo un perro.", "Quiero aprender inglés porque es importante."]
EMAIL = (
    "Hi Ana,\n"
    "I am writing to tell you about my holidays. Yesterday I goed to the beach with my friends. "
    "My sister have a new dog and she like it very much. We was very happy all the day. "
    "In the evening we eat fish in a small restaurant. The waiter were very kind with us. "
    "Then we walked to the hotel. I am very tired now. I will write you again next week.\n"
    "Best wishes,\n"
    "Lucía"
)


def code_of(response: httpx.Response) -> str:
    return response.json()["error"]["code"]


@pytest.mark.parametrize("spanish", SPANISH)
def test_spanish_is_not_english_on_every_grammar_route(server, spanish):
    url = server.url
    sentence = httpx.post(f"{url}/v1/grammar/correct", json={"sentence": spanish})
    assert sentence.status_code == 422 and code_of(sentence) == "not_english", sentence.text
    assert "Spanish (es)" in sentence.json()["error"]["message"]
    streamed = httpx.post(f"{url}/v1/grammar/correct", json={"sentence": spanish, "stream": True})
    assert streamed.status_code == 422 and code_of(streamed) == "not_english"
    batch = httpx.post(f"{url}/v1/grammar/correct:batch", json={"sentences": ["She like cats.", spanish]})
    assert batch.status_code == 422 and code_of(batch) == "not_english"
    assert batch.json()["error"]["message"].startswith("sentences[1]:")
    text = httpx.post(f"{url}/v1/grammar/correct", json={"text": spanish})
    assert text.status_code == 422 and code_of(text) == "not_english"
    # in a text with English, the Spanish sentence is skipped and said to be Spanish
    mixed = httpx.post(
        f"{url}/v1/grammar/correct", json={"text": f"She like cats and she have a dog. {spanish}"}
    ).json()
    skipped = [s for s in mixed["sentences"] if s["status"] == "skipped"]
    assert [(s["sentence"], s["reason"], s["language"]) for s in skipped] == [(spanish, "not_english", "es")]
    check = httpx.post(f"{url}/v2/check", data={"language": "en-US", "text": spanish})
    assert check.status_code == 200 and check.json()["matches"] == []


@pytest.mark.parametrize("spanish", SPANISH)
def test_spanish_is_not_english_through_the_openai_client(server, spanish):
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.UnprocessableEntityError) as chat:
        client.chat.completions.create(model="corrige-tutor", messages=[{"role": "user", "content": spanish}])
    assert chat.value.body["code"] == "not_english"
    assert chat.value.body["message"].startswith("messages[0].content:")
    with pytest.raises(openai.UnprocessableEntityError) as raw:
        client.completions.create(model="corrige-tutor", prompt=spanish, max_tokens=4)
    assert raw.value.body["code"] == "not_english"


def test_a_chat_message_of_many_sentences_is_corrected_as_a_text(server):
    text = httpx.post(f"{server.url}/v1/grammar/correct", json={"text": EMAIL}, timeout=60).json()
    assert len(text["sentences"]) >= 10 and len(text["edits"]) >= 3  # the text path finds several errors
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    messages = [{"role": "system", "content": "Corrige."}, {"role": "user", "content": EMAIL}]
    chat = client.chat.completions.create(model="corrige-tutor", messages=messages)
    answer = chat.choices[0].message.content
    corrected, _, notes = answer.partition("\n\n")
    assert corrected == text["corrected"]
    assert notes.splitlines() == [s["explanation"] for s in text["sentences"] if s["edits"]]
    assert chat.usage.prompt_tokens == text["usage"]["prompt_tokens"]
    stream = client.chat.completions.create(model="corrige-tutor", messages=messages, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == answer


def test_one_sentence_in_chat_reads_as_before(server):
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    chat = client.chat.completions.create(
        model="corrige-tutor", messages=[{"role": "user", "content": "Yesterday I goed to the store"}]
    )
    sentence = httpx.post(f"{server.url}/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"})
    body = sentence.json()
    assert chat.choices[0].message.content == f"{body['corrected']}\n\n{body['explanation']}"
    with pytest.raises(openai.UnprocessableEntityError) as empty:
        client.chat.completions.create(model="corrige-tutor", messages=[{"role": "user", "content": "  "}])
    assert empty.value.body["code"] == "empty_sentence"
