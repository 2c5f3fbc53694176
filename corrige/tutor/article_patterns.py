"""A singular countable noun with no article, as Spanish leaves it: *I have car*, *she bought new
phone*, *we need bigger house*, *it was good idea*, *I work in factory*.

Spanish says "tengo coche", "busco piso", "trabajo en fábrica"; English needs *a* (or *the*, *my*)
before a singular countable noun. The rule fires only where nothing else can be meant: a noun from a
short list of things that are always counted (never *family*, *time*, *experience*, *school*,
*work*, which may go bare), after a verb of having or getting, after *it/this/that/there is*, or
after *live in* / *work in*; with at most two adjectives between (*new*, *very big*), and with a word
after it that ends the noun phrase (*car insurance*, *phone number*, *job interview* are compounds).
*a* is written, not *the*: it is the article a learner's "tengo coche" means.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token

# things always counted: "a car", never "car" alone in a clause (not "room": "there is room for")
COUNTED_NOUNS = frozenset(
    """car house flat friend apartment job problem idea question dog cat bike bicycle motorbike computer laptop
    phone mobile camera boyfriend girlfriend husband wife party trip restaurant shop film movie book
    garden ticket meeting appointment interview accident mistake boat horse pet tablet scholarship
    flatmate roommate garage suitcase umbrella headache child kid teenager baby boy girl client customer member
    fan""".split()
)
# counted only after an adjective that judges them: "I have family in Spain", "I have free time",
# but "I have big family", "we had great time"
COUNTED_AFTER_A_JUDGEMENT = frozenset("family time day weekend life".split())
JUDGEMENTS = frozenset(
    "good great nice wonderful lovely terrible horrible fantastic amazing bad hard difficult".split()
)
SIZES = frozenset("big large small".split())
# places one lives or works "in": "I live in flat", "she works in factory"
PLACE_NOUNS = frozenset("house flat apartment village factory restaurant shop supermarket hotel bank company".split())
# "a friend of mine", "a member of the team": one of many, "of" after them
ONE_OF_MANY = frozenset("friend idea member client customer fan".split())
HAVING_VERBS = frozenset(
    """have has had having buy buys bought buying need needs needed want wants wanted rent rents rented
    get gets got find finds found owns owned borrow borrowed sell sold lose lost""".split()
)
BE_SUBJECTS = frozenset("i it this that he she there".split())
BE_AFTER_A_SUBJECT = frozenset("am is was".split())
# contracted, these may be "its" / "his" misspelled ("I like it's garden"): only where a clause opens
BE_CONTRACTED = frozenset("it's that's he's she's there's".split())
CLAUSE_STARTS = frozenset(", ; : think because but so said know".split())
LIVE_WORK = frozenset("live lives lived living work works worked working".split())
# "a very big house", "a really good idea" (not "so": "such a good idea"; not "quite": "quite a")
DEGREES = frozenset("very really".split())
# adjectives that go before a noun and are nouns or verbs as well, so lemminflect alone won't do
COMMON_ADJECTIVES = (
    JUDGEMENTS
    | SIZES
    | frozenset(
        """new old little beautiful expensive cheap huge better bigger smaller cheaper nicer newer best worst
    real serious interesting important easy long short young red blue black white green electric fast""".split()
    )
)
# adjectives of amount, order or identity: "have more time", "other car" (another), "first car" (my)
NOT_QUALITIES = frozenset(
    """more most much many enough several other such few same own whole only less least next last first
    second third every each all both either neither no so too quite such how""".split()
)
# what may follow the noun when its phrase ends there ("I have car and", "bought new phone yesterday")
AFTER_THE_NOUN = shared.ENDS_A_PHRASE | frozenset(
    """or because so for with in at on to from near that which who where when yesterday today now
    there here last next tomorrow too as than""".split()
)
HAS_ARTICLE = frozenset("a an the my your his her our their this that some any one another".split())
AN_EXCEPTIONS = ("us", "uni", "eu", "one")


def missing_article(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I have car → a car; She bought new phone → a new phone; It was good idea → a good idea;
    There is problem with → a problem; I live in flat → a flat."""
    for i in range(len(words) - 1):
        if not _opens_a_noun_phrase(words, i):
            continue
        nouns = PLACE_NOUNS if words[i] == "in" else COUNTED_NOUNS
        noun = _counted_noun_after(words, i + 1, nouns)
        if noun is None or not all(t.text.islower() for t in tokens[i + 1 : noun + 1]):
            continue
        first = words[i + 1]
        article = "an" if first[0] in "aeiou" and not first.startswith(AN_EXCEPTIONS) else "a"
        token = tokens[i + 1]
        yield Edit(token.start, token.end, token.text, f"{article} {token.text}", "determiner")


def _opens_a_noun_phrase(words: list[str], i: int) -> bool:
    """`words[i]` takes a noun phrase next: a verb of having, a subject's "is", "live in"."""
    word = words[i]
    if word in HAVING_VERBS:
        # "have to", "had finished": no counted noun follows, the noun check says so; a verb that
        # opens the sentence has no subject, a headline's ("Have car, will travel")
        return i > 0
    opens_a_clause = i == 0 or words[i - 1] in CLAUSE_STARTS
    if word in BE_CONTRACTED:
        return opens_a_clause
    if word in BE_AFTER_A_SUBJECT:
        return (
            i > 0
            and words[i - 1] in BE_SUBJECTS
            and (i == 1 or words[i - 2] in CLAUSE_STARTS or words[i - 1] != "that")
        )
    return word == "in" and i > 0 and words[i - 1] in LIVE_WORK


def _counted_noun_after(words: list[str], k: int, nouns: frozenset[str]) -> int | None:
    """The index of a counted singular noun that opens at `k` with up to two adjectives (or "very"
    and an adjective) before it and its phrase's end after it; None if there is none."""
    start = k
    while k < len(words) and k - start <= 2:
        word = words[k]
        if word in HAS_ARTICLE:
            return None
        judged = k > start and (words[k - 1] in JUDGEMENTS or (word == "family" and words[k - 1] in SIZES))
        if word in nouns or (judged and word in COUNTED_AFTER_A_JUDGEMENT):
            after = shared.word_after(words, k + 1)
            if after in AFTER_THE_NOUN or (after == "of" and word in ONE_OF_MANY):
                return k
            return None
        if not _before_a_noun(word, first=k == start):
            return None
        k += 1
    return None


@lru_cache(maxsize=4096)
def _before_a_noun(word: str, first: bool) -> bool:
    """An adjective (or, first, "very") that may stand between an article and its noun."""
    if first and word in DEGREES:
        return True
    if word in COMMON_ADJECTIVES:
        return True
    if word in NOT_QUALITIES or not word.isalpha():
        return False
    lemmas = getAllLemmas(word)
    return "ADJ" in lemmas and "NOUN" not in lemmas and "VERB" not in lemmas


ARTICLE_RULES = (missing_article,)
