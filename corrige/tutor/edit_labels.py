"""Naming an edit from its words: which learner-error category "speaked → spoke" is.

The model writes its correction and the Spanish gloss in one pass, and on real learners'
sentences the correction is often right while the gloss is not ("I have two children" under
"sin errores", or an item that names words the sentence does not contain). Such an answer used
to be thrown away. `name_edit` names an edit from the words on its two sides alone, with
closed word lists and lemminflect's lexicon, so the tutor can write the gloss itself from the
edits it really made. It is deliberately narrow: an edit it cannot name returns None, and the
tutor then abstains as before, so a learner never reads an explanation the words do not support.
"""

from __future__ import annotations

import difflib
import itertools
import re
from functools import lru_cache

from lemminflect import getAllInflections, getAllLemmas

from corrige.tutor.edits import Edit, tokenize

DETERMINERS = frozenset("a an the this that these those some any each every no".split())
PREPOSITIONS = frozenset(
    "about above across after against along among around at before behind below beside between by "
    "during for from in inside into near of off on onto out outside over since through to toward "
    "towards under until up upon with within without".split()
)
_WORDS = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|[,;]")
# Real-word confusions learners make (sound or spelling alike); each set is one family.
CONFUSIONS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split("/"))
    for group in (
        "there/their/they're to/too/two then/than its/it's your/you're were/where/we're quiet/quite "
        "lose/loose whose/who's affect/effect accept/except advice/advise know/now no/know of/off "
        "lend/borrow make/do say/tell bring/take fun/funny "
        # how a thing is and how a person feels: I am bored (aburrido), the class is boring
        "bored/boring excited/exciting interested/interesting tired/tiring worried/worrying surprised/surprising "
        "amazed/amazing annoyed/annoying embarrassed/embarrassing frightened/frightening "
        "disappointed/disappointing relaxed/relaxing confused/confusing"
    ).split()
)
SUBJECT_PRONOUNS = "i you he she it we they"
PRONOUNS = frozenset(
    f"{SUBJECT_PRONOUNS} me him her us them myself yourself himself herself itself ourselves themselves "
    "who whom which that what mine yours hers ours theirs".split()
)
POSSESSIVES = frozenset("his her their its my your our".split())
# Agreement pairs lemminflect cannot tell apart by tag (both forms of be/have/do are "VERB").
AGREEMENT = frozenset(
    frozenset(pair.split("/"))
    for pair in "is/are was/were has/have does/do doesn't/don't isn't/aren't wasn't/weren't is/am".split()
)
AUXILIARIES = frozenset("am is are was were be been being have has had do does did will would to".split())
# "to" after these is part of the verb pattern (should to go, let me to go), not a preposition
TO_BEFORE_BARE_VERB = frozenset(
    "can could may might must shall should will would let make made me him her us them you".split()
)
NOUN_CONTEXT = (
    DETERMINERS
    | POSSESSIVES
    | frozenset("many few several both two three four five six seven eight nine ten one of".split())
)
VERB_CONTEXT = frozenset(f"{SUBJECT_PRONOUNS} who which that people".split())
PERFECT = frozenset({"have", "has", "'ve"})
PAST_TAGS = frozenset({"VBD"})
PRESENT_TAGS = frozenset({"VB", "VBP", "VBZ"})
# Words English capitalises that Spanish does not: the only capitalisations the tutor names by itself
CAPITALISED = frozenset(
    """i monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays
    fridays saturdays sundays january february march april may june july august september october
    november december christmas easter english spanish french german italian portuguese chinese japanese
    russian arabic greek catalan basque galician british american european african asian mexican
    argentinian colombian peruvian chilean cuban venezuelan canadian australian irish scottish welsh
    internet""".split()
)
# spaCy's English stop words are the closed class; lemminflect lists open-class words only
CLOSED_CLASS = DETERMINERS | PREPOSITIONS | PRONOUNS | POSSESSIVES | AUXILIARIES


