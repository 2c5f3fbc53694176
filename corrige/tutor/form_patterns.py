"""Forms a learner carries over from Spanish into one or two words of a clause: a year with "on"
(*on 2019*), a verb with no subject (*Has a beautiful square*, *so is safer*), a question that
keeps the statement's order (*Why you didn't call me?*, *Does your house is far?*), a comparison's
second word (*as comfortable than*, *taller as her brother*), *so* before a noun (*so beautiful
landscapes*), a past or an -ing after "going to", "used to", "decided" (*going to visited*, *I used
to going*, *decided going*), *it's* for *its* before a plural noun (*it's rooms are big*), and
Spanish's opening *¿* and *¡*.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token

YEAR = re.compile(r"^(1[5-9]\d\d|20\d\d)$")
WANT_FORMS = frozenset("want wants wanted".split())
# who wants to do something ("I want going" → "want to go"), not a thing that "wants" doing
WANTERS = frozenset("i you we they he she really also always never just still don't doesn't didn't".split())
# after these "a house very big" is a noun phrase, not an object and its complement ("found it very")
NOUN_PHRASE_OPENERS = frozenset("is was 's with have has had in bought rent rented".split())
# what "Has" opens a statement with ("Has a beautiful square"), not a question ("Has he gone?")
HAS_OBJECT_STARTS = frozenset("a an many some lots two three four five several".split())
WH_WORDS = frozenset("why where what when how who".split())
NEGATED_AUXILIARIES = frozenset("didn't don't doesn't can't won't isn't aren't wasn't".split())
QUESTION_SUBJECTS = frozenset("you he she they we i it".split())
NOUN_DETERMINERS = frozenset("my your his her our their the this that".split())
# verbs that take "to" and a verb, never an -ing ("decided going" → "decided to go")
TO_ONLY_VERBS = frozenset(
    """decide decides decided want wants wanted hope hopes hoped plan plans planned promise promises promised
    refuse refuses refused expect expects expected manage manages managed""".split()
)
# what the second term of a comparison opens with after "taller as" (not "better as a player")
COMPARED_STARTS = frozenset("my your his her our their me him them us".split())
LINKING_VERBS = shared.BE_FORMS | frozenset(
    "be been 's 'm 're seem seemed seems feel felt feels look looked looks".split()
)
# what follows a verb that is a verb, not a noun in -ing ("decided going by train", "shopping trips")
AFTER_A_VERB = frozenset(
    """to by the a an my your his her our their some home out back abroad there with in on at for up
    . , ! and""".split()
)
# words "so" may go before, as a degree, that are no adjectives of a noun ("so many people")
SO_DEGREES = frozenset("many much few little".split())


def year_with_in(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I started to work here on 2019 → in 2019; She was born on 1907 → in 1907: a year alone."""
    if "on" not in words:
        return
    for i in range(len(words) - 1):
        if words[i] == "on" and YEAR.match(words[i + 1]) and shared.word_after(words, i + 2) not in ("'s", "-"):
            yield shared.replace_tokens(tokens, i, i + 1, "in", "preposition", text)


