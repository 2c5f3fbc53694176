"""Cleaning one sentence of the training corpus: normalised (`normalize`), then kept or dropped
with a reason (`clean_sentence`, in `DROP_REASONS` order)."""

from __future__ import annotations

import re
import unicodedata

MIN_WORDS = 3
MAX_WORDS = 60

# Why a candidate sentence was dropped, in the order the checks run (a sentence counts under the first that fails).
DROP_REASONS = (
    "characters",  # a character outside everyday English text (other scripts, symbols)
    "url",  # a web or mail address
    "brackets",  # brackets or braces: footnotes, stage directions, annotations
    "too_short",  # fewer than MIN_WORDS words
    "too_long",  # more than MAX_WORDS words
    "all_caps",  # mostly capital letters: headings, shouting, titles
    "heading",  # a chapter, part or section heading
    "lowercase_start",  # a piece of a sentence: starts with a small letter
    "no_end_punctuation",  # does not end with . ! or ? (a closing quote may follow)
    "unbalanced_quotes",  # an odd number of double quotes: a piece cut out of dialogue
    "archaic",  # thou, thee, hath, doth, 'tis and the like
    "profanity",  # a word from PROFANITY
    "fragment",  # a reader's verdict: not a sentence (a WordNet example that is only a phrase)
    "duplicate",  # the same sentence, ignoring case, was already kept
)

ARCHAIC_WORDS = frozenset(
    """thou thee thy thine thyself ye hath doth dost hast shalt wilt canst couldst wouldst shouldst mayst mightst
    didst hadst wast wert 'tis 'twas 'twere 'twill 'twould o'er e'er ne'er e'en methinks prithee forsooth verily
    hither thither whither whence wherefore betwixt perchance nay yea unto oft ere""".split()
)

# A short list: slurs and the strongest swear words. Mild words ("damn", "hell") are everyday English and stay.
PROFANITY = re.compile(
    r"\b(?:(?:mother)?fuck\w*|shit\w*|bullshit\w*|bitch\w*|bastards?|cunts?|assholes?|arseholes?|whores?|sluts?"
    r"|nigg\w*|faggots?|fags|dickheads?|twats?|wank\w*|pussy|pussies|retards?)\b",
    re.IGNORECASE,
)

_TRANSLATE = str.maketrans(
    {
        "\u201c": '"',  # “
        "\u201d": '"',  # ”
        "\u201e": '"',  # „
        "\u201f": '"',
        "\u00ab": '"',  # «
        "\u00bb": '"',  # »
        "\u2018": "'",  # ‘
        "\u2019": "'",  # ’
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",  # prime, used as an apostrophe
        "`": "'",
        "\u00b4": "'",
        "\u2010": "-",  # hyphen
        "\u2011": "-",  # non-breaking hyphen
        "\u2013": "-",  # en dash
        "\u2014": " - ",  # em dash
        "\u2015": " - ",
        "\u2212": "-",
        "\u2060": "",  # word joiner (Standard Ebooks puts one before each em dash)
        "\u00ad": "",  # soft hyphen
        "\u200b": "",
        "\u200c": "",
        "\u200d": "",
        "\ufeff": "",
    }
)
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,;:!?](?:\s|$)|\.(?:\s|$))")
WORD = re.compile(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*")
_ARCHAIC_TOKEN = re.compile(r"'?[a-z]+(?:'[a-z]+)?")
_ALLOWED_ASCII = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'\"-&%$/()[]{}<>"
)  # brackets are allowed here so that they count under their own reason
_URL = re.compile(
    r"(?:https?://|ftp://|www\.|\b[\w-]+\.(?:com|org|net|edu|gov|io|co\.uk|html?)\b|[\w.+-]+@[\w-]+\.\w)", re.IGNORECASE
)
_BRACKETS = re.compile(r"[()\[\]{}<>]")
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen"
    "|eighteen|nineteen|twenty|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|the last"
)
_HEADING = re.compile(
    r"^(?:(?:chapter|book|part|volume|vol\.|section|act|scene|canto|stave|letter|appendix)\s+"
    rf"(?:[ivxlcdm]+|\d+|{_NUMBER_WORDS})\b\s*(?:[.:-]|$)"
    r"|(?-i:[IVXLCDM]+\.\s)|\d+\.\s+[A-Z]"
    r"|(?:contents|preface|prologue|epilogue|introduction|foreword|afterword|the end)\s*[.:]?$)",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"[.!?]['\"]*$")
SENTENCE_BREAK = re.compile(r"[.!?]['\")]*\s+\S")  # running text that may hold more than one sentence


def normalize(text: str) -> str:
    """Unicode NFKC, straight quotes, dashes and ellipses in ASCII, one space between words."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE)
    text = _SPACES.sub(" ", text).strip()
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


def word_count(text: str) -> int:
    return len(WORD.findall(text))


def _bad_characters(text: str) -> bool:
    letters = ascii_letters = 0
    for ch in text:
        if ch in _ALLOWED_ASCII:
            if ch.isalpha():
                letters += 1
                ascii_letters += 1
            continue
        # a Latin letter with a diacritic (café, naïve) is fine in small numbers; anything else is not
        if not (ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN")):
            return True
        letters += 1
    return letters == 0 or ascii_letters < 0.9 * letters


def _all_caps(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    if len(letters) < 4:
        return False
    upper = sum(ch.isupper() for ch in letters)
    return upper / len(letters) > 0.5


def _lowercase_start(text: str) -> bool:
    for ch in text:
        if ch.isalnum():
            return not (ch.isupper() or ch.isdigit())
    return True


def clean_sentence(raw: str) -> tuple[str, str | None]:
    """The normalised sentence and why it is dropped (None when it is kept). Checks run in DROP_REASONS order."""
    text = normalize(raw)
    if _bad_characters(text):
        return text, "characters"
    if _URL.search(text):
        return text, "url"
    if _BRACKETS.search(text):
        return text, "brackets"
    words = word_count(text)
    if words < MIN_WORDS:
        return text, "too_short"
    if words > MAX_WORDS:
        return text, "too_long"
    if _all_caps(text):
        return text, "all_caps"
    if _HEADING.match(text):
        return text, "heading"
    if _lowercase_start(text):
        return text, "lowercase_start"
    if not SENTENCE_END.search(text):
        return text, "no_end_punctuation"
    if text.count('"') % 2:
        return text, "unbalanced_quotes"
    if any(t in ARCHAIC_WORDS or t.lstrip("'") in ARCHAIC_WORDS for t in _ARCHAIC_TOKEN.findall(text.lower())):
        return text, "archaic"
    if PROFANITY.search(text):
        return text, "profanity"
    return text, None
