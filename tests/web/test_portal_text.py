"""The tutor page takes a whole text (an email, a letter): over HTTP against a real server, and in
Debian's chromium with and without JavaScript, in Spanish and in English, at 390 px.

The learner's text comes back exactly as typed (line breaks kept) with each edit inline, a card
per edit (gloss in the page's language, category, rule card), the sentences the tutor could not
check said so in the learner's words, and the corrected text. "Accept" applies one edit in the
text box and "accept all" all of them (in place with JavaScript, a form post without): the box
then holds exactly what the grammar API's `corrected` is for that text.
"""

from __future__ import annotations

import html
import re
import sqlite3
from pathlib import Path

import httpx
import pytest
from conftest import PHONE, Learner, new_page
from playwright.sync_api import Page, expect
from server_support import bundled_model_available
from test_portal_browser import accessible
from test_portal_learner_path import Watch, check_page

from corrige.portal.i18n import TEXTS

FORM = {"content-type": "application/x-www-form-urlencoded"}
# a learner's email: several errors a Spanish speaker makes, line breaks, a salutation and a signature
EMAIL = """Hi Tom,

Yesterday I goed to the cinema with my sister. She is a engineer in Madrid.
My brother have 20 years. I am agree with you about the trip.
People is very friendly here. I buyed a new phone last week.

See you soon,
Maria"""
# sentences the tutor cannot check: one too long for its window with no clause boundary, one in Spanish
UNCHECKABLE = (
    "Yesterday I goed to the cinema with my sister.\n"
    "Yesterday my brother and my little sister goed to the big supermarket near the old train station to buy "
    "some bread and milk and eggs and cheese and apples for the family dinner on Sunday evening with all our "
    "grandparents and cousins.\n"
    "Muchas gracias por todo, nos vemos pronto.\n"
    "Lucía"  # a signature: nothing to check, and not listed as unchecked
)
ENGINEERING = re.compile(r"\b(?:tokens?|window|ventana|http|request|json|api|csrf|utc|skipped|abstain\w*)\b", re.I)
SUBMIT = {"es": "Corregir", "en": "Correct"}
ACCEPT = {"es": "Aceptar", "en": "Accept"}
ACCEPT_ALL = {"es": "Aceptar todo", "en": "Accept all"}


def grammar_api(url: str, text: str) -> dict:
    """The grammar API's answer for `text`: what the page must agree with."""
    response = httpx.post(f"{url}/v1/grammar/correct", json={"text": text}, timeout=60.0)
    assert response.status_code == 200, response.text
    return response.json()


def apply(text: str, edits: list[dict]) -> str:
    for e in sorted(edits, key=lambda e: e["offset"], reverse=True):
        text = text[: e["offset"]] + e["replacement"] + text[e["offset"] + e["length"] :]
    return text


@pytest.fixture(scope="module")
def expected(portal_server) -> dict:
    found = grammar_api(portal_server.url, EMAIL)
    if bundled_model_available():
        assert len(found["edits"]) >= 3, found["edits"]  # the test needs several edits to accept one by one
    return found


def textarea(page: str, field: str) -> str | None:
    """The text a page's textarea holds (the parser drops the newline right after its tag)."""
    found = re.search(rf'<textarea id="{field}"[^>]*>\n(.*?)</textarea>', page, re.S)
    return html.unescape(found.group(1)) if found else None


def audit_count(server) -> int:
    conn = sqlite3.connect(server.db_path)
    try:
        return conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    finally:
        conn.close()


# ---------------------------------------------------------------- over HTTP


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_text_api_gives_a_card_per_edit_and_the_grammar_apis_correction(portal_server, expected, lang):
    person = Learner(portal_server.url)
    try:
        person.client.cookies.set("corrige_lang", lang)
        response = person.post("/portal/api/text", {"text": EMAIL})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["text"] == EMAIL and body["corrected"] == expected["corrected"]
        assert [(e["offset"], e["original"], e["replacement"]) for e in body["edits"]] == [
            (e["offset"], e["original"], e["replacement"]) for e in expected["edits"]
        ]
        assert apply(EMAIL, body["edits"]) == body["corrected"]
        assert "".join(r.get("text", r.get("original")) for r in body["runs"]) == EMAIL  # the text as typed
        t = TEXTS[lang]
        for e in body["edits"]:
            assert EMAIL[e["offset"] : e["offset"] + e["length"]] == e["original"]
            assert (e["start"], e["end"]) == (e["offset"], e["offset"] + e["length"])  # no character beyond the BMP
            assert e["category_label"] == t.category(e["category"])
            assert e["gloss"].endswith(f"{e['original']} → {e['replacement']}") or "→" in e["gloss"]
            assert f'data-edit="{e["index"]}"' in body["html"]
        if bundled_model_available():
            went = next(e for e in body["edits"] if e["original"] == "goed")
            assert went["gloss"] == {"es": "pasado irregular: goed → went", "en": "irregular past: goed → went"}[lang]
            assert went["rule"]["category"] == "past_irregular" and went["rule"]["explanation"]
            assert "Pasados irregulares" in body["html"]
        assert t.accept_all in body["html"] and t.corrected_text in body["html"]
    finally:
        person.close()


