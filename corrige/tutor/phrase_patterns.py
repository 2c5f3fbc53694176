"""More fixed patterns of Spanish speakers' English (see `corrige.tutor.patterns`): a verb after a
plural subject, a modal's bare verb, a regularised past, durations, purpose, a country's article,
the -ing a few words want after them, a word that counts its noun, and a few fixed phrases.

Each fires only where a few neighbouring words leave no other reading: a plural noun right after
its determiner ("my parents is", not "one of the machines doesn't" or "the data shows"), a
modal, "to" and a base verb ("I can't to go"), a number of time units ("during three years").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token
from corrige.tutor.function_words import FUNCTION_WORDS

# adjectives of a noun that look like a regularised past ("a ringed hand": ring's past is rang)
NOT_REGULARISED = frozenset({"ringed"})
NUMBER_NOUNS = frozenset("hundred thousand million billion trillion dozen".split())
# regularised pasts that dictionaries hold for another sense (to cost a plan, a ship's line payed
# out, broad-leaved): a learner means the irregular verb's past ("putted" a ball is golf)
KNOWN_REGULARISED = {"costed": "cost", "payed": "pay", "leaved": "leave"}
PARTICIPLE_AUXILIARIES = frozenset("have has had 've i've we've they've you've is was were been be are".split())
# what opens a plural noun phrase as its subject ("my parents", "some machines", "many workers")
PLURAL_DETERMINERS = frozenset("the my your his her our their these those some many most all both several".split())
# plural in form, often singular in use ("the data shows", "the media is")
MASS_PLURALS = frozenset("data media criteria staff police means series species".split())
# "people is" has a rule of its own (`patterns.people_plural`); "many times" is mostly an adverb
NOT_HERE = MASS_PLURALS | {"people", "times"}
# words that say "more than one" of the noun after them (besides shared.NUMBER_WORDS)
COUNTING_DETERMINERS = frozenset("these those both various few".split())
# "a lot of my friends lives", "most of the students was": the verb agrees with the noun they count
COUNTING_OF = frozenset("lot lots most many some all both".split())
OWNERS = frozenset("the my your his her our their these those".split())
# determiners of one thing, and theirs for more than one
SINGULAR_DETERMINERS = {"this": "these", "that": "those", "another": "other"}
# "that" before a plural is a determiner after these ("in that days"), a conjunction elsewhere
THAT_DETERMINES_AFTER = frozenset("in on at of for from with by during all".split())
# what may follow a noun phrase's last word: its end, a preposition, a verb of the clause, a
# conjunction (not a noun: "two dog food bowls"; not a pronoun: "these help me")
NOUN_PHRASE_ENDS = frozenset(
    ". , ; : ! ? ) in on at for of with from to by about are were have had will would can could should "
    "must do did and or but because that which who when if than".split()
)
DISCUSS = frozenset("discuss discussed discusses discussing".split())
ASSIST = {"assist": "attend", "assisted": "attended", "assists": "attends", "assisting": "attending"}
# what one attends: "assisted to the meeting", "assist to class"; not "assist to do it" (helps to)
ATTENDED_AFTER = frozenset(
    "the a an my his her our their class classes school lessons lectures meetings conferences mass church".split()
)
# "one of my friends is": the verb agrees with "one"
ONE_OF_VERBS = frozenset("is was has".split())
SUPERLATIVES = frozenset("most best worst greatest biggest main".split())
# nouns learners use uncounted (many informations is its own rule; "many work" needs "much")
UNCOUNTABLE = frozenset(
    """information advice furniture homework luggage baggage equipment knowledge software feedback research
    news money work water food music traffic weather bread rice evidence progress stuff fun love health
    pollution transport accommodation english spanish fish sheep deer hair paper time noise""".split()
)
PREPOSITIONS = frozenset(
    "of in on at for with from to by about into under over through between among after before behind near like".split()
)
POSSESSIVES = frozenset("my your his her our their".split())
GROUP_NOUNS = frozenset("family team staff police government class company band crew audience public".split())
# "what he could to help", "all I can to win", "as much as we can to": the modal's verb is left out
ELLIPSIS_OPENERS = frozenset("what all everything anything something as much whatever nothing best".split())
MODALS = frozenset("can can't cannot could couldn't should shouldn't must mustn't will won't might would".split())
TO_MODALS = MODALS | {"may", "wouldn't"}
# what a verb's object opens with after a modal's "to" ("must to offer a good", "should to buy new")
MODAL_OBJECTS = frozenset("the a an my your his her our their some new this that it them".split())
# what starts a verb's object after "for" ("for buy some clothes"), not a noun's ("for work the next day")
PURPOSE_OBJECTS = frozenset(
    "some it them him her me us you a an my your his our their this these those english".split()
)
ONE_TIME_UNIT = frozenset("year month week day hour minute night".split())
# verbs that are nouns too, but no noun "for" takes bare: "for buy food", "for go shopping"
VERBS_AFTER_FOR = frozenset(
    "go come buy visit meet see get make find take bring watch pick ask tell start relax".split()
)
# nouns "for" takes before a time ("for work the next day", "asked for help the day after")
NOUNS_AFTER_FOR = frozenset("work help use love rent fun sale".split())
# after these "for" takes an -ing form: "thank you for coming", "sorry for being late"
FOR_ING = frozenset("thanks thank sorry apologise apologize excuse forgive blame responsible famous known".split())
# what may follow a place's name that ends its noun phrase ("in Spain, many", "Spain is", "Spain for")
AFTER_A_PLACE = frozenset("is was has have are were in on at for to with from and or because when where".split())
LOOK_FORMS = frozenset("look looks looking looked".split())
# what starts a verb's object: after "help", "meet" it makes them verbs ("thank you for help me")
OBJECT_OPENERS = frozenset("me you him her us them it my your his our their the a an this that".split())
# a verb's particle: "before go out", "used to get up" ("work out" is a verb too)
PARTICLES = frozenset("out up back home away off".split())
# where a verb's base form stands: "don't loose", "to loose", "can loose"
BEFORE_A_VERB = MODALS | frozenset("to don't doesn't didn't not never".split())
MONTHS = frozenset("january february march april may june july august september october november december".split())
COUNTRIES = frozenset(
    """spain france italy germany england portugal mexico argentina colombia peru chile brazil canada
    china japan russia india australia ireland scotland greece morocco venezuela cuba ecuador""".split()
)


@lru_cache(maxsize=4096)
def _regularised_past(word: str) -> str | None:
    """goed, buyed, teached, writed, runned → the verb's own past: an -ed word no dictionary knows
    whose stem is a verb with an irregular past (learned, payed, putted, leaved are words)."""
    if not word.endswith("ed") or not word.isalpha() or word in NOT_REGULARISED or getAllLemmas(word):
        return None
    stems = [word[:-2], word[:-1]]
    if len(word) > 4 and word[-3] == word[-4]:
        stems.append(word[:-3])  # runned, cutted
    for stem in stems:
        if len(stem) > 1 and shared.is_base_verb(stem):
            past = getInflection(stem, "VBD")
            regular = (stem + "ed", stem + "d", stem + stem[-1] + "ed")  # paned: panned is pan's past
            if past and word not in past and past[0] not in regular:
                return stem
    return None


def regularised_past(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Yesterday I goed → went; we buyed → bought; I have eated → eaten."""
    for i, word in enumerate(words):
        stem = _regularised_past(word)
        if stem is None and word in KNOWN_REGULARISED and (i == 0 or words[i - 1] not in shared.BE_FORMS):
            stem = KNOWN_REGULARISED[word]  # "the tickets costed", not "the plan was costed"
        if stem is None:
            continue
        participle = i > 0 and words[i - 1] in PARTICIPLE_AUXILIARIES
        form = getInflection(stem, "VBN" if participle else "VBD")
        if form:
            yield shared.replace_tokens(tokens, i, i + 1, form[0], "past_irregular", text)


