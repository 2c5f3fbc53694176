"""What a verb or a conjunction wants after it, where Spanish wants something else: "decidimos ir"
(we decided go → decided to go), "nos divertimos mucho" (we enjoyed a lot → we enjoyed ourselves
a lot), "por el tráfico" (because the traffic → because of the traffic), "el más interesante de mi
vida" (the more interesting → the most interesting). Each fires only where the words around leave
no other reading (see `corrige.tutor.patterns`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token

# verbs whose verb after them takes "to" ("decidimos ir": decided to go); not "help", "let", "make"
NOUN_DETERMINERS = frozenset("the a an my your his her its our their this that these those every each no".split())
WANT_TO = frozenset(
    """want wants wanted decide decides decided hope hopes hoped plan plans planned promise promised
    promises try tries tried need needs needed agree agreed refuse refused refuses manage managed
    expect expected learn learned learnt forget forgot like remember""".split()
)
# "like" takes "to" after these ("I would like go" → "like to go"); "I like go" may want "going"
WOULD = frozenset("would i'd we'd you'd they'd he'd she'd".split())
# verbs that are nouns too, a verb beyond doubt after "want"/"decided" ("we decided go to the
# beach"): "I want work" may be a noun ("quiero trabajo"), "I want go" is not
VERBS_AFTER_WANT = frozenset(
    """go come be do get see buy visit meet stay leave travel live eat practise practice improve study learn close
    open call bring turn lock feed water pay send check""".split()
)
# what starts the object of a verb ("decided buy a car", "want see my friends")
OBJECT_STARTS = frozenset(
    "the a an my your his her our their some new this that these those it them him me us you more".split()
)
CLAUSE_OPENERS = frozenset(", ; and but so because then . ! ?".split())
REFLEXIVES = {"i": "myself", "we": "ourselves", "they": "themselves", "he": "himself", "she": "herself"}
ENJOY_FORMS = frozenset("enjoy enjoyed".split())
# what may follow "we enjoyed" where it has no object: "a lot", "very much", the clause's end
ENJOYED_ALONE = frozenset(". , ! ? ; and but so too there here in at with during because when yesterday".split())
ENJOY_HOW_MUCH = (("a", "lot"), ("very", "much"), ("so", "much"))
# the pasts learners put after "have", and their participles (not "got", "learnt", "burnt": British
# English has them as participles too)
PARTICIPLES = {
    "took": "taken", "went": "gone", "broke": "broken", "wrote": "written", "ate": "eaten", "gave": "given",
    "saw": "seen", "did": "done", "began": "begun", "drank": "drunk", "chose": "chosen", "spoke": "spoken",
    "forgot": "forgotten", "knew": "known", "flew": "flown", "drove": "driven", "fell": "fallen",
    "stole": "stolen", "rode": "ridden", "grew": "grown", "threw": "thrown", "woke": "woken", "wore": "worn",
    "swam": "swum", "sang": "sung", "rang": "rung", "ran": "run", "came": "come", "became": "become",
    "shook": "shaken", "hid": "hidden", "bit": "bitten", "blew": "blown", "drew": "drawn", "froze": "frozen",
    "tore": "torn", "forgave": "forgiven", "mistook": "mistaken", "sank": "sunk",
}  # fmt: skip
HAVE_FORMS = frozenset("have has had 've i've we've you've they've haven't hasn't hadn't having".split())
PERFECT_ADVERBS = frozenset("already never just ever always not".split())
# "I was told that": the person told is the subject
TOLD_PASSIVE = shared.BE_FORMS | frozenset("been being be get got i'm he's she's we're they're you're".split())
# the determiners of a noun after "because" ("because the traffic."): not "this", "that" (pronouns too)
BECAUSE_OF_DETERMINERS = frozenset("the a an my your his her our their".split())
CLAUSE_END = frozenset(". , ; ! ? :".split())
SUPERLATIVE_OF = {"more": "most", "better": "best", "worse": "worst"}
# adjectives whose "more … that" is a comparison (not "more important/likely that", a clause)
COMPARED_WITH_MORE = frozenset(
    """expensive difficult interesting beautiful dangerous comfortable popular modern famous intelligent
    exciting boring crowded polluted complicated""".split()
)
# what says "of all" after "the more X" ("the more interesting day of my life", "in the world")
SUPERLATIVE_RANGES = (("of", "my"), ("of", "all"), ("in", "the"), ("in", "my"), ("i", "have", "ever"))


@lru_cache(maxsize=4096)
def _surely_a_verb(word: str) -> bool:
    lemmas = getAllLemmas(word)
    return shared.is_base_verb(word) and set(lemmas) <= {"VERB", "AUX"}


def to_before_verb(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """We decided go to the beach → decided to go; I want see you → want to see: a verb after these
    takes "to" (not after "help", "let", "make", "would rather")."""
    for i in range(len(words) - 1):
        if words[i] not in WANT_TO or (words[i] == "like" and (i == 0 or words[i - 1] not in WOULD)):
            continue
        if i and words[i - 1] in NOUN_DETERMINERS:
            continue  # a noun: "the plan be approved", "my hope is", "the need arises"
        verb = words[i + 1]
        after = shared.word_after(words, i + 2)
        if _surely_a_verb(verb) or (verb in VERBS_AFTER_WANT and (after in OBJECT_STARTS or after in ("to", "home"))):
            yield shared.replace_tokens(tokens, i + 1, i + 2, f"to {tokens[i + 1].text}", "verb_form", text)


def enjoy_oneself(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """We enjoyed a lot → we enjoyed ourselves a lot: "enjoy" wants an object ("nos divertimos"
    has none); only right after its subject pronoun, before "a lot", "very much" or the clause's end."""
    if "enjoy" not in words and "enjoyed" not in words:
        return
    for i in range(1, len(words)):
        subject = words[i - 1]
        if words[i] not in ENJOY_FORMS or subject not in REFLEXIVES:
            continue
        if i > 1 and words[i - 2] not in CLAUSE_OPENERS:
            continue  # "the film we enjoyed a lot", "what I enjoyed": its object is before it
        how_much = tuple(words[i + 1 : i + 3]) in ENJOY_HOW_MUCH
        # "we enjoyed very much the trip" has its object after the adverb (`adverb_after_object`)
        alone = shared.word_after(words, i + 3 if how_much else i + 1) in ENJOYED_ALONE
        if alone and (how_much or words[i + 1 : i + 2] != ["so"]):
            yield shared.replace_tokens(
                tokens, i, i + 1, f"{tokens[i].text} {REFLEXIVES[subject]}", "verb_pattern", text
            )


