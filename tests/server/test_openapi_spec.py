"""The OpenAPI document says what the server does: each operation's error responses are the
table's codes for it (and no others), learner text carries the guards' constraints (the
documented `pattern` is `check_text`, character for character), limits come from the settings
and the loaded model, and the inputs the document allows are accepted. tests/e2e/test_fuzz_openapi.py
holds a real server to it with schemathesis."""

from __future__ import annotations

import re

import jsonschema_rs
import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from server_support import error_of

from corrige.obs.budget import budget_profiles, load_budget
from corrige.server.app import create_app
from corrige.server.errors import ApiError
from corrige.server.guards import _CONTROL, SPACE_RANGES, check_text, text_pattern
from corrige.server.openapi import UNSTATED
from corrige.server.schemas import MAX_JSON_INT

# characters the guards and the patterns treat specially, mixed with any others
SPECIAL = list("<|>/ a.\t\n\r\x00\x08\x0b\x1c\x1f\x7f\x85\x9f\xa0")
SPECIAL += list("\u1680\u2000\u2028\u202a\u202e\u2066\u3000\ufeff\uffff")
TEXT = st.lists(st.one_of(st.sampled_from(SPECIAL), st.characters(codec="utf-8")), max_size=10).map("".join)


@pytest.fixture
def make_client(make_settings, tmp_path):
    clients = []

    def make(**overrides) -> TestClient:
        client = TestClient(create_app(make_settings(portal_db=tmp_path / "portal.sqlite", **overrides)))
        clients.append(client.__enter__())
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def document(make_client) -> dict:
    return (
        make_client(max_sentence_chars=123, max_batch_sentences=7, max_completion_tokens=40).get("/openapi.json").json()
    )


def operation(document: dict, method: str, path: str) -> dict:
    return document["paths"][path][method.lower()]


def codes(document: dict, method: str, path: str, status: int) -> list[str]:
    schema = operation(document, method, path)["responses"][str(status)]["content"]["application/json"]["schema"]
    assert schema["allOf"][0] == {"$ref": "#/components/schemas/ErrorResponse"}
    return schema["allOf"][1]["properties"]["error"]["properties"]["code"]["enum"]


def statuses(document: dict, method: str, path: str) -> set[int]:
    return {int(s) for s in operation(document, method, path)["responses"]}


def accepted_by_guards(text: str, nonblank: bool) -> bool:
    if nonblank and not text.strip():
        return False
    try:
        check_text(text, "text")
    except ApiError:
        return False
    return True


# ---------------------------------------------------------------- the pattern is the guards


@given(TEXT, st.booleans())
def test_the_documented_pattern_accepts_exactly_what_the_guards_accept(text, nonblank):
    pattern = text_pattern(nonblank=nonblank)
    expected = accepted_by_guards(text, nonblank)
    assert (re.search(pattern, text) is not None) == expected  # Python's reading
    # and a JSON Schema validator's (Rust's regex engines, as schemathesis validates)
    assert jsonschema_rs.validator_for({"type": "string", "pattern": pattern}).is_valid(text) == expected


@pytest.mark.parametrize(
    ("text", "nonblank", "expected"),
    [
        ("", True, False),
        (" \t\u3000", True, False),
        ("I goed home", True, True),
        ("Do you prefer tea / coffee?", True, True),  # a learner's slash is text, never the format
        ("a\u2028/\u3000b", False, True),
        ("a <| b |> c", True, True),
        ("see <|sep|>", False, False),
        ("then <|gloss|> sin errores", False, False),
        ("tab\tand\nnewline", True, True),
        ("\x1cI went", True, False),
        ("x\u202ey", False, False),
    ],
)
def test_the_documented_pattern_on_known_cases(text, nonblank, expected):
    assert accepted_by_guards(text, nonblank) == expected
    assert (re.search(text_pattern(nonblank=nonblank), text) is not None) == expected


