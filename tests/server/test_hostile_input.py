"""Hostile input never reaches a handler as a 500: bodies nested too deeply or not parsable are
refused at one place (the body guard, 400 `invalid_json`), ids beyond SQLite's integer range are
refused by their path bounds (422 on the API, a learner's "no such page" on pages), and every
error code the server can send is in the one table the docs and the OpenAPI document come from."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest
from server_support import error_of

from corrige.server.error_codes import BY_CODE, ERROR_CODES, markdown_table
from corrige.server.errors import ENGINE_STATUS, HTTP_CODES
from corrige.server.guards import MAX_JSON_DEPTH, json_depth, json_problem
from corrige.server.routes.portal import MAX_ID

ROOT = Path(__file__).resolve().parents[2]
DEEP = b"[" * 5000 + b"]" * 5000  # 10 kB: under the body limit, far past json.loads' recursion limit
DEEP_OBJECT = b'{"a":' * 2000 + b"1" + b"}" * 2000  # 12 kB

# every route that takes a JSON body: the portal's form paths (a JSON body is an API-style request
# there), its API and the model's API
BODY_ROUTES = [
    "/",
    "/quiz",
    "/exam",
    "/exam/1/answer",
    "/portal/api/correct",
    "/portal/api/text",
    "/portal/api/quiz/answer",
    "/portal/api/exams",
    "/portal/api/exams/1/answers",
    "/v1/grammar/correct",
    "/v1/grammar/correct:batch",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/tools/rules",
    "/correct",
]


@pytest.fixture(scope="module")
def shared_portal_client(shared_app):
    """One app for the module: every request here is refused or looks up what is not there."""
    client = shared_app(own_portal_db=True)
    session = client.get("/portal/api/session").json()
    client.headers["X-CSRF-Token"] = session["csrf_token"]
    return client


@pytest.fixture
def portal_client(shared_portal_client):
    """The shared client with its session, its language cookie taken away after each test."""
    yield shared_portal_client
    shared_portal_client.cookies.delete("corrige_lang")


# ---------------------------------------------------------------- bodies


@pytest.mark.parametrize("path", BODY_ROUTES)
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_deeply_nested_json_is_400_invalid_json_without_a_traceback(portal_client, path, body, caplog):
    with caplog.at_level(logging.WARNING):
        response = portal_client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    error = error_of(response)
    assert error["code"] == "invalid_json"
    assert f"deeper than {MAX_JSON_DEPTH} levels" in error["message"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    "body",
    [
        b'{"sentence": ' + b"9" * 5000 + b"}",  # past Python's int-parsing digit limit (a ValueError)
        b'{"sentence": "unterminated',
        b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1),
    ],
)
def test_bodies_that_do_not_parse_are_400_invalid_json_on_the_api_and_the_portal(portal_client, body):
    for path in ("/v1/grammar/correct", "/portal/api/correct", "/quiz"):
        response = portal_client.post(path, content=body, headers={"content-type": "application/json"})
        assert response.status_code == 400, (path, response.text)
        assert error_of(response)["code"] == "invalid_json"


def test_brackets_inside_strings_do_not_count_as_nesting(portal_client):
    sentence = "[{" * 200 + " she like cats"
    response = portal_client.post("/v1/grammar/correct", json={"sentence": sentence})
    # past the guard: refused only by the sentence check behind it (too many tokens for the window)
    assert response.status_code == 422 and error_of(response)["code"] == "prompt_too_long"
    assert json_depth(b'{"a": "[[[[\\"[[[", "b": [[1]]}') == 3
    assert json_problem(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH) is None


def test_a_deep_form_field_is_just_text(portal_client):
    """A form post's fields are flat strings: the deep text reaches the route, which refuses the
    missing CSRF token with the learner's page, not a traceback."""
    response = portal_client.post(
        "/",
        content=b"sentence=" + b"%5B" * 3000,
        headers={"content-type": "application/x-www-form-urlencoded", "X-CSRF-Token": ""},
    )
    assert response.status_code == 403 and "text/html" in response.headers["content-type"]
    assert 'data-code="csrf_failed"' in response.text