def because_of(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """We arrived late because the traffic. → because of the traffic: "because" before a noun with
    nothing after it ("por el tráfico") wants "of"; "because the traffic was bad" is right."""
    if "because" not in words:
        return
    for i in range(len(words) - 3):
        if words[i] != "because" or words[i + 1] not in BECAUSE_OF_DETERMINERS:
            continue
        noun = words[i + 2]
        ends = shared.word_after(words, i + 3) in CLAUSE_END or i + 3 == len(words)
        if ends and "NOUN" in getAllLemmas(noun) and noun not in shared.SUBJECT_PRONOUNS:
            yield shared.replace_tokens(tokens, i, i + 1, f"{tokens[i].text} of", "preposition", text)


def the_most(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """It was the more interesting day of my life → the most interesting: "el más" is "the most"
    where the range follows ("of my life", "in the world", "I have ever"); not "the more
    expensive of the two", not "the more you read, the more you learn"."""
    if "more" not in words and "better" not in words and "worse" not in words:
        return
    for i in range(len(words) - 3):
        if words[i] != "the" or words[i + 1] not in SUPERLATIVE_OF:
            continue
        if words[i + 1] == "more" and "ADJ" not in getAllLemmas(words[i + 2]):
            continue
        window = words[i + 3 : i + 8]
        if "two" in window or "both" in window or "," in window:
            continue
        for k in range(len(window)):
            if any(tuple(window[k : k + len(r)]) == r for r in SUPERLATIVE_RANGES):
                yield shared.replace_tokens(tokens, i + 1, i + 2, SUPERLATIVE_OF[words[i + 1]], "comparative", text)
                break


@lru_cache(maxsize=4096)
def _comparative(word: str) -> bool:
    """An adjective's -er form (cheaper, longer), not "better"/"worse" ("it is better that you go")."""
    if word in ("better", "worse") or not word.endswith("er") or "NOUN" in getAllLemmas(word):
        return False  # "a vacuum cleaner that I bought": a noun
    return any(word in getInflection(a, "JJR") for a in getAllLemmas(word).get("ADJ", ()))


def than_not_that(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """It was longer that we expected → than; more expensive that in other places → than: "que"
    after a comparison is "than" (not "more important that we…", where "that" opens a clause)."""
    if "that" not in words:
        return
    for i in range(1, len(words)):
        if words[i] != "that":
            continue
        before = words[i - 1]
        more_adjective = i > 1 and words[i - 2] == "more" and before in COMPARED_WITH_MORE
        # "rather that changing" (not "I would rather that you stayed", a clause)
        rather = before == "rather" and shared.word_after(words, i + 1).endswith("ing")
        # "Later that night", "earlier that day": "that" points to a time
        time_after = shared.word_after(words, i + 1) in THAT_TIMES
        if (_comparative(before) or more_adjective or rather) and not time_after:
            yield shared.replace_tokens(tokens, i, i + 1, "than", "comparative", text)


def ing_after_than(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Uniforms are cheaper than buy new clothes → than buying: after a comparison's "than" a verb
    is named by its -ing ("más barato que comprar")."""
    if "than" not in words:
        return
    for i in range(1, len(words) - 1):
        if words[i] != "than" or not _comparative(words[i - 1]):
            continue
        verb = words[i + 1]
        lemmas = getAllLemmas(verb)
        # a verb that is a noun too ("buy", "walk") only before its object: "than buy new clothes"
        verb_only = set(lemmas) <= {"VERB"} or shared.word_after(words, i + 2) in OBJECT_STARTS
        if shared.is_base_verb(verb) and verb_only and tokens[i + 1].text.islower():
            gerund = getInflection(verb, "VBG")
            if gerund:
                yield shared.replace_tokens(tokens, i + 1, i + 2, gerund[0], "verb_form", text)


THAT_TIMES = frozenset(
    "night day morning evening afternoon week month year time moment summer winter spring autumn weekend".split()
)


def said_that(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """She told that she would come → said that: "tell" wants the person told ("told me that");
    not "I was told that", where the person is the subject."""
    if "told" not in words:
        return
    for i in range(1, len(words) - 2):
        if words[i] != "told" or words[i + 1] != "that" or words[i - 1] in TOLD_PASSIVE:
            continue
        if words[i + 2] in shared.SUBJECT_PRONOUNS or words[i + 2] in ("there", "the", "my", "his", "her"):
            yield shared.replace_tokens(tokens, i, i + 1, "said", "verb_pattern", text)


def participle_after_have(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I have took the bus → have taken; the glass had broke → had broken; she has already went →
    gone: after "have" a verb takes its participle, not its past."""
    for i in range(1, len(words)):
        k = i - 1 if words[i - 1] not in PERFECT_ADVERBS else i - 2
        if k < 0 or words[k] not in HAVE_FORMS:
            continue
        participle = PARTICIPLES.get(words[i])
        if participle:
            yield shared.replace_tokens(tokens, i, i + 1, participle, "verb_form", text)


# what one is good or bad "at" (the table has the school subjects; not "good in bed", "good in red")
SKILL_ADJECTIVES = frozenset("good bad better worse best great terrible excellent brilliant awful".split())


def good_at(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """good in speaking English → good at speaking ("bueno en"): a skill said with an -ing."""
    for i in range(len(words) - 2):
        if words[i] in SKILL_ADJECTIVES and words[i + 1] == "in":
            skill = words[i + 2]
            if skill.endswith("ing") and skill not in shared.ING_NOUNS and "VERB" in getAllLemmas(skill):
                yield shared.replace_tokens(tokens, i + 1, i + 2, "at", "preposition", text)


def able_to(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """able of organising → able to organise ("capaz de"): "able" wants "to" and the base form."""
    for i in range(len(words) - 2):
        if words[i] in ("able", "unable") and words[i + 1] == "of" and words[i + 2].endswith("ing"):
            base = getAllLemmas(words[i + 2]).get("VERB", ())
            if base and base[0] != words[i + 2]:
                yield shared.replace_tokens(tokens, i + 1, i + 3, f"to {base[0]}", "verb_form", text)


# "interested to know/hear/see" is English (curious to); to do something one is "interested in doing"
INTERESTED_TO = frozenset("know hear see learn read find discover".split())


def interested_in(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """interested to visit → interested in visiting ("interesado en visitar")."""
    for i in range(len(words) - 2):
        if words[i] == "interested" and words[i + 1] == "to" and words[i + 2] not in INTERESTED_TO:
            if _surely_a_verb(words[i + 2]) or words[i + 2] in ("visit", "study", "work", "travel"):
                gerund = getInflection(words[i + 2], "VBG")
                if gerund:
                    yield shared.replace_tokens(tokens, i + 1, i + 3, f"in {gerund[0]}", "verb_form", text)


COMPLEMENT_RULES = (
    good_at,
    interested_in,
    able_to,
    to_before_verb,
    enjoy_oneself,
    because_of,
    the_most,
    than_not_that,
    ing_after_than,
    said_that,
    participle_after_have,
)
