"""Templates about people: a person and their relatives (his/her), "people" as a plural
subject, nationalities and languages, and what people like "very much".

Flags set here (read by ``error_rules.py``): ``owner``/``owned`` genders on his/her (set by the
builder), ``ppl`` a verb agreeing with "people", ``vmo``/``vm`` the object and "very" of
"... very much".
"""

from __future__ import annotations

import random

from corrige.synth import lexicon as lx
from corrige.synth.grammar import PRONOUNS, Builder, Sentence, Subj, pick_subject
from corrige.synth.morphology import be_form, present_form
from corrige.synth.templates import pick_time


def _add_present(b: Builder, subj: Subj, verb: str, **f: str) -> int:
    b.subject(subj)
    return b.add(present_form(verb, subj.person), "V", lemma=verb, person=subj.person,
                 form="s3" if subj.person == "3s" else "base", **f)

POSS_VERBS = (("live", "with", "pres"), ("visit", "", "pres"), ("call", "", "pres"),
              ("help", "", "past"), ("talk", "to", "past"), ("miss", "", "pres"),
              ("love", "", "pres"), ("have", "lunch with", "pres"), ("meet", "", "past"),
              ("go", "to the cinema with", "past"), ("visit", "", "will"),
              ("play", "tennis with", "pres"), ("buy", "a present for", "past"),
              ("write", "to", "pres"), ("live", "near", "pres"), ("go", "shopping with", "pres"),
              ("cook", "dinner for", "past"), ("travel", "with", "past"), ("call", "", "past"),
              ("visit", "", "going"), ("wait", "for", "past"), ("help", "", "pres"))


def t_poss(rng: random.Random) -> Sentence:
    """One person and a relative (Carlos visits his mother every Sunday)."""
    b = Builder(rng)
    subj = pick_subject(rng, gendered=True)
    verb, link, tense = rng.choice(POSS_VERBS)
    b.verb(subj, verb, tense, neg=rng.random() < 0.1)
    if link:
        b.phrase(link)
    other = "f" if subj.gender == "m" else "m"
    pool = [k for k in lx.KIN_SINGULAR if lx.KIN_GENDER[k] == other] if rng.random() < 0.7 else [
        k for k in lx.KIN_GENDER if lx.KIN_GENDER[k] != "n"]
    start = b.phrase("{p} " + rng.choice(pool), subj)
    b.possessive_owner(subj, start)
    time = pick_time(rng, tense, 0.75)
    if time:
        b.phrase(time)
    return b.done(f"poss.{verb}.{tense}")


PEOPLE_SUBJECTS = ("people", "people in {country}", "people in {city}", "the people in my town",
                   "the people in my street", "the people in my office", "most people in {city}",
                   "most people in {country}", "people here", "many people", "young people",
                   "old people", "people from {country}", "many people in my class")
PEOPLE_ADJ = ("friendly", "kind", "nice", "busy", "happy", "polite", "relaxed", "helpful",
              "open", "tired", "generous", "quiet", "funny")
PEOPLE_VERBS = (("speak", "two languages"), ("speak", "{lang}"), ("have", "dinner very late"),
                ("eat", "a lot of fish"), ("work", "very hard"), ("go", "to the beach in summer"),
                ("like", "football"), ("love", "music"), ("drink", "a lot of coffee"),
                ("go", "to bed late"), ("get", "up early"), ("spend", "a lot of money"),
                ("live", "in flats"), ("walk", "a lot"), ("ride", "bikes"),
                ("take", "the bus to work"), ("watch", "TV at night"), ("eat", "dinner at ten"))
PEOPLE_TAILS = ("", "", "here", "in summer", "at the weekend", "every day", "in {city}")


