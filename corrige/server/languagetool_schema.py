"""LanguageTool's v2 API as corrige answers it: the languages it takes, the form of `POST /v2/check`
and the JSON it answers, in LanguageTool's own field names (`corrige.server.languagetool` fills them)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import corrige
from corrige.server.guards import text_pattern

API_VERSION = 1
ENGLISH = {
    "en": "English",
    "en-US": "English (US)",
    "en-GB": "English (GB)",
    "en-AU": "English (Australian)",
    "en-CA": "English (Canadian)",
    "en-NZ": "English (New Zealand)",
    "en-ZA": "English (South African)",
}
AUTO = "auto"
AUTO_ENGLISH = "en-US"  # what `auto` reports for an English text
LANGUAGE_CODES = (*ENGLISH, AUTO)
UNKNOWN_LANGUAGE = "zz"  # LanguageTool's code for a language it cannot name


class Software(BaseModel):
    name: str = "corrige"
    version: str = corrige.__version__
    buildDate: str = Field(description="When the installed corrige was built (its package files' time), UTC.")
    apiVersion: int = API_VERSION
    status: str = ""
    premium: bool = False


class DetectedLanguage(BaseModel):
    name: str
    code: str = Field(description="`en-US` for English, else the language told (`es`) or `zz` (a script).")


class LanguageOut(BaseModel):
    name: str
    code: str = Field(description="The language checked: `language` as sent, or `en-US` for `auto`.")
    detectedLanguage: DetectedLanguage


class Context(BaseModel):
    text: str = Field(description="Up to 40 characters of the text on each side of the match (`...` where cut).")
    offset: int = Field(description="Where the match starts in `text` (UTF-16 code units).")
    length: int


class Replacement(BaseModel):
    value: str


class MatchType(BaseModel):
    typeName: str


class RuleCategory(BaseModel):
    id: str
    name: str


class Rule(BaseModel):
    id: str = Field(description="One rule per error category: `CORRIGE_` and the category id in capitals.")
    description: str
    issueType: str
    category: RuleCategory


class Match(BaseModel):
    message: str = Field(description="The tutor's gloss: in Spanish when `motherTongue` is `es`, else in English.")
    shortMessage: str = Field(description="The error category's name.")
    replacements: list[Replacement]
    offset: int = Field(description="Start of the match in the text as sent, in UTF-16 code units.")
    length: int = Field(description="Its length in UTF-16 code units.")
    context: Context
    sentence: str
    type: MatchType
    rule: Rule


class Warnings(BaseModel):
    incompleteResults: bool = False


class RangeLanguage(BaseModel):
    code: str


class IgnoreRange(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: int = Field(alias="from", description="A sentence in another language, not checked: start.")
    to: int
    language: RangeLanguage


class CheckResponse(BaseModel):
    software: Software
    warnings: Warnings
    language: LanguageOut
    matches: list[Match]
    sentenceRanges: list[list[int]] = Field(description="Each sentence as [start, end) in UTF-16 code units.")
    ignoreRanges: list[IgnoreRange]


class LanguageEntry(BaseModel):
    name: str
    code: str
    longCode: str


def form_schema(schema: dict[str, Any]) -> None:
    """A form's fields are strings, present or absent (never null); `language` and one of `text`
    and `data` are required (the route answers LanguageTool's 400 without them)."""
    for field in schema["properties"].values():
        options = field.pop("anyOf", None)
        if options:
            field.update(next(o for o in options if o.get("type") != "null"))
    schema["required"] = ["language"]
    schema["anyOf"] = [{"required": ["text"]}, {"required": ["data"]}]


class CheckForm(BaseModel):
    """`POST /v2/check`'s form parameters (LanguageTool's; others, such as `apiKey`, are ignored)."""

    model_config = ConfigDict(json_schema_extra=lambda schema: form_schema(schema))

    text: str | None = Field(
        None,
        description="The text to check (`text` or `data`): at most 5,000 characters (else 413 `text_too_long`).",
        json_schema_extra={"pattern": text_pattern()},
    )
    data: str | None = Field(
        None,
        description='LanguageTool\'s annotated text as JSON: `{"annotation": [{"text": "…"}, {"markup": "<b>"}, '
        '{"markup": "<br>", "interpretAs": "\\n"}]}`; offsets are into its parts joined.',
    )
    language: str | None = Field(
        None,
        description="`en`, `en-US`, `en-GB`, … or `auto` (the text must then be English).",
        json_schema_extra={"enum": list(LANGUAGE_CODES)},
    )
    motherTongue: str | None = Field(None, description="`es` (or `es-ES`, …): messages in Spanish.")
    enabledRules: str | None = Field(None, description="Rule ids, comma-separated (all are on by default).")
    disabledRules: str | None = Field(None, description="Rule ids, comma-separated: no matches of these.")
    enabledCategories: str | None = Field(None, description="Rule category ids, comma-separated.")
    disabledCategories: str | None = Field(None, description="Rule category ids, comma-separated.")
    enabledOnly: str | None = Field(None, description="`true`: only the enabled rules and categories.")
    level: str | None = Field(None, description="`default` or `picky` (the same rules).")
    preferredVariants: str | None = Field(None, description="Accepted; every English variant is checked alike.")
