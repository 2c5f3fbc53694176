"""Agreement a learner gets wrong where the subject is not a pronoun right before its verb: a
singular noun with "don't" (*The director don't want*), an activity as subject (*Doing sport make
me feel better*), a relative after a singular noun (*the river which cross the town*), "news"
with a phrase between (*The news about the trip were*), and "there is not" before a noun with no
determiner (*there is not cinema*, *there is not jobs*). Each fires only where the words leave no
other reading; the parser's check (`agreement.py`) looks again at every verb changed here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token

SUBJECT_DETERMINERS = frozenset("the my your his her our their this that".split())
# nouns that name a group or take either number ("the police don't", "my family don't")
EITHER_NOUNS = frozenset(
    """police family team staff government people class group couple crew audience band choir orchestra
    company school club committee council crowd jury union firm""".split()
)
RELATIVES = frozenset("who which that".split())
# what a gerund's object may open with before the verb ("Playing the guitar", "Doing sport")
GERUND_OBJECT_STARTS = frozenset("the a an my your some".split())
LANGUAGES = frozenset("english spanish french german italian chinese".split())
# verbs an activity as subject does ("makes me feel", "helps us relax")
ACTIVITY_VERBS = frozenset("make help give keep improve cause take mean allow let need".split())
PREPOSITIONS_AFTER_NEWS = frozenset("about from of on in".split())


@lru_cache(maxsize=4096)
def _singular_noun(word: str) -> bool:
    """A noun in its singular form that is no verb's base form nor an adjective (director, friend)."""
    lemmas = getAllLemmas(word)
    return word in lemmas.get("NOUN", ()) and "ADJ" not in lemmas and word not in EITHER_NOUNS


OWNER_DETERMINERS = frozenset("the my your his her our their".split())


def _a_subject_noun(word: str) -> bool:
    """A singular noun that can do something: not a time ("Every morning have a coffee", an order)."""
    return (
        _singular_noun(word) and word not in shared.PAST_PERIODS and word not in ("time", "day", "morning", "evening")
    )


@lru_cache(maxsize=4096)
def _gerund(word: str) -> bool:
    return word.endswith("ing") and word not in shared.ING_NOUNS and "VERB" in getAllLemmas(word)


