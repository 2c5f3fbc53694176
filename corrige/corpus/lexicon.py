"""Word lists, word forms and parse helpers shared by the injection rules (``rules_words``,
``rules_verbs``, ``rules_phrases``).

A rule returns ``Change``s on spaCy token indices; forms come from lemminflect, and a made-up
word (a misspelling, an over-regularised past) is used only when lemminflect's lexicon and the
closed-class words both say it is not English, so the learner's version is never another
correct sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc, Token

from corrige.synth.morphology import article_for

__all__ = ["article_for"]


@dataclass(frozen=True)
class Change:
    """Replace the clean tokens ``[start, end)`` with the learner's ``words`` (joined by spaces)."""

    start: int
    end: int
    words: tuple[str, ...]
    category: str


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def pairs(text: str) -> dict[str, str]:
    """``"a>b c>d"`` → ``{"a": "b", "c": "d"}`` (tables stay one line per theme)."""
    return dict(item.split(">") for item in text.split())


def keyed(text: str) -> dict[tuple[str, str], str]:
    """``"take+photo>make wait+for>-"`` → ``{("take", "photo"): "make", ("wait", "for"): ""}``."""
    out = {}
    for item in text.split():
        key, value = item.split(">")
        first, second = key.split("+")
        out[first, second] = "" if value == "-" else value
    return out


# Closed-class words lemminflect does not list, and a few frequent words it lacks.
_KNOWN = frozenset(STOP_WORDS) | words("until unless whether although though toward towards upon")


@lru_cache(maxsize=65536)
def is_nonword(word: str) -> bool:
    """True when ``word`` is not an English word form (so using it is surely a mistake)."""
    w = word.lower()
    return w not in _KNOWN and not getAllLemmas(w)


@lru_cache(maxsize=65536)
def inflect(lemma: str, tag: str) -> str:
    """``lemma`` in the Penn ``tag``'s form (the lemma itself when lemminflect has none)."""
    forms = getInflection(lemma, tag, inflect_oov=True)
    return forms[0] if forms else lemma


@lru_cache(maxsize=65536)
def past_forms(lemma: str) -> tuple[str, ...]:
    """Every simple-past form lemminflect knows for ``lemma`` (wet: wet, wetted)."""
    return getInflection(lemma, "VBD", inflect_oov=True)


def match_case(new: str, old: str) -> str:
    """``new`` capitalised like ``old`` (Their → There, THEIR → THERE)."""
    if len(old) > 1 and old.isupper():
        return new.upper()
    if old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def first_word(doc) -> int:
    """Index of the sentence's first word (after opening quotes or dashes); 0 when none."""
    return next((t.i for t in doc if t.is_alpha), 0)


def lower_first(tok: Token) -> str:
    """A sentence-initial word as it reads inside the sentence (names and I keep their capital)."""
    if tok.i == first_word(tok.doc) and tok.text != "I" and tok.tag_ not in ("NNP", "NNPS"):
        return tok.text[:1].lower() + tok.text[1:]
    return tok.text


def is_regular_past(form: str, lemma: str) -> bool:
    """begged, lived, studied: a past made by the rules (so not an irregular one)."""
    return form in (lemma + "ed", lemma + "d", lemma[:-1] + "ied", lemma + lemma[-1:] + "ed", lemma + "k" + "ed")


# --- people and agreement ----------------------------------------------------------------------

SUBJECT_PERSON = {"i": "1s", "you": "2", "he": "3s", "she": "3s", "it": "3s", "we": "pl", "they": "pl"}
REFLEXIVE = pairs("i>myself you>yourself he>himself she>herself we>ourselves they>themselves")
BE_PRESENT = {"1s": "am", "2": "are", "3s": "is", "pl": "are"}
HAVE_OF_BE = pairs("am>have are>have is>has was>had were>had 'm>have 're>have 's>has")


def person(subject: Token) -> str | None:
    """``1s``, ``2``, ``3s`` or ``pl`` for a subject token (None when unclear)."""
    low = subject.lower_
    if low in SUBJECT_PERSON:
        return SUBJECT_PERSON[low]
    if any(c.dep_ == "conj" for c in subject.children):
        return "pl"
    if subject.tag_ in ("NNS", "NNPS") or low in ("these", "those", "people"):
        return "pl"
    if subject.tag_ in ("NN", "NNP") or low in ("this", "that"):
        return "3s"
    return None


def present(lemma: str, who: str) -> str:
    """The simple present of ``lemma`` for a person (``be`` included)."""
    if lemma == "be":
        return BE_PRESENT[who]
    return inflect(lemma, "VBZ") if who == "3s" else lemma


