"""Templates that create the contexts particular learner errors need: professions, ages,
weather and other sentences with the dummy subject "it", and generic nouns.

The other focused templates: ``focus_noun_phrases`` (noun phrases, comparison, negatives, adjective +
preposition), ``focus_verbs`` (verb patterns, collocations, purpose, present perfect),
``focus_questions`` and ``focus_people``.

Flags set here (read by ``error_rules.py``): ``pa`` profession article, ``gen`` generic noun,
``age`` the verb of an age, ``dummy`` the subject "it", ``p`` the preposition a learner writes.
"""

from __future__ import annotations

import random

from corrige.synth import lexicon as lx
from corrige.synth.grammar import PRONOUNS, Builder, Sentence, Subj, pick_subject
from corrige.synth.morphology import (
    article_for,
    be_form,
)
from corrige.synth.templates import clause


def _singular_subject(rng: random.Random, question: bool = False) -> Subj:
    while True:
        subj = pick_subject(rng, question=question)
        if subj.person in ("1s", "2", "3s"):
            return subj


def t_prof(rng: random.Random) -> Sentence:
    """Jobs (My sister is a nurse); the article a learner drops is flagged ``pa``."""
    b = Builder(rng)
    variant = rng.choice(("be", "be", "be", "as", "want", "q", "and"))
    subj = _singular_subject(rng, question=variant == "q")
    tense = rng.choice(("pres", "pres", "past", "will")) if variant != "want" else "pres"
    if variant == "and":
        tense = rng.choice(("pres", "past"))
    if variant in ("be", "and"):
        b.verb(subj, "be", tense, neg=variant == "be" and rng.random() < 0.15)
    elif variant == "q":
        tense = rng.choice(("pres", "past"))
        b.verb(subj, "be", tense, q=True)
    elif variant == "as":
        tense = rng.choice(("pres", "past", "prog"))
        b.verb(subj, "work", tense)
        b.add("as", "PREP")
    else:
        b.verb(subj, rng.choice(("want", "want", "hope")), "pres")
        b.add("to", "TO")
        b.add("be", "V", lemma="be", form="base")
    prof = rng.choice(lx.PROFESSIONS)
    adj = rng.choice(lx.PROFESSION_ADJECTIVES) if rng.random() < 0.2 and " " not in prof else ""
    b.add(article_for(adj or prof), "DET", pa="1")
    if adj:
        b.add(adj, "ADJ")
        b.combos.append(f"an:{adj}+{prof}")
    b.add(prof, "N", number="sg")
    if variant == "and":
        b.add("and", "CONJ")
        s2 = subj if subj.words[0] in ("I", "you", "he", "she") else PRONOUNS[
            "he" if subj.gender == "m" else "she"]
        clause(b, s2, tense, kind="place")
    elif variant != "q" and rng.random() < 0.3:
        b.phrase(rng.choice(("in {city}", "in {country}", "at a big hospital", "in a small town")))
    return b.done(f"prof.{variant}.{tense}", "?" if variant == "q" else ".")


def _age(rng: random.Random, subj: Subj, child: bool = False) -> str:
    if child:
        return str(rng.randint(5, 17))
    if subj.words[-1] in ("grandmother", "grandfather"):
        return str(rng.randint(60, 98))
    if subj.words[-1] in ("son", "daughter"):
        return str(rng.randint(2, 30))
    return str(rng.randint(4, 80))


def t_age(rng: random.Random) -> Sentence:
    """Ages with "be" (I am 25 years old), the classic "I have 25 years" context."""
    b = Builder(rng)
    variant = rng.choice(("pres", "pres", "when", "and", "q"))
    subj = _singular_subject(rng, question=variant == "q")
    if variant == "q":
        b.add("how old", "WH")
        b.verb(subj, "be", rng.choice(("pres", "pres", "past")), q=True)
        return b.done("age.q", "?")
    if variant == "when":
        b.add("when", "CONJ")
    tense = "past" if variant == "when" else "pres"
    main = b.verb(subj, "be", tense)
    b.toks[main].f["age"] = "1"
    b.add(_age(rng, subj, child=variant == "when"), "NUM")
    b.add("years", "N", number="pl")
    b.add("old", "ADJ")
    if variant == "when":
        b.punct(",")
        start = len(b.toks)
        clause(b, subj if rng.random() < 0.6 else pick_subject(rng), "past", kind="place")
        for tok in b.toks[start:]:
            if tok.tag in ("V", "AUX"):
                tok.f["pm"] = "1"
    elif variant == "and":
        b.add(rng.choice(("and", "but")), "CONJ")
        s2 = subj if subj.words[0] in ("I", "you", "he", "she") else PRONOUNS[
            "he" if subj.gender == "m" else "she"]
        clause(b, s2, "pres", kind=rng.choice(("act", "place")))
    return b.done(f"age.{variant}")


