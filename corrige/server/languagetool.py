"""LanguageTool's HTTP API (v2) over the tutor, so that LanguageTool's add-ons, editor plugins
and clients (`language_tool_python`) can be pointed at corrige.

* `POST /v2/check` takes LanguageTool's form parameters: `text`, or `data` (LanguageTool's JSON
  annotation: `{"annotation": [{"text": …}, {"markup": …, "interpretAs": …}]}`, of which the text
  parts and the `interpretAs` of the markup are checked), `language`, `motherTongue` and the rule
  filters. The text goes through the same path as `POST /v1/grammar/correct` with `text`
  (`text_service.correct_text`): the same sentences, the same engine batch, the same edits.
* Each edit becomes a match: `offset` and `length` in UTF-16 code units (LanguageTool's Java
  strings, and the JavaScript of the add-ons) of the text as sent (with `data`: of the
  annotation's text and markup joined). The message is the tutor's Spanish gloss when
  `motherTongue` is Spanish (`es`, `es-ES`, …), the same in English otherwise. Every error
  category is one rule (`CORRIGE_PAST_IRREGULAR`, …) in one of LanguageTool's rule categories
  (`GRAMMAR`, `TYPOS`, `CASING`, …). Abstentions, and sentences not sent to the model, give no match.
* Only English is checked (`en`, `en-US`, `en-GB`, …, or `auto` when the text is English).
  Refusals are LanguageTool's: a plain-text `Error: …` body with its status (`error_text`, the
  app's error hook for `/v2/` paths), the stable code of `error_codes.py` in `X-Corrige-Error-Code`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.responses import PlainTextResponse, Response
from starlette.types import Scope

import corrige
from corrige.portal.i18n import CATEGORY_NAMES_EN, CATEGORY_NAMES_ES
from corrige.server.context import RequestMeta
from corrige.server.errors import ApiError
from corrige.server.guards import check_text
from corrige.server.languagetool_schema import (
    AUTO,
    AUTO_ENGLISH,
    ENGLISH,
    LANGUAGE_CODES,
    UNKNOWN_LANGUAGE,
    CheckForm,
    CheckResponse,
    Context,
    DetectedLanguage,
    IgnoreRange,
    LanguageEntry,
    LanguageOut,
    Match,
    MatchType,
    RangeLanguage,
    Replacement,
    Rule,
    RuleCategory,
    Software,
    Warnings,
)
from corrige.server.schemas import TextCorrectResponse, TextEditOut
from corrige.server.service import CorrectionService
from corrige.server.text_service import correct_text
from corrige.tutor.answer_text import split_gloss
from corrige.tutor.categories import BY_ID, CATEGORY_IDS, OTHER
from corrige.tutor.language import guess_language, language_name
from corrige.tutor.text import MAX_TEXT_CHARS

PREFIX = "/v2/"
CHECK_PATH = "/v2/check"
FORM_PATHS = (CHECK_PATH,)  # form-encoded bodies (the body guard takes them there instead of JSON)
CODE_HEADER = "X-Corrige-Error-Code"
CONTEXT_CHARS = 40  # characters of the text on each side of a match in its `context`

# the languages checked, with LanguageTool's names; `auto` checks a text detected as English

# ---------------------------------------------------------------- rules


@dataclass(frozen=True)
class RuleGroup:
    """One of LanguageTool's rule categories, with the issue type of its rules."""

    id: str
    name: str
    issue_type: str  # LanguageTool's (ITS 2.0) issue type: grammar, misspelling, typographical, …
    type_name: str  # the match's `type.typeName`


GRAMMAR = RuleGroup("GRAMMAR", "Grammar", "grammar", "Other")
GROUPS = {
    "spelling": RuleGroup("TYPOS", "Possible Typo", "misspelling", "UnknownWord"),
    "capitalisation": RuleGroup("CASING", "Capitalization", "typographical", "Other"),
    "word_confusion": RuleGroup("CONFUSED_WORDS", "Commonly Confused Words", "grammar", "Other"),
    "collocation": RuleGroup("COLLOCATIONS", "Collocations", "grammar", "Other"),
    "calque": RuleGroup("COLLOCATIONS", "Collocations", "grammar", "Other"),
    "punctuation": RuleGroup("PUNCTUATION", "Punctuation", "typographical", "Other"),
}