def singular_subject_dont(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """The director don't want → doesn't; My best friend don't like → doesn't: a singular noun
    subject (with its determiner, an adjective at most) opening the sentence."""
    if "don't" not in words:
        return
    for n in (2, 3):  # "The director don't", "My best friend don't"; not "This summer don't forget…"
        if len(words) > n and words[0] in OWNER_DETERMINERS and words[n] == "don't" and _a_subject_noun(words[n - 1]):
            if n == 3 and "ADJ" not in getAllLemmas(words[1]):
                continue
            yield shared.replace_tokens(tokens, n, n + 1, "doesn't", "third_person", text)
            return


def activity_subject(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Doing sport make me feel better → makes; Practising sport help us → helps: an -ing that opens
    the sentence, with a short object, is one activity (not "Walking dogs make noise")."""
    if len(words) < 3 or not _gerund(words[0]):
        return
    for k in range(1, min(5, len(words))):
        if words[k] in ACTIVITY_VERBS:
            between = words[1:k]  # "Swimming make me happy": none
            starts_right = not between or between[0] in GERUND_OBJECT_STARTS | LANGUAGES or _singular_noun(between[0])
            if starts_right and not any(shared.is_plural_noun(w) or w in ("and", ",", "or") for w in between):
                verb = shared.third_person_of(words[k])
                if verb:
                    yield shared.replace_tokens(tokens, k, k + 1, verb, "third_person", text)
            return
        if words[k] in shared.BE_FORMS or words[k] in ("can", "will", "is", "makes", "helps"):
            return


# verbs of relative clauses that `THIRD_PERSON_VERBS` leaves out
RELATIVE_VERBS = {"cross": "crosses", "run": "runs", "sell": "sells", "teach": "teaches", "serve": "serves"}


def relative_after_a_singular(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """The river which cross the town → crosses; a friend who live in Paris → lives: the verb of a
    relative right after a singular noun (with its determiner) agrees with that noun (not "one of
    the people who live", whose noun is plural)."""
    if not RELATIVES.intersection(words):
        return
    for i in range(2, len(words) - 2):
        if words[i] not in RELATIVES or words[i - 2] not in SUBJECT_DETERMINERS | {"a", "an"}:
            continue
        if not _singular_noun(words[i - 1]) or words[i - 1] in ("one", "kind", "sort", "type"):
            continue
        verb = words[i + 1]
        third = shared.third_person_of(verb) or RELATIVE_VERBS.get(verb)
        if third and _no_noun_reading(verb, words, i + 2):
            yield shared.replace_tokens(tokens, i + 1, i + 2, third, "agreement", text)


def _no_noun_reading(verb: str, words: list[str], k: int) -> bool:
    """ "which cross the town": an object or a preposition after the verb, so "cross" is the verb."""
    after = shared.word_after(words, k)
    return after in SUBJECT_DETERMINERS | {"a", "an", "in", "to", "at", "on", "with", "me", "us", "them", "him", "her"}


def news_is_one(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """The news about the trip were published → was: "news" is singular, whatever phrase follows
    ("The news are" alone is the table's)."""
    if "news" not in words:
        return
    for i in range(1, len(words) - 2):
        if words[i] != "news" or words[i - 1] != "the" or words[i + 1] not in PREPOSITIONS_AFTER_NEWS:
            continue
        for k in range(i + 2, min(i + 6, len(words))):
            if words[k] in ("are", "were"):
                yield shared.replace_tokens(tokens, k, k + 1, "is" if words[k] == "are" else "was", "agreement", text)
                return
            if words[k] in shared.BE_FORMS or words[k] in (",", "and", "that", "which", "who"):
                return


def there_is_not(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """There is not cinema → there is no cinema; there is not jobs → there are no jobs; there was
    not enough seats → there were: "not" wants a determiner after it, "no" does not."""
    if "there" not in words:
        return
    for i in range(len(words) - 3):
        if words[i] == "there" and words[i + 1] in ("isn't", "wasn't") and words[i + 2] in ("any", "many", "enough"):
            k = i + 4 if "ADJ" in getAllLemmas(words[i + 3]) else i + 3  # there isn't many healthy options
            noun = shared.word_after(words, k)
            if shared.is_plural_noun(noun) and noun != "people":  # there isn't any shops
                plural = "aren't" if words[i + 1] == "isn't" else "weren't"
                yield shared.replace_tokens(tokens, i + 1, i + 2, plural, "there_is_plural", text)
            continue
        if words[i] == "there" and words[i + 1] in ("are", "were") and words[i + 2] == "not":
            if shared.is_plural_noun(shared.word_after(words, i + 3)) and words[i + 3] != "people":
                yield shared.replace_tokens(tokens, i + 2, i + 3, "no", "determiner", text)  # there are not cars
            continue
        if words[i] != "there" or words[i + 1] not in ("is", "was") or words[i + 2] != "not":
            continue
        noun = words[i + 3]
        plural = "are" if words[i + 1] == "is" else "were"
        if noun in ("enough", "many") and shared.is_plural_noun(shared.word_after(words, i + 4)):
            yield shared.replace_tokens(tokens, i + 1, i + 2, plural, "there_is_plural", text)
        elif shared.is_plural_noun(noun) and noun != "people":
            yield shared.replace_tokens(tokens, i + 1, i + 3, f"{plural} no", "there_is_plural", text)
        elif _singular_noun(noun) and shared.word_after(words, i + 4) in shared.ENDS_A_PHRASE | {"in", "for", "to"}:
            yield shared.replace_tokens(tokens, i + 2, i + 3, "no", "determiner", text)
        elif noun in ("hot", "cold", "running", "fresh") and shared.word_after(words, i + 4) in (
            "water",
            "food",
            "air",
        ):
            yield shared.replace_tokens(tokens, i + 2, i + 3, "no", "determiner", text)  # there is not hot water


ADVERBS_BEFORE_A_VERB = frozenset("also always often usually never still only really sometimes".split())
SINGULAR_TO_PLURAL_VERB = {"has": "have", "is": "are", "was": "were", "doesn't": "don't"}


def plural_subject_adverb_verb(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """However, cities also has problems → have: a plural noun opening its clause, an adverb, then a
    singular verb (the adverb hides the verb from the rules of two neighbouring words)."""
    if not ADVERBS_BEFORE_A_VERB.intersection(words):
        return
    for i in range(len(words) - 2):
        opens = i == 0 or words[i - 1] == ","
        if not opens or words[i + 1] not in ADVERBS_BEFORE_A_VERB or words[i + 2] not in SINGULAR_TO_PLURAL_VERB:
            continue
        noun = words[i]
        if (
            shared.is_plural_noun(noun)
            and not shared.is_third_person_form(noun)
            and noun not in EITHER_NOUNS - {"people"}
        ):
            category = "people_plural" if noun == "people" else "agreement"
            yield shared.replace_tokens(tokens, i + 2, i + 3, SINGULAR_TO_PLURAL_VERB[words[i + 2]], category, text)


# verbs an "each/every + noun" subject does that `THIRD_PERSON_VERBS` leaves out
EACH_VERBS = {"consist": "consists", "include": "includes", "cost": "costs", "last": "lasts", "contain": "contains"}


def each_one_verb(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Each lesson consist of a video → consists; Every student have a locker → has: "each" and
    "every" name one."""
    if "each" not in words and "every" not in words:
        return
    for i in range(len(words) - 2):
        if words[i] not in ("each", "every") or not _a_subject_noun(words[i + 1]) or (i and words[i - 1] != ","):
            continue
        verb = words[i + 2]
        third = EACH_VERBS.get(verb) or shared.third_person_of(verb) or ("has" if verb == "have" else None)
        if third:
            yield shared.replace_tokens(tokens, i + 2, i + 3, third, "third_person", text)


PLURAL_TO_SINGULAR_VERB = {v: k for k, v in SINGULAR_TO_PLURAL_VERB.items()} | {"do": "does"}


def each_of_them_verb(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Each of the students have a locker → has; one of them live in Miami → lives: "each of" and
    "one of" name one of them, whatever follows."""
    if "each" not in words and "one" not in words:
        return
    for i in range(len(words) - 4):
        if words[i] not in ("each", "one") or words[i + 1] != "of" or (i and words[i - 1] not in (",", "and", "but")):
            continue
        # "one of the reasons people live here": for "one", the verb right after its group
        last = min(i + 6, len(words)) if words[i] == "each" else _after_one_of(words, i + 2) + 1
        for k in range(i + 3, last):
            singular = PLURAL_TO_SINGULAR_VERB.get(words[k]) or (
                shared.third_person_of(words[k]) if words[k] in shared.THIRD_PERSON_VERBS else None
            )
            if singular:
                if shared.is_plural_noun(words[k - 1]) or words[k - 1] in ("them", "us", "you"):
                    yield shared.replace_tokens(tokens, k, k + 1, singular, "agreement", text)
                break
            if words[k] in RELATIVES or words[k] in (",", "and"):
                break


def _after_one_of(words: list[str], k: int) -> int:
    """Where the verb stands after "one of" and its group at `k`: "them live", "my friends live"."""
    if words[k] in ("them", "us", "you"):
        return k + 1
    return k + 2 if words[k] in SUBJECT_DETERMINERS else k


AGREEMENT_RULES = (
    each_of_them_verb,
    each_one_verb,
    plural_subject_adverb_verb,
    singular_subject_dont,
    activity_subject,
    relative_after_a_singular,
    news_is_one,
    there_is_not,
)
