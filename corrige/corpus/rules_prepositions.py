"""Injection rules for prepositions: the wrong one after a word that governs its own (depend of,
married with, good in), the wrong one for a time, place or means (in Monday, on summer, in the
table, in bus), a duration with during or since (during three years), one dropped where the verb
needs it (listen music) and one added where Spanish puts one (visit to my aunt, marry with him).

A swap is made only where the learner's preposition is wrong for that word or that object, never
where several are correct (look at/for, think of/about, at/in the station): ``_GOVERNED`` and
``_OBJECTS`` list only wrong choices, and a word in ``_FREE`` (whose meaning changes with its
preposition) blocks the object swaps (look at the table / look in the table).
"""

from __future__ import annotations

import random
import re

from spacy.tokens import Doc, Token

from corrige.corpus.lexicon import DAYS, PERSON_NOUNS, Change, keyed, match_case, pairs, words

# (governing lemma, preposition) -> what the learner writes ("-" drops the preposition)
_GOVERNED = keyed(
    "married+to>with marry+to>with engaged+to>with depend+on>of dependent+on>of rely+on>in "
    "insist+on>in concentrate+on>in interested+in>on good+at>in bad+at>in arrive+in>to arrive+at>to "
    "think+about>in dream+about>with dream+of>with responsible+for>of different+from>of love+with>of "
    "wait+for>- listen+to>- look+at>- famous+for>by according+to>with for+example>by "
    "for+instance>by laugh+at>of suffer+from>of congratulate+on>for afraid+of>to filled+with>of "
    "surprised+at>of surprised+by>of because+of>- next+to>of close+to>of far+from>of kind+to>with "
    "nice+to>with escape+from>of spend+on>in "
    "fill+with>of covered+with>of cover+with>of surrounded+by>of surround+by>of dressed+in>of "
    "reason+for>of keen+on>in"
)
# Words whose preposition changes the meaning and stays correct: no object-led swap after them.
_FREE = words(
    "look stare glance gaze peer laugh smile shout point throw aim search think talk speak hear know "
    "learn read write dream worry care ask sit stand lie lean"
)
_MONTHS = words("january february march april may june july august september october november december")
_SEASONS = words("summer winter spring autumn")
# (preposition, object) -> what the learner writes, for times, places and means (on Monday -> in)
_OBJECTS = {
    **{("on", day): "in" for day in DAYS},
    **{("in", month): "on" for month in _MONTHS if month != "may"},
    **{("in", season): "on" for season in _SEASONS},
    **keyed(
        "on+weekend>in at+weekend>in at+home>in in+morning>on in+afternoon>on in+evening>on at+night>on "
        "at+noon>in at+midnight>in at+dawn>in at+dusk>in at+sunset>in at+sunrise>in at+christmas>in "
        "at+easter>in at+o'clock>in on+birthday>in on+holiday>in on+holidays>in on+vacation>in on+tv>in "
        "on+television>in on+radio>in on+table>in at+table>in on+beach>in on+internet>in in+opinion>on "
        "in+century>on by+bus>in by+car>in by+train>in by+plane>in by+taxi>in"
    ),
}
_DURATION = words("year month week day hour minute moment while age time")
_QUANTITY = words("a an few several many some")
# fixed phrases whose preposition no governor chooses (at last, at least, at all, at once)
_FIXED = words("last least all once first length times present hand")
# verb -> the preposition Spanish puts before its object (visitar a, casarse con, carecer de)
_ADDED = pairs(
    "visit>to phone>to telephone>to marry>with contact>with resemble>to approach>to lack>of ask>to help>to "
    "meet>to know>to tell>to answer>to"
)
# verbs of going before "home", which takes no preposition (ir a casa: went home -> went to home)
_GO_HOME = words("go come get walk drive run hurry arrive")
_PERSON_PRONOUNS = words("me him her us them")
_NON_PERSON = words("answer")  # answer to him is correct English (be accountable to him)
_CLOCK = re.compile(r"\d{1,2}[.:]\d\d")


def _duration(obj: Token) -> bool:
    """three years, a few days, a moment, a long time, years (not the last three years)."""
    if obj.lemma_.lower() not in _DURATION or obj.tag_ not in ("NN", "NNS"):
        return False
    kids = list(obj.children)
    if any(c.dep_ in ("poss", "prep", "relcl", "acl") for c in kids):
        return False
    dets = [c for c in kids if c.dep_ in ("det", "nummod", "amod", "quantmod")]
    if obj.lemma_ == "time":
        return [c.lower_ for c in dets] in (["a", "long"], ["some"])
    if not dets:
        return obj.tag_ == "NNS"
    return all(c.dep_ == "nummod" or c.lower_ in _QUANTITY for c in dets)


