"""A learner's path through the portal in a real browser, in Spanish and in English, on a
phone-sized screen: the tutor (a text, one with sentences it cannot check, an empty one, a blank one), a quiz
question, an exam, the progress page. Every page and every state along the way must speak the
learner's language and no engineering language, and load cleanly:

* no English word on the Spanish pages outside English that the markup marks as such (the
  learner's sentences, questions, corrections and examples: `lang="en"`; Spanish prose that
  quotes English words, such as a gloss or a rule card: `data-quotes="en"`), by a stop-word list;
* no engineering terms (tokens, window, HTTP, request id, UTC, a hex id) in either language;
* no console error, failed request or error response other than the refusals the walk asks for;
* no horizontal scrolling at 390 px, and no grade badge broken over two lines;
* times in the learner's own time zone, and a favicon.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import PHONE, new_page
from playwright.sync_api import Page, expect

from corrige.portal.i18n import TEXTS
from corrige.portal.quiz import QuestionBank

# English words that never belong on a Spanish page (none of them is also Spanish, nor part of the
# Spanish names of error categories, which quote English: "there is/are", "posesivo his/her")
ENGLISH_WORDS = frozenset(
    """the and of with your you not yet sentence sentences takes fit keeps answer answers question
    questions other wrong close exact score exam exams progress history time started status mode
    grade learner kind try again please fill out this field page request requests too long empty
    must should field characters character contains""".split()
)
# engineering language, in either language
ENGINEERING = re.compile(
    r"\b(?:tokens?|window|ventana|http|request|stack|traceback|utc|csrf|json|api)\b|\b[0-9a-f]{16,}\b", re.I
)
VISIBLE_TEXT = """() => {
  const skip = '[lang="en"], [data-quotes="en"]';
  const parts = [document.title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const element = walker.currentNode.parentElement;
    if (element && !element.closest(skip) && element.checkVisibility()) {
      parts.push(walker.currentNode.textContent);
    }
  }
  for (const element of document.querySelectorAll("[aria-label], [title], [placeholder]")) {
    if (!element.closest(skip)) {
      parts.push(element.getAttribute("aria-label") || "", element.title || "", element.placeholder || "");
    }
  }
  return parts.join(" ");
}"""
# a text with a sentence too long for the tutor (no clause boundary to cut it at) and one in Spanish
UNCHECKABLE = (
    "Yesterday my brother and my little sister goed to the big supermarket near the old train station to buy "
    "some bread and milk and eggs and cheese and apples for the family dinner on Sunday evening with all our "
    "grandparents and cousins.\nMuchas gracias por todo, nos vemos pronto."
)
ZONES = {"es": "America/Mexico_City", "en": "Asia/Kolkata"}  # far from UTC, all year


class Watch:
    """The page's console errors, uncaught exceptions, failed requests and error responses."""

    def __init__(self, page: Page) -> None:
        self.problems: list[str] = []
        self.allowed: list[tuple[str, int]] = []  # (path, status) of refusals the walk asks for
        page.on("console", self.console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", self.failed)
        page.on("response", self.response)

    def failed(self, request) -> None:
        # ERR_ABORTED: the page went on to the next one before this request finished (the
        # favicon, during a form post's navigation); the browser cancelled it, nothing broke. A
        # missing file is an error response (`response`), a refused connection another failure.
        if request.failure != "net::ERR_ABORTED":
            self.problems.append(f"failed: {request.url} {request.failure}")

    def expect_refusal(self, path: str, status: int) -> None:
        self.allowed.append((path, status))

    def is_allowed(self, url: str, status: int) -> bool:
        return any(url.endswith(path) and status == code for path, code in self.allowed)

    def console(self, message) -> None:
        if message.type != "error":
            return
        url = message.location.get("url", "")
        refused = re.search(r"status of (\d{3})", message.text)
        if refused and self.is_allowed(url, int(refused.group(1))):
            return
        self.problems.append(f"console: {message.text} ({url})")

    def response(self, response) -> None:
        if response.status >= 400 and not self.is_allowed(response.url, response.status):
            self.problems.append(f"{response.status} {response.url}")


def check_page(page: Page, lang: str, where: str) -> None:
    text = page.evaluate(VISIBLE_TEXT)
    engineering = sorted({m.group() for m in ENGINEERING.finditer(text)})
    assert not engineering, f"{lang} {where}: engineering language {engineering} in {text!r}"
    if lang == "es":
        english = sorted({w for w in re.findall(r"[a-záéíóúüñ]+", text.lower()) if w in ENGLISH_WORDS})
        assert not english, f"{where}: English words {english} on a Spanish page: {text!r}"
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{lang} {where}: {overflow}px of horizontal scrolling at 390 px"
    broken = page.evaluate(
        "() => [...document.querySelectorAll('.grade, .grade-text, .tag')]"
        ".filter((e) => e.getClientRects().length > 1).map((e) => e.textContent)"
    )
    assert not broken, f"{lang} {where}: badges broken over two lines: {broken}"


def correct(page: Page, watch: Watch, text: str, status: int) -> None:
    if status != 200:
        watch.expect_refusal("/portal/api/text", status)
    field = page.locator("#text")
    field.fill(text)
    with page.expect_response("**/portal/api/text") as answer:
        field.press("Control+Enter")
    assert answer.value.status == status, answer.value.text()


def walk_the_tutor(page: Page, watch: Watch, lang: str) -> None:
    t = TEXTS[lang]
    page.goto(f"/?lang={lang}")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    check_page(page, lang, "tutor page")
    result = page.locator("#result")

    correct(page, watch, "Yesterday I goed to the store.\nShe is a engineer.", 200)
    expect(result.get_by_role("heading", name=t.result_title)).to_be_visible()
    check_page(page, lang, "a correction")

    correct(page, watch, UNCHECKABLE, 200)  # never a reason to refuse the text: said so per sentence
    expect(result.locator(".unchecked li[data-status=too_long]")).to_contain_text(t.unchecked_too_long)
    expect(result.locator(".unchecked li[data-status=skipped]")).to_contain_text(t.language("es"))
    check_page(page, lang, "sentences the tutor could not check")

    page.locator("#text").fill("")
    page.locator("#text").press("Control+Enter")  # the browser's own check: nothing is sent
    message = page.locator("#text").evaluate("(e) => e.validationMessage")
    assert message == t.error("empty_text"), message
    check_page(page, lang, "an empty text")

    correct(page, watch, "   ", 422)
    expect(result.get_by_role("alert")).to_have_attribute("data-code", "empty_text")
    expect(result.get_by_role("alert")).to_have_text(t.error("empty_text"))
    check_page(page, lang, "a blank text")


def walk_the_quiz(page: Page, lang: str, bank: QuestionBank) -> None:
    page.goto("/quiz")
    check_page(page, lang, "quiz page")
    question = bank.get(page.locator("#question").get_attribute("data-question-id"))
    answer = page.locator("#answer")
    for text, grade in ((question.expected, "exact"), (question.sentence, "wrong")):
        answer.fill(text)
        with page.expect_response("**/portal/api/quiz/answer"):
            answer.press("Enter")
        expect(page.locator("#result [data-grade]")).to_have_attribute("data-grade", grade)
        check_page(page, lang, f"quiz feedback ({grade})")


def walk_the_exam(page: Page, lang: str, bank: QuestionBank) -> None:
    page.goto("/exam")
    check_page(page, lang, "exam intro")
    with page.expect_navigation():
        page.locator("main form button[type=submit]").click()
    for number in range(1, 11):
        if number == 1:
            check_page(page, lang, "exam question")
        question = bank.get(page.locator("#question").get_attribute("data-question-id"))
        page.locator("#answer").fill(question.sentence if number % 4 == 0 else question.expected)
        with page.expect_navigation():
            page.locator("#answer").press("Enter")
    expect(page.get_by_test_id("score")).to_be_visible()
    check_page(page, lang, "exam result")
    page.goto("/exam")
    check_page(page, lang, "exam intro after an exam")


def walk_the_progress_page(page: Page, lang: str) -> None:
    t = TEXTS[lang]
    page.goto("/progress")
    check_page(page, lang, "progress page")
    text = page.locator("main").inner_text()
    for line in (t.progress_title, t.progress_intro):
        assert text.count(line) <= 1, f"{lang} progress page says {line!r} {text.count(line)} times"
    expect(page.locator("tbody tr[data-category]")).not_to_have_count(0)
    times = page.locator("main time[datetime]")
    expect(times).not_to_have_count(0)
    zone = ZoneInfo(ZONES[lang])
    for stamp in times.all():
        local = datetime.fromisoformat(stamp.get_attribute("datetime").replace("Z", "+00:00")).astimezone(zone)
        shown = stamp.inner_text()
        hour = rf"0?(?:{local.hour}|{local.hour % 12 or 12}):{local.minute:02d}"
        assert re.search(rf"(?<!\d){hour}(?!\d)", shown), f"{lang}: {shown!r} is not {local} in {zone}"
        assert str(local.day) in shown, f"{lang}: {shown!r} is not {local} in {zone}"


@pytest.fixture(scope="module")
def bank() -> QuestionBank:
    return QuestionBank.build()


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_learner_walks_the_portal_in_their_language(browser, portal_server, bank, artifacts, lang):
    page = new_page(browser, portal_server.url, viewport=PHONE, is_mobile=True, has_touch=True, timezone_id=ZONES[lang])
    watch = Watch(page)
    try:
        walk_the_tutor(page, watch, lang)
        walk_the_quiz(page, lang, bank)
        walk_the_exam(page, lang, bank)
        walk_the_progress_page(page, lang)
        page.screenshot(path=str(Path(artifacts) / f"portal-path-{lang}.png"), full_page=True)
        icon = page.request.get("/favicon.ico")
        assert icon.status == 200 and icon.headers["content-type"].startswith("image/"), icon.status
        assert page.locator("link[rel=icon]").count() == 1
        assert watch.problems == [], watch.problems
    finally:
        page.context.close()