def test_the_whitespace_of_the_patterns_is_pythons_less_the_controls():
    listed = {c for a, b in SPACE_RANGES for c in range(a, b + 1)}
    spaces = set()
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        assert ch.isspace() == (re.fullmatch(r"\s", ch) is not None)  # strip() and the separator's \s agree
        if ch.isspace() and not _CONTROL.match(ch):
            spaces.add(c)
    assert listed == spaces


# ---------------------------------------------------------------- error responses from the table


def test_each_operation_documents_its_own_codes(document):
    assert codes(document, "POST", "/v1/completions", 404) == ["model_not_found"]
    unprocessable = set(codes(document, "POST", "/v1/completions", 422))
    assert {"validation_error", "empty_prompt", "invalid_request"} <= unprocessable
    assert codes(document, "POST", "/v1/grammar/correct", 400) == [
        "invalid_json",
        "invalid_encoding",
        "invalid_characters",
        "prompt_injection",
    ]
    assert codes(document, "POST", "/v1/grammar/correct:batch", 422) == [
        "validation_error",
        "empty_sentence",
        "prompt_too_long",
        "not_english",
        "batch_too_large",
    ]
    assert codes(document, "POST", "/portal/api/quiz/answer", 403) == ["csrf_failed"]
    assert codes(document, "POST", "/portal/api/quiz/answer", 404) == ["question_not_found"]
    assert {"empty_answer", "answer_too_long"} <= set(codes(document, "POST", "/portal/api/quiz/answer", 422))
    assert codes(document, "GET", "/portal/api/quiz/question", 404) == ["question_not_found"]
    assert codes(document, "GET", "/portal/api/exams/{exam_id}", 404) == ["exam_not_found"]
    assert codes(document, "POST", "/portal/api/exams/{exam_id}/answers", 409) == ["already_answered"]
    assert codes(document, "GET", "/healthz", 503) == ["engine_failed"]
    assert set(codes(document, "GET", "/readyz", 503)) == {"draining", "not_ready", "engine_restarting"}
    assert codes(document, "GET", "/metrics", 404) == ["metrics_disabled"]
    assert codes(document, "POST", "/v1/tools/rules", 502) == ["tool_failed"]
    assert codes(document, "GET", "/v1/obs/summary", 500) == ["internal_error", "bad_budget"]


def test_an_operation_documents_no_status_it_cannot_answer_with(document):
    assert statuses(document, "GET", "/v1/models") == {200, 500, 503}  # no body, no parameters, no model
    assert statuses(document, "GET", "/healthz") == {200, 500, 503}
    assert 403 not in statuses(document, "GET", "/portal/api/progress")  # reads: no CSRF token needed
    assert 422 not in statuses(document, "POST", "/portal/api/exams")  # no body to validate
    assert 404 not in statuses(document, "POST", "/v1/grammar/correct")
    assert 429 not in statuses(document, "POST", "/v1/grammar/correct")  # rate limits off, the work budget with them
    assert not any(401 in statuses(document, m.upper(), p) for p, ops in document["paths"].items() for m in ops)
    # FastAPI's own 422 model is never sent: gone from the document
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_rate_limits_and_the_operator_token_are_documented_where_they_apply(make_client):
    document = make_client(rate_limit=5, admin_token="secret").get("/openapi.json").json()
    # the POSTs that may reach the model: the client's work budget for it too (corrige.server.admission)
    for path in ("/v1/grammar/correct", "/v1/grammar/correct:batch", "/v1/completions", "/v1/chat/completions"):
        assert codes(document, "POST", path, 429) == ["rate_limited", "work_limited"], path
    assert codes(document, "POST", "/portal/api/correct", 429) == ["rate_limited", "work_limited"]
    assert codes(document, "POST", "/v1/tools/rules", 429) == ["rate_limited"]
    assert codes(document, "GET", "/portal/api/quiz/question", 429) == ["rate_limited"]
    assert codes(document, "GET", "/v1/engine/stats", 429) == ["rate_limited"]  # every route is
    assert codes(document, "GET", "/healthz", 429) == ["rate_limited"]  # the probes by a bucket of their own
    assert codes(document, "GET", "/v1/engine/stats", 401) == ["unauthorized"]
    assert codes(document, "GET", "/v1/obs/summary", 401) == ["unauthorized"]
    assert 401 not in statuses(document, "POST", "/v1/grammar/correct")
    assert 503 not in statuses(document, "GET", "/metrics")  # always open while draining


