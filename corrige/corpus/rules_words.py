"""Injection rules for errors of single words: spelling, confused words, calques, collocations,
capitals, uncountable nouns, a/an, comparatives, adjective plurals, double negation.

Each rule takes a parsed sentence (spaCy ``Doc``) and returns every ``Change`` it could make
there; the injector picks among them. A rule only fires where the learner's version is surely
wrong, never where it would be another correct sentence.
"""

from __future__ import annotations

import random

from spacy.tokens import Doc, Token

from corrige.corpus.lexicon import (
    CAPITALISED,
    HAVE_OF_BE,
    NPI,
    SHORT_ADJECTIVES,
    UNCOUNTABLE,
    Change,
    first_word,
    inflect,
    is_nonword,
    keyed,
    lower_first,
    match_case,
    pairs,
    person,
    present,
    words,
)

# --- spelling ---------------------------------------------------------------------------------

# Misspellings Spanish speakers make, from the learner-English literature's usual suspects.
MISSPELLINGS = pairs(
    "because>beacuse because>becouse really>realy different>diferent which>wich "
    "environment>enviroment beginning>begining technology>tecnology comfortable>confortable "
    "necessary>necesary receive>recieve whether>wheather until>untill tomorrow>tomorow "
    "government>goverment believe>beleive friend>freind address>adress beautiful>beautifull "
    "especially>expecially interesting>intresting family>familly business>bussiness "
    "probably>probaly develop>develope exercise>excercise definitely>definately knowledge>knowlege "
    "opportunity>oportunity successful>succesful recommend>recomend possible>posible "
    "difficult>dificult language>lenguage example>exemple people>peaple restaurant>restaurante "
    "important>inportant information>informacion usually>usualy finally>finaly would>whould "
    "could>coud thought>tought through>trough everything>everithing something>somthing "
    "different>diferente beautiful>beatiful"
)
# A second misspelling of the same word wins half the time (the table keeps the first).
_MISSPELLINGS_2 = {"because": "becouse", "different": "diferente", "beautiful": "beatiful"}

# (pattern, learner's version, weight): dropped double letters, ie/ei, silent letters, Spanish
# sounds (b/v, f for ph, -cion, n before f and p, e before s + consonant).
_SPELLING_RULES = (
    ("ll", "l", 1),
    ("ss", "s", 1),
    ("rr", "r", 1),
    ("tt", "t", 1),
    ("pp", "p", 1),
    ("mm", "m", 1),
    ("nn", "n", 1),
    ("cc", "c", 1),
    ("ff", "f", 1),
    ("ie", "ei", 1),
    ("ei", "ie", 1),
    ("wh", "w", 1),
    ("ph", "f", 1),
    ("mf", "nf", 1),
    ("mp", "np", 0.5),
    ("tion", "cion", 1),
    ("ght", "t", 0.5),
    ("ful", "full", 1),
    ("ible", "able", 1),
    ("v", "b", 0.15),
)


def _misspell(word: str, rng: random.Random) -> str | None:
    low = word.lower()
    if low in MISSPELLINGS:
        wrong = _MISSPELLINGS_2[low] if low in _MISSPELLINGS_2 and rng.random() < 0.5 else MISSPELLINGS[low]
        return match_case(wrong, word)
    options = [(low[0] + low[1:].replace(a, b, 1), w) for a, b, w in _SPELLING_RULES if a in low[1:]]
    for k in range(1, len(low) - 1):
        if low[k] == "y" and low[k - 1] not in "aeiou" and low[k + 1] not in "aeiou":
            options.append((low[:k] + "i" + low[k + 1 :], 0.5))  # system -> sistem, type -> tipe
            break
    if low[0] == "s" and low[1] not in "aeiouy":
        options.append(("e" + low, 0.5))  # estudent, eschool
    options = [(o, w) for o, w in options if o != low and len(o) >= 4 and is_nonword(o)]
    if not options:
        return None
    x = rng.random() * sum(w for _, w in options)
    for o, w in options:
        x -= w
        if x < 0:
            return match_case(o, word)
    return match_case(options[-1][0], word)


def _spellable(tok: Token) -> bool:
    """A word a learner could misspell: 4+ letters, not a name, not a mid-sentence capital."""
    return (
        tok.is_alpha
        and len(tok.text) >= 4
        and tok.pos_ != "PROPN"
        and tok.tag_ not in ("NNP", "NNPS")
        and (tok.i == 0 or tok.text.islower())
        and (tok.whitespace_ or tok.i + 1 == len(tok.doc) or tok.doc[tok.i + 1].text[:1] not in "'’")
    )


