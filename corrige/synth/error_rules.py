"""How each learner error is made from a clean sentence.

A rule looks for its context in the tagged tokens (using the flags templates set, see the
``focus*.py`` modules) and returns a ``Change``: replace clean tokens
``[start, end)`` by the words the learner writes. It returns None when the sentence has no
such context. Rules never guess from spelling, so the correction of an injected error is
always exactly the clean sentence.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from corrige.synth import lexicon as lx
from corrige.synth.grammar import PERSON_OF_PRONOUN, SUBJECT_FORM, Sentence, Tok
from corrige.synth.morphology import article_for, be_form, gerund, past, present_form, verb_form


@dataclass(frozen=True)
class Change:
    """Replace the clean tokens ``[start, end)`` with the learner's ``words``."""

    start: int
    end: int
    words: tuple[str, ...]


Rule = Callable[[Sentence, random.Random], Change | None]


def _pick(rng: random.Random, changes: list[Change]) -> Change | None:
    return rng.choice(changes) if changes else None


def _head(tok: Tok) -> str:
    return tok.f.get("lemma", tok.text).split()[0]


def _subject_end(toks: list[Tok], i: int) -> int:
    """Index after the run of subject tokens starting at ``i``."""
    j = i
    while j < len(toks) and toks[j].tag == "S":
        j += 1
    return j


def past_irregular(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, (lx.OVERREGULARISED[_head(t)],))
                       for i, t in enumerate(s.toks) if t.tag == "V" and t.f.get("form") ==
                       "past" and _head(t) in lx.OVERREGULARISED])


def third_person(s: Sentence, rng: random.Random) -> Change | None:
    swap = {"does": "do", "doesn't": "don't", "has": "have", "hasn't": "haven't"}
    out = []
    for i, t in enumerate(s.toks):
        if t.tag == "V" and t.f.get("form") == "s3" and _head(t) != "be":
            out.append(Change(i, i + 1, (_head(t),)))
        elif t.tag == "AUX" and t.text in swap:
            out.append(Change(i, i + 1, (swap[t.text],)))
    return _pick(rng, out)


def a_an(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, ("an" if t.text == "a" else "a",))
                       for i, t in enumerate(s.toks) if t.tag == "DET" and t.text in ("a", "an")])


def profession_article(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, ()) for i, t in enumerate(s.toks) if t.f.get("pa")])


def generic_the(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i, ("the",)) for i, t in enumerate(s.toks) if t.f.get("gen")])


def age_have(s: Sentence, rng: random.Random) -> Change | None:
    toks = s.toks
    for i, t in enumerate(toks[:-3]):
        if t.f.get("age") and toks[i + 2].text == "years" and toks[i + 3].text == "old":
            have = "had" if t.f.get("form") == "past" else present_form("have", t.f["person"])
            return Change(i, i + 4, (have, toks[i + 1].text, "years"))
    return None


def adjective_plural(s: Sentence, rng: random.Random) -> Change | None:
    toks = s.toks
    return _pick(rng, [Change(i, i + 1, (t.text + "s",)) for i, t in enumerate(toks[:-1])
                       if t.tag == "ADJ" and not t.f.get("cmp") and toks[i + 1].tag == "N"
                       and toks[i + 1].f.get("number") == "pl"])


# After these, "noun + adjective" can only be the learner's order. After "the", a possessive
# or a verb it could be a correct secondary predicate (I want my coffee hot, I drive it fast).
_NP_OPENERS = frozenset({"a", "an", "some", "many", "any", "of"})
_PREDICATE_LIKE = frozenset({"fast", "slow", "hot", "cold", "warm", "fresh", "clean", "new"})


def adjective_order(s: Sentence, rng: random.Random) -> Change | None:
    toks = s.toks
    out = []
    for i in range(1, len(toks) - 2):
        adj, noun, prev = toks[i], toks[i + 1], toks[i - 1]
        if adj.tag != "ADJ" or adj.f.get("cmp") or noun.tag != "N" or toks[i + 2].tag == "N":
            continue
        if adj.text in _PREDICATE_LIKE or not (prev.tag == "NUM" or prev.text in _NP_OPENERS):
            continue
        if prev.tag == "DET" and prev.text in ("a", "an"):
            out.append(Change(i - 1, i + 2, (article_for(noun.text), noun.text, adj.text)))
        else:
            out.append(Change(i, i + 2, (noun.text, adj.text)))
    return _pick(rng, out)


