"""Injection rules for errors of verbs: agreement, tense, form, patterns, purpose, age with
have and the dropped subject.

Each rule reads spaCy's tags and dependency parse and returns every ``Change`` it could make in
the sentence (see ``rules_words`` for the contract). Where two categories could name the same
mistake, the narrower one of the template grammar keeps it (people is → ``people_plural``, there
is two → ``there_is_plural``, he go → ``third_person``), so a mistake has one name in all data.
"""

from __future__ import annotations

import random

from spacy.tokens import Doc, Token

from corrige.corpus.lexicon import (
    BE_PRESENT,
    HAVE_OF_BE,
    Change,
    finite_of,
    has_past_marker,
    inflect,
    is_nonword,
    is_question,
    is_regular_past,
    match_case,
    past_forms,
    person,
    present,
    regular_past,
    subject_of,
    words,
)

# --- agreement ----------------------------------------------------------------------------------

_SINGULAR = {"are": "is", "were": "was", "have": "has", "do": "does", "'re": "is"}


def _singular_verb(fin: Token) -> str | None:
    low = fin.lower_
    if low in _SINGULAR:
        return _SINGULAR[low]
    if fin.tag_ == "VBP" and fin.pos_ == "VERB":
        return inflect(fin.lemma_, "VBZ")
    return None


def _agreement_changes(doc: Doc) -> list[Change]:
    out = []
    for verb in doc:
        subject = subject_of(verb)
        if subject is None or verb.pos_ not in ("VERB", "AUX") or subject.i > verb.i:
            continue
        fin = finite_of(verb)
        if fin.i < subject.i or fin.tag_ not in ("VBP", "VBD"):
            continue
        if subject.lower_ == "there" or subject.dep_ == "expl":
            continue
        if subject.lower_ == "people":
            category = "people_plural"
        elif subject.lower_ in ("who", "that") and verb.dep_ == "relcl":
            category = "agreement" if person(verb.head) == "pl" else ""
        else:
            category = "agreement" if person(subject) in ("pl", "2") else ""
        wrong = _singular_verb(fin) if category else None
        if wrong and not (fin.lower_ == "'re"):
            out.append(Change(fin.i, fin.i + 1, (match_case(wrong, fin.text),), category))
        elif (
            fin.lower_ == "was"
            and person(subject) == "3s"
            and not any(c.dep_ == "mark" and c.lower_ == "if" for c in verb.children)
        ):
            out.append(Change(fin.i, fin.i + 1, (match_case("were", fin.text),), "agreement"))
    return out


def agreement(doc: Doc, rng: random.Random) -> list[Change]:
    return [c for c in _agreement_changes(doc) if c.category == "agreement"]


def people_plural(doc: Doc, rng: random.Random) -> list[Change]:
    return [c for c in _agreement_changes(doc) if c.category == "people_plural"]


def third_person(doc: Doc, rng: random.Random) -> list[Change]:
    """he goes -> he go, she doesn't -> she don't, it has -> it have."""
    out = []
    for tok in doc:
        # put, cut, hit: the bare form is also the past, so "he put" would be correct English
        past_like = tok.lemma_ in past_forms(tok.lemma_)
        if tok.tag_ == "VBZ" and tok.lemma_ != "be" and tok.text[0] != "'" and tok.is_alpha and not past_like:
            verb = tok.head if tok.dep_ == "aux" else tok
            subject = subject_of(verb)
            if subject is not None and person(subject) == "3s" and subject.lower_ not in ("who", "that", "which"):
                out.append(Change(tok.i, tok.i + 1, (match_case(tok.lemma_, tok.text),), "third_person"))
    return out


def there_is_plural(doc: Doc, rng: random.Random) -> list[Change]:
    return [
        Change(
            t.head.i,
            t.head.i + 1,
            (match_case({"are": "is", "were": "was"}[t.head.lower_], t.head.text),),
            "there_is_plural",
        )
        for t in doc
        if t.dep_ == "expl" and t.lower_ == "there" and t.head.lower_ in ("are", "were") and t.head.i == t.i + 1
    ]


# --- verb tense ---------------------------------------------------------------------------------


