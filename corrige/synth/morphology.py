"""English inflection for the grammar: articles, verb forms, plurals and comparison.

Irregular forms come from ``lexicon``; regular ones follow the spelling rules a learner is
taught (study → studies, stop → stopped, big → bigger), so every form the generator writes is
one a teacher would accept.
"""

from __future__ import annotations

from corrige.synth import lexicon as lx

_AN_EXCEPTIONS = ("hour", "honest", "honour")
_A_EXCEPTIONS = ("uni", "use", "usu", "euro", "one", "uk")


def article_for(word: str) -> str:
    """ "a" or "an" by sound, with the spelling exceptions learners meet first."""
    w = word.lower()
    if w.startswith(_AN_EXCEPTIONS):
        return "an"
    if w.startswith(_A_EXCEPTIONS):
        return "a"
    return "an" if w[:1] in "aeiou" else "a"


def _ends_consonant_y(word: str) -> bool:
    return len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou"


_SIBILANTS = ("s", "sh", "ch", "x", "z")
_THIRD_PERSON_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is"}


def _s_form(word: str, irregular: dict[str, str], es_after: tuple[str, ...]) -> str:
    """The -s ending that a verb's third person and a noun's plural share: an irregular form first,
    then -es after the endings in `es_after`, -ies for a consonant + y, else -s."""
    if word in irregular:
        return irregular[word]
    if word.endswith(es_after):
        return word + "es"
    if _ends_consonant_y(word):
        return word[:-1] + "ies"
    return word + "s"


def third_person(lemma: str) -> str:
    return _s_form(lemma, _THIRD_PERSON_IRREGULAR, (*_SIBILANTS, "o"))  # verbs: goes, echoes


def past(lemma: str) -> str:
    if lemma in lx.IRREGULAR:
        return lx.IRREGULAR[lemma][0]
    if lemma.endswith("e"):
        return lemma + "d"
    if _ends_consonant_y(lemma):
        return lemma[:-1] + "ied"
    if lemma in lx.DOUBLE_FINAL:
        return lemma + lemma[-1] + "ed"
    return lemma + "ed"


def participle(lemma: str) -> str:
    return lx.IRREGULAR[lemma][1] if lemma in lx.IRREGULAR else past(lemma)


def gerund(lemma: str) -> str:
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye")) and lemma != "be":
        return lemma[:-1] + "ing"
    if lemma in lx.DOUBLE_FINAL:
        return lemma + lemma[-1] + "ing"
    return lemma + "ing"


def plural(noun: str) -> str:
    return _s_form(noun, lx.IRREGULAR_PLURALS, _SIBILANTS)  # nouns: photos, pianos


def comparative(adj: str) -> str:
    return _degree(adj, lx.COMPARATIVE_IRREGULAR, "more", "er")


def superlative(adj: str) -> str:
    return _degree(adj, lx.SUPERLATIVE_IRREGULAR, "most", "est")


def _degree(adj: str, irregular: dict[str, str], adverb: str, suffix: str) -> str:
    """An irregular form first; a long adjective takes `adverb` (more, most), a short one `suffix`."""
    if adj in irregular:
        return irregular[adj]
    if adj in lx.LONG_ADJECTIVES:
        return f"{adverb} {adj}"
    return _suffix(adj, suffix)


def _suffix(adj: str, suffix: str) -> str:
    if adj.endswith("e"):
        return adj + suffix[1:]
    if _ends_consonant_y(adj):
        return adj[:-1] + "i" + suffix
    if adj in ("big", "hot", "sad", "thin", "fat", "wet"):
        return adj + adj[-1] + suffix
    return adj + suffix


def verb_form(lemma: str, form: str) -> str:
    """Inflect a (possibly phrasal) verb; only the first word inflects ("get up" -> "got up")."""
    head, _, rest = lemma.partition(" ")
    inflect = {"base": lambda v: v, "s3": third_person, "past": past, "part": participle, "ing": gerund}[form]
    word = inflect(head)
    return f"{word} {rest}" if rest else word


def present_form(lemma: str, person: str) -> str:
    """Present simple form agreeing with the person ("be" included)."""
    if lemma == "be":
        return be_form("pres", person)
    return verb_form(lemma, "s3" if person == "3s" else "base")


def be_form(tense: str, person: str, neg: bool = False) -> str:
    if tense == "past":
        word = "was" if person in ("1s", "3s") else "were"
    else:
        word = {"1s": "am", "3s": "is"}.get(person, "are")
    if neg and word != "am":
        return word + "n't"
    return word