@lru_cache(maxsize=4096)
def _base_of_third_person(verb: str) -> str | None:
    """``verb``'s base form when it is the -s form of a verb of the list ("knows" → "know")."""
    for lemma in getAllLemmas(verb).get("VERB", ()):
        if lemma in shared.THIRD_PERSON_VERBS and lemma not in ("have", "do") and verb in getInflection(lemma, "VBZ"):
            return lemma
    return None


def plural_subject(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """my parents is → are; some machines doesn't → don't; many workers knows → know: a plural noun
    right after its determiner, then the verb's singular form (not after "of": "one of the machines")."""
    for i in range(2, len(words)):
        noun = words[i - 1]
        if words[i - 2] not in PLURAL_DETERMINERS or noun in NOT_HERE or not tokens[i - 1].text.islower():
            continue
        after_of = i > 2 and words[i - 3] in PREPOSITIONS
        counted = after_of and words[i - 3] == "of" and shared.word_after(words, i - 4) in COUNTING_OF
        if (after_of and not counted) or not shared.is_plural_noun(noun):
            continue  # "one of the machines doesn't", "the work in the fields was": not the subject
        fixed = shared.SINGULAR_TO_PLURAL.get(words[i]) or _base_of_third_person(words[i])
        if fixed:
            yield shared.replace_tokens(tokens, i, i + 1, fixed, "agreement", text)


def singular_subject(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """My brother don't want → doesn't: a singular noun right after a possessive, then "don't" (not a
    group noun, which British English may count as many: "my family don't")."""
    for i in range(2, len(words)):
        noun = words[i - 1]
        if words[i] != "don't" or words[i - 2] not in POSSESSIVES or noun in GROUP_NOUNS:
            continue
        if (i == 2 or words[i - 3] not in PREPOSITIONS) and _singular_noun(noun) and tokens[i - 1].text.islower():
            yield shared.replace_tokens(tokens, i, i + 1, "doesn't", "third_person", text)


@lru_cache(maxsize=4096)
def _singular_noun(word: str) -> bool:
    """A noun in its own, singular form that is no adjective or adverb too ("my brother", "my boss",
    not "my best", "my own")."""
    lemmas = getAllLemmas(word)
    nouns = lemmas.get("NOUN", ())
    return word in nouns and not {"ADJ", "ADV"} & set(lemmas) and not word.endswith("s")


def modal_to(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I can't to go → can't go; animals should to live → should live; the city must to offer a →
    must offer: no "to" between a modal and its verb. The modal follows its subject, and not in
    "what he could to help", "all I can to win", where the verb after "to" is no modal's ("did what
    he could [do] to help"), nor after a noun's article or adjective ("the will to live", "an empty
    can to recycle")."""
    for i in range(2, len(words) - 1):
        if words[i] != "to" or words[i - 1] not in TO_MODALS or not shared.is_base_verb(words[i + 1]):
            continue
        subject, before = words[i - 2], words[i - 3] if i > 2 else "."
        if before in ELLIPSIS_OPENERS:
            continue
        if subject in shared.SUBJECT_PRONOUNS or shared.is_plural_noun(subject) or _singular_subject(words, i):
            yield shared.replace_tokens(
                tokens, i - 1, i + 2, f"{tokens[i - 1].text} {tokens[i + 1].text}", "verb_form", text
            )


def _singular_subject(words: list[str], i: int) -> bool:
    """A modal's subject that is a noun or a relative ("the city must to offer", "who should to"),
    where the verb after "to" is surely one: a verb alone, or a verb before its object."""
    subject, verb = words[i - 2], words[i + 1]
    lemmas = getAllLemmas(verb)
    if not (set(lemmas) <= {"VERB", "AUX"} or shared.word_after(words, i + 2) in MODAL_OBJECTS):
        return False
    if subject in ("who", "that", "which"):
        return True
    lemmas = getAllLemmas(subject)
    return subject.isalpha() and "NOUN" in lemmas and "ADJ" not in lemmas and subject not in FUNCTION_WORDS


def modal_bare_verb(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """She can speaks → can speak; he will goes → will go; it must has → must have: after a modal
    the verb is bare. Only a subject pronoun's modal ("his will says" has a noun, a will), where no
    noun can follow ("she will works" is no "the can works")."""
    for i in range(1, len(words) - 1):
        if words[i] not in MODALS or words[i - 1] not in shared.SUBJECT_PRONOUNS:
            continue
        verb = words[i + 1]
        base = "have" if verb == "has" else _base_of_third_person(verb)
        if base is not None:
            yield shared.replace_tokens(tokens, i + 1, i + 2, base, "verb_form", text)


def durations(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I worked there during three years → for three years (a length of time takes "for")."""
    for i in range(len(words) - 2):
        if words[i] != "during":
            continue
        count, unit = words[i + 1], words[i + 2]
        many = (shared.is_number(count) or shared.is_age(count)) and unit in shared.TIME_UNITS
        if many or (count in ("a", "an", "one") and unit in ONE_TIME_UNIT):  # during an hour → for an hour
            yield shared.replace_tokens(tokens, i, i + 1, "for", "preposition", text)


def percentages(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """The 40% of the customers → 40% of the customers ("el 40 %"); increased a 12% → increased by
    12% ("aumentó un 12 %")."""
    if "%" not in words:
        return
    for i in range(len(words) - 3):
        if words[i + 1].isdigit() and words[i + 2] == "%":
            if words[i] == "the" and words[i + 3] == "of":
                yield shared.replace_tokens(tokens, i, i + 2, tokens[i + 1].text, "determiner", text)
            elif words[i] == "a" and i > 0 and words[i - 1] in CHANGES_BY:
                yield shared.replace_tokens(tokens, i, i + 1, "by", "preposition", text)


# what changes "by" an amount: "increased by 12%"
CHANGES_BY = frozenset(
    """increase increased increases increasing rise rose risen rises rising grow grew grown grows growing
    fall fell fallen falls falling drop dropped drops dropping decrease decreased decreases decreasing
    reduce reduced reduces reducing""".split()
)


# things named by what they are for: "a tool for learning", "a machine for making coffee"
WHAT_IS_FOR = frozenset("tool tools machine machines app apps device devices method methods equipment".split())
# words that are verbs too but a preposition or adverb after "for" ("for over a century", "for up to")
NOT_A_VERB_AFTER_FOR = frozenset("over up down near like round".split())


def purpose_bare_verb(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I came for learn English → to learn: "for" before a verb that is nothing else (not "for help"),
    not where "for" takes an -ing ("thank you for come" → "for coming", another fix)."""
    if "for" not in words:
        return
    for i in range(len(words) - 1):
        takes_ing = i > 0 and (words[i - 1] in FOR_ING or words[max(i - 2, 0) : i] == ["thank", "you"])
        lemmas = getAllLemmas(words[i + 1]) if words[i] == "for" and not takes_ing else {}
        if not lemmas or not shared.is_base_verb(words[i + 1]) or words[i + 1] in NOT_A_VERB_AFTER_FOR:
            continue
        if tokens[i + 1].text[:1].isupper():
            continue  # a name: "works for Google"
        # a verb that is a noun too is a verb before its object: "for buy some clothes", "for do it"
        after = shared.word_after(words, i + 2)
        object_after = "VERB" in lemmas and (
            after in PURPOSE_OBJECTS or (after == "the" and words[i + 1] not in NOUNS_AFTER_FOR)
        )
        if set(lemmas) <= {"VERB", "AUX"} or object_after or words[i + 1] in VERBS_AFTER_FOR:
            # after an adjective it is no purpose: excited for meet you → excited to meet you
            feeling = i > 0 and "ADJ" in getAllLemmas(words[i - 1]) and words[i - 1].endswith(("ed", "y"))
            gerund = getInflection(words[i + 1], "VBG") if i > 0 and words[i - 1] in WHAT_IS_FOR else ()
            if gerund:  # a useful tool for learn → for learning: what a thing is for
                yield shared.replace_tokens(tokens, i + 1, i + 2, gerund[0], "verb_form", text)
                continue
            yield shared.replace_tokens(tokens, i, i + 1, "to", "verb_form" if feeling else "purpose_for", text)


def country_article(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """In the Spain → In Spain: a country's name takes no article (not the United States, the UK)."""
    for i in range(len(words) - 1):
        if words[i] == "the" and words[i + 1] in COUNTRIES and tokens[i + 1].text[:1].isupper():
            if shared.word_after(words, i + 2) in shared.ENDS_A_PHRASE | AFTER_A_PLACE:  # not "the England team"
                yield shared.replace_tokens(tokens, i, i + 2, tokens[i + 1].text, "determiner", text)


def _gerund(word: str) -> str | None:
    forms = getInflection(word, "VBG")
    return forms[0] if forms else None


def _is_verb_here(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a base verb that cannot be read as a noun there: a word that is only a
    verb, or a verb with its object after it ("help me", "meet the team")."""
    word = words[i]
    if not shared.is_base_verb(word):
        return False
    if word in ("go", "come"):
        return True  # "before go to sleep": never the noun here
    after = shared.word_after(words, i + 1)
    return set(getAllLemmas(word)) == {"VERB"} or after in OBJECT_OPENERS or after in PARTICLES


def gerund_after(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I look forward to hear from you → hearing; After finish school → After finishing; thank you for
    help me → helping; I am used to get up early → getting: where English wants the -ing form."""
    for i in range(1, len(words)):
        if words[i - 1] == "not" and i >= 2 and words[i - 2] in GERUND_PREPOSITIONS | {"for"}:
            # sorry for not write → not writing, the idea of not go → not going
            if _is_verb_here(words, i) and (gerund := _gerund(words[i])):
                yield shared.replace_tokens(tokens, i, i + 1, gerund, "verb_form", text)
            continue
        if words[i - 1] not in GERUND_TRIGGERS:
            continue  # most words: told at once
        forward = i >= 3 and words[i - 1] == "to" and words[i - 2] == "forward" and words[i - 3] in LOOK_FORMS
        after_before = words[i - 1] in ("after", "before") and (i == 1 or words[i - 2] in (",", "and", "but"))
        after_before = after_before and words[i] in shared.THIRD_PERSON_VERBS  # not "Before daylight"
        before = words[max(0, i - 5) : i - 1]
        thanks = words[i - 1] == "for" and (
            any(w in FOR_ING for w in before) or ("you" in before and "thank" in before)  # not "can you … for"
        )
        # experience in teach → teaching, good at cook → cooking: a preposition's verb is its -ing
        after_preposition = words[i - 1] in GERUND_PREPOSITIONS and i >= 2 and words[i - 2] not in ("to", "order")
        if after_preposition and _verb_only_base(words[i]):
            gerund = _gerund(words[i])
            if gerund:
                yield shared.replace_tokens(tokens, i, i + 1, gerund, "verb_form", text)
            continue
        # after "sorry for", "thank you for" a bare word is the verb: sorry for answer so late → answering
        # (with words after it: "thanks for support." wants "your support", not "supporting")
        thanked = thanks and shared.is_base_verb(words[i]) and words[i] not in NOUNS_AFTER_FOR
        thanked = thanked and shared.word_after(words, i + 1) not in shared.ENDS_A_PHRASE
        # "I'm not used to cook": after a person's "used to" a bare word is the verb
        used = _used_to(words, i) and shared.is_base_verb(words[i])
        if (forward or after_before or thanks or used) and (thanked or used or _is_verb_here(words, i)):
            gerund = _gerund(words[i])
            if gerund:
                yield shared.replace_tokens(tokens, i, i + 1, gerund, "verb_form", text)


GERUND_PREPOSITIONS = frozenset("in of about at without by".split())
# the words after which gerund_after looks at all ("to": look forward to, used to)
GERUND_TRIGGERS = GERUND_PREPOSITIONS | {"to", "after", "before", "for"}
# a person used to something: "I am used to getting up early" (not "it is used to make bread")
PERSON_BE = frozenset("i'm you're we're they're he's she's".split())
GET_FORMS = frozenset("get gets got getting".split())
# people who are used to something ("Spanish people are used to eat late" → eating)
PEOPLE = frozenset("people students children kids teenagers spaniards families workers parents".split())


def _used_to(words: list[str], i: int) -> bool:
    """Whether `words[i]` follows "used to" after a person's "be" (I am used to, she's used to) or
    after "get" (get used to): the "to" of a noun or an -ing, not of a verb's base form."""
    if i < 3 or words[i - 2 : i] != ["used", "to"]:
        return False
    if words[i - 3] in ("not", "very", "so", "really", "already", "still", "quite") and i >= 4:
        i -= 1  # I'm not used to cook → cooking
    before = words[i - 3]
    person_be = before in PERSON_BE or (
        before in shared.BE_FORMS and i >= 4 and (words[i - 4] in shared.PAST_SUBJECTS or words[i - 4] in PEOPLE)
    )
    return person_be or before in GET_FORMS


@lru_cache(maxsize=4096)
def _plural_noun_only(word: str) -> bool:
    """A plural noun that is no verb's -s form as well ("does" is a deer's plural, and "do"'s)."""
    verbs = getAllLemmas(word).get("VERB", ())
    return shared.is_plural_noun(word) and not any(word in getInflection(v, "VBZ") for v in verbs)


def quantities(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """every months, each students → every month, each student; too much adverts → too many; others
    people → other people; a lot of person → people: the word before a noun agrees with its number."""
    for i in range(len(words) - 1):
        word, noun = words[i], words[i + 1]
        plural = _plural_noun_only(noun) and noun not in MASS_PLURALS and tokens[i + 1].text.islower()
        if word in ("every", "each") and plural and noun not in ("people", "others"):  # each others: the table's
            singular = getAllLemmas(noun).get("NOUN", (noun,))[0]
            yield shared.replace_tokens(tokens, i + 1, i + 2, singular, "noun_number", text)
        elif word in ("much", "less") and plural and _counts_alone(words, i):
            # too much adverts → too many, less cars → fewer cars
            yield shared.replace_tokens(tokens, i, i + 1, FOR_PLURALS[word], "noun_number", text)
        elif word == "others" and plural:
            yield shared.replace_tokens(tokens, i, i + 1, "other", "noun_number", text)
        elif word in SINGULAR_DETERMINERS and plural and _determines(words, i):
            # this cars → these cars, in that days → in those days, another things → other things
            yield shared.replace_tokens(tokens, i, i + 1, SINGULAR_DETERMINERS[word], "noun_number", text)
        elif noun == "person" and (word in ("many", "several") or words[max(0, i - 2) : i + 1] == ["a", "lot", "of"]):
            yield shared.replace_tokens(tokens, i + 1, i + 2, "people", "noun_number", text)
        elif _counts_more_than_one(words, i) and tokens[i + 1].text.islower():
            yield from _plural_after(tokens, words, i + 1, text)
        elif (
            noun in COUNTED  # first: most words are no such noun, and the test is a set's
            and _many_of(words, i)
            and (word == "of" or noun in COUNTED_WHOLE)
            and tokens[i + 1].text.islower()
        ):
            # a lot of friend, all my friend → friends; also before the clause's verb (my friend live)
            after = shared.word_after(words, i + 2)
            verb = _verb_only(after)
            yield from _plural_after(tokens, words, i + 1, text, ends=NOUN_PHRASE_ENDS | {after} if verb else None)
        elif words[i : i + 2] == ["one", "of"] and i + 2 < len(words) and words[i + 2] in OWNERS:
            # one of my friend, one of the best thing, one of the most important problem → plural
            k = i + 3
            while k < len(words) - 1 and k - i <= 5 and (words[k] in SUPERLATIVES or _adjective_only(words[k])):
                k += 1
            if k < len(words) and tokens[k].text.islower():
                yield from _plural_after(tokens, words, k, text, ends=NOUN_PHRASE_ENDS | ONE_OF_VERBS)


# what a quantity word of a mass becomes before a plural
FOR_PLURALS = {"much": "many", "less": "fewer"}


def _counts_alone(words: list[str], i: int) -> bool:
    """Whether the plural after `words[i]` is all it counts: not "like very much animals" (an
    adverb out of place), "more or less things", "much less cars", nor "much vegetables, fish and
    olive oil" (a list, where "many" does not fit the mass nouns)."""
    before = words[max(0, i - 2) : i]
    if before[-1:] == ["very"] or before == ["more", "or"]:
        return False
    if words[i] == "less" and before[-1:] in (["much"], ["far"], ["no"]):
        return False  # "much less cars" is "far fewer cars", more than a word's change
    return shared.word_after(words, i + 2) not in (",", "and", "or")


# nouns learners write in the singular after "a lot of", "some of my", "all my" (count nouns only:
# "a lot of time", "all the city" are right; "a lot of opportunity to think" too, JFLEG's references
# keep it); after "all" only those a whole one of is unlikely
COUNTED_WHOLE = frozenset(
    """friend student teacher thing problem question tourist child man woman animal car shop restaurant museum
    hotel photo picture mistake subject idea reason""".split()
)
COUNTED = COUNTED_WHOLE | frozenset(
    """place book film movie game country city song language job advantage disadvantage tree
    flower road street room option possibility event party concert festival sport hobby difference website
    computer phone scientist project kid plant member worker employee company product course exam lesson
    skill tool machine""".split()
)


@lru_cache(maxsize=4096)
def _verb_only_base(word: str) -> bool:
    """A verb's base form that is nothing else (teach, learn; not cook, go, love)."""
    return set(getAllLemmas(word)) == {"VERB"} and shared.is_base_verb(word)


@lru_cache(maxsize=4096)
def _verb_only(word: str) -> bool:
    """A verb that is no noun too (live, passed; not "union", "work")."""
    lemmas = getAllLemmas(word)
    return "VERB" in lemmas and "NOUN" not in lemmas


def _many_of(words: list[str], i: int) -> bool:
    """Whether `words[i]` ends a phrase that counts more than one of the noun after it: a lot of,
    lots of, plenty of, a couple of, full of, some/most/many/all of my (the, his…), all my (the, his…), a few."""
    before = words[max(0, i - 3) : i + 1]
    if words[i] == "of":
        return before[-3:] == ["a", "lot", "of"] or before[-2:] in (
            ["lots", "of"],
            ["plenty", "of"],
            ["couple", "of"],
            ["full", "of"],  # the centre is full of tourist → tourists
        )
    if words[i] in OWNERS:
        return before[-2:-1] == ["all"] or (
            before[-2:-1] == ["of"] and before[-3:-2] in (["some"], ["most"], ["many"], ["all"])
        )
    return words[i] == "few" and before[-2:-1] == ["a"]


def _determines(words: list[str], i: int) -> bool:
    """Whether `words[i]` (this, that, another) stands before its noun phrase's last word: the
    plural noun after it ends the phrase ("this cars are", "this companies used"; not "this sports
    car"), and "that" is a
    determiner only at the start or after a preposition ("I think that cars are" is a clause)."""
    after = shared.word_after(words, i + 2)
    lemmas = getAllLemmas(after)
    if not (after in NOUN_PHRASE_ENDS | shared.SUBJECT_PRONOUNS or ("VERB" in lemmas and "NOUN" not in lemmas)):
        return False
    if any(after in getInflection(v, "VBZ") for v in lemmas.get("VERB", ())) or after in ("is", "was", "has"):
        return False  # "this phenomena reminds": the learner's noun is one thing, the verb says so
    return words[i] != "that" or i == 0 or words[i - 1] in THAT_DETERMINES_AFTER


def _counts_more_than_one(words: list[str], i: int) -> bool:
    """many, several, two… (digits up to 100: not a year), these, those, both, various, few."""
    word = words[i]
    if word.isdigit():
        return 1 < int(word) <= 100 and (i == 0 or words[i - 1] not in (":", ".", ","))  # not "at 7:30"
    if word == "both" and "and" in words[i + 2 : i + 4]:
        return False  # "both regulation and education": two things, each as written
    return shared.is_number(word) or word in COUNTING_DETERMINERS


def _plural_after(
    tokens: Sequence[Token], words: list[str], k: int, text: str, ends: frozenset[str] | None = None
) -> Iterator[Edit]:
    """The singular count noun at `k` in its plural, where the word after it ends the noun phrase
    (`ends`; not "two dog food bowls", "these help me")."""
    noun = words[k]
    plural = _plural_of(noun)
    if plural and shared.word_after(words, k + 1) in (ends or NOUN_PHRASE_ENDS):
        yield shared.replace_tokens(tokens, k, k + 1, plural, "noun_number", text)


@lru_cache(maxsize=4096)
def _plural_of(noun: str) -> str | None:
    """The plural of a singular count noun (friend → friends), None for anything else: a plural,
    a mass noun, a function word, a word lemminflect does not list as a noun only, a noun whose
    plural is itself."""
    lemmas = getAllLemmas(noun)
    if noun in UNCOUNTABLE or noun in NOT_HERE or noun == "person" or noun in FUNCTION_WORDS or len(noun) < 3:
        return None  # "those who are", "3 out of"
    if noun in NUMBER_NOUNS:
        return None  # "two million", "three hundred": a number's word stays singular after a number
    if noun not in lemmas.get("NOUN", ()) or "ADJ" in lemmas:
        return None  # not a noun, or an adjective as well ("both positive and negative")
    plurals = getInflection(noun, "NNS")
    return plurals[0] if plurals and plurals[0] != noun else None


@lru_cache(maxsize=4096)
def _adjective_only(word: str) -> bool:
    lemmas = getAllLemmas(word)
    return "ADJ" in lemmas and "NOUN" not in lemmas


def _is_day(word: str) -> bool:
    return word.isdigit() and 1 <= int(word) <= 31


def fixed_phrases(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """didn't used to → use to; don't loose → lose; the same street than me → as me; in 15 March → on
    15 March; Do you can → Can you: a few words that are wrong wherever they stand together."""
    for i in range(len(words) - 1):
        pair = (words[i], words[i + 1])
        if pair == ("used", "to") and (words[i - 1 : i] == ["didn't"] or words[max(0, i - 2) : i] == ["did", "not"]):
            yield shared.replace_tokens(tokens, i, i + 1, "use", "verb_form", text)
        elif words[i + 1] == "loose" and words[i] in BEFORE_A_VERB:
            yield shared.replace_tokens(tokens, i + 1, i + 2, "lose", "word_confusion", text)
        elif words[i] == "than" and "same" in words[max(0, i - 4) : i] and "more" not in words[max(0, i - 4) : i]:
            yield shared.replace_tokens(tokens, i, i + 1, "as", "comparative", text)
        elif words[i] == "in" and _is_day(words[i + 1]) and shared.word_after(words, i + 2) in MONTHS:
            yield shared.replace_tokens(tokens, i, i + 1, "on", "preposition", text)
        elif words[i] == "on" and words[i + 1] in MONTHS - {"may", "march"} and _month_alone(words, i + 2):
            yield shared.replace_tokens(tokens, i, i + 1, "in", "preposition", text)  # on July → in July
        elif words[i : i + 3] == ["do", "you", "can"]:
            yield shared.replace_tokens(tokens, i, i + 3, "can you", "question_order", text)
        elif pair == ("of", "to") and shared.is_base_verb(shared.word_after(words, i + 2)):
            # in charge of to lead → of leading, the idea of to go → of going
            gerund = _gerund(words[i + 2])
            if gerund:
                yield shared.replace_tokens(tokens, i + 1, i + 3, gerund, "verb_form", text)
        elif pair == ("in", "the") and YEAR.match(shared.word_after(words, i + 2)):
            yield shared.replace_tokens(tokens, i, i + 2, tokens[i].text, "determiner", text)  # in the 2010 → in 2010
    if words[3:4] == [","] and (
        words[:3] == ["at", "the", "end"] or words[:2] == ["on", "the"] and words[2] in DAY_PARTS
    ):
        # At the end, we won → In the end ("al final"); On the morning, I… → In the morning
        yield shared.replace_tokens(tokens, 0, 1, "in", "preposition", text)


YEAR = re.compile(r"^(1[5-9]|20)\d\d$")
DAY_PARTS = frozenset("morning afternoon evening".split())


def _month_alone(words: list[str], k: int) -> bool:
    """A month with no day after it ("on July." but not "on July 4th", "on July the 4th")."""
    after = shared.word_after(words, k)
    return not (after[:1].isdigit() or after == "the")


PAST_MODALS = frozenset("could would should might".split())


def after_did(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I didn't went → go; did you saw → see; she did not knew → know: after "did" the verb is in
    its base form (a past that is not its own base: "didn't put" is left)."""
    for i, word in enumerate(words):
        if word in ("didn't", "didnt"):
            k = i + 1
        elif word == "did" and shared.word_after(words, i + 1) == "not":
            k = i + 2
        elif word == "did" and shared.word_after(words, i + 1) in shared.SUBJECT_PRONOUNS:
            k = i + 2  # a question: "did you saw"
        else:
            continue
        if shared.word_after(words, k) in PAST_MODALS and k == i + 1:
            # I didn't could finish → couldn't: a modal has no "did" before it
            yield shared.replace_tokens(tokens, i, k + 1, f"{words[k]}n't", "verb_form", text)
            continue
        base = shared.base_of_past(shared.word_after(words, k))
        if base and tokens[k].text.islower():
            yield shared.replace_tokens(tokens, k, k + 1, base, "verb_form", text)


def calques(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """We discussed about the plan → discussed the plan; I assisted to a conference → attended a
    conference: Spanish's "discutir sobre" and "asistir a", word for word."""
    for i in range(len(words) - 1):
        word, after = words[i], words[i + 1]
        # (not "discussed about ten ideas": "about" a number is "roughly")
        roughly = shared.word_after(words, i + 2)[:1].isdigit() or shared.is_number(shared.word_after(words, i + 2))
        if word in DISCUSS and after == "about" and tokens[i].text.islower() and not roughly:
            yield shared.replace_tokens(tokens, i, i + 2, word, "calque", text)
        elif word in ASSIST and after == "to" and shared.word_after(words, i + 2) in ATTENDED_AFTER:
            yield shared.replace_tokens(tokens, i, i + 2, ASSIST[word], "calque", text)


PHRASE_RULES = (
    after_did,
    calques,
    regularised_past,
    plural_subject,
    singular_subject,
    modal_to,
    modal_bare_verb,
    durations,
    percentages,
    purpose_bare_verb,
    country_article,
    gerund_after,
    quantities,
    fixed_phrases,
)