def missing_subject(s: Sentence, rng: random.Random) -> Change | None:
    toks = s.toks
    return _pick(rng, [Change(i, i + 1, ()) for i, t in enumerate(toks) if t.f.get("dummy") and (
        i == 0 or toks[i - 1].tag == "CONJ" and toks[i - 1].text != "that")])


def double_negation(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, tuple(t.f["npi"].split()))
                       for i, t in enumerate(s.toks) if t.f.get("npi")])


def comparative(s: Sentence, rng: random.Random) -> Change | None:
    for i, t in enumerate(s.toks):
        base = t.f.get("base", "")
        if t.f.get("cmp") and base in lx.SHORT_ADJECTIVES:
            word = "more" if t.f["cmp"] == "er" else "most"
            if base in lx.COMPARATIVE_IRREGULAR and rng.random() < 0.5:
                return Change(i, i + 1, (word, t.text))  # more better, most best
            return Change(i, i + 1, (word, base))
    return None


def preposition(s: Sentence, rng: random.Random) -> Change | None:
    toks = s.toks
    out = []
    for i, t in enumerate(toks):
        if "p" in t.f and t.f["p"]:
            out.append(Change(i, i + 1, tuple(t.f["p"].split())))
        elif "p" in t.f and i > 0:
            out.append(Change(i - 1, i + 1, (toks[i - 1].text,)))
        elif t.f.get("pi"):
            out.append(Change(i, i + 1, (t.f["pi"], t.text)))
    return _pick(rng, out)


def verb_pattern(s: Sentence, rng: random.Random) -> Change | None:
    toks = s.toks
    out = []
    for i, t in enumerate(toks):
        vp = t.f.get("vp")
        if vp == "agree":
            out.append(_agree(toks, i))
        elif vp == "" and 0 < i < len(toks) - 1:  # explain to me -> explain me
            out.append(Change(i - 1, i + 2, (toks[i - 1].text, toks[i + 1].text)))
        elif vp == "to":  # enjoy reading -> enjoy to read
            out.append(Change(i, i + 1, ("to", _head(t))))
        elif vp == "modal" and toks[i + 1].tag == "V":  # can swim -> can to swim
            out.append(Change(i, i + 2, (t.text, "to", toks[i + 1].text)))
        elif t.f.get("vl") and toks[i + 1].tag == "OP":  # told me -> said me
            out.append(Change(i, i + 2, (verb_form(t.f["vl"], t.f["form"]), toks[i + 1].text)))
        elif t.f.get("wo") and toks[i + 2].tag == "V":  # want me to go -> want that I go
            subject = SUBJECT_FORM.get(t.text, t.text)
            person = PERSON_OF_PRONOUN.get(subject, "3s")
            verb = _head(toks[i + 2])
            finite = past(verb) if t.f.get("main") == "past" else present_form(verb, person)
            out.append(Change(i, i + 3, ("that", subject, finite)))
    return _pick(rng, out)


def _agree(toks: list[Tok], i: int) -> Change:
    """I agree -> I am agree; I don't agree -> I am not agree; Do you agree -> Are you agree."""
    v = toks[i]
    person = v.f["person"]
    tense = "past" if v.f.get("tense") == "past" else "pres"
    if toks[i - 1].tag == "AUX" and toks[i - 1].f.get("lemma") == "do":
        neg = be_form(tense, person, neg=True)
        return Change(i - 1, i + 1, (*neg.split(), *(["not"] if neg == "am" else []), "agree"))
    op = next((k for k in range(i) if toks[k].f.get("op")), None)
    if op is not None:
        subject = tuple(t.text for t in toks[op + 1 : i])
        return Change(op, i + 1, (be_form(tense, person), *subject, "agree"))
    return Change(i, i + 1, (be_form(tense, person), "agree"))


def collocation(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, (verb_form(t.f["cl"], t.f["form"]),))
                       for i, t in enumerate(s.toks) if t.tag == "V" and t.f.get("cl")])


