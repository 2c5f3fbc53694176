"""Injection rules for errors of phrases and order: determiners, noun number, questions, word
order, adverb and adjective position, pronouns and his/her.

Each rule reads spaCy's tags and dependency parse and returns every ``Change`` it could make in
the sentence (see ``rules_words`` for the contract).
"""

from __future__ import annotations

import random

from spacy.tokens import Doc

from corrige.corpus.lexicon import (
    FEMALE_KIN,
    FREQUENCY,
    GENERIC_NOUNS,
    INVERTING,
    LANGUAGES,
    MALE_KIN,
    MASS_TOO,
    PERSON_NOUNS,
    PLACES,
    PROFESSIONS,
    REFLEXIVE,
    SPORTS,
    UNCOUNTABLE,
    WH,
    Change,
    article_for,
    inflect,
    is_question,
    lower_first,
    match_case,
    span_text,
    subject_of,
)

# --- determiners --------------------------------------------------------------------------------


def determiner(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        noun = tok.head
        if (
            tok.lower_ in ("a", "an")
            and tok.dep_ == "det"
            and noun.tag_ == "NN"
            and noun.lower_ not in MASS_TOO
            and noun.i > tok.i
            and doc[tok.i + 1].lower_ not in ("few", "little")
            and (tok.i == 0 or doc[tok.i - 1].lower_ not in ("what", "such", "half", "quite", "rather", "many"))
            and not (noun.lower_ in PROFESSIONS and noun.dep_ == "attr")
        ):
            out.append(Change(tok.i, tok.i + 1, (), "determiner"))  # I have a car -> I have car
        elif (
            tok.text in PLACES
            and tok.tag_ == "NNP"
            and tok.dep_ in ("pobj", "dobj", "nsubj")
            and not any(c.dep_ in ("det", "poss", "compound", "amod") for c in tok.children)
            and (tok.i == 0 or doc[tok.i - 1].tag_ not in ("NNP", "DT", "POS"))
        ):
            out.append(_insert(doc, tok.i, ("the",), "determiner"))  # in Spain -> in the Spain
        elif (
            tok.tag_ == "NNS"
            and tok.pos_ == "NOUN"
            and tok.lower_ not in ("hers", "yours", "ours", "theirs")
            and tok.dep_ in ("dobj", "pobj")
            and not any(c.dep_ in ("det", "poss", "nummod", "quantmod", "predet") for c in tok.children)
        ):
            left = tok.left_edge.i
            if all(t.dep_ in ("amod", "compound") and t.is_alpha for t in doc[left : tok.i]) and (
                left == 0 or doc[left - 1].tag_ not in ("DT", "PRP$", "CD", "POS")
            ):
                out.append(_insert(doc, left, (article_for(doc[left].text),), "determiner"))  # a friends
    return out


def _insert(doc: Doc, i: int, new: tuple[str, ...], category: str) -> Change:
    """Insert ``new`` before token ``i``; at the start the first word moves inside the sentence."""
    if i == 0:
        return Change(0, 1, (*new, lower_first(doc[0])), category)
    return Change(i, i, new, category)


def generic_the(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        bare = not any(
            c.dep_ in ("det", "poss", "amod", "compound", "prep", "relcl", "acl", "nummod") for c in tok.children
        )
        if not bare or tok.dep_ not in ("nsubj", "dobj", "pobj"):
            continue
        if (tok.tag_ == "NN" and tok.lower_ in GENERIC_NOUNS) or (
            tok.dep_ == "dobj"
            and (
                (tok.head.lemma_ == "play" and tok.lower_ in SPORTS)
                or (tok.head.lemma_ in ("speak", "learn", "study") and tok.text in LANGUAGES)
            )
        ):
            out.append(_insert(doc, tok.i, ("the",), "generic_the"))
    return out


def profession_article(doc: Doc, rng: random.Random) -> list[Change]:
    return [
        Change(t.i, t.i + 1, (), "profession_article")
        for t in doc
        if t.lower_ in ("a", "an")
        and t.dep_ == "det"
        and t.head.lower_ in PROFESSIONS
        and t.head.dep_ == "attr"
        and t.head.head.lemma_ in ("be", "become")
    ]


def noun_number(doc: Doc, rng: random.Random) -> list[Change]:
    """two children -> two child, one of my friends -> one of my friend, many things -> many thing."""
    out = []
    for tok in doc:
        if tok.tag_ != "NNS" or not tok.is_alpha or tok.lemma_ == tok.lower_ or tok.lemma_ in UNCOUNTABLE:
            continue
        kids = list(tok.children)
        counted = any(c.dep_ == "nummod" and c.lower_ not in ("one", "1") for c in kids) or any(
            c.lower_ in ("many", "several", "few", "both", "these", "those") for c in kids
        )
        of_head = tok.head if tok.dep_ == "pobj" and tok.head.lower_ == "of" else None
        if of_head is not None and of_head.head.lower_ in ("one", "lot", "lots", "each", "some"):
            counted = True
        if counted:
            singular = "person" if tok.lower_ == "people" else tok.lemma_
            out.append(Change(tok.i, tok.i + 1, (singular,), "noun_number"))
    return out


# --- questions and word order -------------------------------------------------------------------


def question_no_do(doc: Doc, rng: random.Random) -> list[Change]:
    """Where do you live? -> Where you live?"""
    if not is_question(doc) or doc[0].lower_ not in WH:
        return []
    for do in doc[1:3]:
        verb = do.head
        subject = subject_of(verb)
        if (
            do.lemma_ == "do"
            and do.dep_ == "aux"
            and subject is not None
            and do.i < subject.i < verb.i
            and not any(c.dep_ == "neg" for c in verb.children)
            and verb.tag_ == "VB"
        ):
            finite = {"does": "VBZ", "did": "VBD"}.get(do.lower_)
            verb_word = inflect(verb.lemma_, finite) if finite else verb.text
            return [Change(do.i, verb.i + 1, (*span_text(doc, do.i + 1, verb.i), verb_word), "question_no_do")]
    return []


def _embedded(doc: Doc, category: str) -> list[Change]:
    """I don't know what it is -> what is it; where he lives -> where does he live."""
    out = []
    for verb in doc:
        subject = subject_of(verb)
        if (
            verb.dep_ != "ccomp"
            or subject is None
            or subject.i > verb.i
            or any(c.dep_ in ("aux", "neg", "auxpass") for c in verb.children)
        ):
            continue
        start = subject.left_edge.i
        if start == 0 or doc[start - 1].lower_ not in WH or verb.i != subject.i + 1:
            continue
        subj = span_text(doc, start, verb.i)
        if verb.lemma_ == "be" and verb.is_alpha:
            out.append(Change(start, verb.i + 1, (verb.text, *subj), category))
        elif verb.tag_ in ("VBZ", "VBD") and verb.pos_ == "VERB":
            do = "does" if verb.tag_ == "VBZ" else "did"
            out.append(Change(start, verb.i + 1, (do, *subj, verb.lemma_), category))
    return out


def question_order(doc: Doc, rng: random.Random) -> list[Change]:
    """Where is she? -> Where she is?; What does this word mean? -> What means this word?"""
    if not is_question(doc):
        return []
    out = _embedded(doc, "question_order")
    if doc[0].lower_ in WH and len(doc) > 3:
        op = doc[1]
        subject = subject_of(op) if op.lemma_ == "be" else subject_of(op.head)
        if (
            op.lemma_ == "be"
            and op.dep_ == "ROOT"
            and subject is not None
            and subject.left_edge.i == 2
            and subject.right_edge.i == len(doc) - 2
        ):
            out.append(Change(1, len(doc) - 1, (*span_text(doc, 2, len(doc) - 1), op.text), "question_order"))
        elif (
            op.lemma_ == "do"
            and op.dep_ == "aux"
            and subject is not None
            and subject.tag_ not in ("PRP",)
            and op.head.i == len(doc) - 2
            and subject.i > op.i
            and op.lower_ in ("does", "did")
        ):
            finite = inflect(op.head.lemma_, "VBZ" if op.lower_ == "does" else "VBD")
            out.append(Change(1, len(doc) - 1, (finite, *span_text(doc, 2, len(doc) - 2)), "question_order"))
    return out


def word_order(doc: Doc, rng: random.Random) -> list[Change]:
    out = [] if is_question(doc) else _embedded(doc, "word_order")
    if (
        len(doc) > 2
        and doc[0].tag_ == "PRP"
        and doc[0].dep_ == "nsubj"
        and doc[1].lower_ in INVERTING
        and doc[1].head == doc[2]
        and doc[2].pos_ == "VERB"
    ):
        out.append(Change(0, 2, (doc[1].text.capitalize(), lower_first(doc[0])), "word_order"))  # Always I go
    for tok in doc[1:]:
        adj = doc[tok.i - 1]
        if tok.lower_ == "enough" and tok.head == adj and adj.pos_ in ("ADJ", "ADV"):
            out.append(Change(adj.i, tok.i + 1, ("enough", lower_first(adj)), "word_order"))  # enough big
    return out


def adverb_position(doc: Doc, rng: random.Random) -> list[Change]:
    """I always drink coffee -> I drink always coffee; I like it very much -> I like very much it."""
    out = []
    for tok in doc[:-1]:
        verb = doc[tok.i + 1]
        if (
            tok.lower_ in FREQUENCY
            and tok.dep_ == "advmod"
            and tok.head == verb
            and verb.pos_ == "VERB"
            and tok.i > 0
            and any(c.dep_ == "dobj" for c in verb.children)
            and not any(c.dep_ == "prt" for c in verb.children)
        ):
            out.append(Change(tok.i, verb.i + 1, (verb.text, tok.lower_), "adverb_position"))
        if tok.lower_ == "very" and verb.lower_ == "much" and verb.head.pos_ == "VERB":
            obj = next((c for c in verb.head.children if c.dep_ == "dobj" and c.right_edge.i == tok.i - 1), None)
            if obj is not None and tok.i - obj.left_edge.i <= 3:
                left = obj.left_edge.i
                out.append(Change(left, verb.i + 1, ("very", "much", *span_text(doc, left, tok.i)), "adverb_position"))
    return out


def adjective_order(doc: Doc, rng: random.Random) -> list[Change]:
    """an old car -> a car old."""
    out = []
    for adj in doc[1:-2]:
        noun, prev = doc[adj.i + 1], doc[adj.i - 1]
        if adj.tag_ != "JJ" or adj.dep_ != "amod" or adj.head != noun or noun.tag_ not in ("NN", "NNS"):
            continue
        if doc[noun.i + 1].pos_ in ("NOUN", "PROPN", "ADJ") or adj.lower_ in ("fast", "slow", "hot", "cold", "new"):
            continue
        if [c.i for c in noun.children if c.dep_ in ("amod", "compound")] != [adj.i]:
            continue
        if prev.lower_ in ("a", "an") and prev.head == noun:
            out.append(Change(prev.i, noun.i + 1, (article_for(noun.text), noun.text, adj.text), "adjective_order"))
        elif prev.like_num or prev.lower_ in ("some", "many", "several", "two", "three"):
            out.append(Change(adj.i, noun.i + 1, (noun.text, adj.text), "adjective_order"))
    return out


# --- pronouns -----------------------------------------------------------------------------------


def pronoun(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        relcl = tok.head if tok.head.dep_ == "relcl" and tok.dep_ in ("nsubj", "dobj", "nsubjpass") else None
        if relcl is not None and tok.i == relcl.left_edge.i:
            person_ = relcl.head.lower_ in PERSON_NOUNS
            if tok.lower_ == "who" and person_:
                out.append(Change(tok.i, tok.i + 1, ("which",), "pronoun"))  # the man which
            elif tok.lower_ == "which" and not person_ and relcl.head.pos_ == "NOUN":
                out.append(Change(tok.i, tok.i + 1, ("who",), "pronoun"))  # the book who
            elif tok.lower_ == "that" and relcl.head.pos_ == "NOUN":
                out.append(Change(tok.i, tok.i + 1, ("what",), "pronoun"))  # the book what I read
        subject = subject_of(tok) if tok.pos_ == "VERB" else None
        reflexive = REFLEXIVE.get(subject.lower_) if subject is not None else None
        if reflexive and (
            (tok.lemma_ == "feel" and tok.i + 1 < len(doc) and doc[tok.i + 1].dep_ == "acomp")
            or (tok.lemma_ in ("concentrate", "complain") and not any(c.dep_ == "dobj" for c in tok.children))
        ):
            out.append(Change(tok.i, tok.i + 1, (tok.text, reflexive), "pronoun"))  # I feel myself tired
    return out


def possessive_his_her(doc: Doc, rng: random.Random) -> list[Change]:
    """He loves his mother -> He loves her mother (the possessive agrees with the thing owned)."""
    out = []
    for tok in doc:
        if tok.lower_ not in ("his", "her") or tok.tag_ != "PRP$":
            continue
        noun, verb = tok.head, tok.head.head
        subject = subject_of(verb) if verb.pos_ in ("VERB", "AUX") else None
        owner = {"he": "his", "she": "her"}.get(subject.lower_ if subject is not None else "")
        if owner != tok.lower_:
            continue
        if tok.lower_ == "his" and noun.lower_ in FEMALE_KIN:
            out.append(Change(tok.i, tok.i + 1, (match_case("her", tok.text),), "possessive_his_her"))
        elif tok.lower_ == "her" and noun.lower_ in MALE_KIN:
            out.append(Change(tok.i, tok.i + 1, (match_case("his", tok.text),), "possessive_his_her"))
    return out


RULES = {
    "determiner": determiner,
    "generic_the": generic_the,
    "profession_article": profession_article,
    "noun_number": noun_number,
    "question_no_do": question_no_do,
    "question_order": question_order,
    "word_order": word_order,
    "adverb_position": adverb_position,
    "adjective_order": adjective_order,
    "pronoun": pronoun,
    "possessive_his_her": possessive_his_her,
}