@pytest.mark.parametrize("path", ["/exam", "/quiz", "/", "/exam/1/answer"])
def test_a_form_post_with_no_body_is_the_403_page_not_the_apis_422(portal_client, path):
    """A post with no body and no Content-Type is a form with no fields: without its CSRF token it
    gets the learner's 403 page, as any form post without one does."""
    for headers in ({"X-CSRF-Token": ""}, {"X-CSRF-Token": "", "content-type": "application/x-www-form-urlencoded"}):
        response = portal_client.post(path, headers=headers)
        assert response.status_code == 403, (path, headers, response.text[:200])
        assert "text/html" in response.headers["content-type"]
        assert 'data-code="csrf_failed"' in response.text
    # an empty JSON body is an API-style request to the form path: the error model
    response = portal_client.post(path, content=b"", headers={"X-CSRF-Token": "", "content-type": "application/json"})
    assert response.status_code == 422 and error_of(response)["code"] == "validation_error"


# ---------------------------------------------------------------- ids


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/portal/api/exams/9223372036854775808"),
        ("POST", "/portal/api/exams/9223372036854775808/answers"),
        ("GET", "/portal/api/exams/99999999999999999999999"),
        ("GET", "/portal/api/exams/0"),
        ("GET", "/portal/api/exams/-1"),
    ],
)
def test_api_ids_out_of_range_are_422_naming_the_id(portal_client, method, path):
    response = portal_client.request(method, path, json={"question_id": "q1", "answer": "She is an engineer."})
    assert response.status_code == 422, response.text
    error = error_of(response)
    assert error["code"] == "validation_error" and error["message"].startswith("exam_id:")


def test_the_largest_id_is_looked_up_and_not_found(portal_client):
    response = portal_client.get(f"/portal/api/exams/{MAX_ID}")
    assert response.status_code == 404 and error_of(response)["code"] == "exam_not_found"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/exam/99999999999999999999999"),
        ("GET", "/exam/9223372036854775808"),
        ("GET", "/quiz/answers/9223372036854775808"),
        ("GET", "/exam/abc"),
        ("POST", "/exam/99999999999999999999999/answer"),
    ],
)
@pytest.mark.parametrize(("lang", "words"), [("es", "No existe esa página."), ("en", "There is no such page.")])
def test_page_ids_out_of_range_are_a_no_such_page_page_in_the_learners_language(
    portal_client, method, path, lang, words
):
    portal_client.cookies.set("corrige_lang", lang)
    form = {"content": b"question_id=q1&answer=x", "headers": {"content-type": "application/x-www-form-urlencoded"}}
    response = portal_client.request(method, path, **(form if method == "POST" else {}))
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert f'<html lang="{lang}">' in response.text and words in response.text
    assert "Traceback" not in response.text and "OverflowError" not in response.text


# ---------------------------------------------------------------- the table of codes


def raised_codes() -> set[tuple[int, str]]:
    """(status, code) of every `ApiError(status, "code", …)` and `send_error(send, status, "code", …)`
    with literal arguments in the server and the portal."""
    found = set()
    for path in [*(ROOT / "corrige" / "server").rglob("*.py"), *(ROOT / "corrige" / "portal").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            args = {"ApiError": node.args[:2], "send_error": node.args[1:3]}.get(name)
            if args and len(args) == 2 and all(isinstance(a, ast.Constant) for a in args):
                found.add((args[0].value, args[1].value))
    return found


def test_every_code_the_server_sends_is_in_the_table_with_its_status():
    sent = raised_codes() | set(HTTP_CODES.items()) | {(s, c) for c, s in ENGINE_STATUS.items()}
    assert len(sent) > 20
    missing = sorted((s, c) for s, c in sent if c not in BY_CODE or BY_CODE[c].status not in (s, None))
    assert missing == []
    assert len(BY_CODE) == len(ERROR_CODES)  # each code once


def test_the_docs_tables_are_the_generated_ones():
    assert markdown_table("api") in (ROOT / "docs" / "api.md").read_text()
    assert markdown_table("portal") in (ROOT / "docs" / "portal.md").read_text()


def test_the_openapi_document_lists_the_codes_of_the_table(portal_client):
    document = portal_client.get("/openapi.json").json()
    code = document["components"]["schemas"]["ErrorDetail"]["properties"]["code"]
    assert code["enum"] == sorted(BY_CODE)
    correct = document["paths"]["/v1/grammar/correct"]["post"]["responses"]
    assert "`prompt_injection`" in correct["400"]["description"]  # per operation: tests/server/test_openapi_spec.py
    answer = document["paths"]["/portal/api/exams/{exam_id}/answers"]["post"]["responses"]
    assert "`already_answered`" in answer["409"]["description"]
    exam_id = document["paths"]["/portal/api/exams/{exam_id}"]["get"]["parameters"][0]["schema"]
    assert exam_id["maximum"] == MAX_ID and exam_id["minimum"] == 1