def test_offsets_for_accepting_count_utf16_units_as_the_browser_does(learner):
    text = "I like this 🙂 song. She is a engineer."
    body = learner.post("/portal/api/text", {"text": text}).json()
    for e in body["edits"]:
        assert e["start"] == len(text[: e["offset"]].encode("utf-16-le")) // 2
    if bundled_model_available():
        assert any(e["start"] == e["offset"] + 1 for e in body["edits"])  # after the emoji: one unit more


@pytest.mark.parametrize("lang", ["es", "en"])
def test_sentences_the_tutor_could_not_check_are_said_so_in_the_learners_words(portal_server, lang):
    person = Learner(portal_server.url)
    try:
        person.client.cookies.set("corrige_lang", lang)
        body = person.post("/portal/api/text", {"text": UNCHECKABLE}).json()
        t = TEXTS[lang]
        reasons = {u["status"]: u for u in body["unchecked"]}
        assert set(reasons) >= {"too_long", "skipped"}, body["unchecked"]
        assert reasons["too_long"]["message"] == t.unchecked_too_long
        language = {"es": "español", "en": "Spanish"}[lang]
        assert reasons["skipped"]["message"] == t("unchecked_language", language=language)
        assert reasons["skipped"]["lang"] == "es" and reasons["skipped"]["sentence"].startswith("Muchas gracias")
        assert "Lucía" not in [u["sentence"] for u in body["unchecked"]]
        for u in body["unchecked"]:
            assert not ENGINEERING.search(u["message"]), u
            assert u["message"] in body["html"]
    finally:
        person.close()


@pytest.mark.parametrize(
    ("text", "status", "code"),
    [
        ("", 422, "empty_text"),
        ("   \n ", 422, "empty_text"),
        ("I goed home. " * 400, 413, "text_too_long"),
        ("... !!! 123", 422, "no_words"),
        ("Hola, ¿cómo estás? Muchas gracias por todo.", 422, "not_english"),
        ("Yo tengo un perro.", 422, "not_english"),
        ("Quiero aprender inglés porque es importante.", 422, "not_english"),
        ("I like <|sep|> cats.", 400, "prompt_injection"),
    ],
)
def test_refused_texts_answer_with_a_stable_code_and_a_page_in_the_learners_words(portal_server, text, status, code):
    person = Learner(portal_server.url)
    try:
        api = person.post("/portal/api/text", {"text": text})
        assert api.status_code == status and api.json()["error"]["code"] == code, api.text
        for lang in ("es", "en"):
            person.client.cookies.set("corrige_lang", lang)
            page = person.client.post("/", data={"text": text, "csrf_token": person.csrf}, headers=FORM)
            assert page.status_code == status, page.text[:300]
            message = TEXTS[lang].error(code, status)
            assert f'data-code="{code}"' in page.text and message in page.text
            assert not ENGINEERING.search(message)
    finally:
        person.close()


def test_the_text_form_post_shows_highlights_cards_and_the_corrected_text(portal_server, learner, expected):
    typed = EMAIL.replace("\n", "\r\n")  # what a browser sends for a textarea's line breaks
    page = learner.client.post("/", data={"text": typed, "csrf_token": learner.csrf}, headers=FORM)
    assert page.status_code == 200, page.text[:500]
    assert 'data-testid="text-diff"' in page.text
    assert page.text.count('class="edit-card"') == len(expected["edits"])
    assert textarea(page.text, "corrected-text") == expected["corrected"]
    assert textarea(page.text, "text") == EMAIL  # line breaks as typed, no CR
    # "accept all" without JavaScript: a form post that puts the corrected text in the box
    accepted = learner.client.post(
        "/", data={"text": expected["corrected"], "accept": "all", "csrf_token": learner.csrf}, headers=FORM
    )
    assert accepted.status_code == 200 and 'data-testid="accepted"' in accepted.text
    assert textarea(accepted.text, "text") == expected["corrected"]


