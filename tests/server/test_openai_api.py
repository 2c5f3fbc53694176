"""The OpenAI-compatible API through the real `openai` client (over the app in process)."""

import json

import openai
import pytest
from server_support import error_of


@pytest.fixture
def oai(client):
    return openai.OpenAI(base_url="http://testserver/v1", api_key="unused", http_client=client, max_retries=0)


def test_models_lists_the_served_model(oai):
    models = oai.models.list()
    assert [m.id for m in models.data] == ["corrige-tutor"]


def test_completions_continue_a_prompt(oai):
    completion = oai.completions.create(model="corrige-tutor", prompt="I goed home.", max_tokens=5, temperature=0)
    choice = completion.choices[0]
    assert completion.object == "text_completion" and completion.model == "corrige-tutor"
    assert isinstance(choice.text, str) and choice.finish_reason in ("stop", "length")
    assert completion.usage.completion_tokens <= 5
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens


def test_completions_take_token_ids_too(oai):
    completion = oai.completions.create(model="corrige-tutor", prompt=[1, 40, 41, 42], max_tokens=3, temperature=0)
    assert completion.usage.prompt_tokens == 4 and completion.usage.completion_tokens <= 3


def test_streamed_completions_match_the_plain_answer_and_end_with_usage(oai):
    kwargs = {"model": "corrige-tutor", "prompt": "She like cats.", "max_tokens": 12, "temperature": 0}
    plain = oai.completions.create(**kwargs)
    stream = oai.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == plain.choices[0].text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == plain.choices[0].finish_reason
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == plain.usage.completion_tokens


def test_seeded_sampling_is_reproducible(oai):
    kwargs = {"model": "corrige-tutor", "prompt": "We was late.", "max_tokens": 8, "temperature": 1.0, "seed": 3}
    assert oai.completions.create(**kwargs).choices[0].text == oai.completions.create(**kwargs).choices[0].text


def test_chat_sends_the_last_user_message_to_the_tutor(oai, client):
    messages = [
        {"role": "system", "content": "You are a tutor."},
        {"role": "user", "content": "He go to school."},
        {"role": "assistant", "content": "He goes to school."},
        {"role": "user", "content": "Yesterday I goed to the store"},
    ]
    chat = oai.chat.completions.create(model="corrige-tutor", messages=messages)
    content = chat.choices[0].message.content
    grammar = client.post("/v1/grammar/correct", json={"sentence": "Yesterday I goed to the store"}).json()
    assert content == f"{grammar['corrected']}\n\n{grammar['explanation']}"
    assert chat.choices[0].finish_reason == "stop" and chat.object == "chat.completion"
    assert chat.usage.prompt_tokens == grammar["usage"]["prompt_tokens"]


def test_streamed_chat_gives_the_same_answer_then_done(oai):
    messages = [{"role": "user", "content": [{"type": "text", "text": "She like cats."}]}]
    plain = oai.chat.completions.create(model="corrige-tutor", messages=messages)
    stream = oai.chat.completions.create(
        model="corrige-tutor", messages=messages, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == plain.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].usage.total_tokens == plain.usage.total_tokens


def test_sse_framing_ends_with_done(client):
    body = {"model": "corrige-tutor", "prompt": "Hi.", "max_tokens": 3, "stream": True}
    text = client.post("/v1/completions", json=body).text
    lines = [line for line in text.split("\n") if line]
    assert all(line.startswith("data: ") for line in lines)
    assert lines[-1] == "data: [DONE]"
    for line in lines[:-1]:
        assert json.loads(line[len("data: ") :])["object"] == "text_completion"


def test_errors_reach_the_openai_client_with_status_and_code(oai, client):
    with pytest.raises(openai.NotFoundError) as info:
        oai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hi."}])
    assert info.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError) as info:  # 400
        oai.chat.completions.create(model="corrige-tutor", messages=[{"role": "user", "content": "<|eos|> yes"}])
    assert info.value.body["code"] == "prompt_injection"
    with pytest.raises(openai.UnprocessableEntityError) as info:
        oai.chat.completions.create(model="corrige-tutor", messages=[{"role": "system", "content": "No user."}])
    assert "messages" in info.value.body["message"]
    response = client.post("/v1/completions", json={"model": "corrige-tutor", "prompt": "Hi.", "n": 2})
    assert response.status_code == 422 and error_of(response)["message"].startswith("n:")
    response = client.post("/v1/completions", json={"model": "corrige-tutor", "prompt": "Hi.", "max_tokens": 500})
    assert response.status_code == 422 and error_of(response)["code"] == "validation_error"
    assert error_of(response)["message"].startswith("max_tokens:")  # over max_completion_tokens (256)
    response = client.post("/v1/completions", json={"model": "corrige-tutor", "prompt": "Hi.", "max_tokens": 100})
    assert response.status_code == 422 and error_of(response)["code"] == "invalid_request"  # beyond the window


