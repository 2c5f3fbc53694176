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

from collections.abc import Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor.agreement_patterns import AGREEMENT_RULES
from corrige.tutor.article_patterns import ARTICLE_RULES
from corrige.tutor.clause_patterns import CLAUSE_RULES
from corrige.tutor.complement_patterns import COMPLEMENT_RULES
from corrige.tutor.edit_labels import CAPITALISED
from corrige.tutor.edits import Edit, Token, tokenize
from corrige.tutor.form_patterns import FORM_RULES
from corrige.tutor.noun_phrase_patterns import NOUN_PHRASE_RULES
from corrige.tutor.pattern_words import (
    DAYS,
    ENDS_A_PHRASE,
    SINGULAR_TO_PLURAL,
    THIRD_PERSON_VERBS,
    TIME_UNITS,
    is_age,
    is_base_verb,
    is_number,
    is_plural_noun,
    is_third_person_form,
    replace_tokens,
    third_person_of,
    word_after,
)
from corrige.tutor.phrase_patterns import FOR_ING, PHRASE_RULES
from corrige.tutor.phrase_swaps import phrase_swaps
from corrige.tutor.tense_patterns import TENSE_RULES
from corrige.tutor.word_order_patterns import WORD_ORDER_RULES

THIRD_PERSON_SUBJECTS = frozenset({"he", "she", "it", "everybody", "everyone", "somebody", "someone", "nobody"})
# after these a subject pronoun starts a clause: "When he go", "and she like"
CLAUSE_OPENERS = frozenset(
    ", ; : and but because when if so although though while after before until since that where who".split()
)
PEOPLE_VERBS: dict[str, str] = {
    **SINGULAR_TO_PLURAL,
    **{form: v for v in THIRD_PERSON_VERBS if v != "have" and (form := third_person_of(v))},
}
# "a lot of people", "most of the people", "some of the people": they count the people
PLACE_DETERMINERS = frozenset("my our your his her their this the".split())
PEOPLE_COUNTERS = frozenset("lot lots most many some all majority".split())
NEGATED = frozenset("don't doesn't didn't can't won't couldn't wouldn't".split())
# where the clause of a negative ends: "I don't know, nobody does" has two clauses
NEGATION_BREAKS = frozenset(", ; : . and but or because that who which when if so".split())
NEGATIVE_TO_ANY = {"nothing": "anything", "nobody": "anybody", "nowhere": "anywhere", "none": "any"}
ARRIVE_FORMS = frozenset("arrive arrives arrived arriving".split())
# places one arrives "at", though named like a city (arrive at Heathrow)
AIRPORTS = frozenset("heathrow gatwick stansted barajas jfk luton el prat".split())
DEPEND_FORMS = frozenset("depend depends depended depending".split())
# "explain me how it works" → "explain to me how…"; before a noun phrase the object must move
# ("explain me the rule" → "explain the rule to me"), which is not a local fix
QUESTION_WORDS = frozenset("how why what where when who which if whether".split())