def _wrong_for(tok: Token, obj: Token, rng: random.Random) -> str | None:
    head = tok.head
    if tok.i == 0 and tok.lower_ == "on" and [t.lower_ for t in tok.doc[1:4]] == ["the", "other", "hand"]:
        return "in"  # On the other hand, ... -> In the other hand
    if obj.lower_ in _FIXED or obj.pos_ not in ("NOUN", "PROPN", "PRON", "NUM"):
        return None
    if head.lemma_ == "think" and (obj.pos_ == "PROPN" or obj.lower_ in ("here", "there")):
        return None  # think about Spain -> think in Spain (while there) is correct English
    if head.lemma_ == "be" and tok.i > 0 and tok.doc[tok.i - 1].dep_ == "acomp" and tok.doc[tok.i - 1].head == head:
        head = tok.doc[tok.i - 1]  # she is good at tennis: "at" hangs from "is" in the parse
    governor = head.lower_ if head.lower_ == "dressed" else head.lemma_.lower()  # not the dressing of
    wrong = _GOVERNED.get((governor, tok.lower_), _GOVERNED.get((tok.lower_, obj.lower_)))
    if wrong == "" and (_duration(obj) or head.i != tok.i - 1):
        return None  # waited for three hours -> waited three hours is correct English
    if wrong is not None:
        return wrong
    if tok.lower_ == "for" and _duration(obj) and obj.i > tok.i:
        numbered = any(c.dep_ == "nummod" for c in obj.children)
        return "since" if numbered and rng.random() < 0.4 else "during"  # for three years -> during
    bare = not any(c.dep_ in ("prep", "relcl", "acl") for c in obj.children)
    if not bare or head.lemma_.lower() in _FREE:
        return None
    wrong = _OBJECTS.get((tok.lower_, obj.lower_))
    if wrong and tok.lower_ == "by" and obj.i != tok.i + 1:
        return None  # by the bus is not "by bus"
    if wrong is None and tok.lower_ == "in" and obj.tag_ == "CD" and obj.text.isdigit() and len(obj.text) == 4:
        wrong = "on"  # in 2010 -> on 2010
    if wrong is None and tok.lower_ == "at" and obj.tag_ == "CD" and _CLOCK.fullmatch(obj.text):
        wrong = "in"  # at 6.30 -> in 6.30
    return wrong


def preposition(doc: Doc, rng: random.Random) -> list[Change]:
    out = []
    for tok in doc:
        if tok.lower_ == "home" and tok.dep_ == "advmod" and tok.head.lemma_ in _GO_HOME and tok.head.i == tok.i - 1:
            out.append(Change(tok.i, tok.i + 1, ("to", tok.text), "preposition"))  # went home -> went to home
        elif tok.lemma_ == "go" and tok.i + 1 < len(doc):
            nxt = doc[tok.i + 1]
            if nxt.tag_ == "VBG" and nxt.head == tok and nxt.dep_ in ("xcomp", "advcl") and nxt.lemma_ != "go":
                out.append(Change(nxt.i, nxt.i, ("to",), "preposition"))  # go shopping -> go to shopping
        elif tok.pos_ == "VERB" and tok.lemma_ in _ADDED:
            obj = next((c for c in tok.children if c.dep_ == "dobj" and c.left_edge.i == tok.i + 1), None)
            personal = obj is not None and (
                obj.lower_ in _PERSON_PRONOUNS or obj.tag_ == "NNP" or obj.lower_ in PERSON_NOUNS
            )
            if obj is not None and (obj.lemma_.lower() in _DURATION or obj.pos_ not in ("NOUN", "PROPN", "PRON")):
                obj = None  # approached a moment later: no object to put a preposition before
            any_object = tok.lemma_ in ("approach", "lack", "resemble")
            if obj is not None and tok.lemma_ in _NON_PERSON:
                personal, any_object = False, obj.pos_ == "NOUN"
            if obj is not None and (personal or any_object):
                out.append(Change(obj.left_edge.i, obj.left_edge.i, (_ADDED[tok.lemma_],), "preposition"))
        elif tok.lower_ in ("despite", "near") and tok.dep_ == "prep" and tok.i + 1 < len(doc):
            if any(c.dep_ == "pobj" for c in tok.children) and doc[tok.i + 1].lower_ not in ("of", "to"):
                out.append(Change(tok.i + 1, tok.i + 1, ("of",), "preposition"))  # despite the rain -> despite of
        if tok.dep_ != "prep":
            continue
        obj = next((c for c in tok.children if c.dep_ == "pobj"), None)
        if obj is None:
            continue
        wrong = _wrong_for(tok, obj, rng)
        if wrong:
            out.append(Change(tok.i, tok.i + 1, (match_case(wrong, tok.text),), "preposition"))
        elif wrong == "":  # wait for the bus -> wait the bus
            out.append(Change(tok.head.i, tok.i + 1, (tok.head.text,), "preposition"))
    return out


RULES = {"preposition": preposition}
