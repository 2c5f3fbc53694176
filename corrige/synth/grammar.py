"""Core of the clean-sentence grammar: tokens, subjects, verb chains and rendering
(inflection is in ``morphology.py``).

Sentences are built as lists of tagged tokens rather than strings, so that the error rules
(``error_rules.py``) can inject a learner error exactly (the third-person verb, the article of a
profession, the subject of a question) instead of guessing with regular expressions. The
templates that combine these pieces into everyday sentences live in ``templates.py``.

Tags: S subject, V main verb, AUX auxiliary, NEG "not", DET article/determiner, POSS possessive,
ADJ adjective, N noun, PREP preposition, NUM number, ADV adverb, WH question word, CONJ
conjunction, TO infinitive "to", PRT particle, OP object pronoun, P punctuation, X other.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from corrige.synth import lexicon as lx
from corrige.synth.morphology import be_form, plural, verb_form

PUNCT_TAG = "P"

FEATURES: dict[str, str] = {
    # grammar: set by the builder (``Builder.verb``, ``Builder.subject``, ``_classify``)
    "lemma": "dictionary form of a verb or auxiliary (be, do, have, will, go ...)",
    "form": "inflection of a verb: base, pres, s3, past, ing, part",
    "tense": "tense of the clause the verb belongs to: pres, past, will, prog, going, perf",
    "person": "grammatical person of a subject word or its verb: 1s, 2, 3s, 1p, 3p",
    "number": "number of a noun: sg or pl",
    "count": "u: an uncountable noun",
    "head": "1: the last word of a subject (the one the verb agrees with)",
    "op": "1: the fronted operator of a question (do, be, a modal)",
    "owner": "gender (m, f) of the subject a his/her refers to",
    "owned": "gender (m, f, n) of the relative after his/her",
    # learner errors: set by the templates and the lexicon notation, read by ``error_rules``
    "p": "the preposition a learner writes instead of this one ('' : a learner drops it)",
    "pi": "a preposition a learner inserts before this word",
    "vp": "verb-pattern error: agree, to (enjoy to read), modal (can to swim), '' (explain to)",
    "vl": "the verb a learner uses instead (told me -> said me)",
    "wo": "1: the object of 'want' (want me to go -> want that I go)",
    "main": "tense of the verb 'want' in front of ``wo``: pres or past",
    "cl": "the verb a learner uses in this collocation instead (make a party)",
    "purpose": "1: the 'to' of purpose (to buy -> for to buy, for buy)",
    "perf": "1: the auxiliary of a present perfect with since/for",
    "pm": "1: a verb a past time marker forces into the past",
    "pa": "1: the article of a profession (she is a doctor)",
    "gen": "1: a generic noun (I like dogs -> I like the dogs)",
    "age": "1: the verb of an age (I am 20 years old -> I have 20 years)",
    "dummy": "1: the subject 'it' of weather and time sentences",
    "there": "pl: the verb of a plural 'there are'",
    "cmp": "er or est: a comparative or superlative adjective",
    "base": "the positive form of a ``cmp`` adjective",
    "npi": "the negative word a learner writes instead of this any- word",
    "emb": "1: the subject and verb of an indirect question",
    "ppl": "1: a verb agreeing with 'people'",
    "vmo": "1: the first word of the object of '... very much'",
    "vm": "1: the 'very' of '... very much'",
    "freq": "1: a frequency adverb (always, usually ...)",
}
"""The features a ``Tok`` may carry, by key, with what each marks. The keys are short because
the lexicon writes them inline (``word|p=in``); a value of "1" is a plain mark."""


@dataclass(slots=True)
class Tok:
    """One word (or fixed multi-word unit, like "New York") of a clean sentence.

    ``f`` holds its features, keys of ``FEATURES`` (grammar, and the places where a learner
    error can be injected) with string values.
    """

    text: str
    tag: str
    f: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Sentence:
    """A clean sentence with the structure the error generators need.

    ``combos`` lists word combinations (verb+object, adjective+noun) so that splits can keep
    some combinations out of training and measure generalisation.
    """

    toks: list[Tok]
    template: str
    combos: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return render_text([t.text for t in self.toks])

    @property
    def n_words(self) -> int:
        return sum(len(t.text.split()) for t in self.toks if t.tag != PUNCT_TAG)


def render(words: Sequence[str], punct: Sequence[bool]) -> tuple[str, list[tuple[int, int]]]:
    """Join words into a sentence and return it with each word's character span.

    Punctuation attaches to the previous word; the first letter is capitalised (so "it" at the
    start reads "It" while the same token mid-sentence stays lower case). Empty words are
    skipped and get an empty span at the current position.
    """
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    first = True
    for word, is_p in zip(words, punct, strict=True):
        if not word:
            spans.append((pos, pos))
            continue
        if first:
            word = word[0].upper() + word[1:]
            first = False
        elif not is_p:
            out.append(" ")
            pos += 1
        out.append(word)
        spans.append((pos, pos + len(word)))
        pos += len(word)
    return "".join(out), spans


def render_text(words: Sequence[str]) -> str:
    """Same text as ``render`` without the spans (faster; words must be non-empty)."""
    text = " ".join(words).replace(" ,", ",").replace(" .", ".").replace(" ?", "?")
    return text[0].upper() + text[1:]


def stable_hash(text: str) -> int:
    """Process-independent hash (Python's ``hash`` is salted) used for held-out choices."""
    return zlib.crc32(text.encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# Subjects
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Subj:
    """A clause subject with what agreement and possessives need to know about it."""

    words: tuple[str, ...]
    person: str  # 1s, 2, 3s, 1p, 3p
    gender: str  # m, f or "" when it does not matter
    poss: str
    obj: str

    @property
    def text(self) -> str:
        return " ".join(self.words)


PRONOUNS = {
    "I": Subj(("I",), "1s", "", "my", "me"),
    "you": Subj(("you",), "2", "", "your", "you"),
    "he": Subj(("he",), "3s", "m", "his", "him"),
    "she": Subj(("she",), "3s", "f", "her", "her"),
    "we": Subj(("we",), "1p", "", "our", "us"),
    "they": Subj(("they",), "3p", "", "their", "them"),
}
SUBJECT_FORM = {"me": "I", "you": "you", "him": "he", "her": "she", "us": "we", "them": "they"}
PERSON_OF_PRONOUN = {s.text: s.person for s in PRONOUNS.values()}


def name_subject(name: str) -> Subj:
    male = name in lx.MALE_NAMES
    return Subj((name,), "3s", "m" if male else "f", "his" if male else "her", "him" if male else "her")


def kin_subject(owner: str, noun: str) -> Subj:
    if noun in lx.KIN_PLURAL:
        return Subj((owner, noun), "3p", "", "their", "them")
    gender = lx.KIN_GENDER[noun]
    return Subj((owner, noun), "3s", gender, "his" if gender == "m" else "her", "him" if gender == "m" else "her")


def pick_subject(rng: random.Random, question: bool = False, third: bool = False, gendered: bool = False) -> Subj:
    """A subject: half pronouns, a quarter names, a quarter family noun phrases.

    ``third`` restricts to third person, ``gendered`` to subjects whose possessive is his/her.
    In questions "my sister" becomes "your sister", which is what people actually ask.
    """
    r = rng.random()
    if r < 0.5 and not gendered:
        pool: tuple[str, ...] = ("he", "she", "they") if third else ("I", "you", "he", "she", "we", "they")
        if question:
            pool = tuple(p for p in pool if p != "I")
        return PRONOUNS[rng.choice(pool)]
    if r < 0.62 and gendered:
        return PRONOUNS[rng.choice(("he", "she"))]
    if r < 0.78:
        return name_subject(rng.choice(lx.MALE_NAMES + lx.FEMALE_NAMES))
    owner = "your" if question else rng.choice(("my", "my", "our"))
    nouns = tuple(k for k in lx.KIN_SINGULAR if lx.KIN_GENDER[k] != "n")
    if not gendered and rng.random() < 0.4:
        nouns = lx.KIN_PLURAL[:-1]
    return kin_subject(owner, rng.choice(nouns))


# ---------------------------------------------------------------------------------------------
# Building token lists
# ---------------------------------------------------------------------------------------------
_DETERMINERS = frozenset(
    {"a", "an", "the", "some", "any", "this", "that", "these", "those", "many", "much", "every", "no"}
)
_POSSESSIVES = frozenset({"my", "your", "his", "her", "its", "our", "their"})
_PREPOSITIONS = frozenset(
    {
        "in",
        "at",
        "on",
        "to",
        "from",
        "with",
        "for",
        "about",
        "of",
        "by",
        "near",
        "after",
        "before",
        "along",
        "around",
        "than",
    }
)
_ADJECTIVES = (
    frozenset(a for group in lx.ADJ_GROUPS.values() for a in group)
    | frozenset(lx.PROFESSION_ADJECTIVES)
    | lx.SHORT_ADJECTIVES
    | lx.LONG_ADJECTIVES
)
_NOUN_SG = frozenset(lx.DESCRIBABLE) | frozenset(lx.KIN_GENDER) | frozenset(lx.PROFESSIONS)
_NOUN_PL = {plural(n): n for n in _NOUN_SG} | {
    "parents": "parent",
    "grandparents": "grandparent",
    "neighbours": "neighbour",
    "shoes": "shoe",
}


def _classify(word: str) -> tuple[str, dict[str, str]]:
    """Tag and features of a word added from a phrase string."""
    lower = word.lower()
    if lower in _DETERMINERS:
        return "DET", {}
    if lower in _POSSESSIVES:
        return "POSS", {}
    if lower in _PREPOSITIONS:
        return "PREP", {}
    if word.isdigit() or lower in lx.SMALL_NUMBERS:
        return "NUM", {}
    if lower in _ADJECTIVES:
        return "ADJ", {}
    if lower in lx.UNCOUNTABLE_PLURALS:
        return "N", {"count": "u"}
    if lower in _NOUN_PL or lower in lx.KIN_PLURAL:
        return "N", {"number": "pl"}
    if lower in _NOUN_SG:
        return "N", {"number": "sg"}
    return "X", {}


# Cache of ``_classify`` (the vocabulary is closed, so this stays small).
_WORD_TAGS: dict[str, tuple[str, dict[str, str]]] = {}


class Builder:
    """Accumulates tokens for one sentence; templates call it clause by clause."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.toks: list[Tok] = []
        self.combos: list[str] = []

    def add(self, text: str, tag: str, **f: str) -> int:
        self.toks.append(Tok(text, tag, f))
        return len(self.toks) - 1

    def punct(self, mark: str) -> None:
        self.add(mark, PUNCT_TAG)

    def done(self, template: str, mark: str = ".") -> Sentence:
        self.punct(mark)
        return Sentence(self.toks, template, tuple(self.combos))

    def subject(self, subj: Subj, **f: str) -> None:
        for i, word in enumerate(subj.words):
            last = i == len(subj.words) - 1
            self.add(word, "S", person=subj.person, **({"head": "1"} if last else {}), **f)

    def phrase(self, text: str, subj: Subj | None = None, **flags: str) -> int:
        """Add words in the lexicon notation (see ``lexicon``); returns the first index."""
        start = len(self.toks)
        for raw in text.split():
            word, _, spec = raw.partition("|")
            f = dict(flags)
            if spec:
                for item in spec.split(","):
                    key, _, value = item.partition("=")
                    f[key] = "" if value == "~" else value.replace("_", " ")
            if word.startswith("{"):
                word = self._expand(word, subj)
            self._add_word(word, f)
        self._mark_adjectives(start)
        return start

    def _expand(self, slot: str, subj: Subj | None) -> str:
        choices = {
            "{city}": lx.CITIES,
            "{country}": lx.COUNTRIES,
            "{day}": lx.DAYS,
            "{month}": lx.MONTHS,
            "{lang}": lx.LANGUAGES,
            "{year}": tuple(str(y) for y in range(2005, 2023)),
        }
        if slot == "{p}":
            return subj.poss if subj else "my"
        if slot == "{days}":
            return self.rng.choice(lx.DAYS) + "s"
        return self.rng.choice(choices[slot])

    def _add_word(self, word: str, flags: dict[str, str]) -> None:
        known = _WORD_TAGS.get(word)
        if known is None:
            known = _WORD_TAGS[word] = _classify(word)
        tag, auto = known
        if tag == "PREP" and "pi" in flags:
            tag = "X"
        self.toks.append(Tok(word, tag, {**auto, **flags} if flags else dict(auto)))

    def _mark_adjectives(self, start: int) -> None:
        """Record adjective+noun combinations and possessive genders in the new words."""
        toks = self.toks
        for i in range(start, len(toks) - 1):
            a, b = toks[i], toks[i + 1]
            if a.tag == "ADJ" and b.tag == "N":
                self.combos.append(f"an:{a.text}+{_NOUN_PL.get(b.text, b.text)}")
            if a.tag == "POSS" and a.text in ("his", "her") and b.text in lx.KIN_GENDER:
                a.f["owned"] = lx.KIN_GENDER[b.text]

    def possessive_owner(self, subj: Subj, start: int) -> None:
        """Tag his/her from ``start`` on as owned by ``subj`` (for the his/her error)."""
        for tok in self.toks[start:]:
            if tok.tag == "POSS" and tok.text == subj.poss and subj.gender:
                tok.f["owner"] = subj.gender

    def verb(self, subj: Subj, lemma: str, tense: str, neg: bool = False, q: bool = False, **vflags: str) -> int:
        """Add subject and verb chain (inverted for questions); returns the main verb index."""
        chain = verb_chain(lemma, tense, subj.person, neg, q)
        if q:
            text, tag, f = chain[0]
            self.add(text, tag, **f, op="1")
            self.subject(subj)
            chain = chain[1:]
        else:
            self.subject(subj)
        main = -1
        for text, tag, f in chain:
            if tag == "V":
                f = {**f, **vflags}
                main = len(self.toks)
            self.add(text, tag, **f)
        return main


def verb_chain(
    lemma: str, tense: str, person: str, neg: bool = False, q: bool = False
) -> list[tuple[str, str, dict[str, str]]]:
    """The verb tokens of a clause in statement order; for questions the first is the operator.

    tense: pres, past, prog, perf, will, going, can.
    """
    s3 = person == "3s"
    base = {"lemma": lemma, "person": person, "tense": tense}
    head, _, particle = lemma.partition(" ")

    def main(form: str) -> list[tuple[str, str, dict[str, str]]]:
        out = [(verb_form(head, form), "V", {**base, "form": form})]
        if particle:
            out.append((particle, "PRT", {}))
        return out

    def be(t: str) -> list[tuple[str, str, dict[str, str]]]:
        word = be_form(t, person, neg)
        out = [(word, "AUX", {"lemma": "be", "person": person, "tense": tense, "form": t})]
        if neg and word == "am":
            out.append(("not", "NEG", {}))
        return out

    if lemma == "be":
        if tense in ("pres", "past"):
            word = be_form(tense, person, neg)
            out = [(word, "V", {**base, "form": tense})]
            if neg and word == "am":
                out.append(("not", "NEG", {}))
            return out
        if tense == "perf":
            return [
                (_have(s3, neg), "AUX", {"lemma": "have", "person": person}),
                ("been", "V", {**base, "form": "part"}),
            ]
        if tense == "will":
            return [("won't" if neg else "will", "AUX", {"lemma": "will"}), ("be", "V", {**base, "form": "base"})]
    if tense in ("pres", "past"):
        if not neg and not q:
            return main("past" if tense == "past" else ("s3" if s3 else "base"))
        if tense == "past":
            do = "didn't" if neg else "did"
        else:
            do = ("doesn't" if neg else "does") if s3 else ("don't" if neg else "do")
        return [(do, "AUX", {"lemma": "do", "person": person, "tense": tense})] + main("base")
    if tense == "prog":
        return be("pres") + main("ing")
    if tense == "perf":
        return [(_have(s3, neg), "AUX", {"lemma": "have", "person": person})] + main("part")
    if tense == "will":
        return [("won't" if neg else "will", "AUX", {"lemma": "will"})] + main("base")
    if tense in ("can", "should", "must"):
        word = tense + ("n't" if neg else "")
        return [(word.replace("cann't", "can't"), "AUX", {"lemma": tense})] + main("base")
    if tense == "going":
        return be("pres") + [("going", "X", {}), ("to", "TO", {})] + main("base")
    raise ValueError(f"unknown tense {tense!r}")


def _have(s3: bool, neg: bool) -> str:
    word = "has" if s3 else "have"
    return word + "n't" if neg else word