UNCOUNTABLE_PLURALS = {
    w + "s": w
    for w in "advice information furniture homework luggage baggage equipment knowledge software feedback".split()
}
# capitalised in English, and no other word when written in lower case ("may", "march" are)
ALWAYS_CAPITALISED = CAPITALISED - frozenset({"may", "march", "august", "internet", "i"})
AGE_SUBJECTS = {"i": "am", "you": "are", "we": "are", "they": "are"}
BEFORE_A_BASE = frozenset("to will would can could should must might may".split())  # "to have" → "to be"
AGE_BE = frozenset("am is are was were i'm he's she's we're they're you're".split())
# spelled with a vowel but said with a consonant (a university), and the other way (an hour)
# (not "uni-" as in uninterested, unimportant)
A_BEFORE = tuple("univers unit unif unicorn union uniq unison use usu uti ure eu one once".split())
AN_BEFORE = ("hour", "honest", "honor", "honour", "heir")
# words that never follow an article: "a" before them is a letter or a label ("type A or B")
NOT_AFTER_ARTICLE = frozenset("and or of is are in on at to as if".split())
WEATHER = frozenset("raining snowing cold hot sunny windy cloudy foggy late early".split())
PROFESSIONS = frozenset(
    """teacher doctor nurse engineer student lawyer waiter waitress cook chef pilot dentist architect
    journalist farmer policeman firefighter secretary mechanic scientist artist musician singer actor
    actress writer designer programmer accountant manager driver builder electrician plumber
    hairdresser vet pharmacist receptionist cashier lifeguard instructor translator interpreter babysitter
    photographer painter baker butcher soldier monitor guide volunteer""".split()
)
INTENSIFIERS = frozenset("very so too really quite".split())
# one- and two-syllable adjectives whose comparative is -er ("more easy" → "easier")
SHORT_ADJECTIVES = frozenset(
    """easy happy busy big small cheap old young tall short long fast slow hot cold nice large hard high low
    new quick rich poor strong weak safe late early clean dark warm wide pretty lucky heavy fresh near strange
    simple funny crazy lazy ugly angry hungry dirty""".split()
)
# adjectives learners give a plural -s ("very goods", "so expensives"), not nouns as well ("so barbarians")
PLAIN_ADJECTIVES = SHORT_ADJECTIVES | frozenset(
    """good bad kind red blue green yellow black white brown grey gray pink orange purple beautiful important
    different interesting expensive intelligent friendly boring tired difficult famous delicious""".split()
)
# what may follow an adjective that ends its phrase ("more easy than", "very goods in")
AFTER_ADJECTIVE = ENDS_A_PHRASE | frozenset("than in at for to with now here there today that because".split())
# verbs that take -ing, not "to" ("enjoy to read", "I recommend to see", "he suggested to go")
GERUND_VERBS = frozenset(
    """enjoy enjoys enjoyed avoid avoids avoided finish finishes finished suggest suggests suggested
    recommend recommends recommended mind minds minded consider considers considered considering""".split()
)
# "more good" is "better", "the most bad" is "the worst"
IRREGULAR_DEGREES = {"good": ("better", "best"), "bad": ("worse", "worst")}
MIND_FORMS = frozenset("mind minds minded".split())
CONSIDER_FORMS = frozenset("consider considers considered considering".split())
CONSIDER_SUBJECTS = frozenset("i we you they he she have has had will would should could also never seriously".split())
MIND_SUBJECTS = frozenset("i you we they he she don't doesn't didn't wouldn't would".split())
# "I suggest that he study", "it is essential that she be": a verb asked for keeps its base form
SUBJUNCTIVE_ASKERS = frozenset(
    """suggest suggests suggested recommend recommends recommended insist insists insisted demand demands
    demanded propose proposed request requested essential vital important necessary""".split()
)
LISTEN_FORMS = frozenset("listen listens listened listening".split())
# what "listen" cannot take without "to": a noun phrase's first word, or an object pronoun
LISTEN_OBJECTS = frozenset("music the a my your his her our their this that these those me him us them".split())
WORK_FORMS = frozenset("work works worked working".split())
ABSTRACT_NOUNS = frozenset(
    """life nature happiness society love technology education health friendship tourism pollution
    unemployment violence freedom racism poverty knowledge obesity corruption immigration inequality
    sexism bullying cyberbullying globalisation globalization consumerism""".split()
)
GENERIC_VERBS = frozenset("is was can has will makes gives".split())
MODALS = frozenset("can could will would should must may might".split())
# what a clause may start after: "I think (that) the life is hard", "…, the education is the key"
GENERIC_CLAUSE_STARTS = frozenset(", ; that because think believe nowadays future today".split())
# two words a learner gives "the" in the general sense ("el transporte público", "los jóvenes")
GENERIC_PAIRS = frozenset(
    """public/transport young/people fast/food social/networks free/time
    modern/technology pop/music rock/music classical/music""".split()
)
VERBS_AFTER_A_HEAD = frozenset("is are was were has have".split())
# -s forms that are far more often a verb than a plural noun after an abstract subject
PLAIN_VERBS_IN_S = frozenset("helps brings makes gives causes creates means".split())
# what says a general pair is meant in general after it ("for the young people", "I like the pop music")
GENERIC_TAKERS = frozenset("for among about".split())
LIKE_VERBS = frozenset("like likes liked love loves loved hate hates prefer prefers enjoy enjoys".split())
PAIR_ENDS = ENDS_A_PHRASE | frozenset("more because too very so than".split())
# what a plural subject may do next ("The young people spend too much time")
PLURAL_SUBJECT_VERBS = frozenset(
    "are have do don't can can't should must spend use think like want need prefer go get".split()
)
# what opens a new clause after a general noun, saying nothing of which one ("I miss the nature when")
CLAUSE_AFTER_NOUN = frozenset("and but or because so when while if".split())
# nouns a learner gives "the" in the general sense ("la sociedad", "la naturaleza", "la humanidad")
GENERAL_NOUNS = frozenset("society nature mankind humanity pollution unemployment poverty tourism health".split())


@lru_cache(maxsize=4096)
def _is_comparative(word: str) -> bool:
    """bigger, easier (an -er form of an adjective), or better/worse."""
    if word in ("better", "worse"):
        return True
    lemmas = getAllLemmas(word).get("ADJ", ())
    return word.endswith("er") and bool(lemmas) and word not in lemmas  # not clever, proper, other


