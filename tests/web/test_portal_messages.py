"""What a learner reads when something is refused: every error code the portal's pages can meet
has a message in Spanish and in English, with no engineering language, and the pages show it
(never the API's wording, which stays precise for programs); every error category a learner can
see has a name in both languages."""

from __future__ import annotations

import re

import pytest
from conftest import Learner

from corrige.portal.i18n import CATEGORY_NAMES, ERROR_MESSAGES, LANGS, TEXTS
from corrige.server.error_codes import BY_CODE
from corrige.tutor.categories import CATEGORY_IDS, OTHER
from corrige.tutor.knowledge import bundled_cards

ENGINEERING = re.compile(r"\b(?:tokens?|window|ventana|http|request|stack|json|api|csrf|utc|id)\b", re.I)
# codes a page or form post meets besides those of the portal's API operations: the framework's
PAGE_CODES = {"not_found", "method_not_allowed", "http_error"}
LONG = (
    "Yesterday my brother and my little sister goed to the big supermarket near the old train "
    "station to buy some bread, milk, eggs, cheese and apples for the family dinner on Sunday."
)


def portal_codes(document: dict) -> set[str]:
    """Every code the OpenAPI document says the portal's operations can answer with."""
    codes = set()
    for path, operations in document["paths"].items():
        if not path.startswith("/portal/api/"):
            continue
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if status.startswith(("4", "5")):
                    narrowed = response["content"]["application/json"]["schema"]["allOf"][1]
                    codes |= set(narrowed["properties"]["error"]["properties"]["code"]["enum"])
    return codes


def test_every_code_a_learner_can_meet_has_a_message_in_both_languages(learner):
    codes = portal_codes(learner.client.get("/openapi.json").json()) | PAGE_CODES
    assert {"prompt_too_long", "empty_sentence", "empty_answer", "csrf_failed", "overloaded"} <= codes
    assert codes <= set(ERROR_MESSAGES), sorted(codes - set(ERROR_MESSAGES))
    assert set(ERROR_MESSAGES) <= set(BY_CODE)  # no stale codes
    for lang in LANGS:
        t = TEXTS[lang]
        for code in codes:
            message = t.error(code, BY_CODE[code].status or 500)
            assert message and not ENGINEERING.search(message), (lang, code, message)
        assert t.error("some_new_code", 404) == t.error_not_found and t.error("some_new_code") == t.error_generic
    assert TEXTS["es"].error("prompt_too_long") != TEXTS["en"].error("prompt_too_long")


def test_every_category_a_learner_sees_has_a_name_in_both_languages():
    shown = {*CATEGORY_IDS, OTHER, *(card.category for card in bundled_cards())}
    for lang in LANGS:
        assert shown <= set(CATEGORY_NAMES[lang]), (lang, sorted(shown - set(CATEGORY_NAMES[lang])))
    assert TEXTS["es"].category(OTHER) == "otro cambio" and TEXTS["en"].category(OTHER) == "other change"


@pytest.mark.parametrize("lang", LANGS)
def test_a_refused_form_post_says_so_in_the_pages_language(portal_server, lang):
    person = Learner(portal_server.url)
    try:
        person.client.cookies.set("corrige_lang", lang)
        t = TEXTS[lang]
        form = {"content-type": "application/x-www-form-urlencoded"}
        cases = [
            ("/", {"sentence": LONG}, 422, "prompt_too_long"),
            ("/", {"sentence": "   "}, 422, "empty_sentence"),
            ("/", {"sentence": "I like <|sep|> cats"}, 400, "prompt_injection"),
            ("/quiz", {"question_id": "q1", "answer": " "}, 422, "empty_answer"),
            ("/quiz", {"question_id": "nope", "answer": "She is here."}, 404, "question_not_found"),
            ("/exam/999999/answer", {"question_id": "q1", "answer": "She is here."}, 404, "exam_not_found"),
        ]
        for path, fields, status, code in cases:
            body = {**fields, "csrf_token": person.csrf}
            response = person.client.post(path, data=body, headers=form)
            assert response.status_code == status, (path, fields, response.text[:300])
            assert f'data-code="{code}"' in response.text and t.error(code, status) in response.text, (path, code)
            assert not ENGINEERING.search(re.sub(r"<[^>]+>", " ", response.text)), (path, code)
        # the API keeps its precise message for programs
        api = person.post("/portal/api/correct", {"sentence": LONG})
        assert api.json()["error"]["code"] == "prompt_too_long" and "token" in api.json()["error"]["message"]
    finally:
        person.close()


def test_the_favicon_is_served(learner):
    icon = learner.client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    svg = learner.client.get("/static/portal/favicon.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert 'rel="icon" href="/static/portal/favicon.svg"' in learner.client.get("/").text
