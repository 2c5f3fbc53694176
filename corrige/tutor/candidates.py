"""Candidate corrections of a sentence, one word at a time, from confusion sets.

A learner's error is most often one word swapped for a neighbour in its family: a preposition
for another (in Monday), an article missing or extra (I am teacher, the life), a verb in the
wrong form (she go, I am agree with, last year I have visited), a noun in the wrong number
(two child), a real word for a similar one (there/their, make/do). Each candidate changes one
word (replaces, drops or adds it); a language model then says which, if any, make the sentence
more likely (`corrige.tutor.rescoring`). The families are data (`confusion_sets.txt`,
lemminflect's inflection tables), not rules.

Candidates stay clear of what the tutor cannot judge: a capitalised word inside the sentence (a
name), a word with digits, a word the language model does not know.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from lemminflect import getAllInflections, getAllLemmas

from corrige.tutor.edit_labels import DETERMINERS, POSSESSIVES, PRONOUNS, name_edit
from corrige.tutor.edits import Edit, Token, tokenize

CONFUSION_FILE = Path(__file__).with_name("confusion_sets.txt")
ARTICLES = ("a", "an", "the")
# words after which an article cannot be added: other determiners, possessives, numbers, pronouns
NO_ARTICLE_AFTER = (
    DETERMINERS
    | POSSESSIVES
    | PRONOUNS
    | frozenset(
        "one two three four five six seven eight nine ten many much several few more most all both such what "
        "which whose 's".split()
    )
)
_BE = ("am", "is", "are", "was", "were", "be", "been", "being")
COMMON_PREPOSITIONS = ("to", "at", "in", "on", "for", "of", "about", "with")
# a verb that Spanish leaves without a subject: "es", "hay", "fue"
SUBJECTLESS_VERBS = frozenset("is was are were has have seems".split())
GREETING_WORDS = frozenset("hi hello hey dear".split())
MAX_OPENING_WORDS = 4  # a comma closes an opening phrase of at most this many words
# words a clause may open with, after an opening phrase and its comma (In my opinion, the ...)
CLAUSE_START = frozenset("i you he she it we they there this these those the a an my your his her our their".split())
# "then" is a comparison's "than" only within this many words of a comparative
COMPARISON_REACH = 6
COMPARISON_WORDS = frozenset("more less rather different differently fewer".split())
SUBJECT_WORDS = PRONOUNS | frozenset("there here this that what who which people".split())


@dataclass(frozen=True)
class Candidate:
    """Replace tokens ``[i, j)`` of the sentence by ``words`` (empty: delete; i == j: insert)."""

    i: int
    j: int
    words: tuple[str, ...]
    kind: str  # "replace", "insert" or "delete": each has its own threshold
    family: str  # which confusion set proposed it: preposition, article, verb, noun, confusion


@dataclass(frozen=True)
class ConfusionSets:
    """Families of words a learner confuses (one word may belong to several): `family` names what
    kind of error a swap inside it is."""

    families: dict[str, tuple[frozenset[str], ...]]

    @classmethod
    def load(cls, path: Path = CONFUSION_FILE) -> ConfusionSets:
        families: dict[str, list[frozenset[str]]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            family, _, groups = line.partition(":")
            for group in groups.split():
                families.setdefault(family.strip(), []).append(frozenset(group.split("/")))
        return cls({k: tuple(v) for k, v in families.items()})

    def alternatives(self, word: str) -> list[tuple[str, str]]:
        """(alternative, family) for every family group holding `word` (lower case)."""
        return list(self._alternatives.get(word, ()))

    def members(self, family: str) -> frozenset[str]:
        return self._members.get(family, frozenset())

    @cached_property
    def _alternatives(self) -> dict[str, tuple[tuple[str, str], ...]]:
        # asked for every word of every sentence: the groups are walked once, not per word
        found: dict[str, list[tuple[str, str]]] = {}
        for family, groups in self.families.items():
            for group in groups:
                for word in group:
                    found.setdefault(word, []).extend((w, family) for w in sorted(group) if w != word)
        return {word: tuple(alts) for word, alts in found.items()}

    @cached_property
    def _members(self) -> dict[str, frozenset[str]]:
        return {family: frozenset().union(*groups) for family, groups in self.families.items()}


@lru_cache(maxsize=16384)
def inflections(word: str) -> tuple[tuple[str, str], ...]:
    """(other form, "verb" or "noun") for the other inflections of `word`'s verb and noun lemmas."""
    out: dict[str, str] = {}
    lemmas = getAllLemmas(word)
    for pos, family in (("VERB", "verb"), ("NOUN", "noun")):
        for lemma in lemmas.get(pos, ()):
            if pos == "VERB" and lemma == "be":
                forms = set(_BE)
            else:
                forms = {f for group in getAllInflections(lemma, upos=pos).values() for f in group} | {lemma}
            for form in forms:
                if form != word and " " not in form and "'" not in form:
                    out.setdefault(form, family)
    return tuple(sorted(out.items()))


