"""Noun phrases built the Spanish way: *the room 304* (la habitación 304), *in other email* (en
otro correo), *13 millions of people* (13 millones de personas), *the father of Mateo* (el padre de
Mateo), and a time "since … until" (desde … hasta) that English says "from … until".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token

# nouns named by a number or a code after them, without "the" ("room 304", "class 3B", "page 12")
NUMBERED_NOUNS = frozenset("room flat apartment class page chapter exercise unit gate platform flight slide".split())
CODE = re.compile(r"^\d+[a-z]?$")
# singular nouns "other" goes before as "another" ("in other email" → "in another email")
ONE_MORE_NOUNS = frozenset(
    """email street city country job place way person thing question problem car house flat school hotel
    restaurant room reason option idea company moment""".split()
)
# what "other" follows as part of its noun phrase ("the other city", "any other way", "no other job")
OTHER_DETERMINERS = frozenset("the my your his her our their any no some every each one this that".split())
BIG_NUMBERS = {"millions": "million", "thousands": "thousand", "hundreds": "hundred"}
# people whose "of" a name says as a possessive ("the father of Mateo" → "Mateo's father")
KIN = frozenset(
    """father mother brother sister son daughter husband wife uncle aunt cousin grandfather grandmother
    boyfriend girlfriend friend dad mum mom parents""".split()
)
TIME_ENDS = frozenset("until till to".split())
DAY_PARTS = frozenset("morning noon midday afternoon evening night one".split())


def the_numbered_noun(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I stayed in the room 304 → in room 304; of the class 3B → of class 3B: a noun named by its
    number takes no "the"."""
    for i in range(len(words) - 2):
        if words[i] == "the" and words[i + 1] in NUMBERED_NOUNS and CODE.match(words[i + 2]):
            if i == 0 or words[i - 1] != "of" or words[i + 1] == "class":  # "the number of the room 304"
                yield shared.replace_tokens(tokens, i, i + 2, tokens[i + 1].text, "determiner", text)


def other_for_another(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I send you the details in other email → in another email; I moved to other city → another
    city: "other" before one thing, with no determiner, is "another"."""
    if "other" not in words:
        return
    for i in range(len(words) - 1):
        if words[i] != "other" or words[i + 1] not in ONE_MORE_NOUNS or not tokens[i].text.islower():
            continue
        if i > 0 and (words[i - 1] in OTHER_DETERMINERS or words[i - 1] == "each"):
            continue
        yield shared.replace_tokens(tokens, i, i + 1, "another", "determiner", text)


def number_of_millions(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """13 millions of people → 13 million people; two hundreds of people → two hundred people: after
    a number, "million" has no plural and no "of"."""
    for i in range(1, len(words) - 1):
        if words[i] not in BIG_NUMBERS or not (shared.is_number(words[i - 1]) or words[i - 1] == "one"):
            continue
        if words[i - 1] in ("many", "several"):
            continue  # "many thousands of people" is right
        end = (
            i + 2
            if words[i + 1] == "of" and shared.word_after(words, i + 2) not in ("the", "them", "us", "my")
            else i + 1
        )
        yield shared.replace_tokens(tokens, i, end, BIG_NUMBERS[words[i]], "noun_number", text)


def possessive_of_a_name(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I am the father of Mateo → Mateo's father: a person's relative is said with 's."""
    if "of" not in words:
        return
    for i in range(len(words) - 3):
        if words[i] != "the" or words[i + 1] not in KIN or words[i + 2] != "of":
            continue
        name = tokens[i + 3]
        after = shared.word_after(words, i + 4)
        if (
            not (name.text[:1].isupper() and name.text[1:].islower() and name.is_word)
            or after not in shared.ENDS_A_PHRASE
        ):
            continue  # one name, its phrase ending after it ("the father of Mateo, of the class 3B")
        yield shared.replace_tokens(tokens, i, i + 4, f"{name.text}'s {tokens[i + 1].text}", "word_order", text)


def since_until(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I work since 9 until 5 → from 9 until 5; I'm free since Monday to Friday → from Monday: a
    stretch with its end is "from … until", "desde … hasta" as a whole."""
    if "since" not in words:
        return
    for i in range(len(words) - 2):
        dated = words[i + 1] == "the" and words[i + 2][:1].isdigit()  # since the 1st of July until…
        if words[i] != "since" or not (_a_time(words[i + 1]) or dated):
            continue  # "since you moved to Canada": a clause, not a time
        stretch = words[i + 2 : i + 6]
        ends = [k for k, w in enumerate(stretch) if w in TIME_ENDS]
        # "I've been here since Monday and will stay until Friday": two clauses, each its own time
        if ends and not {"and", ",", "but"} & set(stretch[: ends[0]]) and not _perfect_before(words, i):
            yield shared.replace_tokens(tokens, i, i + 1, "from", "preposition", text)


def _perfect_before(words: list[str], i: int) -> bool:
    """A present perfect before `words[i]` ("I've been here since"), which "since" belongs to."""
    return bool({"have", "has", "'ve", "i've", "we've", "they've", "you've", "he's", "she's"} & set(words[:i]))


def _a_time(word: str) -> bool:
    """ "9", "monday", "june", "morning": what a stretch of time starts at."""
    return (
        word[:1].isdigit()
        or word in shared.DAYS
        or word in shared.MONTHS
        or word in DAY_PARTS
        or shared.is_number(word)
    )


NOUN_PHRASE_RULES = (the_numbered_noun, other_for_another, number_of_millions, possessive_of_a_name, since_until)