def uncountable(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, (lx.UNCOUNTABLE_PLURALS[t.text],))
                       for i, t in enumerate(s.toks)
                       if t.tag == "N" and t.text in lx.UNCOUNTABLE_PLURALS])


_SINGULAR = {"are": "is", "were": "was", "aren't": "isn't", "weren't": "wasn't"}


def there_is_plural(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, (_SINGULAR[t.text],)) for i, t in enumerate(s.toks)
                       if t.f.get("there") == "pl" and t.text in _SINGULAR])


def purpose_for(s: Sentence, rng: random.Random) -> Change | None:
    for i, t in enumerate(s.toks):
        if t.f.get("purpose"):
            verb = s.toks[i + 1].text
            words = ("for", "to", verb) if rng.random() < 0.6 else ("for", verb)
            return Change(i, i + 2, words)
    return None


def present_perfect(s: Sentence, rng: random.Random) -> Change | None:
    """I have lived here since 2015 -> I live here since 2015 (or I am living)."""
    toks = s.toks
    for i, t in enumerate(toks):
        if not t.f.get("perf"):
            continue
        person = t.f["person"]
        j = _subject_end(toks, i + 1) if t.f.get("op") else i + 1
        verb = _head(toks[j])
        if t.f.get("op"):
            subject = tuple(x.text for x in toks[i + 1 : j])
            if verb == "be":
                return Change(i, j + 1, (be_form("pres", person), *subject))
            do = "does" if person == "3s" else "do"
            return Change(i, j + 1, (do, *subject, verb))
        if t.text.endswith("n't"):
            if verb == "be":
                return Change(i, j + 1, tuple(be_form("pres", person, neg=True).split()))
            return Change(i, j + 1, ("doesn't" if person == "3s" else "don't", verb))
        if verb == "be":
            return Change(i, j + 1, (be_form("pres", person),))
        if verb in ("live", "work", "study", "teach", "play") and rng.random() < 0.3:
            return Change(i, j + 1, (be_form("pres", person), gerund(verb)))
        return Change(i, j + 1, (present_form(verb, person),))
    return None


def past_marker(s: Sentence, rng: random.Random) -> Change | None:
    """Yesterday I went -> Yesterday I go (present where a past time marker forces the past)."""
    out = []
    for i, t in enumerate(s.toks):
        if not t.f.get("pm") or "person" not in t.f:
            continue
        person = t.f["person"]
        if t.tag == "V" and _head(t) == "be" and t.text in ("was", "were", "wasn't", "weren't"):
            out.append(Change(i, i + 1, (be_form("pres", person, t.text.endswith("n't")),)))
        elif t.tag == "V" and t.f.get("form") == "past":
            word = present_form(_head(t), person)
            if word != t.text:
                out.append(Change(i, i + 1, (word,)))
        elif t.tag == "AUX" and t.text in ("did", "didn't"):
            word = "does" if person == "3s" else "do"
            out.append(Change(i, i + 1, (word + "n't" if t.text == "didn't" else word,)))
    return _pick(rng, out)


def _question_parts(toks: list[Tok]) -> tuple[int, int, int] | None:
    """(operator, end of subject, main verb) of a wh-question with an operator, else None."""
    for i, t in enumerate(toks[1:], 1):
        if t.f.get("op") and toks[i - 1].tag == "WH" and toks[i + 1].tag == "S":
            j = _subject_end(toks, i + 1)
            v = next((k for k in range(j, len(toks)) if toks[k].tag == "V"), -1)
            return i, j, v
    return None


def question_no_do(s: Sentence, rng: random.Random) -> Change | None:
    """Where do you live? -> Where you live?"""
    parts = _question_parts(s.toks)
    if not parts or s.toks[parts[0]].f.get("lemma") != "do" or parts[2] != parts[1]:
        return None
    op, j, v = parts
    toks = s.toks
    verb = _head(toks[v])
    person = toks[op].f["person"]
    finite = past(verb) if toks[op].text == "did" else present_form(verb, person)
    return Change(op, v + 1, (*(t.text for t in toks[op + 1 : j]), finite))