def rule_id(category: str) -> str:
    """The stable rule id of an error category: `past_irregular` → `CORRIGE_PAST_IRREGULAR`."""
    return "CORRIGE_" + category.upper()


def group_of(category: str) -> RuleGroup:
    return GROUPS.get(category, GRAMMAR)


def spanish(mother_tongue: str | None) -> bool:
    return bool(mother_tongue) and mother_tongue.strip().lower().split("-")[0].split("_")[0] == "es"


def category_name(category: str, es: bool) -> str:
    names = CATEGORY_NAMES_ES if es else CATEGORY_NAMES_EN
    name = names.get(category, category.replace("_", " "))
    return name[:1].upper() + name[1:]


def rule_description(category: str, es: bool) -> str:
    """`Irregular past: goed, buyed, teached` (the category's name and its typical errors)."""
    known = BY_ID.get(category)
    name = category_name(category, es)
    return f"{name}: {known.description}" if known is not None else name


def message_of(edit: TextEditOut, es: bool) -> str:
    """The tutor's gloss item (`pasado irregular: goed → went`), in English unless `es`: the same
    words with the category's English name (`irregular past: goed → went`)."""
    if es and edit.gloss:
        return edit.gloss
    items = split_gloss(edit.gloss)
    original, replacement = (items[0].original, items[0].replacement) if items else (edit.original, edit.replacement)
    names = CATEGORY_NAMES_ES if es else CATEGORY_NAMES_EN
    return f"{names.get(edit.category, edit.category.replace('_', ' '))}: {original} → {replacement}"


# ---------------------------------------------------------------- parameters


def id_list(value: str | None) -> frozenset[str]:
    return frozenset(part.strip() for part in (value or "").split(",") if part.strip())


@dataclass(frozen=True)
class Filters:
    """LanguageTool's rule selection: disabled rules and categories first, then `enabledOnly`."""

    enabled_only: bool = False
    enabled_rules: frozenset[str] = frozenset()
    disabled_rules: frozenset[str] = frozenset()
    enabled_categories: frozenset[str] = frozenset()
    disabled_categories: frozenset[str] = frozenset()

    @classmethod
    def of(cls, form: CheckForm) -> Filters:
        return cls(
            (form.enabledOnly or "").strip().lower() == "true",
            id_list(form.enabledRules),
            id_list(form.disabledRules),
            id_list(form.enabledCategories),
            id_list(form.disabledCategories),
        )

    def allows(self, rule: str, category: str) -> bool:
        if rule in self.disabled_rules or category in self.disabled_categories:
            return False
        return not self.enabled_only or rule in self.enabled_rules or category in self.enabled_categories


def supported_codes() -> str:
    return ", ".join(LANGUAGE_CODES)


def checked_language(form: CheckForm) -> str:
    if form.language is None or not form.language.strip():
        raise ApiError(
            400,
            "missing_parameter",
            f"Missing 'language' parameter, e.g. 'language=en-US' (one of {supported_codes()})",
        )
    if form.language not in LANGUAGE_CODES:
        raise ApiError(
            400,
            "unsupported_language",
            f"'{form.language}' is not a language code known to LanguageTool. Supported language codes are: "
            f"{supported_codes()}. corrige checks English written by Spanish speakers.",
        )
    return form.language


@dataclass(frozen=True)
class Source:
    """What was sent (`original`: the text, or the annotation's parts joined) and what is checked
    (`plain`), with each plain character's place in `original` (`starts`, `ends`)."""

    original: str
    plain: str
    starts: list[int]  # original index of plain[i] (an `interpretAs` character: its markup's start)
    ends: list[int]  # original index just after plain[i] (an `interpretAs` character: its markup's end)
    field: str

    @classmethod
    def of_text(cls, text: str) -> Source:
        return cls(text, text, list(range(len(text))), list(range(1, len(text) + 1)), "text")

    def span(self, offset: int, length: int) -> tuple[int, int]:
        """A plain span as (start, end) in `original`."""
        start = self.starts[offset] if offset < len(self.starts) else len(self.original)
        end = self.ends[offset + length - 1] if length > 0 else start
        return start, end