WEATHER_ADJ = ("cold", "hot", "sunny", "windy", "cloudy", "warm", "wet", "foggy")
WHERE_WHEN = ("today", "in {city}", "in winter", "in summer", "this morning", "in {city} today",
              "in {country} in summer", "in {city} in winter", "in the mountains", "at night",
              "in {city} in spring", "outside")
SEASONS = ("", " in winter", " in autumn", " in spring", " in November", " in {month}")


def _it(b: Builder) -> None:
    b.add("it", "S", person="3s", dummy="1")


def t_weather(rng: random.Random) -> Sentence:
    """Weather, time and distance with the dummy subject "it" (It is raining, It is Monday
    today), which Spanish leaves out."""
    b = Builder(rng)
    variant = rng.choice(("prog", "adj", "adj", "past", "rains", "going", "will", "depend",
                          "day", "takes"))
    _it(b)
    if variant == "prog":
        b.add("is", "AUX", lemma="be", person="3s")
        b.add(rng.choice(("raining", "snowing")), "V", lemma="rain", form="ing")
        b.phrase(rng.choice(("now", "again", "in {city}", "a lot", "very hard", "in {country}",
                             "again in {city}", "outside", "in the mountains")))
    elif variant == "adj":
        b.add("is", "V", lemma="be", person="3s", form="pres")
        b.phrase(rng.choice(("very ", "really ", "quite ", "usually ", "")))
        b.phrase(rng.choice(WEATHER_ADJ))
        b.phrase(rng.choice(WHERE_WHEN))
    elif variant == "past":
        b.add("was", "V", lemma="be", person="3s", form="past", pm="1")
        b.phrase(rng.choice(("very ", "really ", "")))
        b.phrase(rng.choice(WEATHER_ADJ))
        b.phrase(rng.choice(("in {city} ", "in the mountains ", "")) + rng.choice(
            ("yesterday", "last week", "last night", "last summer", "last winter",
             "two days ago", "yesterday morning")))
    elif variant == "rains":
        b.add(rng.choice(("rains", "snows")), "V", lemma="rain", person="3s", form="s3")
        b.phrase(rng.choice(("a lot in {city}", "a lot in {country}", "every day in {city}",
                             "a lot here", "in {city}")) + rng.choice(SEASONS))
    elif variant == "going":
        b.add("is", "AUX", lemma="be", person="3s")
        b.add("going", "X")
        b.add("to", "TO")
        b.add(rng.choice(("rain", "snow")), "V", lemma="rain", form="base")
        b.phrase(rng.choice(("tomorrow", "this afternoon", "tonight", "at the weekend",
                             "in {city} tomorrow", "on {day}", "later")))
    elif variant == "will":
        b.add("will", "AUX", lemma="will")
        b.add("be", "V", lemma="be", form="base")
        b.phrase(rng.choice(("very ", "")) + rng.choice(WEATHER_ADJ) + " " + rng.choice(
            ("tomorrow", "on {day}", "in {city} tomorrow", "at the weekend", "next week")))
    elif variant == "day":
        b.add("is", "V", lemma="be", person="3s", form="pres")
        b.phrase(rng.choice(("{day} today", "{p} birthday tomorrow", "very late",
                             "ten o'clock", "half past nine", "too early", "{month} already",
                             "very far from here", "{p} turn")))
    elif variant == "takes":
        b.add("takes", "V", lemma="take", person="3s", form="s3")
        b.phrase(rng.choice(("two hours", "twenty minutes", "an hour", "a long time",
                             "three hours")) + " " + rng.choice(("to get to {city}",
                                                                 "to get to work",
                                                                 "to cook paella", "by train")))
    else:
        b.add("depends", "V", lemma="depend", person="3s", form="s3")
        b.add("on", "PREP", p="of")
        b.phrase(rng.choice(("the weather", "the price", "you", "the day", "my boss",
                             "the traffic", "my parents", "the time")))
    return b.done(f"weather.{variant}")