def question_order(s: Sentence, rng: random.Random) -> Change | None:
    """Where is she? -> Where she is?; Where does Ana work? -> Where works Ana?; and embedded
    questions in question order (Do you know where is the station?)."""
    toks = s.toks
    out = []
    parts = _question_parts(toks)
    if parts:
        op, j, v = parts
        subject = tuple(t.text for t in toks[op + 1 : j])
        lemma = toks[op].f.get("lemma")
        if lemma == "be" and toks[op].tag in ("V", "AUX"):
            out.append(Change(op, j, (*subject, toks[op].text)))
        elif (lemma == "do" and v == j and subject[0] not in PERSON_OF_PRONOUN
              and _head(toks[v]) != "do"):
            person = toks[op].f["person"]
            verb = _head(toks[v])
            finite = past(verb) if toks[op].text == "did" else present_form(verb, person)
            out.append(Change(op, v + 1, (finite, *subject)))
    emb = [i for i, t in enumerate(toks) if t.tag == "S" and t.f.get("emb")]
    if emb and toks[emb[-1] + 1].f.get("emb"):
        start, v = emb[0], emb[-1] + 1
        subject = tuple(toks[k].text for k in emb)
        if _head(toks[v]) == "be":
            out.append(Change(start, v + 1, (toks[v].text, *subject)))
        else:
            out.append(Change(start, v + 1, ("does", *subject, _head(toks[v]))))
    return _pick(rng, out)


def possessive_his_her(s: Sentence, rng: random.Random) -> Change | None:
    return _pick(rng, [Change(i, i + 1, ("his" if t.f["owned"] == "m" else "her",))
                       for i, t in enumerate(s.toks) if t.tag == "POSS" and t.f.get("owner")
                       and t.f.get("owned") in ("m", "f") and t.f["owner"] != t.f["owned"]])


def capitalisation(s: Sentence, rng: random.Random) -> Change | None:
    out = []
    for i, t in enumerate(s.toks[1:], 1):
        words = t.text.split()
        if any(w in lx.CAPITALISED for w in words):
            lowered = " ".join(w.lower() if w in lx.CAPITALISED else w for w in words)
            out.append(Change(i, i + 1, (lowered,)))
    return _pick(rng, out)


_PEOPLE = {"are": "is", "were": "was", "don't": "doesn't", "have": "has"}


def people_plural(s: Sentence, rng: random.Random) -> Change | None:
    for i, t in enumerate(s.toks):
        if t.f.get("ppl"):
            word = _PEOPLE.get(t.text) or verb_form(t.text, "s3")
            return Change(i, i + 1, (word,))
    return None


def adverb_position(s: Sentence, rng: random.Random) -> Change | None:
    """I always drink coffee -> I drink always coffee; I like tea very much -> I like very much
    tea."""
    toks = s.toks
    out = []
    for i, t in enumerate(toks[:-2]):
        if t.f.get("freq") and toks[i + 1].tag == "V" and toks[i + 2].tag != "PRT":
            out.append(Change(i, i + 2, (toks[i + 1].text, t.text)))
        if t.f.get("vmo"):
            k = next(k for k in range(i, len(toks)) if toks[k].f.get("vm"))
            if k - i <= 3:
                obj = tuple(x.text for x in toks[i:k])
                out.append(Change(i, k + 2, ("very", "much", *obj)))
    return _pick(rng, out)


RULES: dict[str, Rule] = {
    "past_irregular": past_irregular, "third_person": third_person, "a_an": a_an,
    "profession_article": profession_article, "generic_the": generic_the,
    "age_have": age_have, "adjective_plural": adjective_plural,
    "adjective_order": adjective_order, "missing_subject": missing_subject,
    "double_negation": double_negation, "comparative": comparative,
    "preposition": preposition, "verb_pattern": verb_pattern, "collocation": collocation,
    "uncountable": uncountable, "there_is_plural": there_is_plural,
    "purpose_for": purpose_for, "present_perfect": present_perfect,
    "past_marker": past_marker, "question_no_do": question_no_do,
    "question_order": question_order, "possessive_his_her": possessive_his_her,
    "capitalisation": capitalisation, "people_plural": people_plural,
    "adverb_position": adverb_position,
}
