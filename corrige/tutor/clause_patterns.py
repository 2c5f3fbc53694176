"""Patterns that read a clause as a whole, not a few words of it: its time phrase ("I visited
Paris the last summer", "I go to school all the days"), its conjunction ("Although it was cold, but
we went out": "aunque…, pero") and the relative after a person between commas ("my friend Carlos,
that is a doctor"). Spanish says each of them its own way, and a learner carries it over word for
word.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from lemminflect import getAllLemmas

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token
from corrige.tutor.function_words import FUNCTION_WORDS

# weeks, months... that "last" and "next" name without "the" ("el verano pasado": last summer)
NAMED_PERIODS = frozenset("week month year summer winter spring autumn weekend".split())
# after these "the last week" is a stretch of time (during the last week, spent the last week)
PERIOD_TAKERS = frozenset(
    """in during for of over at on since until till throughout from to by within all about after before
    spend spent spends spending enjoy enjoyed remember remembered is was were are be been 's""".split()
)
# what may follow the phrase where it ends its clause ("I stayed there the last summer with my
# family"); not "of" or "in" ("the last week of July" is right)
PERIOD_ENDS = shared.ENDS_A_PHRASE | frozenset("with because when so".split())
FUTURE_WORDS = frozenset("will 'll going plan plans hope hopes want wants would".split())