def _judgeable(tok: Token, k: int) -> bool:
    """A word a candidate may change: a lower-case word (the first word may be capitalised), no digits."""
    text = tok.text
    return tok.is_word and not any(c.isdigit() for c in text) and (k == 0 or not text[:1].isupper())


def candidates(
    tokens: list[Token],
    sets: ConfusionSets,
    known: Callable[[str], bool],
    locked: frozenset[int] = frozenset(),
    wanted: Collection[str] | None = None,
) -> list[Candidate]:
    """Every one-word candidate of a tokenised sentence; tokens in `locked` are left alone (the
    tutor already changed them), and every word a candidate writes is one `known` accepts. With
    `wanted` ("family/kind" names, as the rescorer's margins), only candidates of those kinds:
    the others are never built (a verb's inflections are the costly ones)."""

    def want(family: str, kind: str) -> bool:
        return wanted is None or f"{family}/{kind}" in wanted

    words = [t.text.lower() for t in tokens]
    preps = sets.members("preposition")
    found: list[Candidate] = []
    for k, tok in enumerate(tokens):
        if k in locked or not tok.is_word:
            continue
        w = words[k]
        changeable = _judgeable(tok, k)  # a name or a number is neither changed nor given an article
        if changeable:
            found += _replacements(k, w, sets, known, preps, words[k + 1] if k + 1 < len(words) else "", want)
        before = words[k - 1] if k else ""
        if k - 1 in locked or (k and not known(before)) or not known(w):
            continue  # nothing is added next to a word the tutor changed or the model does not know
        # a comma after an opening word or phrase (However, In my opinion,); never before a
        # conjunction, where English leaves it to the writer (I called her but she...)
        if (
            want("punctuation", "insert")
            and 0 < k <= MAX_OPENING_WORDS
            and (w in CLAUSE_START or tok.text[:1].isupper())
            and before not in NO_ARTICLE_AFTER | preps
            and all(t.is_word for t in tokens[:k])
            and words[0] not in GREETING_WORDS  # "Hi Tom, could you": not "Hi, Tom"
        ):
            found.append(Candidate(k, k, (",",), "insert", "punctuation"))
        if not changeable:
            continue
        # an article before a word that could start a noun phrase (not a comparative: the worse)
        if (
            want("article", "insert")
            and before not in NO_ARTICLE_AFTER
            and w not in NO_ARTICLE_AFTER | preps
            and _starts_noun_phrase(w)
        ):
            found += [Candidate(k, k, (a,), "insert", "article") for a in ARTICLES]
        # a preposition after a verb or an adjective (listen music, arrive Madrid, good football)
        if (
            want("preposition", "insert")
            and before
            and before not in preps
            and w not in preps
            and _takes_preposition(before)
        ):
            found += [Candidate(k, k, (p,), "insert", "preposition") for p in COMMON_PREPOSITIONS]
        # a subject before a verb that has none (Is very cold, because is far, In Spain are many)
        if want("pronoun", "insert") and w in SUBJECTLESS_VERBS and before not in SUBJECT_WORDS:
            found += [Candidate(k, k, (p,), "insert", "pronoun") for p in ("it", "there")]
    return [
        c
        for c in found
        if want(c.family, c.kind)
        and all(known(x) for x in c.words)
        and (c.words != ("than",) or _after_comparative(words, c.i))
    ]


def _replacements(
    k: int,
    w: str,
    sets: ConfusionSets,
    known: Callable[[str], bool],
    preps: frozenset[str],
    after: str = "",
    want: Callable[[str, str], bool] = lambda family, kind: True,
) -> list[Candidate]:
    """The word at `k` swapped inside its families, inflected otherwise, or (a preposition or
    an article) dropped. A feeling's -ing becomes its -ed only before a preposition (interesting
    in → interested in), judged as a confusion."""
    found = []
    for alt, family in sets.alternatives(w):
        if family == "feeling":
            if not (w.endswith("ing") and alt.endswith("ed") and after in preps):
                continue
            family = "confusion"
        found.append(Candidate(k, k + 1, tuple(alt.split()), "replace", family))
    if w in preps or w in ARTICLES:
        found.append(Candidate(k, k + 1, (), "delete", "preposition" if w in preps else "article"))
    if w in ARTICLES:
        found += [Candidate(k, k + 1, (a,), "replace", "article") for a in ARTICLES if a != w]
    elif (want("verb", "replace") or want("noun", "replace")) and known(w):
        for form, family in inflections(w):
            if family == "noun" and not _plural_of(form, w):
                continue  # a noun is made plural (two child), never singular: its number is the writer's
            found.append(Candidate(k, k + 1, (form,), "replace", family))
    return found