def regular_past(lemma: str) -> str:
    """What a learner writes for the past of an irregular verb: go → goed, buy → buyed."""
    if lemma.endswith("e"):
        return lemma + "d"
    if len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in "aeiou":
        return lemma[:-1] + "ied"
    return lemma + "ed"


# --- word lists -------------------------------------------------------------------------------

PROFESSIONS = words(
    "teacher doctor nurse engineer lawyer student waiter waitress cook chef driver farmer dentist "
    "architect journalist writer actor actress singer musician painter artist scientist pilot "
    "policeman policewoman firefighter mechanic secretary accountant manager programmer designer "
    "photographer hairdresser plumber electrician translator lecturer professor surgeon vet "
    "soldier builder cleaner baker butcher shopkeeper librarian pharmacist psychologist"
)
PERSON_NOUNS = PROFESSIONS | words(
    "man woman men women boy girl child children person people friend friends mother father "
    "brother sister son daughter wife husband uncle aunt cousin neighbour neighbor guy lady "
    "grandmother grandfather parent parents kid kids baby boss colleague customer guest player "
    "girlfriend boyfriend teenager adult owner visitor tourist"
)
FEMALE_KIN = words("mother sister wife daughter aunt grandmother girlfriend niece")
MALE_KIN = words("father brother husband son uncle grandfather boyfriend nephew")
# Nouns that are also uncountable (meat, material, food): "I've got lamb" is correct English, so
# their "a" is never dropped.
MASS_TOO = words(
    "chicken fish lamb beef pork turkey cake pizza bread coffee tea beer wine juice milk water paper "
    "glass iron wood stone light noise space room time work experience business fire hair food fruit "
    "ice chocolate cheese salad soup rice meat land art sport cloth rope string cotton silk wool gold"
)
GENERIC_NOUNS = words(
    "life nature society happiness love friendship health education religion politics humanity "
    "mankind poverty pollution"
)
SPORTS = words("football soccer tennis basketball baseball volleyball golf chess rugby hockey cricket")
LANGUAGES = words("English Spanish French German Italian Portuguese Chinese Japanese Russian Arabic")
CAPITALISED = LANGUAGES | words(
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February April June July "
    "August September October November December American European British Mexican Spaniard "
    "Englishman Christmas Easter"
)
DAYS = words("monday tuesday wednesday thursday friday saturday sunday")
# Countries and cities that never take "the" (the United States, the Netherlands are left out).
PLACES = words(
    "Spain France Italy Germany Mexico Colombia Argentina Peru Chile Brazil Portugal England "
    "Scotland Ireland Canada Australia Japan China India Russia Europe Africa Asia London Madrid "
    "Paris Rome Berlin Barcelona Seville Lisbon Dublin Tokyo Boston Chicago Texas California"
)
UNCOUNTABLE = words(
    "advice information furniture luggage baggage equipment homework knowledge feedback software "
    "traffic research scenery weather garbage rubbish jewelry jewellery clothing machinery"
)
SHORT_ADJECTIVES = words(
    "big small tall short old young fast cheap long hard high low cold hot warm new nice large late "
    "strong rich poor great quick slow clean dark easy happy busy early heavy bright close deep "
    "fat thin wide safe sad wet dry near soft loud quiet funny pretty ugly good bad far"
)
NPI = pairs("anything>nothing anybody>nobody anyone>nobody anywhere>nowhere ever>never")
FREQUENCY = words("always usually often never sometimes rarely normally generally")
INVERTING = words("always never rarely seldom")


# --- reading the parse -------------------------------------------------------------------------

WH = words("what where when why how who which")


def subject_of(verb: Token) -> Token | None:
    return next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)


def finite_of(verb: Token) -> Token:
    """The token carrying tense for ``verb``: its first auxiliary, else the verb itself."""
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i]
    return auxes[0] if auxes else verb


def span_text(doc: Doc, start: int, end: int) -> tuple[str, ...]:
    return tuple(lower_first(t) for t in doc[start:end])


def has_past_marker(verb: Token) -> bool:
    """Does the clause of ``verb`` say when in the past (yesterday, last week, two days ago)?"""
    for c in verb.children:
        if c.lower_ == "yesterday" or (
            c.dep_ in ("npadvmod", "advmod")
            and any(x.lower_ == "ago" or (x.lower_ == "last" and x.head == c) for x in c.subtree)
        ):
            return True
    return False


def is_question(doc: Doc) -> bool:
    return doc[-1].text == "?"