def period_without_the(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I visited Paris the last summer → last summer; I will go there the next week → next week:
    "last" and "next" say which week, as "el pasado"/"el próximo" do with "el". Only where the
    phrase ends its clause (or opens the sentence before its subject), not after a preposition or a
    verb whose object it is ("during the last week", "I spent the last week in bed"), not beside a
    perfect ("I have been ill the last week"), and "the next" only in a sentence about the future
    (a story's "we married the next year" is right)."""
    if "last" not in words and "next" not in words:
        return
    for k in range(len(words) - 2):
        if words[k] != "the" or words[k + 1] not in ("last", "next"):
            continue
        if words[k + 2] not in NAMED_PERIODS and words[k + 2] not in shared.DAYS:
            continue  # "the next Saturday" is next Saturday where the sentence is about the future
        after = shared.word_after(words, k + 3)
        opens = k == 0 and (after == "," or after in shared.PAST_SUBJECTS)
        ends = k > 0 and words[k - 1] not in PERIOD_TAKERS and after in PERIOD_ENDS
        if not (opens or ends):
            continue
        if words[k + 1] == "last" and {"have", "has", "'ve"} & set(words):
            continue
        if words[k + 1] == "next" and not (FUTURE_WORDS & set(words) or any(w.endswith("'ll") for w in words)):
            continue
        yield shared.replace_tokens(tokens, k, k + 3, shared.span_text(tokens, text, k + 1, k + 3), "determiner", text)


def every_day(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I go to school all the days → every day ("todos los días"), where the phrase ends its clause
    ("all the days of my life" is right)."""
    if "days" not in words:
        return
    for k in range(len(words) - 2):
        if words[k : k + 3] == ["all", "the", "days"] and shared.word_after(words, k + 3) in shared.ENDS_A_PHRASE:
            yield shared.replace_tokens(tokens, k, k + 3, "every day", "calque", text)


def although_but(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Although it was cold, but we went out → Although it was cold, we went out ("aunque…, pero"):
    one of the two clauses says "but" already."""
    opens = 2 if words[:2] == ["even", "though"] else 1 if words[:1] in (["although"], ["though"]) else 0
    if not opens:
        return
    k = next((k for k in range(opens + 1, len(words) - 1) if words[k] == ","), None)
    if k is not None and words[k + 1] == "but":  # the comma that ends the "although" clause
        yield shared.replace_tokens(tokens, k, k + 2, ",", "calque", text)


# people a clause after a comma says more about ("my friend Carlos, who is a doctor")
PEOPLE_NOUNS = frozenset("friend brother sister mother father teacher doctor boss cousin uncle aunt neighbour".split())
RELATIVE_VERBS = frozenset(
    """is was lives lived works worked has had loves loved studies studied comes came helps helped teaches
    taught did went were are have do want wanted said made""".split()
)
PERSONS = PEOPLE_NOUNS | frozenset(
    "man woman boy girl person guy lady child kid student friends people children students teachers neighbours".split()
)


def who_after_a_name(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """My friend Carlos, that is a doctor → , who is a doctor: a clause between commas about a
    person takes "who", never "that"; the man which lives next door → who, a woman which I met →
    who: "which" is for things (not "I met my brother, which was a surprise": the meeting was)."""
    for i in range(1, len(words) - 1):
        if words[i] != "which" or words[i - 1] not in PERSONS:
            continue
        after = words[i + 1]
        if after in RELATIVE_VERBS or after in shared.PAST_SUBJECTS:
            yield shared.replace_tokens(tokens, i, i + 1, "who", "pronoun", text)
    for i in range(2, len(words) - 2):
        if words[i] == "," and words[i + 1] == "which" and words[i - 1] in PERSONS:
            if words[i + 2] in RELATIVE_VERBS and words[i + 2] not in ("is", "was"):
                yield shared.replace_tokens(tokens, i + 1, i + 2, "who", "pronoun", text)
        if words[i] != "," or words[i + 1] != "that" or words[i + 2] not in RELATIVE_VERBS:
            continue
        # a person's noun, or a name after one ("my friend Carlos"; "Spain, that is..." is no person)
        named = tokens[i - 1].text[:1].isupper() and words[i - 2] in PEOPLE_NOUNS
        if named or words[i - 1] in PEOPLE_NOUNS:
            yield shared.replace_tokens(tokens, i + 1, i + 2, "who", "pronoun", text)
        elif shared.word_after(words, i + 3) != "," and _a_thing_before(tokens, words, i - 1):
            # the old city, that is very beautiful → , which is: between commas a thing takes "which"
            yield shared.replace_tokens(tokens, i + 1, i + 2, "which", "pronoun", text)


# things a clause between commas tells more of ("the old city, which is very beautiful")
THING_NOUNS = frozenset(
    """city town village country place hotel restaurant museum beach park building house flat school
    university film book series song car phone game app island church castle""".split()
)
PLACE_TAKERS = frozenset("to in from visited visit at".split())


def _a_thing_before(tokens: Sequence[Token], words: list[str], k: int) -> bool:
    """ "the old city" or "a train to Seville" ends at `k`: a thing or a place, no person."""
    if words[k] in THING_NOUNS:
        return True
    return k >= 1 and tokens[k].text[:1].isupper() and words[k - 1] in PLACE_TAKERS


SEASONS = frozenset("summer winter spring autumn".split()) | shared.MONTHS
WEATHER_WORDS = frozenset("hot cold warm cool sunny rainy windy cloudy humid dry wet freezing snowy".split())
DEGREES = frozenset("very quite really so too still usually always often sometimes a bit".split())


def weather_without_it(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """In September is still very hot → it is still very hot; in winter can be quite cold → it
    can be: the weather's verb has "it" for its subject ("hace calor" has none)."""
    for i in range(len(words) - 3):
        if (
            words[i] != "in"
            or words[i + 1] not in SEASONS
            or (i and words[i - 1] not in (",", "but", "and", "because"))
        ):
            continue
        verb = i + 2
        if words[verb] not in ("is", "was", "can", "gets", "will"):
            continue
        k = verb + 1 + (words[verb] in ("can", "will") and shared.word_after(words, verb + 1) == "be")
        while shared.word_after(words, k) in DEGREES:
            k += 1
        if shared.word_after(words, k) in WEATHER_WORDS:
            yield shared.replace_tokens(tokens, verb, verb + 1, f"it {tokens[verb].text}", "missing_subject", text)


PLURAL_SUBJECTS = frozenset("i you we they".split())
SINGULAR_SUBJECTS = frozenset("he she it".split())
RELATIVES = frozenset("that who which".split())
PAST_MARKS = frozenset("yesterday ago last".split())


def not_without_do(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I not like it → I don't like it; She not work here → doesn't work; a service that not work →
    that doesn't work: "no" before a verb is "don't"/"doesn't" (or "didn't" in a past) in English."""
    if "not" not in words:
        return
    for i in range(1, len(words) - 1):
        if words[i] != "not" or not tokens[i + 1].text.islower():
            continue
        base = _plain_verb(words[i + 1])
        person = _person_before(words, i)
        if base is None or person is None:
            continue
        do = "didn't" if PAST_MARKS & set(words) else ("doesn't" if person == "singular" else "don't")
        yield shared.replace_tokens(tokens, i, i + 2, f"{do} {base}", "question_no_do", text)


def _plain_verb(word: str) -> str | None:
    """The base of a common verb in its base or -s form ("like", "works" → "work"), else None."""
    if word in shared.THIRD_PERSON_VERBS:
        return word
    return next((v for v in shared.THIRD_PERSON_VERBS if shared.third_person_of(v) == word), None)


def _person_before(words: list[str], i: int) -> str | None:
    """ "singular" or "plural": the subject right before `words[i]` (a pronoun, or a relative after
    its noun: "a service that"); None where there is none to tell."""
    subject = words[i - 1]
    if subject in PLURAL_SUBJECTS:
        return "plural"
    if subject in SINGULAR_SUBJECTS:
        return "singular"
    if subject in RELATIVES and i >= 2:
        noun = words[i - 2]
        if noun == "people" or shared.is_plural_noun(noun):
            return "plural"
        if noun.isalpha() and noun not in FUNCTION_WORDS and "NOUN" in getAllLemmas(noun):
            return "singular"
    return None


CLAUSE_RULES = (period_without_the, every_day, although_but, who_after_a_name, weather_without_it, not_without_do)