def test_text_posts_need_the_sessions_csrf_token(portal_server, learner):
    api = learner.client.post("/portal/api/text", json={"text": EMAIL})  # no X-CSRF-Token header
    assert api.status_code == 403 and api.json()["error"]["code"] == "csrf_failed"
    for fields in ({"text": EMAIL}, {"text": EMAIL, "accept": "all"}):
        page = learner.client.post("/", data={**fields, "csrf_token": "forged"}, headers=FORM)
        assert page.status_code == 403 and 'data-code="csrf_failed"' in page.text
    other = Learner(portal_server.url)
    try:  # another learner's token
        page = learner.client.post("/", data={"text": EMAIL, "csrf_token": other.csrf}, headers=FORM)
        assert page.status_code == 403
    finally:
        other.close()


def test_a_text_is_recorded_as_a_sentence_is(portal_server, learner):
    """The tutor page writes no audit record for a correction, a sentence or a text (the audit log
    holds graded quiz and exam answers); a learner's records go on as before around it."""
    before = audit_count(portal_server)
    sentence = learner.client.post(
        "/", data={"sentence": "She like cats.", "csrf_token": learner.csrf}, headers=FORM
    ).status_code
    after_sentence = audit_count(portal_server)
    text = learner.post("/portal/api/text", {"text": EMAIL}).status_code
    form = learner.client.post("/", data={"text": EMAIL, "csrf_token": learner.csrf}, headers=FORM).status_code
    assert (sentence, text, form) == (200, 200, 200)
    assert after_sentence - before == audit_count(portal_server) - after_sentence == 0
    question = learner.client.get("/portal/api/quiz/question").json()
    answer = learner.post("/portal/api/quiz/answer", {"question_id": question["question_id"], "answer": "x y"})
    assert answer.status_code == 200 and audit_count(portal_server) == after_sentence + 1
    assert learner.client.get("/portal/api/progress").json()["history"][0]["answer"] == "x y"


# ---------------------------------------------------------------- in the browser


def paste_and_correct(page: Page, lang: str, js: bool) -> None:
    t = TEXTS[lang]
    page.goto(f"/?lang={lang}")
    expect(page.get_by_role("heading", level=1)).to_have_text(t.tutor_title)
    page.get_by_label(t.text_label).fill(EMAIL)
    if js:
        with page.expect_response("**/portal/api/text") as answer:
            page.get_by_label(t.text_label).press("Control+Enter")  # keyboard only
        assert answer.value.status == 200, answer.value.text()
    else:
        with page.expect_navigation():
            page.get_by_role("button", name=SUBMIT[lang], exact=True).click()
    expect(page.locator("#result").get_by_role("heading", name=t.result_title)).to_be_visible()


def check_result(page: Page, lang: str, expected: dict) -> None:
    t = TEXTS[lang]
    result = page.locator("#result")
    diff = result.get_by_test_id("text-diff")
    expect(diff).to_be_visible()
    cards = result.locator(".edit-card")
    expect(cards).to_have_count(len(expected["edits"]))
    # the learner's own text, line breaks kept, with each edit's words marked and its replacement beside it
    assert diff.evaluate("(e) => getComputedStyle(e).whiteSpace") == "pre-wrap"
    shown = diff.evaluate(
        "(e) => { const c = e.cloneNode(true); c.querySelectorAll('ins, .sr-only, sup').forEach((x) => x.remove());"
        " return c.textContent; }"
    )
    assert shown == EMAIL
    for i, e in enumerate(expected["edits"]):
        mark = diff.locator(f'.edit-mark[data-edit="{i}"]')
        if e["original"]:
            expect(mark.locator("del")).to_contain_text(e["original"])
        if e["replacement"]:
            expect(mark.locator("ins")).to_contain_text(e["replacement"])
        card = cards.nth(i)
        expect(card.locator(".rule-edit .tag")).to_have_text(t.category(e["category"]))
        expect(card.locator(".gloss")).not_to_be_empty()
    if bundled_model_available():
        went = result.locator('.edit-card[data-original="goed"]')
        gloss = {"es": "pasado irregular: goed → went", "en": "irregular past: goed → went"}[lang]
        expect(went.locator(".gloss")).to_have_text(gloss)
        expect(went.locator(".rule-title")).to_contain_text("irregulares")
        expect(went.locator(".example")).to_contain_text(t.right_example)
    expect(result.get_by_label(t.corrected_text)).to_have_value(expected["corrected"])