def spelling(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        if tok.lower_ == "lot" and tok.i > 0 and doc[tok.i - 1].lower_ == "a" and doc[tok.i - 1].whitespace_:
            out.append(Change(tok.i - 1, tok.i + 1, (match_case("alot", doc[tok.i - 1].text),), "spelling"))
        elif _spellable(tok) and (wrong := _misspell(tok.text, rng)):
            out.append(Change(tok.i, tok.i + 1, (wrong,), "spelling"))
    return out


# --- confused words ---------------------------------------------------------------------------

# word -> (Penn tags it must have, what the learner writes)
_CONFUSED: dict[str, tuple[frozenset[str], str]] = {
    "their": (words("PRP$"), "there"),
    "there": (words("EX RB"), "their"),
    "your": (words("PRP$"), "you're"),
    "its": (words("PRP$"), "it's"),
    "to": (words("TO IN"), "too"),
    "too": (words("RB"), "to"),
    "than": (words("IN"), "then"),
    "then": (words("RB"), "than"),
    "lose": (words("VB VBP"), "loose"),
    "loose": (words("JJ"), "lose"),
    "where": (words("WRB"), "were"),
    "were": (words("VBD"), "where"),
    "of": (words("IN"), "off"),
    "off": (words("RP IN RB"), "of"),
    "quite": (words("RB PDT"), "quiet"),
    "quiet": (words("JJ"), "quite"),
    "whose": (words("WP$"), "who's"),
    "affect": (words("VB VBP"), "effect"),
    "affects": (words("VBZ"), "effects"),
    "affected": (words("VBD VBN"), "effected"),
    "effect": (words("NN"), "affect"),
    "effects": (words("NNS"), "affects"),
    "accept": (words("VB VBP"), "except"),
    "accepted": (words("VBD VBN"), "excepted"),
    "except": (words("IN"), "accept"),
}
# pronoun + contracted verb -> the possessive a learner writes for both (they're -> their)
_CONTRACTED = {("they", "'re"): "their", ("you", "'re"): "your", ("it", "'s"): "its", ("who", "'s"): "whose"}


def word_confusion(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        entry = _CONFUSED.get(tok.lower_)
        glued = not tok.whitespace_ and tok.i + 1 < len(doc) and doc[tok.i + 1].text[:1] in "'’"
        # "to" and "of" are everywhere: without this they would make most of the category
        common = tok.lower_ in ("to", "of") and rng.random() < 0.7
        if entry and tok.tag_ in entry[0] and not glued and not common:
            out.append(Change(tok.i, tok.i + 1, (match_case(entry[1], tok.text),), "word_confusion"))
        nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
        if nxt is not None and not tok.whitespace_ and nxt.tag_ in ("VBP", "VBZ") and nxt.lemma_ == "be":
            wrong = _CONTRACTED.get((tok.lower_, nxt.lower_))
            if wrong:
                out.append(Change(tok.i, tok.i + 2, (match_case(wrong, tok.text),), "word_confusion"))
    return out


# --- calques ----------------------------------------------------------------------------------

_HAVE_NOUN = pairs("hungry>hunger thirsty>thirst sleepy>sleep afraid>fear right>reason")
_PERSONAL = words("i you he she we they")
_DISCUSS_ENTER = {"discuss": "about", "enter": "in"}
_ENTERED = words("room house building office class classroom kitchen shop store church restaurant bar car")


def calque(doc: Doc, rng: random.Random) -> list[Change]:
    out = _structure_calques(doc)
    for tok in doc:
        objs = [c for c in tok.children if c.dep_ == "dobj"]
        if tok.pos_ == "VERB" and tok.lemma_ == "attend" and objs:  # attend -> assist to
            out.append(Change(tok.i, tok.i + 1, (match_case(inflect("assist", tok.tag_), tok.text), "to"), "calque"))
        elif tok.pos_ == "VERB" and tok.lemma_ in _DISCUSS_ENTER and objs and objs[0].i > tok.i + 0:
            if tok.lemma_ == "enter" and objs[0].lemma_ not in _ENTERED:
                continue
            out.append(Change(tok.i, tok.i + 1, (tok.text, _DISCUSS_ENTER[tok.lemma_]), "calque"))
        elif tok.pos_ == "VERB" and (tok.lemma_, objs[0].lemma_ if objs else "") in (
            ("have", "party"),
            ("pay", "attention"),
        ):
            verb = "make" if tok.lemma_ == "have" else "put"
            out.append(Change(tok.i, tok.i + 1, (match_case(inflect(verb, tok.tag_), tok.text),), "calque"))
        elif tok.lemma_ == "carry" and tok.i + 1 < len(doc) and doc[tok.i + 1].lower_ == "out" and objs:
            out.append(Change(tok.i, tok.i + 2, (match_case(inflect("realize", tok.tag_), tok.text),), "calque"))
        elif tok.lower_ == "sensitive" and any(c.dep_ == "prep" and c.lower_ == "to" for c in tok.children):
            out.append(Change(tok.i, tok.i + 1, (match_case("sensible", tok.text),), "calque"))
        elif tok.lower_ in _HAVE_NOUN and tok.dep_ == "acomp" and tok.head.lemma_ == "be":
            be = tok.head
            subject = next((c for c in be.children if c.dep_ == "nsubj"), None)
            if tok.lower_ == "right" and (subject is None or subject.lower_ not in _PERSONAL):
                continue  # that's right -> that has reason: only a person has reason
            if be.i == tok.i - 1 and be.lower_ in HAVE_OF_BE:  # I am hungry -> I have hunger
                have = match_case(HAVE_OF_BE[be.lower_], be.text)
                out.append(Change(be.i, tok.i + 1, (have, _HAVE_NOUN[tok.lower_]), "calque"))
        elif tok.i == 0 and tok.lower_ == "what" and doc[-1].text == "?" and any(t.lower_ == "called" for t in doc):
            out.append(Change(0, 1, ("How",), "calque"))  # What is it called? -> How is it called?
    return out


_WEATHER = words("cold hot warm sunny windy chilly freezing")
_THINK_SO = words("think hope believe suppose guess expect")
_SUBJECT_OF = pairs("me>I him>he her>she us>we them>they you>you it>it")


def _structure_calques(doc: Doc) -> list[Change]:
    """most of -> the most of; want you to come -> want that you come; I think so -> that yes;
    the same as me -> the same that me; it is cold -> it makes cold; have a good time -> pass."""
    out = []
    for tok in doc:
        nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
        prev = doc[tok.i - 1].lower_ if tok.i > 0 else ""
        if tok.lower_ == "most" and tok.tag_ == "JJS" and nxt is not None and nxt.lower_ == "of":
            if prev not in ("the", "at", "for", "make", "made", "making", "makes") and tok.dep_ != "amod":
                new = ("the", lower_first(tok)) if tok.i == first_word(doc) else ("the", tok.text)
                out.append(Change(tok.i, tok.i + 1, new, "calque"))
        elif tok.lemma_ in ("want", "like") and tok.pos_ == "VERB" and tok.i + 3 < len(doc):
            obj, to, verb = doc[tok.i + 1], doc[tok.i + 2], doc[tok.i + 3]
            would = tok.lemma_ == "want" or any(c.lower_ in ("would", "'d") for c in tok.children)
            subject = _SUBJECT_OF.get(obj.lower_) if obj.tag_ == "PRP" else None
            who = person(doc[tok.i + 1]) if obj.tag_ == "PRP" else None
            if would and subject and who and to.tag_ == "TO" and verb.tag_ == "VB" and verb.is_alpha:
                if tok.tag_ == "VBD":
                    form = (
                        ("was" if who in ("1s", "3s") else "were")
                        if verb.lemma_ == "be"
                        else inflect(verb.lemma_, "VBD")
                    )
                else:
                    form = present(verb.lemma_, who)
                out.append(Change(obj.i, verb.i + 1, ("that", subject, form), "calque"))
        elif (
            tok.lower_ == "so"
            and tok.head.lemma_ in _THINK_SO
            and tok.head.i == tok.i - 1
            and (nxt is None or nxt.is_punct)
            and not any(c.dep_ == "neg" for c in tok.head.children)
        ):
            out.append(Change(tok.i, tok.i + 1, ("that", "yes"), "calque"))  # I think so -> I think that yes
        elif tok.lower_ == "as" and tok.dep_ == "prep" and any(c.dep_ == "pobj" for c in tok.children):
            head = tok.head
            if head.lower_ == "same" or any(c.lower_ == "same" and c.dep_ == "amod" for c in head.children):
                out.append(Change(tok.i, tok.i + 1, ("that",), "calque"))  # the same as me -> the same that me
        elif tok.lower_ == "it" and tok.dep_ == "nsubj" and nxt is not None and tok.i + 2 < len(doc):
            adj = doc[tok.i + 2]
            if nxt.lower_ in ("is", "was", "'s") and adj.lower_ in _WEATHER and adj.dep_ == "acomp":
                made = "made" if nxt.lower_ == "was" else "makes"
                out.append(Change(nxt.i, nxt.i + 1, (made,), "calque"))  # it is cold -> it makes cold
        elif tok.lemma_ == "have" and tok.pos_ == "VERB":
            obj = next((c for c in tok.children if c.dep_ == "dobj"), None)
            if obj is not None and obj.lemma_ == "time" and any(c.dep_ == "amod" for c in obj.children):
                passed = match_case(inflect("pass", tok.tag_), tok.text)
                out.append(Change(tok.i, tok.i + 1, (passed,), "calque"))  # had a good time -> passed
    return out


# --- collocations -----------------------------------------------------------------------------

# (verb, object) -> the verb a learner puts with that object
_COLLOCATIONS = keyed(
    "take+photo>make take+picture>make make+mistake>do make+decision>do do+homework>make "
    "do+exercise>make make+noise>do tell+lie>say tell+truth>say tell+joke>say do+favour>make "
    "do+favor>make make+progress>do ask+question>make make+effort>do make+friend>do make+speech>do "
    "make+call>do make+offer>do make+suggestion>do make+comment>do make+promise>do make+choice>do "
    "make+difference>do make+sound>do make+joke>do make+plan>do make+appointment>do make+attempt>do "
    "do+damage>make do+harm>make do+best>make do+business>make do+research>make do+shopping>make "
    "do+housework>make do+duty>make take+walk>give take+step>give take+break>do "
    " tell+story>say tell+secret>say miss+bus>lose miss+train>lose miss+flight>lose "
    "miss+class>lose earn+living>win"
)


def collocation(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        if tok.pos_ != "VERB":
            continue
        for obj in tok.children:
            key = (tok.lemma_, obj.lemma_)  # his best: the lemma of "best" is "good"
            wrong = _COLLOCATIONS.get(key, _COLLOCATIONS.get((tok.lemma_, obj.lower_))) if obj.dep_ == "dobj" else None
            if wrong:
                out.append(Change(tok.i, tok.i + 1, (match_case(inflect(wrong, tok.tag_), tok.text),), "collocation"))
    return out


# --- capitals ---------------------------------------------------------------------------------


def capitalisation(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc[1:]:
        if tok.text == "I" and tok.tag_ == "PRP":
            out.append(Change(tok.i, tok.i + 1, ("i",), "capitalisation"))
        elif tok.text in CAPITALISED or (
            tok.tag_ == "NNP" and tok.is_alpha and tok.text.istitle() and is_nonword(tok.lower_)
        ):
            out.append(Change(tok.i, tok.i + 1, (tok.lower_,), "capitalisation"))
    return out


# --- nouns, articles, adjectives --------------------------------------------------------------


def uncountable(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        if tok.tag_ == "NN" and tok.lower_ in UNCOUNTABLE and tok.dep_ != "compound":
            plural = tok.text + ("es" if tok.lower_.endswith("ch") else "s")
            out.append(Change(tok.i, tok.i + 1, (plural,), "uncountable"))
    return out


def a_an(doc: Doc, rng: random.Random) -> list[Change]:
    return [
        Change(t.i, t.i + 1, (match_case("an" if t.lower_ == "a" else "a", t.text),), "a_an")
        for t in doc[:-1]
        if t.lower_ in ("a", "an") and t.dep_ == "det" and doc[t.i + 1].is_alpha
    ]


def comparative(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        if tok.tag_ not in ("JJR", "JJS") or tok.lemma_ not in SHORT_ADJECTIVES or tok.lower_ in ("more", "most"):
            continue
        word = "more" if tok.tag_ == "JJR" else "most"
        irregular = tok.lemma_ in ("good", "bad", "far")
        adjective = tok.lower_ if irregular and rng.random() < 0.5 else tok.lemma_  # more better / more good
        out.append(Change(tok.i, tok.i + 1, (match_case(word, tok.text), adjective), "comparative"))
    return out


_QUANTIFIERS = words("many much few several more most less least enough such own whole")


def adjective_plural(doc: Doc, rng: random.Random) -> list[Change]:
    return [
        Change(t.i, t.i + 1, (t.text + "s",), "adjective_plural")
        for t in doc[:-1]
        if t.tag_ == "JJ"
        and t.dep_ == "amod"
        and t.head.i == t.i + 1
        and t.head.tag_ == "NNS"
        and t.is_alpha
        and t.text.islower()
        and len(t.text) >= 3
        and not t.text.endswith("s")
        and t.lower_ not in _QUANTIFIERS
    ]


def double_negation(doc: Doc, rng: random.Random) -> list[Change]:
    """I don't know anything -> I don't know nothing (the NPI in the negated verb's clause)."""
    out = []
    for tok in doc:
        wrong = NPI.get(tok.lower_) or ("no" if tok.lower_ == "any" and tok.dep_ == "det" else None)
        if not wrong:
            continue
        head = tok.head
        while head.pos_ not in ("VERB", "AUX") and head.head.i != head.i:
            head = head.head
        if any(c.dep_ == "neg" for c in head.children) and tok.i > head.i:
            out.append(Change(tok.i, tok.i + 1, (wrong,), "double_negation"))
    return out


RULES = {
    "spelling": spelling,
    "word_confusion": word_confusion,
    "calque": calque,
    "collocation": collocation,
    "capitalisation": capitalisation,
    "uncountable": uncountable,
    "a_an": a_an,
    "comparative": comparative,
    "adjective_plural": adjective_plural,
    "double_negation": double_negation,
}
