"""Fixed patterns of Spanish speakers' English that are wrong wherever they occur.

"He don't", "people is", "I am agree", "since three years", "more better": the error catalogue
(`categories.py`) names them, learners write them in every text, and a word sequence tells them
for sure, without the model. Each rule looks at a few neighbouring words and proposes an edit of
the words that are wrong, with its category (so its gloss); the tutor adds them to the model's
answer as it adds spelling fixes. Rules fire only where the words leave no other reading: a verb
after "he" only at the start of a clause ("does he have", "let it go", "do it right" are left
alone), and only verbs whose past is not their base form ("she cut" may be past).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor.edits import Edit, Token, tokenize

THIRD_PERSON_SUBJECTS = frozenset({"he", "she", "it"})
# after these a subject pronoun starts a clause: "When he go", "and she like"
CLAUSE_OPENERS = frozenset(
    ", ; : and but because when if so although though while after before until since that where who".split()
)
# verbs learners leave without -s that are not also common nouns or adjectives before an object
THIRD_PERSON_VERBS = frozenset(
    """go have want like need know live work play study think say make do love get come eat drink watch
    speak write take see feel look seem use understand believe prefer remember forget try buy visit
    travel teach learn listen wait help enjoy hate agree leave give open close start finish""".split()
)
PEOPLE_VERBS = {"is": "are", "was": "were", "has": "have", "isn't": "aren't", "wasn't": "weren't", "doesn't": "don't"}
NUMBER_WORDS = frozenset("two three four five six seven eight nine ten eleven twelve many several".split())
TIME_UNITS = frozenset("years months weeks days hours minutes".split())
NEGATED = frozenset("don't doesn't didn't can't won't couldn't wouldn't".split())
NEGATIVE_TO_ANY = {"nothing": "anything", "nobody": "anybody", "nowhere": "anywhere", "none": "any"}
DEPEND_FORMS = frozenset("depend depends depended depending".split())
# "explain me how it works" → "explain to me how…"; before a noun phrase the object must move
# ("explain me the rule" → "explain the rule to me"), which is not a local fix
QUESTION_WORDS = frozenset("how why what where when who which if whether".split())


def _is_number(word: str) -> bool:
    return word in NUMBER_WORDS or (word.isdigit() and int(word) > 1)


@lru_cache(maxsize=4096)
def _third_person(verb: str) -> str | None:
    """``verb``'s -s form when it is a verb of the list whose past differs from its base."""
    if verb not in THIRD_PERSON_VERBS or getInflection(verb, "VBD") == (verb,):
        return None
    forms = getInflection(verb, "VBZ")
    return forms[0] if forms else None


@lru_cache(maxsize=4096)
def _is_comparative(word: str) -> bool:
    """bigger, easier (an -er form of an adjective), or better/worse."""
    return word in ("better", "worse") or (word.endswith("er") and "ADJ" in getAllLemmas(word) and word != "other")


Rule = Callable[[Sequence[Token], list[str], int], Iterator[Edit]]


def _edit(tokens: Sequence[Token], i: int, j: int, replacement: str, category: str, text: str) -> Edit:
    """Replace tokens ``[i, j)`` (in ``text``) by ``replacement``, keeping a capital first letter."""
    start, end = tokens[i].start, tokens[j - 1].end
    original = text[start:end]
    if original[:1].isupper() and replacement:
        replacement = replacement[0].upper() + replacement[1:]
    return Edit(start, end, original, replacement, category)


def third_person(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        if words[i] not in THIRD_PERSON_SUBJECTS or (i > 0 and words[i - 1] not in CLAUSE_OPENERS):
            continue
        verb = words[i + 1]
        fixed = "doesn't" if verb == "don't" else _third_person(verb)
        if fixed:
            yield _edit(tokens, i + 1, i + 2, fixed, "third_person", text)


def people_plural(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        if words[i] == "people" and words[i + 1] in PEOPLE_VERBS:
            yield _edit(tokens, i + 1, i + 2, PEOPLE_VERBS[words[i + 1]], "people_plural", text)


def verb_patterns(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        pair = (words[i], words[i + 1])
        if pair in (("am", "agree"), ("i'm", "agree")) and (words[i] == "i'm" or (i > 0 and words[i - 1] == "i")):
            first = i - 1 if words[i] == "am" else i  # "I am agree" → "I agree"
            yield _edit(tokens, first, i + 2, "I agree", "verb_pattern", text)
        elif (
            words[i] in ("explain", "explains", "explained")
            and words[i + 1] in ("me", "us", "him", "her")
            and i + 2 < len(words)
            and words[i + 2] in QUESTION_WORDS
        ):
            yield _edit(tokens, i + 1, i + 2, f"to {words[i + 1]}", "verb_pattern", text)


def since_for(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 2):
        if words[i] == "since" and _is_number(words[i + 1]) and words[i + 2] in TIME_UNITS:
            if i + 3 < len(words) and words[i + 3] == "ago":
                continue  # "since three years ago" is another mistake
            yield _edit(tokens, i, i + 1, "for", "present_perfect", text)


def prepositions(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        if words[i] in DEPEND_FORMS and words[i + 1] == "of":
            yield _edit(tokens, i + 1, i + 2, "on", "preposition", text)


def comparatives(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        if words[i] == "more" and _is_comparative(words[i + 1]):
            yield _edit(tokens, i, i + 2, words[i + 1], "comparative", text)


def double_negation(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 2):
        if words[i] in NEGATED and words[i + 2] in NEGATIVE_TO_ANY:
            yield _edit(tokens, i + 2, i + 3, NEGATIVE_TO_ANY[words[i + 2]], "double_negation", text)


def there_are(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 2):
        if words[i] == "there" and words[i + 1] in ("is", "was") and _is_number(words[i + 2]):
            plural = "are" if words[i + 1] == "is" else "were"
            yield _edit(tokens, i + 1, i + 2, plural, "there_is_plural", text)


RULES = (third_person, people_plural, verb_patterns, since_for, prepositions, comparatives, double_negation, there_are)


def pattern_fixes(sentence: str) -> list[Edit]:
    """Every rule's edits on ``sentence``, in order, none overlapping an earlier one."""
    tokens = tokenize(sentence)
    words = [t.text.lower().replace("’", "'") for t in tokens]
    found = sorted((e for rule in RULES for e in rule(tokens, words, sentence)), key=lambda e: (e.start, e.end))
    kept: list[Edit] = []
    for edit in found:
        if not kept or edit.start >= kept[-1].end:
            kept.append(edit)
    return kept
