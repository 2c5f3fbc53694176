"""What the fixed learner patterns share: word classes from lemminflect's tables, a few word
lists, and the edit that replaces a run of tokens (`corrige.tutor.patterns`,
`corrige.tutor.phrase_patterns`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor.edit_labels import CAPITALISED
from corrige.tutor.edits import Edit, Token

NUMBER_WORDS = frozenset(
    """two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
    eighteen nineteen twenty thirty forty fifty hundred many several""".split()
)
TIME_UNITS = frozenset("years months weeks days hours minutes nights".split())
# nouns that look like a verb's -ing ("good in spring" is a time, "the meeting" a thing)
ING_NOUNS = frozenset(
    """spring morning evening ceiling building wedding meeting clothing king ring thing painting feeling
    beginning ending earring sibling darling pudding filling setting housing heating parking lightning
    string swing wing sing nothing something anything everything""".split()
)
ENDS_A_PHRASE = frozenset(". , ; ! ? and but".split())
# verbs learners leave without -s that are not also common nouns or adjectives before an object
THIRD_PERSON_VERBS = frozenset(
    """go have want like need know live work play study think say make do love get come eat drink watch
    speak write take see feel look seem use understand believe prefer remember forget try buy visit
    travel teach learn listen wait help enjoy hate agree leave give open close start finish""".split()
)

DAYS = frozenset(w for w in CAPITALISED if w.endswith(("day", "days")))
MONTHS = frozenset("january february march april may june july august september october november december".split())
PAST_PERIODS = DAYS | frozenset("night week month year summer winter spring autumn weekend".split())
PAST_SUBJECTS = frozenset("i you we they he she".split())
SUBJECT_PRONOUNS = PAST_SUBJECTS | {"it"}
BE_FORMS = frozenset("am are is was were".split())
# a verb's singular and plural after a subject ("my parents is" → are, "people was" → were)
SINGULAR_TO_PLURAL = {
    "is": "are",
    "was": "were",
    "has": "have",
    "isn't": "aren't",
    "wasn't": "weren't",
    "doesn't": "don't",
    "hasn't": "haven't",
}


_UNITS = "one two three four five six seven eight nine".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
AGES = frozenset(_UNITS + _TEENS + _TENS + [f"{t}-{u}" for t in _TENS for u in _UNITS])


def is_age(word: str) -> bool:
    """A person's age in years: 1 to 120 in digits, or written out ("sixteen", "twenty-three")."""
    return (word.isdigit() and 0 < int(word) <= 120) or word in AGES


def is_number(word: str) -> bool:
    """A count above one: "two" ... "twelve", "many", "several", or digits."""
    return word in NUMBER_WORDS or (word.isdigit() and int(word) > 1)


@lru_cache(maxsize=4096)
def is_plural_noun(word: str) -> bool:
    """A noun's plural form (cats, children, people), not a noun whose own form ends in -s (news)."""
    nouns = getAllLemmas(word).get("NOUN", ())
    return word == "people" or (bool(nouns) and word not in nouns)


@lru_cache(maxsize=4096)
def is_base_verb(word: str) -> bool:
    return word in getAllLemmas(word).get("VERB", ())


@lru_cache(maxsize=4096)
def is_third_person_form(word: str) -> bool:
    """A verb's -s form (works, brings, has)."""
    return word.endswith("s") and any(word in getInflection(v, "VBZ") for v in getAllLemmas(word).get("VERB", ()))


def word_after(words: list[str], i: int) -> str:
    """`words[i]`, or "." past the end (a sentence ends there)."""
    return words[i] if i < len(words) else "."


def span_text(tokens: Sequence[Token], text: str, i: int, j: int) -> str:
    """The text of tokens ``[i, j)`` as written, spaces between them included."""
    return text[tokens[i].start : tokens[j - 1].end]


def replace_tokens(tokens: Sequence[Token], i: int, j: int, replacement: str, category: str, text: str) -> Edit:
    """Replace tokens ``[i, j)`` (in ``text``) by ``replacement``, keeping a capital first letter."""
    start, end = tokens[i].start, tokens[j - 1].end
    original = text[start:end]
    if original[:1].isupper() and replacement:
        replacement = replacement[0].upper() + replacement[1:]
    return Edit(start, end, original, replacement, category)


@lru_cache(maxsize=4096)
def third_person_of(verb: str) -> str | None:
    """``verb``'s -s form when it is a verb of the list whose past differs from its base."""
    if verb not in THIRD_PERSON_VERBS or getInflection(verb, "VBD") == (verb,):
        return None
    forms = getInflection(verb, "VBZ")
    return forms[0] if forms else None


@lru_cache(maxsize=4096)
def past_of(verb: str) -> str | None:
    """The past of a verb of the list, given as its base or -s form ("go", "goes" → "went");
    None where the past is the base form ("put") or the word is an auxiliary."""
    for lemma in getAllLemmas(verb).get("VERB", ()):
        if lemma in THIRD_PERSON_VERBS and lemma not in ("have", "do") and verb in (lemma, third_person_of(lemma)):
            past = getInflection(lemma, "VBD")
            return past[0] if past and past[0] != lemma else None
    return None


@lru_cache(maxsize=4096)
def base_of_past(word: str) -> str | None:
    """The base form of a verb's simple past (went → go, wanted → want), None for anything else
    (a past that is its base form too: "put", "read")."""
    for lemma in getAllLemmas(word).get("VERB", ()):
        if word != lemma and word in getInflection(lemma, "VBD") and word not in getInflection(lemma, "VB"):
            return lemma
    return None