def test_the_codes_no_schema_can_state_are_listed_per_operation(document):
    assert operation(document, "POST", "/v1/grammar/correct")[UNSTATED] == [
        "prompt_too_long",
        "no_words",
        "not_english",
    ]
    assert operation(document, "POST", "/v1/completions")[UNSTATED] == ["not_english", "invalid_request"]
    assert operation(document, "POST", "/portal/api/exams/{exam_id}/answers")[UNSTATED] == ["question_not_in_exam"]
    assert UNSTATED not in operation(document, "POST", "/v1/tools/rules")
    # the tutor reads only the last user message: no schema says which one that is
    chat = operation(document, "POST", "/v1/chat/completions")
    assert {"invalid_characters", "empty_sentence", "text_too_long", "no_words", "not_english"} <= set(chat[UNSTATED])


# ---------------------------------------------------------------- request constraints


def test_learner_text_carries_the_constraints_the_guards_enforce(document):
    schemas = document["components"]["schemas"]
    sentence = schemas["CorrectRequest"]["properties"]["sentence"]
    assert (sentence["minLength"], sentence["maxLength"]) == (1, 123)
    assert sentence["pattern"] == text_pattern(nonblank=True)
    batch = schemas["BatchCorrectRequest"]["properties"]["sentences"]
    assert batch["maxItems"] == 7 and batch["items"]["pattern"] == sentence["pattern"]
    assert schemas["SentenceBody"]["properties"]["sentence"]["pattern"] == sentence["pattern"]
    answer = schemas["AnswerBody"]["properties"]["answer"]
    assert answer["maxLength"] == 123 and answer["pattern"] == text_pattern(nonblank=True)
    query = schemas["RulesToolRequest"]["properties"]["query"]
    assert (query["minLength"], query["maxLength"], query["pattern"]) == (1, 500, text_pattern())


def test_limits_come_from_the_settings_and_the_loaded_model(make_client):
    client = make_client(max_completion_tokens=40, model_name="tutor-x")
    document = client.get("/openapi.json").json()
    tutor = client.app.state.tutor
    completion = document["components"]["schemas"]["CompletionRequest"]["properties"]
    text, ids = completion["prompt"]["anyOf"]
    assert text["minLength"] == 1 and text["pattern"] == text_pattern()
    assert ids["minItems"] == 1 and ids["maxItems"] == tutor.n_ctx - 1
    assert ids["items"]["minimum"] == 0 and ids["items"]["maximum"] == tutor.cfg.vocab_size - 1
    assert completion["max_tokens"]["maximum"] == min(40, tutor.n_ctx - 1)
    assert completion["model"]["enum"] == ["tutor-x"]
    assert completion["seed"]["anyOf"][0]["maximum"] == MAX_JSON_INT
    profile = next(p for p in operation(document, "GET", "/v1/obs/summary")["parameters"] if p["name"] == "profile")
    assert profile["schema"]["enum"] == ["", *budget_profiles()]
    chat = document["components"]["schemas"]["ChatCompletionRequest"]["properties"]["messages"]
    assert chat["contains"]["properties"]["role"] == {"const": "user"}


def test_a_stream_is_documented_as_server_sent_events(document):
    for path in ("/v1/grammar/correct", "/v1/completions", "/v1/chat/completions"):
        content = operation(document, "POST", path)["responses"]["200"]["content"]
        assert set(content) == {"application/json", "text/event-stream"}
        assert content["text/event-stream"]["schema"]["required"][0] == "data"


# ---------------------------------------------------------------- what the document allows is accepted


