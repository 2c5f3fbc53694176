"""Which language and which script a text is in: stop words name the language, Unicode names the script."""

from __future__ import annotations

import re
import unicodedata

_STOPWORDS = {
    "en": "the and is are was were of to in that it you he she we they this with for not have has be my your "
    "what there their would can will do does did at on from but i am an a",
    "es": "el la los las del que y en es por con para una unos unas pero como más muy está estoy soy son "
    "tengo tiene hay yo tú usted nosotros ellos ella su sus mi mis este esta esto eso porque cuando donde "
    "qué cómo también gracias hola ya lo le les se al sí entre sobre todo mucho",
    "fr": "le la les des une est et je tu il elle nous vous ils sont avec pour dans pas que qui ce cette "
    "mais très aussi bonjour merci suis ai au aux du",
    "pt": "o os as um uma é são não com para por mas muito também eu você ele ela nós eles obrigado olá "
    "está estou tenho do da dos das em",
    "it": "il lo gli le una è sono non con per ma molto anche io tu lui lei noi loro grazie ciao sono ho "
    "della delle degli che",
    "de": "der die das und ist sind nicht mit für aber sehr auch ich du er sie wir ihr danke hallo bin "
    "habe ein eine einen einer im in dem den zu von",
}
# words other languages share with English, which say nothing of the language: Portuguese "as" and
# "do" are in "as soon as possible" and "do you", German "in" and "die", Spanish "son"
_ENGLISH_TOO = frozenset(_STOPWORDS["en"].split()) | frozenset("as do son die in a no me he".split())
_STOPWORD_SETS = {
    lang: frozenset(words.split()) - (_ENGLISH_TOO if lang != "en" else frozenset())
    for lang, words in _STOPWORDS.items()
}
LANGUAGE_NAMES = {
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "pt": "Portuguese",
    "it": "Italian",
    "de": "German",
}
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def script_of(ch: str) -> str:
    """The script of a letter from its Unicode name ("LATIN", "CYRILLIC", "CJK", ...)."""
    name = unicodedata.name(ch, "")
    first = name.split(" ", 1)[0]
    return "CJK" if first in {"CJK", "HIRAGANA", "KATAKANA", "HANGUL"} else first or "UNKNOWN"


def scripts(text: str) -> dict[str, int]:
    """Letters per script."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            script = script_of(ch)
            counts[script] = counts.get(script, 0) + 1
    return counts


def guess_language(text: str) -> str | None:
    """ "en", another language code (by its stop words), a script's name for letters that are
    mostly not Latin ("Cyrillic"), or None when there are no words to tell from."""
    counts = scripts(text)
    letters = sum(counts.values())
    if not letters:
        return None
    latin = counts.get("LATIN", 0)
    if latin < letters / 2:
        top = max(counts, key=lambda s: counts[s])
        return top.title() if top != "CJK" else "CJK"
    words = [w.lower() for w in _WORD.findall(text)]
    hits = {lang: sum(w in stop for w in words) for lang, stop in _STOPWORD_SETS.items()}
    if ("¿" in text or "¡" in text) and hits["es"] >= hits["en"]:
        return "es"  # "¿Do you want to come?" is English with a Spanish habit, which the tutor marks
    best = max(hits, key=lambda lang: hits[lang])
    if best != "en" and hits[best] > hits["en"] and hits[best] >= max(2, len(words) // 5):
        return best
    if best != "en" and len(words) <= 3 and hits[best] > hits["en"]:
        return best  # "Muchas gracias por todo" is too short for the share
    return "en"


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, f"{code} script")


def foreign_language(text: str) -> str | None:
    """What `guess_language` names when `text` is not English; None for English, or no words."""
    language = guess_language(text)
    return None if language in (None, "en") else language


def not_english_message(field: str, language: str, what: str = "text") -> str:
    """The `not_english` refusal's message, the same on every route that takes learner text."""
    return (
        f"{field}: the {what} looks {language_name(language)} ({language}); corrige corrects English written "
        "by Spanish speakers"
    )