def third_person(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        if words[i] not in THIRD_PERSON_SUBJECTS or (i > 0 and words[i - 1] not in CLAUSE_OPENERS):
            continue
        if i > 1 and words[i - 1] == "that" and SUBJUNCTIVE_ASKERS & set(words[: i - 1]):
            continue  # "I suggest that he study": the verb a suggestion asks for has no -s
        verb = words[i + 1]
        fixed = "doesn't" if verb == "don't" else third_person_of(verb)
        if fixed:
            yield replace_tokens(tokens, i + 1, i + 2, fixed, "third_person", text)


def people_plural(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """People is → people are, a lot of people thinks → think; not "the opinion of people is" (its
    subject is "the opinion"), but "a lot of people", "most of the people" count them."""
    if "people" not in words:
        return
    for i in range(len(words) - 1):
        if words[i] != "people":
            continue
        if words[i + 1] == "who" and i + 2 < len(words) and (base := _people_verb(words[i + 2])):
            yield replace_tokens(tokens, i + 2, i + 3, base, "people_plural", text)  # the people who lives
            continue
        verb = i + 1 + _place_after_people(tokens, words, i + 1)
        if verb >= len(words) or _people_verb(words[verb]) is None:
            continue
        before = words[max(i - 3, 0) : i]
        if not ({"of", "with"} & set(before)) or any(w in PEOPLE_COUNTERS for w in before):
            yield replace_tokens(tokens, verb, verb + 1, _people_verb(words[verb]) or "", "people_plural", text)


def _place_after_people(tokens: Sequence[Token], words: list[str], k: int) -> int:
    """How many words at `k` say where the people are before their verb: "here", "in my town",
    "from Spain" (the people in my town is → are); 0 where none do."""
    if words[k] in ("here", "there"):
        return 1
    if words[k] not in ("in", "from") or k + 2 >= len(words):
        return 0
    if tokens[k + 1].text[:1].isupper():
        return 2  # "people in Spain is"
    if words[k + 1] in PLACE_DETERMINERS and "NOUN" in getAllLemmas(words[k + 2]) and not is_plural_noun(words[k + 2]):
        return 3  # "people in my town is"
    return 0


@lru_cache(maxsize=4096)
def _people_verb(word: str) -> str | None:
    """The plural of a verb's singular after "people": is → are, thinks → think, spends → spend (an
    -s form that is no noun's plural too: not "needs", "plans")."""
    if word in PEOPLE_VERBS:
        return PEOPLE_VERBS[word]
    lemmas = getAllLemmas(word)
    if not word.endswith("s") or "NOUN" in lemmas:
        return None
    return next((v for v in lemmas.get("VERB", ()) if word in getInflection(v, "VBZ")), None)


def verb_patterns(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        pair = (words[i], words[i + 1])
        if pair in (("am", "agree"), ("i'm", "agree")) and (words[i] == "i'm" or (i > 0 and words[i - 1] == "i")):
            first = i - 1 if words[i] == "am" else i  # "I am agree" → "I agree"
            yield replace_tokens(tokens, first, i + 2, "I agree", "verb_pattern", text)
        elif (
            words[i] in ("explain", "explains", "explained")
            and words[i + 1] in ("me", "us", "him", "her")
            and i + 2 < len(words)
            and words[i + 2] in QUESTION_WORDS | {"that"}
        ):
            yield replace_tokens(tokens, i + 1, i + 2, f"to {words[i + 1]}", "verb_pattern", text)
        elif (
            words[i] in GERUND_VERBS
            and words[i + 1] == "to"
            and is_base_verb(word_after(words, i + 2))
            and (words[i] not in MIND_FORMS or (i > 0 and words[i - 1] in MIND_SUBJECTS))  # not "the mind to"
            # "I considered to apply", not the passive "it is considered to be"
            and (words[i] not in CONSIDER_FORMS or (i > 0 and words[i - 1] in CONSIDER_SUBJECTS))
        ):
            gerund = getInflection(words[i + 2], "VBG")  # "I enjoy to read" → "I enjoy reading"
            if gerund:
                yield replace_tokens(tokens, i + 1, i + 3, gerund[0], "verb_pattern", text)
                yield from _and_its_gerund(tokens, words, i + 3, text)


def _and_its_gerund(tokens: Sequence[Token], words: list[str], k: int, text: str) -> Iterator[Edit]:
    """The second verb of "enjoy organising games and sing songs": after "and" within a few words,
    a verb only a verb can be takes the -ing too."""
    for j in range(k, min(k + 4, len(words) - 1)):
        if words[j] in (",", ";", ".", "but", "because", "that", "who", "which"):
            return
        if words[j] == "and":
            verb = words[j + 1]
            lemmas = getAllLemmas(verb)
            if is_base_verb(verb) and set(lemmas) <= {"VERB"}:
                gerund = getInflection(verb, "VBG")
                if gerund:
                    yield replace_tokens(tokens, j + 1, j + 2, gerund[0], "verb_pattern", text)
            return


def since_for(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """since three years → for three years, since almost a month → for almost a month: a length
    of time takes "for" ("desde hace")."""
    for i in range(len(words) - 2):
        if words[i] != "since":
            continue
        k = i + 1 + (words[i + 1] in ABOUT)  # since almost a month
        count, unit = word_after(words, k), word_after(words, k + 1)
        length = (is_number(count) and unit in TIME_UNITS) or (count in ("a", "an", "one") and unit in ONE_TIME)
        if length and word_after(words, k + 2) != "ago":  # "since three years ago" is another mistake
            yield replace_tokens(tokens, i, i + 1, "for", "present_perfect", text)


ABOUT = frozenset("almost nearly about around over".split())  # since almost a month
ONE_TIME = frozenset("year month week day hour".split())


def prepositions(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """depends of → on; in Monday → on Monday (not "in Monday's paper"); listen music → listen to music."""
    for i in range(len(words) - 1):
        if words[i] in DEPEND_FORMS and words[i + 1] == "of":
            yield replace_tokens(tokens, i + 1, i + 2, "on", "preposition", text)
        elif words[i] in ("in", "at") and words[i + 1] in DAYS:
            yield replace_tokens(tokens, i, i + 1, "on", "preposition", text)
        elif (
            words[i] == "to"
            and i > 0
            and words[i - 1] in ARRIVE_FORMS
            and tokens[i + 1].text[:1].isupper()
            and words[i + 1] not in AIRPORTS
        ):
            yield replace_tokens(tokens, i, i + 1, "in", "preposition", text)  # arrived to Tokyo → in
        elif words[i] in LISTEN_FORMS and words[i + 1] in LISTEN_OBJECTS:
            yield replace_tokens(tokens, i + 1, i + 2, f"to {tokens[i + 1].text}", "preposition", text)


def comparatives(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        if words[i] == "more" and _is_comparative(words[i + 1]):
            yield replace_tokens(tokens, i, i + 2, words[i + 1], "comparative", text)
        elif words[i] == "most" and i > 0 and words[i - 1] == "the" and words[i + 1] in SHORT_ADJECTIVES:
            # "the most happy day" → "the happiest day"
            yield replace_tokens(tokens, i, i + 2, getInflection(words[i + 1], "JJS")[0], "comparative", text)
        elif words[i + 1] in IRREGULAR_DEGREES and (
            (words[i] == "more" and word_after(words, i + 2) in AFTER_ADJECTIVE)
            or (words[i] == "most" and i > 0 and words[i - 1] == "the" and word_after(words, i + 2) != "-")
        ):
            # "more good in spring" → "better", "the most bad" → "worst" (not "more good news")
            degree = IRREGULAR_DEGREES[words[i + 1]][words[i] == "most"]
            yield replace_tokens(tokens, i, i + 2, degree, "comparative", text)
        elif words[i] == "more" and words[i + 1] in SHORT_ADJECTIVES and word_after(words, i + 2) in AFTER_ADJECTIVE:
            # "more easy than" → "easier than"; before a noun "more" may count it ("more cheap flights")
            yield replace_tokens(tokens, i, i + 2, getInflection(words[i + 1], "JJR")[0], "comparative", text)
        elif words[i] in ("much", "far") and word_after(words, i + 2) == "than" and _plain_adjective(words[i + 1]):
            # "much expensive than" → "much more expensive than", "far cheap than" → "far cheaper than"
            adjective = words[i + 1]
            if adjective in SHORT_ADJECTIVES:
                yield replace_tokens(tokens, i + 1, i + 2, getInflection(adjective, "JJR")[0], "comparative", text)
            else:
                yield replace_tokens(tokens, i + 1, i + 2, f"more {tokens[i + 1].text}", "comparative", text)


def double_negation(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I don't know nothing → anything; I didn't find it nowhere → anywhere: a second negative in the
    same clause, a few words after the first."""
    for i in range(len(words) - 2):
        if words[i] not in NEGATED:
            continue
        for k in range(i + 2, min(i + 5, len(words))):
            if words[k] in NEGATION_BREAKS:
                break
            if words[k] in NEGATIVE_TO_ANY:
                yield replace_tokens(tokens, k, k + 1, NEGATIVE_TO_ANY[words[k]], "double_negation", text)
                break
            if words[k] == "no" and "NOUN" in getAllLemmas(word_after(words, k + 1)):
                # I don't have no money → any money (not "I can't say no.")
                yield replace_tokens(tokens, k, k + 1, "any", "double_negation", text)
                break


def there_are(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """There is two → There are two; There is a lot of parks → There are (a plural noun after the amount)."""
    for i in range(len(words) - 2):
        if words[i] != "there" or words[i + 1] not in ("is", "was"):
            continue
        amount = words[i + 2 : i + 5]
        many = amount[:3] == ["a", "lot", "of"] or amount[:2] in (["lots", "of"], ["plenty", "of"])
        noun = word_after(words, i + 2 + (3 if amount[:1] == ["a"] else 2))
        if is_number(words[i + 2]) or (many and is_plural_noun(noun)):
            plural = "are" if words[i + 1] == "is" else "were"
            yield replace_tokens(tokens, i + 1, i + 2, plural, "there_is_plural", text)


def uncountables(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i, word in enumerate(words):
        if word not in UNCOUNTABLE_PLURALS:
            continue
        if i and is_number(words[i - 1]):  # "two homeworks": "two homework" is no better; they count pieces
            if word != "softwares" and word != "feedbacks":
                yield replace_tokens(tokens, i, i + 1, f"pieces of {UNCOUNTABLE_PLURALS[word]}", "uncountable", text)
            continue
        yield replace_tokens(tokens, i, i + 1, UNCOUNTABLE_PLURALS[word], "uncountable", text)


def purpose_for(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I came for to learn → to learn; but thank you for to accept me → for accepting: after
    thanks, sorry or famous "for" stays and takes the -ing form."""
    for i in range(len(words) - 2):
        if words[i] == "for" and words[i + 1] == "to" and "VERB" in getAllLemmas(words[i + 2]):
            before = words[max(0, i - 4) : i]
            if any(w in FOR_ING for w in before) or ("thank" in before and "you" in before):
                gerund = getInflection(words[i + 2], "VBG")
                if gerund:
                    yield replace_tokens(tokens, i + 1, i + 3, gerund[0], "verb_form", text)
            else:
                yield replace_tokens(tokens, i, i + 2, "to", "purpose_for", text)


def capitals(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i, token in enumerate(tokens):
        following = tokens[i + 1].text if i + 1 < len(tokens) else ""
        pronoun = token.text in ("i", "i'm", "i've", "i'll", "i'd") and following != "."  # not "i.e."
        # a sentence's first word: a lower-case word, not an abbreviation ("e.g.") or a web address
        first = i == 0 and _word_in_lower_case(token.text) and following not in (".", "@") and "www" not in text
        if pronoun or first or (token.text in ALWAYS_CAPITALISED and token.text.islower()):
            yield replace_tokens(tokens, i, i + 1, token.text[0].upper() + token.text[1:], "capitalisation", text)


def _word_in_lower_case(word: str) -> bool:
    """A word of letters (an apostrophe inside: "we're"), all in lower case ("iPhone" is a name)."""
    return word.islower() and word.replace("'", "").replace("’", "").isalpha()


def age_with_be(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I have 20 years → I am 20 years old (not "I have 20 years of experience"); I'm 19 years → 19
    years old (not "I am 19 years older"); my name is Ana and I have 16 → I am 16 (one's own number
    of years in digits, where the clause ends: not "I have 16 cats", not "they have 2")."""
    for i in range(len(words) - 1):
        if words[i] in AGE_BE and is_age(words[i + 1]) and word_after(words, i + 2) == "years":
            if word_after(words, i + 3) in ENDS_A_PHRASE:
                yield replace_tokens(tokens, i + 2, i + 3, "years old", "age_have", text)
            continue
        if i == 0:
            continue  # the rest want the subject before the verb
        if words[i] == "have" and words[i - 1] == "i" and words[i + 1].isdigit() and 10 <= int(words[i + 1]) < 100:
            if word_after(words, i + 2) in ENDS_A_PHRASE:  # one's own age said in digits, nothing after
                yield replace_tokens(tokens, i, i + 1, "am", "age_have", text)
                continue
        if words[i] not in ("have", "has", "had") or not is_age(words[i + 1]) or word_after(words, i + 2) != "years":
            continue
        after = words[i + 3] if i + 3 < len(words) else "."
        if words[i] == "had":  # when I had six years → when I was six years old
            be = "were" if words[i - 1] in ("you", "we", "they") else "was"
        elif words[i - 1] in BEFORE_A_BASE:  # she is going to have 30 years → to be 30 years old
            be = "be"
        else:
            be = AGE_SUBJECTS.get(words[i - 1], "is")
        if after == "old":
            yield replace_tokens(tokens, i, i + 1, be, "age_have", text)
        elif after in ENDS_A_PHRASE or after in ("now", "today"):  # I have 25 years now
            yield replace_tokens(tokens, i, i + 3, f"{be} {words[i + 1]} years old", "age_have", text)


def articles_a_an(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    for i in range(len(words) - 1):
        following = tokens[i + 1].text
        if words[i] not in ("a", "an") or not following.isalpha() or following.isupper():
            continue
        if (i > 0 and tokens[i].text == "A") or following.lower() in NOT_AFTER_ARTICLE:
            continue  # a label ("gene A and"), not an article
        word = following.lower()
        wants_an = (word[0] in "aeiou" and not word.startswith(A_BEFORE)) or word.startswith(AN_BEFORE)
        if (words[i] == "an") != wants_an:
            yield replace_tokens(tokens, i, i + 1, "an" if wants_an else "a", "a_an", text)


def missing_subject(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Is (very) cold → It is (very) cold; Is very important to study → It is…, in a statement ("Is
    it raining?" has its subject); because is sunny → because it is; I think is necessary → I think
    it is; if is possible → if it is: a clause needs its subject, which Spanish leaves out ("creo que
    es necesario")."""
    question = text.rstrip().endswith("?")
    # "Is very exciting and very noisy.": a statement (its full stop says so) that judges
    statement = text.rstrip().endswith((".", "!")) and _degree_and_adjective(words, 1)
    if (
        words[:1] in (["is"], ["was"])
        and not question
        and (_says_how_it_is(words, 1, opening=True) or _ranks(words) or statement)
    ):
        # "Is a problem with the heating": something somewhere is "there is" ("hay"); "Is a good
        # idea" says how it is
        # ("Is a beautiful town with narrow streets" describes: "It is")
        somewhere = words[1] in ("a", "an") and bool(PLACE_WORDS & set(words[2:6])) and "to" not in words[2:6]
        somewhere = somewhere and not _plain_adjective(word_after(words, 2))
        yield replace_tokens(tokens, 0, 1, f"{'there' if somewhere else 'it'} {words[0]}", "missing_subject", text)
    if words[:1] in (["are"], ["were"]) and not question and word_after(words, 1) in MANY_WORDS:
        yield replace_tokens(tokens, 0, 1, f"there {words[0]}", "missing_subject", text)  # Are many reasons
    for i in range(len(words) - 1):
        if words[i + 1] not in ("is", "was"):
            continue
        thinks = words[i] in THINKING and i > 0 and words[i - 1] in THINKERS and (i < 2 or words[i - 2] in STARTS)
        # "I learnt that is important to wait": "that" is the conjunction where "to"/"that" follows
        learnt = words[i] == "that" and i > 0 and words[i - 1] in LEARNING and _extraposed(words, i + 2)
        weather = (words[i] == "," or (i == 0 and words[i] in TIME_OPENERS)) and word_after(words, i + 2) in SKY
        # "In summer is very crowded", "In winter is very cold": a time opens the sentence, no subject
        season = i == 1 and words[0] in ("in", "during") and words[1] in SEASONS and _an_adjective_at(words, i + 2)
        # "…by bus, is only twenty minutes", "I work in a bank, is a good job": a new clause after a comma
        # (a clause of its own before the comma, with its subject: not "My sister, who is a doctor, is")
        after_comma = words[i] == "," and not question and i > 1 and word_after(words, i + 2) in AFTER_COMMA_IS
        # (the sentence's first comma: not "Family members, as one …, is a crucial factor")
        after_comma = after_comma and "," not in words[:i] and bool(CLAUSE_SUBJECTS & set(words[:i]))
        after_comma = after_comma and not (RELATIVES | {"whom", "where"}) & set(words[:i])
        # "In my opinion, is very difficult", "The problem is that is very expensive"
        opened = words[i] == "," and words[0] in OPENING_WORDS and not RELATIVES & set(words[:i])
        judged_after = (opened or words[i - 1 : i + 1] == ["is", "that"]) and _says_how_it_is(words, i + 2)
        # after "I think" a clause opening with "is" has lost its subject, whatever it says
        judged = thinks or (words[i] == "if" and _says_how_it_is(words, i + 2))
        if words[i] in ALWAYS_A_SUBJECT or weather or season or after_comma or learnt or judged or judged_after:
            yield replace_tokens(tokens, i + 1, i + 2, f"it {words[i + 1]}", "missing_subject", text)


# "I think is necessary": the verbs and subjects after which "is" wants its "it" ("what I think is" has one)
THINKING = frozenset("think thought believe believed know knew hope guess feel felt".split())
THINKERS = frozenset("i we you they".split())
STARTS = frozenset(", ; and but so because".split())
# verbs before "that" + a judgement: "I learnt that is important to" (its "it" left out)
LEARNING = THINKING | frozenset("learnt learned realised realized discovered understood said say says".split())
# the weather words that only "it" can be (a person can be cold, not raining)
SKY = frozenset("raining snowing sunny windy cloudy foggy".split())
# what opens a sentence before a comma with no subject of its own ("In my opinion, is difficult"),
# not "Edison, who invented the bulb, is an example"
OPENING_WORDS = frozenset(
    """in on for however nowadays also moreover besides unfortunately personally firstly secondly
    finally actually honestly obviously furthermore therefore so but and of as today""".split()
)
RELATIVES = frozenset("who which that whose".split())
PLACE_WORDS = frozenset("with in on at near inside outside behind".split())
MANY_WORDS = frozenset("many a lots some two three four five several more".split())
# a conjunction whose "is" always lacks its subject ("because is", "if is well organised")
ALWAYS_A_SUBJECT = frozenset("because if although though".split())
TIME_OPENERS = frozenset("yesterday today tomorrow tonight".split())  # "Yesterday was raining"
SEASONS = frozenset("summer winter spring autumn august july december january".split())
# what says how "it" is: the weather, a judgement ("important to", "necessary that", "a pity")
JUDGEMENTS = frozenset(
    """important necessary possible impossible true clear obvious essential normal useful better worse easier
    harder difficult easy interesting dangerous expensive cheap boring incredible amazing great fantastic
    wonderful terrible horrible fun funny strange sad good bad nice hard likely""".split()
)


def _extraposed(words: list[str], k: int) -> bool:
    """Whether the words from `k` are a judgement of what follows it: (very) important to / that."""
    at = k + 1 if word_after(words, k) in INTENSIFIERS else k
    return word_after(words, at) in JUDGEMENTS and word_after(words, at + 1) in ("to", "that")


def _says_how_it_is(words: list[str], k: int, opening: bool = False) -> bool:
    """Whether the words from `k` say how "it" is: (not) (very) and the weather or a judgement, or
    an adjective before what it judges (Is very uncomfortable to travel); at the sentence's
    opening also a noun phrase with "a" (Is a good idea → It is a good idea)."""
    k = _past_degree_words(words, k)
    word = word_after(words, k)
    judging = word_after(words, k + 1) in ("to", "that", "for") and _plain_adjective(word)
    return word in WEATHER or word in JUDGEMENTS or judging or (opening and word in ("a", "an"))


def _degree_and_adjective(words: list[str], k: int) -> bool:
    """A degree word and an adjective from `k` (very exciting, so beautiful): no noun reads there."""
    j = _past_degree_words(words, k)
    return j > k and "ADJ" in getAllLemmas(word_after(words, j)) and "NOUN" not in getAllLemmas(word_after(words, j))


def _an_adjective_at(words: list[str], k: int) -> bool:
    """(not) (very) and an adjective from `k`: crowded, cold, very busy."""
    word = word_after(words, _past_degree_words(words, k))
    return "ADJ" in getAllLemmas(word) or word in WEATHER


def _past_degree_words(words: list[str], k: int) -> int:
    """The first position from `k` past "not" and degree words (not very, so, really)."""
    while word_after(words, k) in INTENSIFIERS or word_after(words, k) == "not":
        k += 1
    return k


def _ranks(words: list[str]) -> bool:
    """Is the first time that we visit, Was the best day of my life: "the" and a rank after an
    opening "is" (It is the first time); Is my favourite photo, Is in the centre: a possessive or
    a place after it."""
    after = word_after(words, 1)
    return (after == "the" and word_after(words, 2) in RANKS) or after in POSSESSIVE_OR_PLACE


CLAUSE_SUBJECTS = frozenset("i you he she we they".split())
POSSESSIVE_OR_PLACE = frozenset("my your his her our their in near next on".split())
# after ", is": what tells of a new clause about "it" ("…, is only twenty minutes")
AFTER_COMMA_IS = frozenset("a an only my your his her our their not very so really too quite".split())


RANKS = frozenset("first second third last only best worst same most".split())


@lru_cache(maxsize=4096)
def _plain_adjective(word: str) -> bool:
    """An adjective in its own form (uncomfortable, not a noun or verb as well)."""
    lemmas = getAllLemmas(word)
    return word in lemmas.get("ADJ", ()) and "NOUN" not in lemmas and "VERB" not in lemmas


def profession_article(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """My sister is nurse → is a nurse (before the end of the phrase, not "is student of")."""
    for i in range(len(words) - 1):
        works_as = i > 0 and words[i] == "as" and words[i - 1] in WORK_FORMS
        if (words[i] in ("am", "is", "was", "i'm", "he's", "she's") or works_as) and words[i + 1] in PROFESSIONS:
            after = words[i + 2] if i + 2 < len(words) else "."
            if after in ENDS_A_PHRASE or after in ("in", "at", "for", "from"):
                article = "an" if words[i + 1][0] in "aeiou" else "a"
                yield replace_tokens(
                    tokens, i + 1, i + 2, f"{article} {tokens[i + 1].text}", "profession_article", text
                )


def generic_the(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """The life is hard → Life is hard (these abstract nouns as the sentence's subject); changes
    in the society → changes in society, protect the nature → protect nature (the nouns that are
    general wherever nothing after them says which: not "the society of Japan", "the nature we")."""
    if "the" not in words:
        return  # most sentences: told cheaply
    for k in range(len(words) - 2):
        # at the start of the sentence or of a clause: "For him, the education is the key"
        if words[k] != "the" or not (k == 0 or words[k - 1] in GENERIC_CLAUSE_STARTS):
            continue
        if words[k + 1] in ABSTRACT_NOUNS and _says_something(words[k + 2]) and not _a_compound(words, k + 2):
            noun = tokens[k + 1].text.capitalize() if k == 0 else tokens[k + 1].text
            yield replace_tokens(tokens, k, k + 2, noun, "generic_the", text)
            return
        if _generic_pair_subject(words, k + 1):
            # The public transport is usually better → Public transport; the young people spend → young people
            pair = text[tokens[k + 1].start : tokens[k + 2].end]
            yield replace_tokens(tokens, k, k + 3, pair[0].upper() + pair[1:] if k == 0 else pair, "generic_the", text)
            return
        if words[k + 1 : k + 3] == ["life", "in"] and _a_place_at(tokens, words, k + 3):
            # The life in the city / in Madrid is stressful → Life in… ("the life of my grandfather" is his)
            yield replace_tokens(tokens, k, k + 2, "Life" if k == 0 else "life", "generic_the", text)
            return
    for i in range(1, len(words) - 2):
        # "more options for the free time." → "for free time"; "I like the pop music more" → "like pop music"
        if words[i] != "the" or not (words[i - 1] in GENERIC_TAKERS or words[i - 1] in LIKE_VERBS):
            continue
        pair = f"{words[i + 1]}/{words[i + 2]}"
        takes = words[i - 1] in GENERIC_TAKERS or pair.endswith("music")
        if pair in GENERIC_PAIRS and takes and word_after(words, i + 3) in PAIR_ENDS:
            yield replace_tokens(tokens, i, i + 3, text[tokens[i + 1].start : tokens[i + 2].end], "generic_the", text)
    for i in range(1, len(words) - 1):
        noun = tokens[i + 1].text
        if words[i] != "the" or words[i + 1] not in GENERAL_NOUNS or not noun.islower():
            continue
        after = word_after(words, i + 2)
        if after in ENDS_A_PHRASE or after in GENERIC_VERBS or after in CLAUSE_AFTER_NOUN:
            yield replace_tokens(tokens, i, i + 2, noun, "generic_the", text)


def _a_compound(words: list[str], k: int) -> bool:
    """ "The love letters were", "The unemployment figures for…": the noun at `k` is the head."""
    return word_after(words, k + 1) in VERBS_AFTER_A_HEAD or (
        is_plural_noun(word_after(words, k)) and word_after(words, k) not in PLAIN_VERBS_IN_S
    )


def _a_place_at(tokens: Sequence[Token], words: list[str], k: int) -> bool:
    """A place's noun phrase or name opens at `k` ("the city", "Madrid")."""
    return word_after(words, k) in ("the", "my", "our", "this", "a", "big", "small") or (
        k < len(tokens) and tokens[k].text[:1].isupper()
    )


def _generic_pair_subject(words: list[str], i: int) -> bool:
    """ "public transport is", "young people spend": a general pair as its clause's subject."""
    if f"{words[i]}/{word_after(words, i + 1)}" not in GENERIC_PAIRS:
        return False
    verb = word_after(words, i + 2)
    plural = words[i + 1] in ("people", "networks")
    if plural:
        return verb in PLURAL_SUBJECT_VERBS
    # "The public transport is"; not "the fast food sites", a noun that is a verb's -s form too
    return verb in GENERIC_VERBS or verb in MODALS or (_says_something(verb) and not is_plural_noun(verb))


@lru_cache(maxsize=4096)
def _says_something(word: str) -> bool:
    """A verb a subject may have next: is, can, has, or any -s form (The tourism brings money)."""
    return word in GENERIC_VERBS or word in MODALS or is_third_person_form(word)


def adjective_plural(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """They are very goods → very good: an adjective with a plural -s after very/so/too."""
    for i in range(len(words) - 1):
        word = words[i + 1]
        if words[i] not in INTENSIFIERS or not word.endswith("s") or word_after(words, i + 2) not in AFTER_ADJECTIVE:
            continue
        lemmas = getAllLemmas(word)  # no verb ("likes"), no noun of its own ("news", not "goods")
        own_noun = "NOUN" in lemmas and word[:-1] not in lemmas["NOUN"]
        if "VERB" not in lemmas and not own_noun and word[:-1] in PLAIN_ADJECTIVES:
            yield replace_tokens(tokens, i + 1, i + 2, tokens[i + 1].text[:-1], "adjective_plural", text)


# before these a verb takes its past participle ("I have eated" → "eaten", "was taked" → "taken")
RULES = (
    phrase_swaps,  # the table of whole phrases (phrase_swaps.txt): data, not a rule per phrase
    *WORD_ORDER_RULES,  # before the rules of single words inside what they move ("very much animals")
    *PHRASE_RULES,
    *CLAUSE_RULES,
    *COMPLEMENT_RULES,
    *AGREEMENT_RULES,
    *FORM_RULES,
    *ARTICLE_RULES,
    *NOUN_PHRASE_RULES,
    third_person,
    people_plural,
    verb_patterns,
    since_for,
    prepositions,
    comparatives,
    double_negation,
    there_are,
    uncountables,
    purpose_for,
    capitals,
    age_with_be,
    articles_a_an,
    missing_subject,
    profession_article,
    generic_the,
    *TENSE_RULES,
    adjective_plural,
)


def pattern_fixes(sentence: str) -> list[Edit]:
    """Every rule's edits on ``sentence`` in order of position, none overlapping one of an earlier
    rule: where two rules change the same words, the one listed first in RULES says how ("i married
    with a girl": the table's "I married a girl", not the capital's "I" alone)."""
    return list(_pattern_fixes(sentence))


@lru_cache(maxsize=1024)
def _pattern_fixes(sentence: str) -> tuple[Edit, ...]:
    # a correction asks for the same sentence's fixes more than once (the sentence the model reads,
    # the learner's sentence against the model's edits, the corrected one when nothing changed)
    tokens = tokenize(sentence)
    words = [t.text.lower().replace("’", "'") for t in tokens]
    kept: list[Edit] = []
    for edit in (e for rule in RULES for e in rule(tokens, words, sentence)):
        if all(edit.end <= k.start or edit.start >= k.end for k in kept):
            kept.append(edit)
    return tuple(sorted(kept, key=lambda e: (e.start, e.end)))