def test_an_empty_profile_is_the_files_default(make_client):
    response = make_client().get("/v1/obs/summary", params={"profile": "", "last": 1})
    assert response.status_code == 200
    assert response.json()["budget"]["profile"] == load_budget().profile
    response = make_client().get("/v1/obs/summary", params={"profile": "nope"})
    assert response.status_code == 422 and error_of(response)["code"] == "unknown_profile"


@pytest.mark.parametrize(("value", "status"), [(3, 200), (3.0, 200), (3.5, 422), ("3", 422), (True, 422)])
def test_an_integer_may_be_written_as_json_schema_counts_integers(make_client, value, status):
    body = {"model": "corrige-tutor", "prompt": "I goed home", "max_tokens": value}
    response = make_client().post("/v1/completions", json=body)
    assert response.status_code == status
    if status == 422:
        assert error_of(response)["message"].startswith("max_tokens")


@pytest.fixture
def learner(make_client):
    client = make_client(max_sentence_chars=50)
    client.headers["X-CSRF-Token"] = client.get("/portal/api/session").json()["csrf_token"]
    return client


@pytest.mark.parametrize(
    ("answer", "status", "code"),
    [
        ("   " + "a" * 50, 422, "answer_too_long"),  # the length as sent, as documented (was: after strip)
        ("\x1cI went home.", 400, "invalid_characters"),  # a control character strip() would have removed
        (" \t ", 422, "empty_answer"),
    ],
)
def test_an_answer_is_checked_as_sent(learner, answer, status, code):
    response = learner.post("/portal/api/quiz/answer", json={"question_id": "q1", "answer": answer})
    assert response.status_code == status and error_of(response)["code"] == code


@pytest.mark.parametrize("sentence", ["", " ", "a / b", "<|x", "I went\x00", "\u3000x\u3000", "a/b", "He go."])
def test_a_sentence_the_document_allows_is_never_refused_for_its_text(make_client, sentence):
    pattern = text_pattern(nonblank=True)
    response = make_client().post("/v1/grammar/correct", json={"sentence": sentence, "rules": False})
    if re.search(pattern, sentence):
        assert response.status_code == 200 or error_of(response)["code"] == "prompt_too_long"
    else:
        assert response.status_code in (400, 422)


def test_links_lead_from_a_question_or_an_exam_to_answering_it(document):
    ids = {op["operationId"] for ops in document["paths"].values() for op in ops.values()}
    start = operation(document, "POST", "/portal/api/exams")["responses"]["200"]["links"]
    answer = start["AnswerNextQuestion"]
    assert answer["operationId"] == "portal_exam_answer"
    assert answer["parameters"] == {"exam_id": "$response.body#/exam_id"}
    assert answer["requestBody"] == {"question_id": "$response.body#/next_question/question_id"}
    quiz = operation(document, "GET", "/portal/api/quiz/question")["responses"]["200"]["links"]["AnswerQuestion"]
    linked = {link["operationId"] for link in [*start.values(), quiz]}
    assert linked <= ids and len(linked) == 3


@pytest.mark.parametrize(
    "body",
    [
        {"sentence": "He go home."},
        {"text": "Dear Ana,\nHe go home. She like tea."},
        {},  # neither
        {"sentence": "He go home.", "text": "He go home."},  # both
        {"sentence": None},  # null is a value, not an absent field
        {"text": None},
        {"sentence": None, "text": "He go home."},
        {"text": "He go home.", "sentence": True},
        {"text": "a" * 5001},  # over maxLength: 413 text_too_long
    ],
)
def test_sentence_or_text_the_document_and_the_server_agree(make_client, body):
    client = make_client()
    request_schema = client.get("/openapi.json").json()["components"]["schemas"]["CorrectRequest"]
    response = client.post("/v1/grammar/correct", json={**body, "rules": False})
    valid = jsonschema_rs.validator_for(request_schema).is_valid({**body, "rules": False})
    assert (response.status_code == 200) == valid, response.text
    if not valid:
        assert response.status_code in (413, 422)