@pytest.mark.parametrize("lang", ["es", "en"])
def test_paste_an_email_accept_one_edit_then_all_with_javascript(browser, portal_server, expected, artifacts, lang):
    page = new_page(browser, portal_server.url, viewport=PHONE, is_mobile=True, has_touch=True)
    watch = Watch(page)
    t = TEXTS[lang]
    try:
        paste_and_correct(page, lang, js=True)
        assert page.url.endswith(f"/?lang={lang}")  # answered in place, no page load
        check_result(page, lang, expected)
        check_page(page, lang, "a text's correction")
        accessible(page, f"{lang} text correction on a phone")
        box = page.get_by_label(t.text_label)
        cards = page.locator("#result .edit-card")
        second = expected["edits"][1]
        cards.nth(1).get_by_role("button", name=ACCEPT[lang], exact=True).click()
        once = apply(EMAIL, [second])
        expect(box).to_have_value(once)
        # the text is checked again: the panel is the correction of the text as it is now
        expect(page.get_by_test_id("recheck-status")).to_have_text(t.rechecked)
        expect(page.locator("#result .text-result")).to_have_attribute("data-source", once)
        again = grammar_api(portal_server.url, once)
        expect(cards).to_have_count(len(again["edits"]))
        assert len(again["edits"]) == len(expected["edits"]) - 1  # the accepted edit is no longer proposed
        assert (second["original"], second["replacement"]) not in [
            (e["original"], e["replacement"]) for e in again["edits"] if e["offset"] == second["offset"]
        ]
        expect(page.get_by_label(t.corrected_text)).to_have_value(again["corrected"])
        page.screenshot(path=str(Path(artifacts) / f"portal-text-accept-one-{lang}.png"), full_page=True)
        first = again["edits"][0]
        cards.nth(0).get_by_role("button", name=ACCEPT[lang], exact=True).click()  # the new panel's offsets
        twice = apply(once, [first])
        expect(box).to_have_value(twice)
        expect(page.locator("#result .text-result")).to_have_attribute("data-source", twice)
        rest = grammar_api(portal_server.url, twice)
        page.get_by_role("button", name=ACCEPT_ALL[lang], exact=True).click()
        expect(box).to_have_value(rest["corrected"])
        expect(page.get_by_test_id("recheck-status")).to_have_text(t.accepted_all)
        expect(page.locator("#result .text-result")).to_have_attribute("data-source", rest["corrected"])
        assert page.url.endswith(f"/?lang={lang}")  # still in place
        check_page(page, lang, "after accept all")
        page.screenshot(path=str(Path(artifacts) / f"portal-text-{lang}.png"), full_page=True)
        assert watch.problems == [], watch.problems
    finally:
        page.context.close()


def test_accepting_after_the_learner_changed_the_text_says_so_and_changes_nothing(browser, portal_server, expected):
    page = new_page(browser, portal_server.url)
    try:
        paste_and_correct(page, "es", js=True)
        box = page.get_by_label(TEXTS["es"].text_label)
        box.fill(EMAIL + "\nP.S. I write you later.")
        page.locator("#result .edit-card").first.get_by_role("button", name="Aceptar", exact=True).click()
        expect(page.get_by_test_id("accept-status")).to_have_text(TEXTS["es"].text_changed)
        expect(box).to_have_value(EMAIL + "\nP.S. I write you later.")
    finally:
        page.context.close()


@pytest.mark.parametrize("lang", ["es", "en"])
def test_paste_an_email_and_accept_all_without_javascript(browser, portal_server, expected, artifacts, lang):
    page = new_page(browser, portal_server.url, java_script_enabled=False, viewport=PHONE)
    t = TEXTS[lang]
    try:
        paste_and_correct(page, lang, js=False)
        check_result(page, lang, expected)
        check_page(page, lang, "a text's correction without JavaScript")
        accessible(page, f"{lang} text correction without JavaScript")
        expect(page.locator("#result .edit-card button")).to_have_count(len(expected["edits"]))
        for button in page.locator("#result .edit-card button").all():  # per-edit accept needs the script
            expect(button).to_be_hidden()
        page.screenshot(path=str(Path(artifacts) / f"portal-text-no-js-{lang}.png"), full_page=True)
        with page.expect_navigation():
            page.get_by_role("button", name=ACCEPT_ALL[lang], exact=True).click()
        expect(page.get_by_label(t.text_label)).to_have_value(expected["corrected"])
        expect(page.get_by_test_id("accepted")).to_have_text(t.accepted_all)
        check_page(page, lang, "after accept all without JavaScript")
    finally:
        page.context.close()


@pytest.mark.parametrize("js", [True, False])
def test_sentences_not_checked_are_shown_on_the_page(browser, portal_server, js):
    page = new_page(browser, portal_server.url, java_script_enabled=js, viewport=PHONE)
    t = TEXTS["es"]
    try:
        page.goto("/?lang=es")
        page.get_by_label(t.text_label).fill(UNCHECKABLE)
        with page.expect_navigation() if not js else page.expect_response("**/portal/api/text"):
            page.get_by_role("button", name="Corregir", exact=True).click()
        unchecked = page.locator("#result .unchecked li")
        expect(unchecked.filter(has_text=t.unchecked_too_long)).to_have_count(1)
        expect(unchecked.filter(has_text=t("unchecked_language", language="español"))).to_have_count(1)
        check_page(page, "es", "sentences not checked")
    finally:
        page.context.close()
