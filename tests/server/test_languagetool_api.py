"""LanguageTool's API (`POST /v2/check`, `GET /v2/languages`) in process with the bundled tutor:
LanguageTool's response shape, messages in English or Spanish (`motherTongue`), stable rule ids,
the rule filters, `data` annotations (offsets into the annotated text), UTF-16 offsets, and
LanguageTool's plain-text errors (unsupported languages, missing parameters, bad bodies, rate
limits), stated in the OpenAPI document. tests/e2e/test_languagetool_e2e.py runs the real client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from server_support import bundled_model_available

from corrige.server.app import create_app
from corrige.server.languagetool import CODE_HEADER, rule_id, rules_table
from corrige.server.settings import Settings
from corrige.tutor.categories import CATEGORY_IDS

pytestmark = pytest.mark.skipif(not bundled_model_available(), reason="no model in corrige/models/reader")

TEXT = "Yesterday I goed to the store. My father work in a factory."
SPANISH = "Hola, me llamo Ana y vivo en Madrid con mi familia desde hace muchos años."


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings(rate_limit=0, access_log=False, blas_threads=0))) as test_client:
        yield test_client


def check(client: TestClient, **form: str) -> dict:
    response = client.post("/v2/check", data={"language": "en-US", **form})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()


def lt_error(response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert response.headers[CODE_HEADER] == code
    assert response.text.startswith("Error: ")
    return response.text


def edits(body: dict) -> list[tuple[int, int, str, str]]:
    return [(m["offset"], m["length"], m["replacements"][0]["value"], m["rule"]["id"]) for m in body["matches"]]


def test_the_answer_has_languagetools_shape(client):
    body = check(client, text=TEXT)
    assert set(body) == {"software", "warnings", "language", "matches", "sentenceRanges", "ignoreRanges"}
    assert set(body["software"]) == {"name", "version", "buildDate", "apiVersion", "status", "premium"}
    assert body["software"]["name"] == "corrige" and body["software"]["apiVersion"] == 1
    assert body["language"] == {
        "name": "English (US)",
        "code": "en-US",
        "detectedLanguage": {"name": "English (US)", "code": "en-US"},
    }
    assert edits(body) == [(12, 4, "went", "CORRIGE_PAST_IRREGULAR"), (41, 4, "works", "CORRIGE_THIRD_PERSON")]
    first = body["matches"][0]
    assert set(first) == {
        "message", "shortMessage", "replacements", "offset", "length", "context", "sentence", "type", "rule"
    }  # fmt: skip
    assert first["message"] == "irregular past: goed → went" and first["shortMessage"] == "Irregular past"
    assert first["sentence"] == "Yesterday I goed to the store."
    assert first["rule"] == {
        "id": "CORRIGE_PAST_IRREGULAR",
        "description": "Irregular past: goed, buyed, teached",
        "issueType": "grammar",
        "category": {"id": "GRAMMAR", "name": "Grammar"},
    }
    assert first["type"] == {"typeName": "Other"}
    context = first["context"]
    assert context["text"][context["offset"] : context["offset"] + context["length"]] == "goed"
    assert body["sentenceRanges"] == [[0, 30], [31, 59]] and body["ignoreRanges"] == []
    for m in body["matches"]:
        assert TEXT[m["offset"] : m["offset"] + m["length"]] in {"goed", "work"}


def test_spanish_speakers_get_the_spanish_gloss(client):
    for tongue in ("es", "es-ES", "es_MX"):
        body = check(client, text=TEXT, motherTongue=tongue)
        assert [m["message"] for m in body["matches"]] == [
            "pasado irregular: goed → went",
            "tercera persona: work → works",
        ]
        assert body["matches"][0]["shortMessage"] == "Pasado irregular"
        assert body["matches"][0]["rule"]["id"] == "CORRIGE_PAST_IRREGULAR"  # ids do not change with the language
    english = check(client, text=TEXT, motherTongue="fr")
    assert english["matches"][0]["message"] == "irregular past: goed → went"


def test_rule_ids_are_stable_and_distinct_per_category():
    ids = [rule_id(c) for c in CATEGORY_IDS]
    assert len(set(ids)) == len(ids) and rule_id("past_irregular") == "CORRIGE_PAST_IRREGULAR"
    assert all(i.isupper() and i.startswith("CORRIGE_") for i in ids)


def test_the_rule_filters(client):
    both = edits(check(client, text=TEXT))
    assert [e[3] for e in edits(check(client, text=TEXT, disabledRules="CORRIGE_THIRD_PERSON, X"))] == [
        "CORRIGE_PAST_IRREGULAR"
    ]
    assert edits(check(client, text=TEXT, disabledCategories="GRAMMAR")) == []
    assert edits(check(client, text=TEXT, disabledCategories="TYPOS")) == both
    only = check(client, text=TEXT, enabledOnly="true", enabledRules="CORRIGE_THIRD_PERSON")
    assert [e[3] for e in edits(only)] == ["CORRIGE_THIRD_PERSON"]
    assert edits(check(client, text=TEXT, enabledOnly="true", enabledCategories="GRAMMAR")) == both
    assert edits(check(client, text=TEXT, enabledOnly="true")) == []
    assert edits(check(client, text=TEXT, enabledRules="CORRIGE_THIRD_PERSON", level="picky")) == both


def test_data_annotations_give_offsets_into_the_annotated_text(client):
    parts = [
        {"markup": "<p>"},
        {"text": "Yesterday I "},
        {"markup": "<b>"},
        {"text": "goed"},
        {"markup": "</b>"},
        {"text": " to the store."},
        {"markup": "<br/>", "interpretAs": "\n\n"},
        {"text": "My father work in a factory."},
    ]
    annotated = "".join(p.get("text", p.get("markup")) for p in parts)
    body = check(client, data=json.dumps({"annotation": parts}))
    assert [annotated[m["offset"] : m["offset"] + m["length"]] for m in body["matches"]] == ["goed", "work"]
    assert body["matches"][0]["sentence"] == "Yesterday I goed to the store."
    assert [annotated[a:b] for a, b in body["sentenceRanges"]] == [
        "Yesterday I <b>goed</b> to the store.",
        "My father work in a factory.",
    ]
    # the same text plain: the same edits, moved by the markup before them
    plain = edits(check(client, text="Yesterday I goed to the store.\n\nMy father work in a factory."))
    assert [e[2:] for e in plain] == [e[2:] for e in edits(body)]


def test_offsets_count_utf16_code_units_as_languagetool_does(client):
    text = "I love my dog 🐕 so much. " + TEXT
    body = check(client, text=text)
    units = text.encode("utf-16-le")
    for m in body["matches"]:
        assert units[2 * m["offset"] : 2 * (m["offset"] + m["length"])].decode("utf-16-le") in {"goed", "work"}
    assert [m["offset"] for m in body["matches"]] == [text.index("goed") + 1, text.index("work") + 1]


def test_languages_other_than_english_get_languagetools_error(client):
    for language in ("de-DE", "es", "EN", "xx"):
        message = lt_error(
            client.post("/v2/check", data={"text": TEXT, "language": language}), 400, "unsupported_language"
        )
        assert f"'{language}' is not a language code known to LanguageTool" in message
        assert "en-US" in message
    auto = client.post("/v2/check", data={"text": SPANISH, "language": "auto"})
    assert "Spanish ('es')" in lt_error(auto, 400, "unsupported_language")
    body = check(client, text=TEXT, language="auto")
    assert body["language"]["code"] == "en-US" and len(body["matches"]) == 2
    for language in ("en", "en-GB", "en-AU"):
        assert edits(check(client, text=TEXT, language=language)) == edits(body)


def test_a_text_in_another_language_is_not_checked_and_its_language_is_said(client):
    body = check(client, text=SPANISH, language="en")
    assert body["matches"] == [] and body["language"]["detectedLanguage"] == {"name": "Spanish", "code": "es"}
    mixed = TEXT + " " + SPANISH
    body = check(client, text=mixed)
    assert len(body["matches"]) == 2
    ranges = body["ignoreRanges"]
    assert [(mixed[r["from"] : r["to"]], r["language"]["code"]) for r in ranges] == [(SPANISH, "es")]


def test_empty_and_wordless_texts_have_no_matches(client):
    for text in ("", "   \n ", "... !! 42"):
        body = check(client, text=text)
        assert body["matches"] == [] and body["language"]["code"] == "en-US"


def test_missing_parameters_and_bad_bodies_are_languagetools_errors(client):
    lt_error(client.post("/v2/check", data={"text": TEXT}), 400, "missing_parameter")
    lt_error(client.post("/v2/check", data={"data": "", "language": "en"}), 400, "invalid_data")
    lt_error(client.post("/v2/check", data={"language": "en"}), 400, "missing_parameter")
    lt_error(client.post("/v2/check", json={"text": TEXT, "language": "en"}), 415, "unsupported_media_type")
    lt_error(client.post("/v2/check", data={"text": "I goed\x00 home", "language": "en"}), 400, "invalid_characters")
    lt_error(client.post("/v2/check", data={"text": "I <|sep|> home", "language": "en"}), 400, "prompt_injection")
    long = "I goed home. " * 400
    assert "5000 characters" in lt_error(
        client.post("/v2/check", data={"text": long, "language": "en"}), 413, "text_too_long"
    )
    for data in ("{", "[]", '{"annotation": [{"text": "a", "markup": "b"}]}', '{"annotation": [{"text": 1}]}'):
        lt_error(client.post("/v2/check", data={"data": data, "language": "en"}), 400, "invalid_data")
    lt_error(client.get("/v2/check"), 405, "method_not_allowed")
    lt_error(client.get("/v2/nothing"), 404, "not_found")
    # the rest of the API keeps its JSON errors
    assert (
        client.post("/v1/grammar/correct", data={"sentence": "x"}).json()["error"]["code"] == "unsupported_media_type"
    )


def test_percent_encoded_bytes_that_are_not_utf8_are_refused_as_raw_ones_are(client):
    """`%FF%FE` decodes to bytes that are not UTF-8: the form parser would read them as U+FFFD and
    check a text the client never sent; they get the raw bytes' 400 `invalid_encoding`."""
    form = {"content-type": "application/x-www-form-urlencoded"}
    raw = client.post("/v2/check", content=b"language=en-US&text=\xff\xfe", headers=form)
    assert "not valid UTF-8" in lt_error(raw, 400, "invalid_encoding")
    for body in (b"language=en-US&text=%FF%FE", b"language=en-US&text=I+go%C3", b"language=en%FF&text=I+go"):
        encoded = client.post("/v2/check", content=body, headers=form)
        assert "not valid UTF-8 once percent-decoded" in lt_error(encoded, 400, "invalid_encoding"), body
    # percent-encoded UTF-8 is fine: "é" is %C3%A9, "+" a space
    assert check(client, text="Caf\u00e9 is good. I goed home.")["language"]["code"] == "en-US"
    answer = client.post("/v2/check", content=b"language=en-US&text=I+goed+home+%C3%A9.", headers=form)
    assert answer.status_code == 200, answer.text