def annotation_source(data: str) -> Source:
    """LanguageTool's `data`: text parts are checked, markup is read as its `interpretAs` (or nothing)."""

    def invalid(why: str) -> ApiError:
        return ApiError(400, "invalid_data", f"Invalid 'data' parameter: {why}")

    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise invalid(f"not JSON ({exc})") from None
    parts = parsed.get("annotation") if isinstance(parsed, dict) else None
    if not isinstance(parts, list):
        raise invalid('expected {"annotation": [...]}')
    original: list[str] = []
    plain: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    for i, part in enumerate(parts):
        if not isinstance(part, dict) or ("text" in part) == ("markup" in part):
            raise invalid(f"annotation[{i}] must have either 'text' or 'markup'")
        if "text" in part:
            text = part["text"]
            if not isinstance(text, str):
                raise invalid(f"annotation[{i}].text must be a string")
            starts += range(at, at + len(text))
            ends += range(at + 1, at + len(text) + 1)
            original.append(text)
            plain.append(text)
        else:
            markup, interpret = part["markup"], part.get("interpretAs", "")
            if not isinstance(markup, str) or not isinstance(interpret, str):
                raise invalid(f"annotation[{i}]: 'markup' and 'interpretAs' must be strings")
            starts += [at] * len(interpret)
            ends += [at + len(markup)] * len(interpret)
            original.append(markup)
            plain.append(interpret)
        at += len(original[-1])
    return Source("".join(original), "".join(plain), starts, ends, "data")


def source_of(form: CheckForm) -> Source:
    if form.text is not None:
        return Source.of_text(form.text)
    if form.data is not None:
        return annotation_source(form.data)
    raise ApiError(400, "missing_parameter", "Missing 'text' or 'data' parameter")


def utf16(text: str) -> Callable[[int], int]:
    """Index into `text` → UTF-16 code units before it (a character beyond the BMP counts two)."""
    if all(ord(ch) < 0x10000 for ch in text):
        return lambda i: i
    units = [0]
    for ch in text:
        units.append(units[-1] + (2 if ord(ch) >= 0x10000 else 1))
    return lambda i: units[i]


# ---------------------------------------------------------------- the check


def build_date() -> str:
    """When this corrige was built: its package files' time (LanguageTool's `buildDate` format)."""
    stamp = Path(corrige.__file__).stat().st_mtime
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S +0000")


def detected(plain: str, requested: str) -> DetectedLanguage:
    found = guess_language(plain)
    if found in (None, "en"):
        code = AUTO_ENGLISH if requested == AUTO else requested
        return DetectedLanguage(name=ENGLISH[code], code=code)
    if len(found) == 2:  # a language told by its words; else a script's name
        return DetectedLanguage(name=language_name(found), code=found)
    return DetectedLanguage(name=language_name(found), code=UNKNOWN_LANGUAGE)


def context_of(plain: str, start: int, end: int) -> Context:
    """LanguageTool's context: the match with up to `CONTEXT_CHARS` on each side, `...` where cut,
    line breaks as spaces."""
    left, right = max(0, start - CONTEXT_CHARS), min(len(plain), end + CONTEXT_CHARS)
    before = ("..." if left > 0 else "") + plain[left:start]
    text = (before + plain[start:right] + ("..." if right < len(plain) else "")).replace("\n", " ").replace("\r", " ")
    units = utf16(text)
    return Context(text=text, offset=units(len(before)), length=units(len(before) + end - start) - units(len(before)))


def match_of(edit: TextEditOut, source: Source, sentence: str, es: bool) -> Match:
    start, end = source.span(edit.offset, edit.length)
    units = utf16(source.original)
    group = group_of(edit.category)
    return Match(
        message=message_of(edit, es),
        shortMessage=category_name(edit.category, es),
        replacements=[Replacement(value=edit.replacement)],
        offset=units(start),
        length=units(end) - units(start),
        context=context_of(source.plain, edit.offset, edit.offset + edit.length),
        sentence=sentence,
        type=MatchType(typeName=group.type_name),
        rule=Rule(
            id=rule_id(edit.category),
            description=rule_description(edit.category, es),
            issueType=group.issue_type,
            category=RuleCategory(id=group.id, name=group.name),
        ),
    )


