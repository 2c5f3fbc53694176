"""Edits of the model's answer that the sentence itself shows to be wrong.

The model is sure of some edits it should not make: *buy too many things → to many*, *on the 15th
→ in the 15th*, *My grandparents moved → My grandparent moved*, *The music … makes the scenes →
made*, *wear a uniform → wear uniform*. Each check here reads only the sentence around the edit
and says when the edit goes against it: a degree word after "too", a date after "on", a plural
with nothing asking for one thing, a past with no past in the sentence, an article dropped before
a noun that counts, a question made a statement, "a" before a plural, "the" taken from a noun
that "of" names. The tutor drops such an
edit (`agent.Tutor.interpret`); a correction left with none abstains, as for agreement.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor.agreement import number_of
from corrige.tutor.edits import Edit
from corrige.tutor.function_words import FUNCTION_WORDS
from corrige.tutor.pattern_words import base_of_past

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+\w*")

# before these "too" says how much ("too many things", "too late"): "to" there is the mistake
DEGREE_HEADS = frozenset("many much few little late early often long far".split())
# a date or a day after "on": "on the 15th", "on Monday", "on 3 May"
ORDINAL = re.compile(r"^(\d+(st|nd|rd|th)?|first|second|third|fourth|fifth|tenth|twentieth|thirtieth)$")
DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday weekdays weekends".split())
# what asks for one thing before a noun ("a friends", "every days", "this cars")
ONE_THING = frozenset("a an one every each this that another either neither single per".split())
# what tells of a past in the sentence, besides a verb's simple past
PAST_WORDS = frozenset("was were had did didn't wasn't weren't hadn't yesterday ago last".split())
# nouns without "a" in the general sense, which a learner may give one ("a advice", "a breakfast")
NO_ARTICLE_NOUNS = frozenset(
    """advice information news furniture homework luggage work weather fun breakfast lunch dinner
    music traffic money bread water food health nature love english spanish""".split()
)
RANKS = frozenset("first second third fourth fifth last".split())
# posts one person holds ("chair of the committee", "captain of the team")
ROLES = frozenset("chair chairman chairwoman head president captain director leader mayor editor secretary".split())
# what one is "on": roads and vehicles, the radio ("on the motorway", "on the bus")
ON_THINGS = frozenset("motorway road highway way bus train plane ship boat ferry radio phone tv television".split())
# what "there" stands before as a subject ("their is a problem" → "there is")
THERE_VERBS = frozenset("is are was were will has have must may might can could should seems seem used".split())
NOUN_OPENERS = frozenset("the a an his her their my our your this that its".split())
POSSESSIVES = frozenset("my your his her its our their".split())
# what one is afraid or worried for ("worried for her safety"): someone's, at risk
AT_RISK = frozenset("safety life lives health wellbeing welfare family children son daughter".split())
YEAR = re.compile(r"^(1[89]\d\d|20[0-2]\d)$")  # "in 2015": a past, most often
TENSE_CATEGORIES = frozenset({"verb_tense", "past_marker"})


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def too_made_to(sentence: str, e: Edit) -> bool:
    """ "buy too many things" → "to many things": the "too" of a degree turned into "to"."""
    if e.original.lower() != "too" or e.replacement.lower() != "to":
        return False
    after = _words(sentence[e.end :])
    if not after:
        return False
    lemmas = getAllLemmas(after[0])
    # an adjective or adverb after it ("too small", "too quickly"); one that is a verb as well
    # ("too clean the house") is rarer in learners' writing than the degree ("too busy")
    return after[0] in DEGREE_HEADS or "ADJ" in lemmas or "ADV" in lemmas


def date_preposition_changed(sentence: str, e: Edit) -> bool:
    """ "on the 15th" → "in the 15th": "on" before a date or a day is right; the edit is not."""
    if e.original.lower() != "on":
        return False
    after = _words(sentence[e.end :])[:2]
    if after[:1] == ["the"]:
        after = after[1:]
    return bool(after) and (ORDINAL.match(after[0]) is not None or after[0] in DAYS)


def plural_made_singular(sentence: str, e: Edit) -> bool:
    """ "My grandparents moved" → "My grandparent moved": a plural made singular with nothing
    before it that asks for one thing ("a friends", "every days" do)."""
    old, new = e.original.lower(), e.replacement.lower()
    if e.category != "noun_number" or " " in old or " " in new or not _plural_of(new, old):
        return False
    before = _words(sentence[: e.start])[-1:]
    return not (before and before[0] in ONE_THING)


def plural_after_one(sentence: str, e: Edit) -> bool:
    """ "for one more year" → "one more years", "one brother and two sisters" → "one brothers": a
    noun made plural after a word that asks for one thing ("one", "a", "every", "another")."""
    old, new = e.original.lower(), e.replacement.lower()
    if e.category != "noun_number" or " " in old or " " in new or not _plural_of(old, new):
        return False
    before = [w for w in _words(sentence[: e.start])[-3:] if w not in ("more", "other", "single")][-1:]
    return bool(before) and before[0] in ONE_THING - {"that"}


@lru_cache(maxsize=4096)
def _plural_of(singular: str, word: str) -> bool:
    return "NOUN" in getAllLemmas(singular) and word in getInflection(singular, "NNS") and word != singular


def past_without_a_past(sentence: str, e: Edit) -> bool:
    """ "The music is incredible and makes the scenes" → "made": a present made past where nothing
    else in the sentence tells of a past."""
    old, new = e.original.lower(), e.replacement.lower()
    if e.category not in TENSE_CATEGORIES or " " in old or " " in new:
        return False
    if base_of_past(new) is None or base_of_past(new) not in getAllLemmas(old).get("VERB", ()):
        return False
    rest = _words(sentence[: e.start]) + _words(sentence[e.end :])
    return not any(w in PAST_WORDS or YEAR.match(w) or base_of_past(w) is not None for w in rest)


def counted_noun_lost_its_article(sentence: str, e: Edit) -> bool:
    """ "wear a uniform" → "wear uniform": "a" dropped before a noun that counts (not "a advice",
    "a breakfast", which are the learner's mistakes)."""
    old, new = _words(e.original), _words(e.replacement)
    if len(old) != len(new) + 1 or old[0] not in ("a", "an") or old[1:] != new or not new:
        return False
    noun = new[-1]
    if new[0] in FUNCTION_WORDS or new[0] in ("such", "own") or noun in NO_ARTICLE_NOUNS:
        return False  # "a such situation", "a your friend": the article is the mistake
    if not getAllLemmas(noun):
        return noun.isalpha()  # "above a café": a word it does not know keeps its article
    if "NOUN" not in getAllLemmas(noun):
        return False
    plurals = getInflection(noun, "NNS")
    return bool(plurals) and plurals[0] != noun


def question_made_statement(sentence: str, e: Edit) -> bool:
    """ "Is very cold there in March?" → "It is very cold…?": a subject put before the verb of a
    question (it asks "Is it very cold…?")."""
    old, new = e.original.lower(), e.replacement.lower()
    return (
        e.start == 0
        and sentence.rstrip().endswith("?")
        and old in ("is", "was", "are", "were")
        and new in (f"it {old}", f"there {old}")
    )


def article_before_a_plural(sentence: str, e: Edit) -> bool:
    """ "People in small villages" → "in a small villages": "a" put in before a plural noun."""
    new = _words(e.replacement)
    if not new or new[0] not in ("a", "an") or _words(e.original)[:1] == new[:1]:
        return False
    for word in new[1:] + _words(sentence[e.end :])[:2]:
        lemmas = getAllLemmas(word)
        nouns = lemmas.get("NOUN", ())
        if nouns and word not in nouns and _plural_of(nouns[0], word):
            return True  # the noun, plural
        if "ADJ" not in lemmas:
            return False  # the noun, singular, or no noun phrase at all
    return False


def the_dropped_before_of(sentence: str, e: Edit) -> bool:
    """ "The life of my grandfather was hard" → "Life of my grandfather": "the" taken from a noun
    that "of" says which one it is (not "the most of", "the half of": those lose it)."""
    old, new = _words(e.original), _words(e.replacement)
    if len(old) != len(new) + 1 or old[0] != "the" or old[1:] != new or not new or new[-1] in ("most", "half"):
        return False
    return _words(sentence[e.end :])[:1] == ["of"]


DECADE = re.compile(r"^(\d{2}|\d{4})'?s$|^(twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)$")


def the_dropped_before_a_decade(sentence: str, e: Edit) -> bool:
    """ "in the 1990s" → "in 1990s": a decade keeps its "the" (a year does not: in 2010)."""
    old, new = _words(e.original), _words(e.replacement)
    return len(old) == len(new) + 1 and old[0] == "the" and old[1:] == new and bool(new) and bool(DECADE.match(new[0]))


def there_is_without_there(sentence: str, e: Edit) -> bool:
    """ "Shopping with children is even worse" → "are": a "there is/are" edit with no "there"
    beside the verb (its subject is what comes before it)."""
    if e.category != "there_is_plural":
        return False
    # "there" before the verb, or after it in a question ("Is there any cats?")
    return "there" not in _words(sentence[: e.start])[-3:] and _words(sentence[e.end :])[:1] != ["there"]


def plural_after_both(sentence: str, e: Edit) -> bool:
    """ "both regulation and education" → "regulations": "both … and" names two things, each as
    the writer wrote it."""
    old, new = e.original.lower(), e.replacement.lower()
    if e.category != "noun_number" or " " in old or " " in new or not _plural_of(old, new):
        return False
    return _words(sentence[: e.start])[-1:] == ["both"] and _words(sentence[e.end :])[:1] == ["and"]


CLAUSE_SUBJECT_STARTS = frozenset("i you he she we they it the my your his her our their a an this".split())


def where_made_were(sentence: str, e: Edit) -> bool:
    """ "The hotel where we stayed" → "were we stayed": "where" before a subject opens a clause."""
    return (
        e.original.lower() == "where"
        and e.replacement.lower() == "were"
        and _words(sentence[e.end :])[:1] != []
        and _words(sentence[e.end :])[0] in CLAUSE_SUBJECT_STARTS
    )


def an_made_a_before_a_vowel_sound(sentence: str, e: Edit) -> bool:
    """ "an X-ray", "an 11-year-old", "an 8" → "a": the letter or number is said with a vowel."""
    if e.original.lower() != "an" or e.replacement.lower() != "a":
        return False
    after = sentence[e.end :].split()
    if not after:
        return False
    word = after[0]
    if word[0].isdigit():
        return word.startswith("8") or re.match(r"^(11|18)(\D|$)", word) is not None
    # a letter said on its own (X-ray, MRI, SMS, NGO, FAQ): "eks", "em", "es", "en", "ef"
    return word[0] in "AEFHILMNORSX" and (len(word) == 1 or not word[1].islower())


def from_home_dropped(sentence: str, e: Edit) -> bool:
    """ "I will work from home" → "work home": "go to home" loses its "to", "from home" keeps "from"."""
    return _words(e.original)[:2] == ["from", "home"] and _words(e.replacement)[:1] == ["home"]


def article_before_more_and_a_noun(sentence: str, e: Edit) -> bool:
    """ "take on more responsibility" → "a more responsibility": "a more" goes before an adjective
    ("a more difficult task"), never before a noun."""
    new, old = _words(e.replacement), _words(e.original)
    if new[:2] != ["a", "more"] or old[:1] == ["a"]:
        return False
    after = (new[2:] + _words(sentence[e.end :]))[:1]
    return bool(after) and "ADJ" not in getAllLemmas(after[0]) and "NOUN" in getAllLemmas(after[0])


SINGULAR_VERBS = frozenset("has does is hasn't doesn't isn't".split())
PLURAL_VERBS = frozenset("have do are haven't don't aren't".split())


def verb_against_the_pronoun_after(sentence: str, e: Edit) -> bool:
    """ "Seldom have I felt" → "has I", "Neither have we" → "has we", "Has he" → "Have he": a verb
    before its subject pronoun (an inversion, a question) agrees with that pronoun."""
    new, after = e.replacement.lower(), _words(sentence[e.end :])[:1]
    if not after or " " in new:
        return False
    if new in SINGULAR_VERBS or new in ("was", "wasn't"):
        return after[0] in ("we", "they", "you") or (after[0] == "i" and new in SINGULAR_VERBS)
    return new in PLURAL_VERBS | {"were", "weren't"} and after[0] in ("he", "she", "it")


# "each of my brothers likes", "one of them is": the verb agrees with the one; "neither of", "either
# of" and "none of" take either number
ONE_OF = frozenset("each one neither either none".split())
EITHER_OF = frozenset("neither either none".split())


def verb_number_after_one_of(sentence: str, e: Edit) -> bool:
    """ "Neither of my brothers likes football" → "like", "One of my friends lives" → "live": the
    noun after "of" is not the subject."""
    number = number_of(e.original, e.replacement)
    before = _words(sentence[: e.start])
    if number is None or len(before) < 3 or len(before) > 7 or before[1] != "of" or before[0] not in ONE_OF:
        return False
    if any(w in ("who", "that", "which", "where", "when") for w in before[2:]):
        return False  # the verb of a relative clause ("one of the people who live here")
    return number == "plural" or before[0] in EITHER_OF


def quiet_made_quite(sentence: str, e: Edit) -> bool:
    """ "all guests be quiet after midnight" → "be quite after": "quite" says how much, so an
    adjective, adverb or "a" follows it."""
    if e.original.lower() != "quiet" or e.replacement.lower() != "quite":
        return False
    after = _words(sentence[e.end :])[:1]
    if not after or after[0] in ("a", "an", "the", "so", "enough"):  # quite a lot, quite the opposite
        return not after
    return after[0] in FUNCTION_WORDS or not {"ADJ", "ADV"} & set(getAllLemmas(after[0]))


# nouns that take no plural verb after "there is" ("there is music", "there is not hot water")
THERE_IS_MASS_NOUNS = frozenset(
    """music water food information traffic noise time money space room work fun furniture equipment
    rain snow wind sun light electricity internet wifi parking accommodation weather news""".split()
)


def there_are_before_a_mass_noun(sentence: str, e: Edit) -> bool:
    """ "there is music in all the streets" → "there are music": after "there", the verb agrees
    with what follows it, and a mass noun (or "a" anything) is one."""
    old, new = e.original.lower(), e.replacement.lower()
    if (old, new) not in (("is", "are"), ("was", "were"), ("isn't", "aren't"), ("wasn't", "weren't")):
        return False
    if _words(sentence[: e.start])[-1:] != ["there"]:
        return False
    after = [
        w
        for w in _words(sentence[e.end :])[:4]
        if w not in ("not", "no", "any", "some", "much", "hot", "cold", "enough")
    ]
    return bool(after) and (after[0] in ("a", "an", "one") or after[0] in THERE_IS_MASS_NOUNS)


NATIONALITIES = frozenset(
    """scottish welsh english irish british spanish french german italian american canadian mexican
    portuguese chinese japanese dutch swiss swedish greek polish russian argentinian colombian""".split()
)


def article_dropped_before_a_modifier(sentence: str, e: Edit) -> bool:
    """ "a children's hospital" → "children's hospital", "a Scottish man" → "Scottish man": the
    "a" goes with the singular noun after the possessive or the nationality, which stays."""
    old, new = _words(e.original), _words(e.replacement)
    if len(old) != len(new) + 1 or old[0] not in ("a", "an") or old[1:] != new or not new:
        return False
    first = e.replacement.split()[0]
    modifier = first.endswith(("'s", "’s")) or new[0] in NATIONALITIES
    after = (new[1:] + _words(sentence[e.end :]))[:1]
    return modifier and bool(after) and "NOUN" in getAllLemmas(after[0]) and not after[0].endswith("s")


def more_bad_before_a_noun(sentence: str, e: Edit) -> bool:
    """ "We have more bad news" → "worse news": "more" counts the noun there (más malas noticias),
    it is no comparative of the adjective."""
    if _words(e.original) not in (["more", "bad"], ["more", "good"]):
        return False
    after = _words(sentence[e.end :])[:1]
    return bool(after) and "NOUN" in getAllLemmas(after[0]) and "ADJ" not in getAllLemmas(after[0])


def degree_of_a_compound(sentence: str, e: Edit) -> bool:
    """ "the most good-natured person" → "best-natured": the degree goes with the whole compound."""
    return e.category == "comparative" and sentence[e.end : e.end + 1] == "-"


def every_changed(sentence: str, e: Edit) -> bool:
    """ "I go to the gym every Monday" → "this Monday": "every" says a habit; another determiner
    there changes what the learner meant."""
    return _words(e.original)[:1] == ["every"] and _words(e.replacement)[:1] in (["this"], ["that"], ["the"], ["next"])


def generic_the_dropped_before_a_compound(sentence: str, e: Edit) -> bool:
    """ "The life insurance policy" → "Life insurance policy", "The love letters were found" →
    "Love letters": the noun after is the head, a specific one, and keeps its "the"."""
    old, new = _words(e.original), _words(e.replacement)
    if len(old) != 2 or old[0] != "the" or new != old[1:]:
        return False
    after = _words(sentence[e.end :])[:1]
    if not after:
        return False
    lemmas = getAllLemmas(after[0])
    return "NOUN" in lemmas and not {"VERB", "ADP", "ADJ"} & set(lemmas) or after[0] in ("letters", "figures", "story")


def noun_after_of_made_plural(sentence: str, e: Edit) -> bool:
    """ "The price of transport has risen" → "transports have": the noun after "of" is not the
    subject; its verb agrees with what comes before "of"."""
    old, new = _words(e.original), _words(e.replacement)
    if len(old) != 2 or len(new) != 2 or (old[1], new[1]) not in (("has", "have"), ("is", "are"), ("was", "were")):
        return False
    plural = _plural_of(old[0], new[0]) or new[0] in (old[0] + "s", old[0] + "es")
    return plural and _words(sentence[: e.start])[-1:] == ["of"]


def word_doubled(sentence: str, e: Edit) -> bool:
    """ "a dog that was eating" → "a dog that that was": an edit that puts in the word right before it."""
    new, before = _words(e.replacement), _words(sentence[: e.start])
    return bool(new) and bool(before) and new[0] == before[-1] and _words(e.original)[:1] != new[:1]


def who_made_which_after_no_noun(sentence: str, e: Edit) -> bool:
    """ "a discussion about who was going to wash" → "about which": "who" after a preposition or a
    verb asks who, it is no relative after a thing."""
    if e.original.lower() != "who" or e.replacement.lower() not in ("which", "that"):
        return False
    before = _words(sentence[: e.start])[-1:]
    return not before or "NOUN" not in getAllLemmas(before[0]) or before[0] in FUNCTION_WORDS


def tense_after_so(sentence: str, e: Edit) -> bool:
    """ "Prices have gone up, and so has the rent" → "so had": the short reply repeats the tense
    of the clause before it."""
    return e.category in TENSE_CATEGORIES and _words(sentence[: e.start])[-1:] in (["so"], ["neither"], ["nor"])


def singular_after_a_plural_relative(sentence: str, e: Edit) -> bool:
    """ "Each of the reports that were submitted" → "that was": the relative's verb agrees with the
    noun before "that", not with "each"."""
    before = _words(sentence[: e.start])[-2:]
    if number_of(e.original, e.replacement) != "singular" or len(before) < 2:
        return False
    return before[1] in ("that", "which", "who") and _plural_noun(before[0])


def _plural_noun(word: str) -> bool:
    nouns = getAllLemmas(word).get("NOUN", ())
    return bool(nouns) and word not in nouns and word.endswith("s")


# "on a Tuesday", "a better training": an article a learner's sentence has right, or does without
UNCOUNTED = NO_ARTICLE_NOUNS | frozenset("training equipment luggage research progress accommodation".split())


def article_dropped_before_a_day(sentence: str, e: Edit) -> bool:
    """ "She was born on a Tuesday" → "on Tuesday": "a" before a day says one of them."""
    old, new = _words(e.original), _words(e.replacement)
    return old[:1] == ["a"] and old[1:] == new and bool(new) and new[0] in DAYS


def article_before_an_uncounted_noun(sentence: str, e: Edit) -> bool:
    """ "they need better training" → "a better training": no "a" before a noun that is not counted."""
    old, new = _words(e.original), _words(e.replacement)
    if new[:1] not in (["a"], ["an"]) or old[:1] in (["a"], ["an"]):
        return False
    after = (new[1:] + _words(sentence[e.end :]))[:3]
    return any(w in UNCOUNTED for w in after[:2]) and not any(w in ("of", "kind", "piece") for w in after)


def article_before_a_rank(sentence: str, e: Edit) -> bool:
    """ "She finished first, and I came second." → "came a second": a place in a race or a list,
    said alone, takes no article ("I need a second chance" has its noun after it)."""
    new, old = _words(e.replacement), _words(e.original)
    if new[:1] not in (["a"], ["an"]) or old[:1] in (["a"], ["an"]):
        return False
    after = (new[1:] + _words(sentence[e.end :]))[:2]
    return bool(after) and after[0] in RANKS and (len(after) == 1 or after[1] in ("in", "at", "and", "place"))


def others_made_other(sentence: str, e: Edit) -> bool:
    """ "Some people prefer tea; others, coffee." → "other,": "others" with no noun after it is the
    pronoun (los demás); only "other" before a noun loses its -s ("others students")."""
    if "others" not in _words(e.original) or "other" not in _words(e.replacement):
        return False
    after = sentence[e.end :].lstrip()
    return not after or after[0] in ",.;:!?" or _words(after)[0] in FUNCTION_WORDS


def article_before_a_role(sentence: str, e: Edit) -> bool:
    """ "I am chair of the committee" → "a chair": a post one person holds, named with "of" after
    it, takes no article after "be", "become", "elected"."""
    new, old = _words(e.replacement), _words(e.original)
    if new[:1] not in (["a"], ["an"]) or old[:1] in (["a"], ["an"]) or len(new) < 2:
        return False
    return new[1] in ROLES and _words(sentence[e.end :])[:1] == ["of"]


def article_dropped_before_a_name(sentence: str, e: Edit) -> bool:
    """ "She drives a Volkswagen Golf", "She married a Scotsman" → no "a": one of a make or a people,
    named with a capital, is counted ("I am a Spanish" is the learner's slip: an adjective)."""
    old, new = e.original.split(), e.replacement.split()
    if len(old) != len(new) + 1 or old[0].lower() not in ("a", "an") or old[1:] != new or not new:
        return False
    return new[0][:1].isupper() and not new[0].lower().endswith(("ish", "ch", "sh"))


def on_a_way_made_in(sentence: str, e: Edit) -> bool:
    """ "Traffic was terrible on the motorway" → "in the motorway": one travels on a road, a bus, a
    plane, and hears on the radio."""
    if e.original.lower() != "on" or e.replacement.lower() not in ("in", "at"):
        return False
    after = [w for w in _words(sentence[e.end :])[:2] if w not in ("the", "a", "my", "our", "this")]
    return after[:1] != [] and after[0] in ON_THINGS


def their_made_there_before_a_noun(sentence: str, e: Edit) -> bool:
    """ "When their mother dies" → "there mother": "their" before its noun is the possessive; only
    before a verb ("their is", "their are") is it "there"."""
    if e.original.lower() != "their" or e.replacement.lower() != "there":
        return False
    after = _words(sentence[e.end :])[:1]
    return bool(after) and after[0] not in THERE_VERBS


def ing_moved_after_its_noun(sentence: str, e: Edit) -> bool:
    """ "within three working days" → "three days working": an -ing before its noun makes one
    compound (working days, a swimming pool), which a change of order breaks."""
    old, new = _words(e.original), _words(e.replacement)
    if e.category != "word_order" or sorted(old) != sorted(new) or len(old) < 2:
        return False
    moved = [w for w in old if w.endswith("ing")]
    return bool(moved) and old.index(moved[0]) < new.index(moved[0]) and new[-1] == moved[0]


def the_made_a_before_of(sentence: str, e: Edit) -> bool:
    """ "the real problem is the lack of housing" → "a lack of": a noun that "of" says which one it
    is keeps "the"."""
    old, new = _words(e.original), _words(e.replacement)
    if old[:1] != ["the"] or new[:1] not in (["a"], ["an"]) or old[1:] != new[1:]:
        return False
    after = _words(sentence[e.end :])
    return after[len(old) == 1 :][:1] == ["of"]  # "the → a" then "lack of", or "the lack → a lack" then "of"


def the_dropped_before_a_name_and_noun(sentence: str, e: Edit) -> bool:
    """ "returning from the French border" → "from French border": a name used as an adjective
    ("French", "Spanish", "London") leaves its noun one that needs "the"."""
    old, new = e.original.split(), e.replacement.split()
    if len(old) != len(new) + 1 or old[0].lower() != "the" or old[1:] != new or not new:
        return False
    after = _words(sentence[e.end :])[:1]
    return new[-1][:1].isupper() and bool(after) and after[0].isalpha() and "NOUN" in getAllLemmas(after[0])


def plural_after_a_measure(sentence: str, e: Edit) -> bool:
    """ "the four-day week" → "four-day weeks": a noun after a measure joined by a hyphen is one
    thing of that size, not several."""
    old, new = _words(e.original), _words(e.replacement)
    if e.category != "noun_number" or len(old) != 1 or len(new) != 1 or not new[0].startswith(old[0]):
        return False
    return re.search(r"\w-\w+\s*$", sentence[: e.start]) is not None


def to_dropped_after_a_noun(sentence: str, e: Edit) -> bool:
    """ "The will to live" → "The will live", "an empty can to recycle" → "can recycle": after an
    article or an adjective, "will" and "can" are nouns, and their "to" stays."""
    old, new = _words(e.original), _words(e.replacement)
    if "to" not in old or [w for w in old if w != "to"] != new:
        return False
    k = old.index("to")
    before = (_words(sentence[: e.start]) + old[:k])[-2:]
    if len(before) < 2 or before[-1] not in ("will", "can", "must", "may"):
        return False
    lemmas = getAllLemmas(before[0])
    return before[0] in NOUN_OPENERS or "ADJ" in lemmas


def for_someone_made_about(sentence: str, e: Edit) -> bool:
    """ "She was worried for her safety" → "about": afraid for someone's safety or life is right."""
    if e.original.lower() != "for" or e.replacement.lower() != "about":
        return False
    after = _words(sentence[e.end :])[:2]
    return len(after) == 2 and after[0] in POSSESSIVES and after[1] in AT_RISK


def founded_made_found(sentence: str, e: Edit) -> bool:
    """ "The company was founded in 1952" → "was found": to found (a company) is its own verb."""
    return e.original.lower() == "founded" and e.replacement.lower() == "found"


CHECKS = (
    too_made_to,
    date_preposition_changed,
    plural_made_singular,
    plural_after_one,
    past_without_a_past,
    counted_noun_lost_its_article,
    question_made_statement,
    article_before_a_plural,
    the_dropped_before_of,
    the_dropped_before_a_decade,
    from_home_dropped,
    article_before_more_and_a_noun,
    there_is_without_there,
    plural_after_both,
    where_made_were,
    an_made_a_before_a_vowel_sound,
    verb_against_the_pronoun_after,
    verb_number_after_one_of,
    quiet_made_quite,
    there_are_before_a_mass_noun,
    noun_after_of_made_plural,
    word_doubled,
    tense_after_so,
    singular_after_a_plural_relative,
    article_dropped_before_a_day,
    article_before_an_uncounted_noun,
    founded_made_found,
    article_before_a_rank,
    article_before_a_role,
    to_dropped_after_a_noun,
    for_someone_made_about,
    the_made_a_before_of,
    the_dropped_before_a_name_and_noun,
    plural_after_a_measure,
    ing_moved_after_its_noun,
    article_dropped_before_a_name,
    on_a_way_made_in,
    their_made_there_before_a_noun,
    others_made_other,
    who_made_which_after_no_noun,
    article_dropped_before_a_modifier,
    more_bad_before_a_noun,
    degree_of_a_compound,
    every_changed,
    generic_the_dropped_before_a_compound,
)


def against_the_sentence(sentence: str, edits: list[Edit]) -> list[Edit]:
    """The edits one of the checks finds wrong in `sentence`."""
    return [e for e in edits if any(check(sentence, e) for check in CHECKS)]