IT_ADJ: dict[str, tuple[str, ...]] = {
    "important": ("learn {lang}", "eat vegetables", "drink water", "sleep well",
                  "speak {lang} at work", "do exercise", "read every day"),
    "difficult": ("learn {lang}", "find a cheap flat in {city}", "find a good job",
                  "speak {lang}", "get up early", "find a taxi at night", "park in {city}"),
    "easy": ("cook pasta", "find the station", "make friends here", "learn {lang}",
             "get to the airport", "find a cheap hotel"),
    "expensive": ("live in {city}", "buy a house in {city}", "eat in restaurants",
                  "travel to {country}", "rent a flat in {city}"),
    "nice": ("visit {city} in spring", "walk along the beach", "meet new people",
             "have dinner outside", "see {p} family"),
    "healthy": ("eat fruit", "walk every day", "drink a lot of water", "cook at home"),
    "dangerous": ("drive at night", "swim in the river", "ride a bike in {city}",
                  "walk alone at night"),
    "interesting": ("visit the museum", "learn {lang}", "travel by train", "visit {country}"),
    "boring": ("wait for the bus", "study grammar", "work at the weekend"),
    "cheap": ("eat in {city}", "travel by bus", "live in a village"),
}


def t_it_adj(rng: random.Random) -> Sentence:
    """It + adjective + to-infinitive (It is difficult to learn German)."""
    b = Builder(rng)
    _it(b)
    tense = rng.choice(("pres", "pres", "past"))
    word = be_form(tense, "3s", neg=rng.random() < 0.2)
    b.add(word, "V", lemma="be", person="3s", form=tense)
    adj = rng.choice(tuple(IT_ADJ))
    b.phrase(rng.choice(("very ", "really ", "quite ", "", "", "")))
    b.add(adj, "ADJ")
    b.add("to", "TO")
    verb, _, rest = rng.choice(IT_ADJ[adj]).partition(" ")
    b.add(verb, "V", lemma=verb, form="base")
    b.phrase(rest, PRONOUNS["I"])
    return b.done(f"itadj.{tense}")


def t_generic(rng: random.Random) -> Sentence:
    """Generic nouns without "the": Life is short, I play tennis, We have lunch at two."""
    b = Builder(rng)
    variant = rng.choice(("abstract", "subject", "love", "sport", "sport", "meal", "meal"))
    if variant == "abstract":
        noun = rng.choice(lx.ABSTRACT_NOUNS)
        b.add(noun, "N", gen="1")
        b.add(rng.choice(("is", "is", "was")) if noun == "life" else "is", "V", lemma="be",
              person="3s", form="pres")
        very = rng.choice(("very ", "really ", "", ""))
        if noun == "life":
            b.phrase(very + rng.choice(("short", "hard", "beautiful", "expensive in {city}",
                                        "difficult", "easy in {country}", "good here")))
        elif noun == "nature":
            b.phrase(very + rng.choice(("beautiful in {country}", "important", "amazing here",
                                        "beautiful here")))
        else:
            b.phrase(rng.choice((very + "important", "more important than money",
                                 very + "important for me", very + "important for children",
                                 "more important than work", very + "important in life")))
        return b.done("generic.abstract")
    if variant == "subject":  # The English is difficult, The football is popular in Spain
        pool = rng.choice((lx.LANGUAGES, lx.SPORTS, lx.SCHOOL_SUBJECTS))
        b.add(rng.choice(pool), "N", gen="1")
        b.add(rng.choice(("is", "is", "was")), "V", lemma="be", person="3s", form="pres")
        b.phrase(rng.choice(("very ", "really ", "quite ", "")) + rng.choice(
            ("difficult", "easy", "useful", "interesting", "boring", "popular", "important",
             "fun", "beautiful")))
        b.phrase(rng.choice(("", "", "for me", "in {country}", "for children")))
        return b.done("generic.subject")
    subj = pick_subject(rng)
    tense = rng.choice(("pres", "pres", "past", "will"))
    neg = rng.random() < 0.2
    if variant == "love":
        b.verb(subj, rng.choice(("love", "like")), "pres", neg=neg)
        b.add("nature", "N", gen="1")
        b.phrase(rng.choice(("", "and animals", "very much", "and the sea")))
        return b.done("generic.love")
    q = not neg and rng.random() < 0.2
    if q:
        subj = pick_subject(rng, question=True)
    b.verb(subj, "play" if variant == "sport" else "have", tense, neg=neg, q=q)
    noun = rng.choice(lx.SPORTS if variant == "sport" else lx.MEALS)
    b.add(noun, "N", gen="1")
    extra = ("with {p} friends", "at school", "at the weekend", "every Saturday", "in the park",
             "on {days}", "after school", "after work", "with {p} brother", "in summer", ""
             ) if variant == "sport" else ("at home", "with {p} family", "at two o'clock",
                                           "at work", "in a restaurant", "in the kitchen",
                                           "with {p} parents", "at eight", "very late",
                                           "early", "at school", "")
    b.possessive_owner(subj, b.phrase(rng.choice(extra), subj))
    b.combos.append(f"vo:{variant}+{noun}")
    return b.done(f"generic.{variant}.{tense}", "?" if q else ".")