def check_response(
    form: CheckForm, language: str, source: Source, found: DetectedLanguage, result: TextCorrectResponse | None
) -> CheckResponse:
    es = spanish(form.motherTongue)
    filters = Filters.of(form)
    units = utf16(source.original)
    matches: list[Match] = []
    ranges: list[list[int]] = []
    ignore: list[IgnoreRange] = []
    for sentence in result.sentences if result is not None else []:
        start, end = (units(i) for i in source.span(sentence.offset, sentence.length))
        ranges.append([start, end])
        if sentence.status == "skipped" and sentence.reason == "not_english":
            code = sentence.language if sentence.language and len(sentence.language) == 2 else UNKNOWN_LANGUAGE
            ignore.append(IgnoreRange(from_=start, to=end, language=RangeLanguage(code=code)))
        for edit in sentence.edits:
            if filters.allows(rule_id(edit.category), group_of(edit.category).id):
                matches.append(match_of(edit, source, sentence.sentence, es))
    code = found.code if language == AUTO else language
    return CheckResponse(
        software=Software(buildDate=BUILD_DATE),
        warnings=Warnings(),
        language=LanguageOut(name=ENGLISH[code], code=code, detectedLanguage=found),
        matches=matches,
        sentenceRanges=ranges,
        ignoreRanges=ignore,
    )


async def check(service: CorrectionService, form: CheckForm, meta: RequestMeta) -> CheckResponse:
    """`POST /v2/check`: the tutor's corrections of the text as LanguageTool's matches."""
    language = checked_language(form)
    source = source_of(form)
    plain = source.plain
    check_text(plain, source.field)
    if len(plain) > MAX_TEXT_CHARS:
        raise ApiError(
            413,
            "text_too_long",
            f"Your text exceeds the limit of {MAX_TEXT_CHARS} characters (it's {len(plain)} characters). "
            "Please submit a shorter text.",
        )
    found = detected(plain, language)
    if language == AUTO and found.code not in ENGLISH:
        raise ApiError(
            400,
            "unsupported_language",
            f"The text was detected as {found.name} ('{found.code}'), which this server does not check. "
            f"Supported language codes are: {supported_codes()}.",
        )
    result = None
    if found.code in ENGLISH and guess_language(plain) is not None:  # English words: the tutor reads them
        response = await correct_text(service, plain, meta, rules=False)
        result = TextCorrectResponse.model_validate_json(response.body)
    return check_response(form, language, source, found, result)


def languages() -> list[LanguageEntry]:
    """`GET /v2/languages`: the English variants, LanguageTool's way (`code` short, `longCode` full)."""
    return [LanguageEntry(name=name, code=code.split("-")[0], longCode=code) for code, name in ENGLISH.items()]


def rules_table() -> str:
    """docs/languagetool.md's table of rules (a test holds the page to it): one per error category."""
    rows = ["| rule id | error category | rule category | issue type |", "|---|---|---|---|"]
    for category in (*CATEGORY_IDS, OTHER):
        group = group_of(category)
        description = rule_description(category, False)
        rows.append(f"| `{rule_id(category)}` | {description} | `{group.id}` ({group.name}) | `{group.issue_type}` |")
    return "\n".join(rows) + "\n"


BUILD_DATE = build_date()


# ---------------------------------------------------------------- errors


def error_text(scope: Scope, error: ApiError) -> Response | None:
    """The app's error hook for `/v2/`: LanguageTool's plain-text `Error: …` with the status;
    None elsewhere."""
    if not str(scope.get("path", "")).startswith(PREFIX):
        return None
    headers = {**error.headers, CODE_HEADER: error.code}
    return PlainTextResponse(f"Error: {error.message}", error.status, headers)


def chain_error_pages(*hooks: Callable[[Scope, ApiError], Any]) -> Callable[[Scope, ApiError], Any]:
    """One error hook from several: the first that renders the error."""

    def hook(scope: Scope, error: ApiError) -> Any:
        for page_for in hooks:
            page = page_for(scope, error)
            if page is not None:
                return page
        return None

    return hook