def _after_comparative(words: list[str], k: int) -> bool:
    """Whether a comparison opens in the words before `k` ("more expensive then", "harder then"):
    only there does "then" stand for "than" (not in "if it rains, then we stay")."""
    return any(_is_comparative(w) for w in words[max(0, k - COMPARISON_REACH) : k])


@lru_cache(maxsize=4096)
def _is_comparative(word: str) -> bool:
    if word in COMPARISON_WORDS:
        return True
    lemmas = getAllLemmas(word)
    return word.endswith("er") and any(
        word in getAllInflections(lemma, upos=pos).get(tag, ())
        for pos, tag in (("ADJ", "JJR"), ("ADV", "RBR"))
        for lemma in lemmas.get(pos, ())
    )


@lru_cache(maxsize=16384)
def _plural_of(plural: str, singular: str) -> bool:
    """Whether `plural` is the plural of the noun `singular` (child → children)."""
    return any(
        plural in getAllInflections(lemma, upos="NOUN").get("NNS", ())
        for lemma in getAllLemmas(singular).get("NOUN", ())
        if singular in getAllInflections(lemma, upos="NOUN").get("NN", (lemma,))
    )


@lru_cache(maxsize=16384)
def _starts_noun_phrase(word: str) -> bool:
    """A noun, or an adjective in its plain form, that an article may stand before."""
    lemmas = getAllLemmas(word)
    if "NOUN" in lemmas:
        return True
    return any(
        word not in {f for t in ("JJR", "JJS") for f in getAllInflections(a).get(t, ())} for a in lemmas.get("ADJ", ())
    )


@lru_cache(maxsize=16384)
def _takes_preposition(word: str) -> bool:
    """A verb or adjective form that a preposition may follow (lemminflect's tables)."""
    lemmas = getAllLemmas(word)
    return word not in NO_ARTICLE_AFTER and ("VERB" in lemmas or "ADJ" in lemmas) and "NOUN" not in lemmas


def candidate_edit(tokens: list[Token], text: str, c: Candidate) -> Edit:
    """The candidate as an `Edit` of `text` (a capital first letter kept), widened to a word
    for an insertion or a deletion, as the tutor's edits always are, and named by its words."""
    i, j = c.i, c.j
    new = " ".join(c.words)
    if c.words == (",",):  # "However I" -> "However, I": the comma joins the word before
        i, j = i - 1, i
        new = tokens[i].text + ","
    elif c.kind == "insert":  # "am teacher" -> "am a teacher": the edit spans the next word
        j = i + 1
        new = f"{new} {tokens[i].text}"
    elif c.kind == "delete":  # "discuss about it" -> "discuss it": the edit spans the next word
        if i + 1 < len(tokens) and tokens[i + 1].is_word:
            j = i + 2
            new = tokens[i + 1].text
        elif i > 0:
            i, new = i - 1, tokens[i - 1].text
    start, end = tokens[i].start, tokens[j - 1].end
    original = text[start:end]
    if original[:1].isupper() and new:
        new = new[0].upper() + new[1:]
        if c.kind == "insert" and c.i == 0:  # "Life is" -> "The life is"
            rest = tokens[i].text
            new = new[: len(new) - len(rest)] + rest[0].lower() + rest[1:]
    before = [t.text for t in tokenize(text[:start]) if t.is_word][-1:]
    category = name_edit(original, new, before[0] if before else "") or _FAMILY_CATEGORY[c.family]
    return Edit(start, end, original, new, category)


FAMILY_KINDS = (
    "preposition/replace",
    "preposition/delete",
    "article/replace",
    "article/insert",
    "article/delete",
    "verb/replace",
    "noun/replace",
    "confusion/replace",
    "calque/replace",
    "quantifier/replace",
    "pronoun/replace",
    "pronoun/insert",
    "preposition/insert",
    "punctuation/insert",
)
"""Every family and kind of change `candidates` proposes: each has its own margin."""

_FAMILY_CATEGORY = {
    "preposition": "preposition",
    "article": "determiner",
    "verb": "verb_form",
    "noun": "noun_number",
    "confusion": "word_confusion",
    "calque": "calque",
    "pronoun": "pronoun",
    "quantifier": "noun_number",
    "punctuation": "punctuation",
}