def t_people(rng: random.Random) -> Sentence:
    """"people" is plural (People are friendly here), unlike "la gente"."""
    b = Builder(rng)
    variant = rng.choice(("be", "be", "verb", "verb", "think", "neg"))
    b.phrase(rng.choice(PEOPLE_SUBJECTS))
    if variant == "be":
        tense = rng.choice(("pres", "pres", "past"))
        b.add(be_form(tense, "3p"), "V", lemma="be", person="3p", form=tense, ppl="1")
        b.phrase(rng.choice(("very ", "really ", "")) + rng.choice(PEOPLE_ADJ))
        b.phrase(rng.choice(PEOPLE_TAILS))
    elif variant == "verb":
        verb, comp = rng.choice(PEOPLE_VERBS)
        if rng.random() < 0.3:
            b.add(rng.choice(("usually", "often", "always")), "ADV")
        b.add(verb, "V", lemma=verb, person="3p", form="base", ppl="1")
        b.phrase(comp)
    elif variant == "think":
        b.add(rng.choice(("think", "say")), "V", lemma="think", person="3p", form="base",
              ppl="1")
        b.add("that", "CONJ")
        topic = rng.choice(("{lang}", "{city}", "the city", "the exam", "the food here"))
        b.phrase(f"{topic} is " + rng.choice(("difficult", "easy", "expensive", "beautiful",
                                              "boring", "interesting", "very good")))
    else:
        b.add("don't", "AUX", lemma="do", person="3p", ppl="1")
        verb, comp = rng.choice(PEOPLE_VERBS)
        b.add(verb, "V", lemma=verb, form="base")
        b.phrase(comp)
    return b.done(f"people.{variant}")


def t_lang(rng: random.Random) -> Sentence:
    """Nationalities and languages, which English capitalises and Spanish does not."""
    b = Builder(rng)
    subj = pick_subject(rng)
    variant = rng.choice(("nat", "speak", "learn", "nat_but"))
    if variant in ("nat", "nat_but"):
        b.verb(subj, "be", rng.choice(("pres", "pres", "past")) if variant == "nat" else "pres")
        b.phrase(rng.choice(lx.NATIONALITIES))
        if variant == "nat_but":
            b.add("but", "CONJ")
            s2 = subj if subj.words[0] in ("I", "you", "he", "she", "we", "they") else (
                PRONOUNS["they"] if subj.person == "3p" else PRONOUNS[
                    "he" if subj.gender == "m" else "she"])
            _add_present(b, s2, "live")
            b.phrase("in {city}")
    elif variant == "speak":
        a, c = rng.sample(lx.LANGUAGES, 2)
        b.verb(subj, "speak", "pres", neg=rng.random() < 0.2)
        b.phrase(f"{a} and {c}" if rng.random() < 0.5 else f"{a} very well")
    else:
        b.verb(subj, rng.choice(("learn", "study")), rng.choice(("prog", "pres", "past")))
        b.phrase("{lang} " + rng.choice(("at school", "at university", "online", "with a "
                                         "private teacher", "")))
    return b.done(f"lang.{variant}")


LIKE_OBJECTS = ("football", "tennis", "music", "{p} job", "this song", "{lang}", "chocolate",
                "coffee", "animals", "{city}", "pizza", "cats", "dogs", "fish", "{p} teacher")
ENJOYED = ("the film", "the party", "the book", "the trip", "the concert", "the match",
           "the meal", "the class")


def t_likevm(rng: random.Random) -> Sentence:
    """"very much" goes after the object (I like football very much)."""
    b = Builder(rng)
    subj = pick_subject(rng)
    verb, tense = rng.choice((("like", "pres"), ("love", "pres"), ("enjoy", "past"),
                              ("like", "past")))
    b.verb(subj, verb, tense)
    objects = ENJOYED if verb == "enjoy" else LIKE_OBJECTS
    start = b.phrase(rng.choice(objects), subj)
    b.possessive_owner(subj, start)
    b.toks[start].f["vmo"] = "1"
    b.add("very", "ADV", vm="1")
    b.add("much", "ADV")
    return b.done(f"likevm.{verb}.{tense}")