def _present_for(verb: Token, subject: Token) -> str | None:
    who = person(subject)
    return present(verb.lemma_, who) if who else None


def past_marker(doc: Doc, rng: random.Random) -> list[Change]:
    """Yesterday I went -> Yesterday I go."""
    out = []
    for verb in doc:
        subject = subject_of(verb)
        if subject is None or subject.i > verb.i or not has_past_marker(verb):
            continue
        fin = finite_of(verb)
        who = person(subject)
        if who is None:
            continue
        if fin.lower_ == "did":
            out.append(
                Change(fin.i, fin.i + 1, (match_case("does" if who == "3s" else "do", fin.text),), "past_marker")
            )
        elif fin.tag_ == "VBD" and (fin.lemma_ != "be" or fin.lower_ in ("was", "were")):
            out.append(Change(fin.i, fin.i + 1, (match_case(present(fin.lemma_, who), fin.text),), "past_marker"))
    return out


def _subject_first(verb: Token, subject: Token | None) -> bool:
    return subject is not None and subject.i < verb.i


def verb_tense(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for verb in doc:
        subject = subject_of(verb)
        kids = list(verb.children)
        marks = [c.lower_ for c in kids if c.dep_ == "mark"]
        auxes = [c for c in kids if c.dep_ in ("aux", "auxpass", "neg")]
        simple_past = verb.tag_ == "VBD" and not auxes and verb.lemma_ != "be"
        if simple_past and _subject_first(verb, subject) and has_past_marker(verb) and person(subject):
            have = "has" if person(subject) == "3s" else "have"  # I saw him yesterday -> I have seen him
            out.append(Change(verb.i, verb.i + 1, (have, inflect(verb.lemma_, "VBN")), "verb_tense"))
        if (
            verb.dep_ == "advcl"
            and ("if" in marks or "when" in marks)
            and verb.tag_ in ("VBZ", "VBP")
            and not auxes
            and any(c.lower_ == "will" for c in verb.head.children)
        ):
            out.append(Change(verb.i, verb.i + 1, ("will", verb.lemma_), "verb_tense"))  # if it will rain
        if (
            verb.lower_ == "would"
            and verb.dep_ == "aux"
            and any(
                c.dep_ == "advcl" and c.tag_ == "VBD" and any(m.lower_ == "if" for m in c.children)
                for c in verb.head.children
            )
        ):
            out.append(Change(verb.i, verb.i + 1, (match_case("will", verb.text),), "verb_tense"))
        if (
            simple_past
            and _subject_first(verb, subject)
            and any(c.dep_ == "advcl" and c.tag_ == "VBD" and any(m.lower_ == "when" for m in c.children) for c in kids)
            and (wrong := _present_for(verb, subject))
        ):
            out.append(Change(verb.i, verb.i + 1, (wrong,), "verb_tense"))  # When I was a child I play
        head_subject = subject_of(verb.head) if verb.dep_ == "conj" else None
        if (
            simple_past
            and verb.head.tag_ == "VBD"
            and subject is None
            and _subject_first(verb.head, head_subject)
            and (wrong := _present_for(verb, head_subject))
            and wrong != verb.lower_
        ):
            out.append(Change(verb.i, verb.i + 1, (wrong,), "verb_tense"))  # He opened the door and walks in
    return out


_LASTING = words("year month week day hour minute age while time long")


def _since_or_for(verb: Token) -> bool:
    """since 2015, since I was a child, for three years, for a long time, for years."""
    for c in verb.children:
        if c.dep_ == "prep" and c.lower_ == "since":
            return True
        if c.dep_ == "advcl" and any(m.dep_ == "mark" and m.lower_ == "since" for m in c.children):
            return True
        if c.dep_ == "prep" and c.lower_ == "for":
            objs = [x for x in c.children if x.dep_ == "pobj"]
            if objs and (objs[0].lemma_.lower() in _LASTING or any(x.like_num for x in objs[0].subtree)):
                return not any(x.dep_ in ("poss", "relcl", "acl") for x in objs[0].children)
    return False


def present_perfect(doc: Doc, rng: random.Random) -> list[Change]:
    """I have lived here since 2015 -> I live here since 2015 (or I am living); I have been waiting
    for an hour -> I am waiting for an hour."""
    out = []
    for verb in doc:
        aux = next((c for c in verb.children if c.dep_ == "aux" and c.lemma_ == "have" and c.i < verb.i), None)
        subject = subject_of(verb)
        if aux is None or aux.tag_ not in ("VBP", "VBZ") or subject is None or subject.i > aux.i or is_question(doc):
            continue
        if verb.tag_ not in ("VBN", "VBG") or not _since_or_for(verb):
            continue
        between = [t.lower_ for t in doc[aux.i + 1 : verb.i]]
        who = person(subject)
        if who is None:
            continue
        if verb.tag_ == "VBG":  # have been waiting -> am waiting
            if between == ["been"]:
                out.append(Change(aux.i, verb.i + 1, (BE_PRESENT[who], verb.text), "present_perfect"))
            continue
        if any(t not in ("n't", "not") for t in between):
            continue
        if between:  # haven't lived -> don't live, hasn't been -> isn't
            neg = (BE_PRESENT[who] if verb.lemma_ == "be" else "does" if who == "3s" else "do") + "n't"
            words_ = (neg,) if verb.lemma_ == "be" else (neg, verb.lemma_)
        elif verb.lemma_ == "be":
            words_ = (BE_PRESENT[who],)
        elif verb.lemma_ in ("live", "work", "study", "teach", "wait", "stay") and rng.random() < 0.3:
            words_ = (BE_PRESENT[who], inflect(verb.lemma_, "VBG"))
        else:
            words_ = (present(verb.lemma_, who),)
        out.append(Change(aux.i, verb.i + 1, words_, "present_perfect"))
    return out


def past_irregular(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        if (
            tok.tag_ in ("VBD", "VBN")
            and tok.is_alpha
            and tok.lemma_.isalpha()
            and tok.lemma_ not in ("be", "have", "do")
        ):
            wrong = regular_past(tok.lemma_)
            if not is_regular_past(tok.lower_, tok.lemma_) and is_nonword(wrong):
                out.append(Change(tok.i, tok.i + 1, (match_case(wrong, tok.text),), "past_irregular"))
    return out


# --- verb form and pattern ----------------------------------------------------------------------

_GERUND_VERBS = words("enjoy finish avoid mind keep consider suggest practise practice miss imagine deny risk")


def verb_form(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
        if tok.tag_ == "MD" and tok.is_alpha and nxt is not None and nxt.tag_ == "VB" and tok.head == nxt:
            out.append(Change(tok.i, nxt.i + 1, (tok.text, "to", nxt.text), "verb_form"))  # can to go
        elif tok.lemma_ in ("let", "make") and tok.pos_ == "VERB":
            for c in tok.children:  # let me go -> let me to go
                if c.tag_ == "VB" and c.dep_ == "ccomp" and c.i >= 2 and doc[c.i - 1].dep_ in ("nsubj", "dobj"):
                    out.append(Change(c.i, c.i + 1, ("to", c.text), "verb_form"))
        elif tok.tag_ == "VBN" and any(c.dep_ == "aux" and c.lemma_ == "have" for c in tok.children):
            past = inflect(tok.lemma_, "VBD")  # I have gone -> I have went
            if past != tok.lower_ and tok.lemma_ not in ("be", "have"):
                out.append(Change(tok.i, tok.i + 1, (past,), "verb_form"))
        elif tok.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_ == "be" for c in tok.children):
            out.append(Change(tok.i, tok.i + 1, (tok.lemma_,), "verb_form"))  # she is studying -> is study
        elif (
            tok.tag_ == "VBG"
            and tok.dep_ == "pcomp"
            and tok.head.lower_ in ("to", "in", "of", "about", "before", "after", "without", "for")
        ):
            out.append(Change(tok.i, tok.i + 1, (tok.lemma_,), "verb_form"))  # forward to seeing -> to see
    return out


def verb_pattern(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        if tok.pos_ != "VERB":
            continue
        kids = list(tok.children)
        gerund = next((c for c in kids if c.dep_ == "xcomp" and c.tag_ == "VBG" and c.i == tok.i + 1), None)
        subject = subject_of(tok)
        if tok.lemma_ in _GERUND_VERBS and gerund is not None:  # enjoy reading -> enjoy to read
            out.append(Change(gerund.i, gerund.i + 1, ("to", gerund.lemma_), "verb_pattern"))
        elif (
            tok.lemma_ == "agree"
            and tok.tag_ in ("VBP", "VBD", "VBZ")
            and subject is not None
            and not any(c.dep_ in ("aux", "neg") for c in kids)
            and person(subject)
        ):
            be = (
                BE_PRESENT[person(subject)]
                if tok.tag_ != "VBD"
                else ("was" if person(subject) in ("1s", "3s") else "were")
            )
            out.append(Change(tok.i, tok.i + 1, (be, "agree"), "verb_pattern"))  # I agree -> I am agree
        elif (
            tok.lemma_ in ("explain", "describe", "say")
            and tok.i + 2 < len(doc)
            and doc[tok.i + 1].lower_ == "to"
            and doc[tok.i + 2].tag_ == "PRP"
        ):
            out.append(Change(tok.i, tok.i + 3, (tok.text, doc[tok.i + 2].text), "verb_pattern"))  # explain me
        elif (
            tok.lemma_ == "tell"
            and tok.i + 1 < len(doc)
            and doc[tok.i + 1].tag_ == "PRP"
            and doc[tok.i + 1].dep_ in ("dative", "dobj")
        ):
            out.append(Change(tok.i, tok.i + 1, (match_case(inflect("say", tok.tag_), tok.text),), "verb_pattern"))
    return out


def purpose_for(doc: Doc, rng: random.Random) -> list[Change]:
    """I went out to buy bread -> I went out for to buy / for buy bread."""
    out = []
    for verb in doc:
        to = doc[verb.i - 1] if verb.i > 0 else None
        if (
            verb.tag_ == "VB"
            and verb.dep_ == "advcl"
            and to is not None
            and to.tag_ == "TO"
            and to.head == verb
            and verb.head.pos_ == "VERB"
            and to.i > 0
            and doc[to.i - 1].lower_ not in ("order", "as")
        ):
            words_ = ("for", "to", verb.text) if rng.random() < 0.6 else ("for", verb.text)
            out.append(Change(to.i, verb.i + 1, words_, "purpose_for"))
    return out


def age_have(doc: Doc, rng: random.Random) -> list[Change]:
    """I am 20 years old -> I have 20 years."""
    out = []
    for tok in doc[:-3]:
        num, years, old = doc[tok.i + 1], doc[tok.i + 2], doc[tok.i + 3]
        if (
            tok.lemma_ == "be"
            and tok.lower_ in HAVE_OF_BE
            and num.like_num
            and years.lower_ == "years"
            and old.lower_ == "old"
        ):
            out.append(Change(tok.i, old.i + 1, (HAVE_OF_BE[tok.lower_], num.text, "years"), "age_have"))
    return out


def missing_subject(doc: Doc, rng: random.Random) -> list[Change]:
    """It is raining -> Is raining; because it is late -> because is late."""
    if is_question(doc):
        return []
    return [
        Change(t.i, t.i + 1, (), "missing_subject")
        for t in doc[:-1]
        if t.lower_ == "it"
        and t.dep_ in ("nsubj", "expl")
        and t.whitespace_
        and doc[t.i + 1].tag_ in ("VBZ", "VBD")
        and (doc[t.i + 1] == t.head or doc[t.i + 1].head == t.head)
        and (t.i == 0 or doc[t.i - 1].lower_ in ("because", "if", "when", "although", "though", "unless"))
    ]


RULES = {
    "agreement": agreement,
    "people_plural": people_plural,
    "third_person": third_person,
    "there_is_plural": there_is_plural,
    "past_marker": past_marker,
    "verb_tense": verb_tense,
    "present_perfect": present_perfect,
    "past_irregular": past_irregular,
    "verb_form": verb_form,
    "verb_pattern": verb_pattern,
    "purpose_for": purpose_for,
    "age_have": age_have,
    "missing_subject": missing_subject,
}