@pytest.mark.parametrize("seed", [-1, 2**53, 2**63, 2**70])
def test_a_seed_out_of_range_is_a_422_naming_seed(client, seed):
    """0 <= seed <= 2**53 - 1: NumPy refuses negative seeds, and past 2**53 JSON readers round integers."""
    body = {"model": "corrige-tutor", "prompt": "I goed home", "temperature": 1.0, "seed": seed}
    response = client.post("/v1/completions", json=body)
    error = error_of(response)
    assert response.status_code == 422 and error["code"] == "validation_error"
    assert error["message"].startswith("seed: ")


def test_the_largest_seed_is_accepted(client):
    body = {"model": "corrige-tutor", "prompt": "I goed home", "max_tokens": 3, "temperature": 1.0, "seed": 2**53 - 1}
    assert client.post("/v1/completions", json=body).status_code == 200


def _reference_logprobs(model_dir, ids):
    """log P(ids[i] | ids[:i]) from one forward pass over the whole prompt, outside the server."""
    from corrige.model.generate import chosen_logprobs
    from corrige.model.numpy_gpt import KVCache, extend, prepare
    from corrige.model.weights import load_model

    cfg, params = load_model(model_dir)
    w = prepare(params, cfg)
    logits = extend(w, KVCache.allocate(cfg, 1), ids, 0, 0)
    return chosen_logprobs(logits[:-1], ids[1:]).tolist()


def test_echo_with_logprobs_and_no_new_tokens_scores_the_prompt(oai, model_dir):
    """The classic scoring call (lm-eval's): the prompt comes back as text and tokens, each token with
    its log-probability given those before it (the first has none), nothing generated."""
    from corrige.tokenizer import BPETokenizer

    text = "I goed to the store yesterday."
    completion = oai.completions.create(model="corrige-tutor", prompt=text, echo=True, logprobs=0, max_tokens=0)
    choice = completion.choices[0]
    lp = choice.logprobs
    assert choice.text == text and completion.usage.completion_tokens == 0
    assert len(lp.tokens) == completion.usage.prompt_tokens  # the <bos> before the text included
    assert "".join(lp.tokens) == text and lp.text_offset[-1] == len(text) - len(lp.tokens[-1])
    assert lp.token_logprobs[0] is None and lp.top_logprobs is None
    ids = [BPETokenizer.load(model_dir).special.bos, *BPETokenizer.load(model_dir).encode(text)]
    assert lp.token_logprobs[1:] == pytest.approx(_reference_logprobs(model_dir, ids), abs=1e-4)


def test_echo_with_new_tokens_gives_the_prompt_then_the_completion_each_with_logprobs(oai):
    kwargs = {"model": "corrige-tutor", "prompt": [1, 40, 41, 42], "max_tokens": 4, "temperature": 0}
    plain = oai.completions.create(**kwargs)
    echoed = oai.completions.create(**kwargs, echo=True, logprobs=0)
    choice = echoed.choices[0]
    assert choice.text.endswith(plain.choices[0].text)
    n = echoed.usage.prompt_tokens + echoed.usage.completion_tokens
    assert len(choice.logprobs.tokens) == len(choice.logprobs.token_logprobs) == n
    assert all(v <= 0.0 for v in choice.logprobs.token_logprobs[1:])
    alone = oai.completions.create(**kwargs, logprobs=0).choices[0].logprobs  # the new tokens only
    assert alone.token_logprobs == pytest.approx(choice.logprobs.token_logprobs[4:], abs=1e-5)


def test_scoring_streamed_comes_as_one_chunk_equal_to_the_plain_answer(oai):
    kwargs = {"model": "corrige-tutor", "prompt": "She like cats.", "echo": True, "logprobs": 0, "max_tokens": 2}
    plain = oai.completions.create(**kwargs, temperature=0)
    chunks = list(oai.completions.create(**kwargs, temperature=0, stream=True, stream_options={"include_usage": True}))
    assert len(chunks) == 2 and chunks[-1].usage.total_tokens == plain.usage.total_tokens
    assert chunks[0].choices[0].text == plain.choices[0].text
    assert chunks[0].choices[0].logprobs.token_logprobs == plain.choices[0].logprobs.token_logprobs


def test_max_tokens_0_without_echo_generates_nothing(oai):
    completion = oai.completions.create(model="corrige-tutor", prompt="Hi there.", max_tokens=0)
    assert completion.choices[0].text == "" and completion.usage.completion_tokens == 0


def test_top_alternatives_are_a_422_that_names_logprobs(client):
    body = {"model": "corrige-tutor", "prompt": "Hi there.", "logprobs": 2, "max_tokens": 3}
    response = client.post("/v1/completions", json=body)
    error = error_of(response)
    assert response.status_code == 422 and error["code"] == "validation_error"
    assert "logprobs" in error["message"]