def has_without_subject(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Has a beautiful square with many bars → It has: a statement (no question mark) that opens
    with "Has" and its object ("tiene una plaza")."""
    if words[:1] == ["has"] and shared.word_after(words, 1) in HAS_OBJECT_STARTS and not text.rstrip().endswith("?"):
        yield shared.replace_tokens(tokens, 0, 1, "it has", "missing_subject", text)


def so_it_is(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """There are fewer cars, so is safer for children → so it is safer: a comparison after "so is"
    has no subject ("so is my brother" has one)."""
    if "so" not in words:
        return
    for i in range(1, len(words) - 3):
        if words[i] == "so" and words[i - 1] == "," and words[i + 1] in ("is", "was"):
            degree = words[i + 2]
            # "so is easy to arrive": a judgement with its "to" ("so is my brother" has a subject)
            judged = degree in IT_JUDGEMENTS and words[i + 3] == "to"
            if judged or (_comparative(degree) and words[i + 3] in ("for", "to", "than", "and", "because")):
                yield shared.replace_tokens(tokens, i + 1, i + 2, f"it {words[i + 1]}", "missing_subject", text)


@lru_cache(maxsize=4096)
def _comparative(word: str) -> bool:
    if word in ("better", "worse", "more", "less", "easier", "cheaper", "safer", "faster", "quicker"):
        return True
    return word.endswith("er") and any(word in getInflection(a, "JJR") for a in getAllLemmas(word).get("ADJ", ()))


def question_order(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Why you didn't call me? → Why didn't you call me?: a question puts its auxiliary before its
    subject; Does your house is far? → Is your house far?: "be" makes its own question."""
    if not text.rstrip().endswith("?") or len(words) < 4:
        return
    if words[0] in WH_WORDS and words[1] in QUESTION_SUBJECTS and words[2] in NEGATED_AUXILIARIES:
        if shared.is_base_verb(words[3]):
            subject = tokens[1].text if words[1] == "i" else words[1]
            yield shared.replace_tokens(tokens, 1, 3, f"{words[2]} {subject}", "question_order", text)
    if words[0] in ("does", "do") and words[1] in NOUN_DETERMINERS:
        for k in (3, 4):  # "Does your house is", "Does your new house is"
            if k < len(words) and words[k] in ("is", "are"):
                subject = shared.span_text(tokens, text, 1, k)
                yield shared.replace_tokens(tokens, 0, k + 1, f"{words[k]} {subject}", "question_no_do", text)
                return


def comparison_words(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """as comfortable than my bed → as comfortable as; taller as her brother → taller than."""
    if "as" not in words:
        return
    for i in range(len(words) - 2):
        if words[i] == "as" and words[i + 2] == "than" and "ADJ" in getAllLemmas(words[i + 1]):
            if i == 0 or words[i - 1] not in ("such", "same"):
                yield shared.replace_tokens(tokens, i + 2, i + 3, "as", "comparative", text)
        elif _comparative(words[i]) and words[i] not in ("more", "less") and words[i + 1] == "as":
            if words[i + 2] in COMPARED_STARTS:
                yield shared.replace_tokens(tokens, i + 1, i + 2, "than", "comparative", text)


def such_before_a_noun(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I have never seen so beautiful landscapes → such beautiful landscapes: "so" goes before an
    adjective alone; before an adjective and a plural noun, "such"."""
    if "so" not in words:
        return
    for i in range(len(words) - 2):
        adjective, noun = words[i + 1], words[i + 2]
        if words[i] != "so" or adjective in SO_DEGREES or "ADJ" not in getAllLemmas(adjective):
            continue
        if i and words[i - 1] in LINKING_VERBS:
            continue  # "I was so happy parents came": "so happy (that)", a clause after it
        if "VERB" in getAllLemmas(adjective) or not shared.is_plural_noun(noun):
            continue
        if shared.word_after(words, i + 3) not in ("that", "to"):  # "so good that", "so big to"
            yield shared.replace_tokens(tokens, i, i + 1, "such", "word_confusion", text)


def base_after_to(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I'm going to visited the client → going to visit; I used to going → used to go (not "I am
    used to going", where "to" is a preposition); I decided going → decided to go."""
    if "to" not in words and not TO_ONLY_VERBS.intersection(words):
        return
    for i in range(1, len(words) - 1):
        verb = words[i + 1]
        if not tokens[i + 1].text.islower():
            continue  # "going to United States": a name
        if words[i] == "to" and words[i - 1] == "going":
            base = shared.base_of_past(verb)
            if base and verb.endswith("ed") and "ADJ" not in getAllLemmas(verb):
                yield shared.replace_tokens(tokens, i + 1, i + 2, base, "verb_form", text)
        elif words[i] == "to" and words[i - 1] == "used" and i >= 2 and words[i - 2] in QUESTION_SUBJECTS:
            base = _base_of_ing(verb)
            if base:
                yield shared.replace_tokens(tokens, i + 1, i + 2, base, "verb_form", text)
        elif words[i] in TO_ONLY_VERBS and (i == 0 or words[i - 1] not in NOUN_DETERMINERS | {"a", "an"}):
            if words[i] in WANT_FORMS and words[i - 1] not in WANTERS:
                continue  # "The windows want cleaning": British for "need", said of a thing
            base = _base_of_ing(verb)
            if base and shared.word_after(words, i + 2) in AFTER_A_VERB:  # not "planned shopping trips"
                yield shared.replace_tokens(tokens, i + 1, i + 2, f"to {base}", "verb_form", text)


@lru_cache(maxsize=4096)
def _base_of_ing(word: str) -> str | None:
    """ "going" → "go", "travelling" → "travel"; None for a word that is a noun (meeting)."""
    if not word.endswith("ing") or word in shared.ING_NOUNS:
        return None
    bases = getAllLemmas(word).get("VERB", ())
    return bases[0] if bases and bases[0] != word else None


def its_before_a_plural(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """The hotel has a pool and it's rooms are big → its rooms: "it's" (it is) before a plural noun
    and its verb is the possessive ("it's people who" says "it is")."""
    if "it's" not in words:
        return
    for i in range(len(words) - 2):
        noun = words[i + 1]
        if words[i] != "it's" or noun == "people" or not shared.is_plural_noun(noun):
            continue
        if "ADJ" in getAllLemmas(noun):
            continue
        if words[i + 2] in ("are", "were", "have"):
            yield shared.replace_tokens(tokens, i, i + 1, "its", "word_confusion", text)


PREFER_FORMS = frozenset("prefer prefers preferred preferring".split())


def prefer_to(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I prefer the train than the bus → the train to the bus: "prefer" compares with "to" (but "I
    prefer to go by train rather than by bus", "would prefer to stay than go" keep "than")."""
    if "than" not in words:
        return
    if "rather" in words:
        return
    for i, word in enumerate(words):
        if word not in PREFER_FORMS:
            continue
        for k in range(i + 2, min(i + 5, len(words))):
            between = words[i + 1 : k]
            if between[0] == "to" or any(w.endswith("ing") or w in (",", "and", "but") for w in between):
                break
            if words[k] == "than":
                yield shared.replace_tokens(tokens, k, k + 1, "to", "preposition", text)
                break


DEGREE_WORDS = frozenset("very really so quite extremely too".split())


def adjective_before_its_noun(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """It was a film very interesting → a very interesting film; He is a person very intelligent →
    a very intelligent person: an adjective with its degree word goes before the noun (after "is a
    …", where nothing else can read it: "I found the city very interesting" is right)."""
    if "a" not in words and "an" not in words:
        return
    for i in range(1, len(words) - 3):
        if words[i - 1] not in NOUN_PHRASE_OPENERS or words[i] not in ("a", "an") or words[i + 2] not in DEGREE_WORDS:
            continue
        noun, adjective = words[i + 1], words[i + 3]
        if "NOUN" not in getAllLemmas(noun) or "ADJ" in getAllLemmas(noun) or "ADJ" not in getAllLemmas(adjective):
            continue
        if "NOUN" in getAllLemmas(adjective) or shared.word_after(words, i + 4) not in shared.ENDS_A_PHRASE:
            continue
        article = "an" if words[i + 2][0] in "aeiou" else "a"
        phrase = f"{article} {words[i + 2]} {tokens[i + 3].text} {tokens[i + 1].text}"
        yield shared.replace_tokens(tokens, i, i + 4, phrase, "adjective_order", text)


def in_the_world(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """the best chocolate cake of the world → in the world ("del mundo"), the best beach of my
    town → in my town, the best fabada of Spain → in Spain: a superlative's range is a place, said
    with "in"."""
    if "of" not in words:
        return
    for i in range(2, len(words) - 1):
        if words[i] != "of" or _superlative(words[i - 1]) or not _a_place_after(tokens, words, i + 1):
            continue  # "the best of Spain", "most of the world": the things of the place
        if any(_superlative(w) for w in words[max(0, i - 5) : i]):
            yield shared.replace_tokens(tokens, i, i + 1, "in", "preposition", text)


def _a_place_after(tokens: Sequence[Token], words: list[str], k: int) -> bool:
    """ "the world", "my town", "Spain" at `k`, its phrase ending after it."""
    if words[k : k + 2] == ["the", "world"] or (words[k] in PLACE_OWNERS and shared.word_after(words, k + 1) in PLACES):
        return shared.word_after(words, k + 2) in shared.ENDS_A_PHRASE
    return (
        words[k] in COUNTRIES
        and tokens[k].text[:1].isupper()
        and shared.word_after(words, k + 1) in shared.ENDS_A_PHRASE
    )


PLACE_OWNERS = frozenset("my our the this your his her".split())
PLACES = frozenset("country city town village area region neighbourhood neighborhood island".split())
COUNTRIES = frozenset(
    """spain europe england britain mexico colombia argentina peru chile venezuela ecuador cuba bolivia uruguay
    paraguay france italy germany portugal america madrid barcelona london""".split()
)


@lru_cache(maxsize=4096)
def _superlative(word: str) -> bool:
    if word in ("best", "worst", "most", "biggest", "largest", "oldest", "tallest", "highest", "longest"):
        return True
    return word.endswith("est") and any(word in getInflection(a, "JJS") for a in getAllLemmas(word).get("ADJ", ()))


THERE_PLACE_STARTS = frozenset("my our the this your his her".split())
# what a "there is" opens with after a place ("In my town is a big festival")
THERE_OBJECTS = frozenset("a an many some lots two three four five several".split())


def there_after_a_place(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """In my town is a big festival every summer → In my town there is ("En mi pueblo hay"): a place
    opens the sentence, then "is a" with no subject."""
    if len(words) < 6 or words[0] != "in" or words[1] not in THERE_PLACE_STARTS:
        return
    for k in (3, 4):  # "In my town is", "In my home town is"
        if words[k] in ("is", "are", "was", "were") and shared.word_after(words, k + 1) in THERE_OBJECTS:
            # "In my opinion it is a good idea": a subject of its own ("it" passes for a noun)
            if "NOUN" in getAllLemmas(words[k - 1]) and words[k - 1] not in QUESTION_SUBJECTS | {"this", "that"}:
                yield shared.replace_tokens(tokens, k, k + 1, f"there {words[k]}", "missing_subject", text)
            return


# what ends a comparison's second clause ("more stressed that I am now")
AFTER_A_COMPARED_CLAUSE = frozenset(". , ! ? now today before usually normally".split())


def than_after_a_comparative(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I would be more stressed that I am now → than I am: "that" after a comparative, before a
    subject and its auxiliary alone, is the comparison's "than"."""
    if "that" not in words:
        return
    for i in range(2, len(words) - 3):
        if words[i] != "that" or words[i + 1] not in QUESTION_SUBJECTS:
            continue
        if words[i + 2] not in ("am", "is", "are", "was", "were", "do", "does", "did", "can", "could", "have", "had"):
            continue
        if shared.word_after(words, i + 3) not in AFTER_A_COMPARED_CLAUSE:
            continue
        compared = words[i - 1]
        if words[i - 2] == "more" or (_comparative(compared) and compared not in ("more", "less")):
            yield shared.replace_tokens(tokens, i, i + 1, "than", "comparative", text)


# what a question asks of "it" ("Is necessary to have…?" → "Is it necessary to…?")
IT_JUDGEMENTS = frozenset(
    "necessary possible important true easy difficult hard safe normal expensive cheap ok okay impossible".split()
)
GOOD_AT = frozenset("good bad better worse".split())
# -ing words after "good" that are no skill ("good looking", "good being here")
NOT_A_SKILL = frozenset("looking being having feeling".split())


def question_it(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Is necessary to have a B2 certificate? → Is it necessary…?: the question keeps "it" after
    its verb (a statement's "Is necessary to…" is `patterns.missing_subject`'s)."""
    if text.rstrip().endswith("?") and words[:1] in (["is"], ["was"]) and len(words) > 3:
        if words[1] in IT_JUDGEMENTS and words[2] in ("to", "that"):
            yield shared.replace_tokens(tokens, 0, 1, f"{tokens[0].text} it", "missing_subject", text)


def good_at_doing(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I am very good making presentations → good at making: a skill after "good" takes "at"."""
    if not GOOD_AT.intersection(words):
        return
    for i in range(1, len(words) - 1):
        if words[i] not in GOOD_AT:
            continue
        # "I am (very) good making": after "be", not "a very good understanding"
        degree = words[i - 1] in ("very", "really", "quite", "so", "pretty")
        be = i - 1 - degree
        if words[be] not in shared.BE_FORMS | {"'m", "'re", "'s"}:
            continue
        if be and words[be - 1] in ("it", "that", "this", "which"):
            continue  # "It was good seeing you": how the seeing was, no skill
        skill = words[i + 1]
        if skill.endswith("ing") and skill not in NOT_A_SKILL and _base_of_ing(skill):
            yield shared.replace_tokens(tokens, i + 1, i + 2, f"at {tokens[i + 1].text}", "preposition", text)


def which_after_a_clause(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """…work and study at the same time, what is very hard → which is: after a comma "what" that
    says something of the whole clause is "which"."""
    if "what" not in words:
        return
    if text.rstrip().endswith("?"):
        return
    for i in range(4, len(words) - 3):
        if words[i - 1] != "," or words[i] != "what" or words[i + 1] not in ("is", "was"):
            continue
        # "…, what is very hard.": a judgement ends it ("…, what is happening in the world" is a thing)
        k = i + 3 if words[i + 2] in ("very", "so", "really", "quite", "too", "not") else i + 2
        judged = "ADJ" in getAllLemmas(words[k]) and "VERB" not in getAllLemmas(words[k])
        if judged and shared.word_after(words, k + 1) in shared.ENDS_A_PHRASE | {"for", "because"}:
            yield shared.replace_tokens(tokens, i, i + 1, "which", "pronoun", text)


def spanish_opening_mark(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """¿Do you want to come? → Do you want to come?: English marks a question or an exclamation at
    its end only."""
    if len(tokens) > 1 and tokens[0].text in ("¿", "¡") and tokens[1].is_word:
        yield shared.replace_tokens(tokens, 0, 2, tokens[1].text, "punctuation", text)


FORM_RULES = (
    spanish_opening_mark,
    question_it,
    good_at_doing,
    which_after_a_clause,
    in_the_world,
    there_after_a_place,
    than_after_a_comparative,
    adjective_before_its_noun,
    prefer_to,
    year_with_in,
    has_without_subject,
    so_it_is,
    question_order,
    comparison_words,
    such_before_a_noun,
    base_after_to,
    its_before_a_plural,
)