def test_languages_lists_the_variants_of_english(client):
    languages = client.get("/v2/languages").json()
    assert {"name": "English (US)", "code": "en", "longCode": "en-US"} in languages
    assert {entry["code"] for entry in languages} == {"en"}


def test_rate_and_body_limits_answer_as_languagetool(make_settings):
    settings = make_settings(rate_limit=0.001, rate_burst=2, max_body_bytes=2048)
    with TestClient(create_app(settings)) as limited:
        assert limited.get("/v2/languages").status_code == 200  # a listing: it takes a token like the rest
        big = limited.post("/v2/check", data={"text": "I goed home. " * 200, "language": "en"})
        lt_error(big, 413, "body_too_large")
        second = limited.post("/v2/check", data={"text": TEXT, "language": "en"})
        assert lt_error(second, 429, "rate_limited") and int(second.headers["Retry-After"]) >= 1


def test_the_openapi_document_states_the_routes_and_their_plain_errors(client):
    document = client.get("/openapi.json").json()
    check_op = document["paths"]["/v2/check"]["post"]
    assert list(check_op["requestBody"]["content"]) == ["application/x-www-form-urlencoded"]
    form = document["components"]["schemas"]["CheckForm"]
    assert form["required"] == ["language"] and "en-US" in form["properties"]["language"]["enum"]
    assert "5,000 characters" in form["properties"]["text"]["description"]  # a 413 schemathesis would not expect
    bad = check_op["responses"]["400"]
    assert list(bad["content"]) == ["text/plain"]
    assert {"missing_parameter", "unsupported_language", "invalid_data"} <= set(
        bad["headers"][CODE_HEADER]["schema"]["enum"]
    )
    assert {"unsupported_language", "invalid_data", "text_too_long"} <= set(check_op["x-corrige-unstated-codes"])
    assert "/v2/languages" in document["paths"]


def test_the_docs_list_every_rule():
    assert rules_table() in (Path(__file__).resolve().parents[2] / "docs" / "languagetool.md").read_text()