@lru_cache(maxsize=16384)
def lemmas(word: str) -> dict[str, frozenset[str]]:
    """Part of speech → lemmas of ``word`` (lower case), from lemminflect."""
    return {pos: frozenset(found) for pos, found in getAllLemmas(word.lower()).items()}


@lru_cache(maxsize=16384)
def tags_of(word: str, lemma: str) -> frozenset[str]:
    """The Penn tags under which ``word`` is a form of ``lemma``."""
    return frozenset(tag for tag, forms in getAllInflections(lemma).items() if word.lower() in forms)


def load_word_tables() -> None:
    """Read lemminflect's lemma and inflection tables now: it reads them on first use, which takes
    about a second, so a server does this before it says it is ready."""
    getAllLemmas("went")
    getAllInflections("go")


def is_word(word: str) -> bool:
    return word.lower() in CLOSED_CLASS or bool(getAllLemmas(word.lower()))


def _shared_lemma(a: str, b: str, pos: str) -> str | None:
    common = lemmas(a).get(pos, frozenset()) & lemmas(b).get(pos, frozenset())
    return min(common) if common else None


def _core(original: list[str], replacement: list[str], before: str) -> tuple[list[str], list[str], str]:
    """The two word lists without their common beginning and end (lower case), and the word
    before what is left."""
    a, b = [w.lower() for w in original], [w.lower() for w in replacement]
    while a and b and a[0] == b[0]:
        before, a, b = a[0], a[1:], b[1:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    return a, b, before.lower()


def name_edit(original: str, replacement: str, before: str = "") -> str | None:
    """The category id of the edit ``original → replacement``, or None when its words do not say.

    ``before`` is the word just before the edit in the sentence: it tells a noun from a verb
    where the word can be either (two book → books, she book → books).
    """
    words_a = [t.text for t in tokenize(original) if t.is_word]
    words_b = [t.text for t in tokenize(replacement) if t.is_word]
    if [w.lower() for w in words_a] == [w.lower() for w in words_b]:
        return _name_capitalisation(words_a, words_b, before)
    if len(words_a) > 1 and sorted(w.lower() for w in words_a) == sorted(w.lower() for w in words_b):
        return "word_order"
    a, b, before = _core(words_a, words_b, before)
    changed = set(a) | set(b)
    if changed and changed <= DETERMINERS:
        if changed == {"a", "an"}:
            return "a_an"
        return None if _article_before_plural(words_b) else "determiner"
    if changed == {"to"}:
        return "verb_form" if before in TO_BEFORE_BARE_VERB else "preposition"
    if changed and changed <= PREPOSITIONS:
        return "preposition"
    if len(a) == 1 and len(b) == 1:
        return _name_word_swap(a[0], b[0], before)
    if "more" in set(a) ^ set(b):
        return _name_comparative(a, b)
    return _name_verb_phrase(a, b)


def _name_capitalisation(words_a: list[str], words_b: list[str], before: str) -> str | None:
    """english → English, monday → Monday; a common noun capitalised mid-sentence is not a fix."""
    changed = [b for a, b in zip(words_a, words_b, strict=True) if a != b]
    at_start = not before and words_a[0] != words_b[0] and len(changed) == 1
    if changed and (at_start or all(w.lower() in CAPITALISED and w[0].isupper() for w in changed)):
        return "capitalisation"
    return None


def _article_before_plural(words: list[str]) -> bool:
    """Does "a" or "an" stand before a word that can only be a plural noun (a weekdays)?"""
    for article, word in itertools.pairwise(words):
        if article.lower() in ("a", "an"):
            found = lemmas(word).get("NOUN", frozenset())
            if found and all(tags_of(word, lemma) == {"NNS"} for lemma in found):
                return True
    return False


def _name_word_swap(a: str, b: str, before: str) -> str | None:
    if any(a in group and b in group for group in CONFUSIONS):
        return "word_confusion"
    if frozenset({a, b}) in AGREEMENT:
        return "agreement"
    if {a, b} == {"his", "her"}:
        return "possessive_his_her"
    if a in PRONOUNS | POSSESSIVES and b in PRONOUNS | POSSESSIVES:
        return "pronoun"
    if not is_word(a) and is_word(b):
        if a.endswith("ed") and (_shared_lemma(a[:-2], b, "VERB") or _shared_lemma(a[:-1], b, "VERB")):
            return "past_irregular"  # speaked → spoke, buyed → bought, writed → wrote
        similar = difflib.SequenceMatcher(None, a, b).ratio() >= 0.7
        return "spelling" if similar else None
    noun, verb = _shared_lemma(a, b, "NOUN"), _shared_lemma(a, b, "VERB")
    if noun and verb:  # books, reads: the word before decides, or nothing does
        if before in NOUN_CONTEXT:
            verb = None
        elif before in VERB_CONTEXT or (lemmas(before).keys() == {"NOUN"}):  # students read
            noun = None
        else:
            return None
    if noun:
        return "noun_number" if {"NN", "NNS"} <= tags_of(a, noun) | tags_of(b, noun) else None
    if verb:
        return _name_verb_forms(tags_of(a, verb), tags_of(b, verb))
    if _shared_lemma(a, b, "ADJ") or _shared_lemma(a, b, "ADV"):
        return "comparative" if b.endswith(("er", "est")) or a.endswith(("er", "est")) else None
    return None


def _name_comparative(a: list[str], b: list[str]) -> str | None:
    """more safe → safer, more better → better."""
    rest_a, rest_b = [w for w in a if w != "more"], [w for w in b if w != "more"]
    if len(rest_a) == len(rest_b) == 1 and _shared_lemma(rest_a[0], rest_b[0], "ADJ"):
        return "comparative"
    return None


def _name_verb_forms(tags_a: frozenset[str], tags_b: frozenset[str]) -> str | None:
    if not tags_a or not tags_b:
        return None
    if ("VBZ" in tags_a and tags_b & {"VB", "VBP"}) or ("VBZ" in tags_b and tags_a & {"VB", "VBP"}):
        return "agreement"
    if (tags_a & PAST_TAGS and tags_b & PRESENT_TAGS and not tags_b & PAST_TAGS) or (
        tags_b & PAST_TAGS and tags_a & PRESENT_TAGS and not tags_a & PAST_TAGS
    ):
        return "verb_tense"
    return "verb_form"


def _name_verb_phrase(a: list[str], b: list[str]) -> str | None:
    """Edits that add or drop auxiliaries or "to" around one verb: "should to live → should live",
    "lives → has lived", "go → am going"."""
    rest_a = [w for w in a if w not in AUXILIARIES]
    rest_b = [w for w in b if w not in AUXILIARIES]
    if len(rest_a) > 1 or len(rest_b) > 1 or (not a and not b):
        return None
    if not rest_a and not rest_b:
        return "verb_form" if "to" in set(a) ^ set(b) else None
    if len(rest_a) != len(rest_b):
        return None
    if rest_a and not _shared_lemma(rest_a[0], rest_b[0], "VERB"):
        return None
    if set(b) & PERFECT and not set(a) & PERFECT:
        return "present_perfect"
    return "verb_form" if "to" in set(a) ^ set(b) else "verb_tense"


MASS_NOUNS = frozenset("fun advice information furniture homework luggage equipment knowledge money".split())
IRREGULAR_PLURALS = frozenset("children people men women teeth feet mice geese".split())
DO_FORMS = frozenset("do does did don't doesn't didn't".split())
# what may stand between "does" and its verb: "doesn't likes", "does she plays", "does not like"
BETWEEN_DO_AND_VERB = frozenset(f"not {SUBJECT_PRONOUNS}".split())
# after these, "there" opens "there is/are" (at a clause's start); after a noun it is a place
THERE_OPENS_AFTER = frozenset(", ; and but so that because if when where while as then".split())


SUBJECT_DETERMINERS = frozenset("the these those my your his her our their".split())


def _subject_before_there(before: list[str]) -> bool:
    """ "The people there was", "My friends there were": a subject that opens its clause, then
    "there" (a place) before the verb; not "Last year there was", "In the town there was"."""
    if len(before) < 3 or before[-1] != "there" or before[-3] not in SUBJECT_DETERMINERS:
        return False
    noun = before[-2]
    plural = noun == "people" or (noun.endswith("s") and "NOUN" in getAllLemmas(noun))
    return plural and (len(before) == 3 or before[-4] in THERE_OPENS_AFTER)


PREPOSITIONS = frozenset("in on at to for of with about from into by".split())
QUANTITY_WORDS = frozenset("much many less fewer few little".split())
# nouns Spanish gives "the" that English leaves bare for their own reason (go to bed, at school)
PLACES_WITHOUT_THE = frozenset("bed school home work church hospital prison university college class town".split())
# nouns Spanish says with "the" in the general sense ("la vida", "la naturaleza")
GENERAL_SENSE_NOUNS = frozenset("life nature society love happiness technology education health friendship".split())
# what a noun meant in general follows ("is the pizza", "I like the coffee")
GENERAL_TAKERS = frozenset(
    "is are was like likes liked love loves hate hates prefer prefers enjoy enjoys about eat eats drink drinks".split()
)


def name_in_context(sentence: str, e: Edit) -> str | None:
    """A better category for edit `e` than the one it was given, from the words around it in
    `sentence`; None to keep its own:

    * *She doesn't likes → like* is "after does, the verb without -s" (``third_person``, whose
      card says so), not a plural subject's agreement;
    * *The people there was → were* is "people is plural", not *there was/were* (that "there" is
      a place: allí);
    * *others people → other* is an adjective that takes no plural, not a noun's number;
    * *childrens → children* is a plural made twice, not a spelling slip.
    """
    before = [w.lower() for w in _WORDS.findall(sentence[: e.start])]
    old, new = e.original.lower(), e.replacement.lower()
    if e.category == "agreement" and old.endswith("s") and new in (old[:-1], old[:-2]):
        k = len(before) - 1
        while k >= 0 and before[k] in BETWEEN_DO_AND_VERB and len(before) - k <= 2:
            k -= 1
        if k >= 0 and before[k] in DO_FORMS:
            return "third_person"
    if e.category == "there_is_plural" and _subject_before_there(before):
        return "people_plural" if before[-2] == "people" else "agreement"
    if e.category == "noun_number" and old == "others" and new == "other":
        return "adjective_plural"
    if e.category == "spelling" and new in IRREGULAR_PLURALS and old == new + "s":
        return "noun_number"  # childrens → children: a plural made twice, not a slip of the pen
    if e.category == "spelling" and new in MASS_NOUNS and old == new + "s":
        return "uncountable"  # funs → fun, advices → advice: no plural, not a slip of the pen
    if e.category == "word_confusion" and old in PREPOSITIONS and new in PREPOSITIONS:
        return "preposition"  # stayed in → at a campsite: a preposition chosen, no word confused
    if e.category == "there_is_plural" and old in QUANTITY_WORDS and new in QUANTITY_WORDS:
        return "noun_number"  # there is too much → many people: the word that counts, not "there is"
    if e.category == "pronoun" and (old, new) == ("you", "your"):
        return "determiner"  # for you email → your: a possessive before its noun
    if e.category == "determiner" and _general_the(before, old, new):
        return "generic_the"  # My favourite food is the pizza → pizza: a thing in general
    return None


def _general_the(before: list[str], old: str, new: str) -> bool:
    """ "the pizza" → "pizza" after "is", "like" and their kind: a thing meant in general."""
    words = old.split()
    if len(words) != 2 or words[0] != "the" or new != words[1] or not new.isalpha():
        return False
    if new in GENERAL_SENSE_NOUNS:
        return True  # "the life is hard", "in the real life"
    return new not in PLACES_WITHOUT_THE and (not before or before[-1] in GENERAL_TAKERS)
