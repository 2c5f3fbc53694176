"""General sentence templates: everyday clauses in all tenses, moods, coordination and
subordination, plus the registry of every template (the focused ones are in ``focus*.py``).

Each template returns a ``Sentence`` whose ``template`` id names the pattern and its variant
(e.g. ``act.past.neg.stmt``) so that splits can hold whole patterns out of training.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from corrige.synth import lexicon as lx
from corrige.synth.grammar import PRONOUNS, Builder, Sentence, Subj, pick_subject
from corrige.synth.morphology import be_form, present_form

PAST_MARKERS = (
    "yesterday", "last night", "last week", "last weekend", "last month", "last year",
    "last summer", "two days ago", "three weeks ago", "a month ago", "ten years ago",
    "in {year}", "yesterday morning", "yesterday afternoon", "the day before yesterday",
)
TIMES: dict[str, tuple[str, ...]] = {
    "pres": ("every day", "every morning", "every evening", "every week", "in the morning",
             "in the afternoon", "in the evening", "at night", "at|p=in the weekend",
             "on|p=in {days}", "after work", "after school", "twice a week", "in summer",
             "in winter", "at night"),
    "past": PAST_MARKERS + ("on|p=in {day}", "in {month}"),
    "prog": ("now", "right now", "at the moment", "today", "this week", "this morning"),
    "perf": ("before", "this year", "this week", "recently", "twice", "many times"),
    "will": ("tomorrow", "next week", "next month", "next year", "next summer", "tonight",
             "on|p=in {day}", "this weekend", "soon", "in {month}", "after class"),
}
TIMES["going"] = TIMES["will"]
FREQUENCY = ("always", "usually", "often", "sometimes", "never")

ACT_VERBS = tuple(lx.ACTIVITIES)
PLACE_VERBS = tuple(lx.PLACES)
WHAT_VERBS = frozenset({"eat", "drink", "cook", "read", "write", "watch", "buy", "study", "learn",
                        "want", "need", "wear", "order", "make", "sing", "draw", "sell", "lose",
                        "forget", "bring", "send", "grow", "teach"})
WHO_VERBS = frozenset({"visit", "call", "help", "meet"})
WHERE_VERBS = frozenset({"buy", "eat", "study", "read", "meet", "learn", "watch", "live", "work",
                         "go", "swim", "run", "stay", "sleep", "walk", "travel"})
NOT_PROG = frozenset({"need", "want", "lose", "forget", "find", "arrive"})
NOT_MODAL = frozenset({"lose", "forget", "need", "want"})
NOT_PERF = frozenset({"go", "come", "arrive", "get up", "go out", "wait", "sleep", "look",
                      "dream", "think", "listen", "walk", "run", "dance"})
TENSES = ("pres", "pres", "pres", "past", "past", "past", "prog", "perf", "will", "going")


def pick_time(rng: random.Random, tense: str, p: float = 0.6) -> str | None:
    if rng.random() > p:
        return None
    if tense == "past" and rng.random() < 0.85:
        return rng.choice(PAST_MARKERS)
    return rng.choice(TIMES.get(tense, ()) or (None,))


def pick_verb(rng: random.Random, kind: str, tense: str, wh: str = "") -> tuple[str, str]:
    """A (verb, complement) pair that makes sense for the tense and question word."""
    for _ in range(50):
        if kind == "act":
            verb = rng.choice(ACT_VERBS)
            comp = rng.choice(lx.ACTIVITIES[verb])
        else:
            verb = rng.choice(PLACE_VERBS)
            comp = rng.choice(lx.PLACES[verb])
        if tense == "prog" and verb in NOT_PROG or tense == "perf" and verb in NOT_PERF:
            continue
        if tense in ("can", "should", "must") and verb in NOT_MODAL:
            continue
        if wh == "what" and verb not in WHAT_VERBS or wh == "who" and verb not in WHO_VERBS:
            continue
        if wh == "where" and verb not in WHERE_VERBS or wh == "what time" and verb != "get up":
            continue
        return verb, comp
    return "eat", "an apple"


def clause(b: Builder, subj: Subj, tense: str, *, neg: bool = False, q: bool = False,
           wh: str = "", kind: str = "", time: str | None = None, front: bool = False,
           freq: str = "") -> str:
    """Subject + verb + complement + time marker; returns the verb lemma.

    A past time marker flags the clause verbs (``pm``) so that the past-marker error knows the
    tense is forced by the sentence, not chosen by the writer.
    """
    kind = kind or b.rng.choice(("act", "act", "place"))
    verb, comp = pick_verb(b.rng, kind, tense, wh)
    start = len(b.toks)
    if time and front:
        b.phrase(time)
    if wh:
        b.add(wh, "WH")
    if freq:
        b.subject(subj)
        b.add(freq, "ADV", freq="1")
        b.add(present_form(verb, subj.person).split()[0], "V", lemma=verb, person=subj.person,
              form="s3" if subj.person == "3s" else "base")
        if " " in verb:
            b.add(verb.split()[1], "PRT")
    else:
        b.verb(subj, verb, tense, neg, q)
    dropped = wh in ("what", "who") and kind == "act" or wh in ("where", "what time")
    if not dropped:
        b.possessive_owner(subj, b.phrase(comp, subj))
    if time and not front:
        b.phrase(time)
    if time in PAST_MARKERS or (time or "").startswith("in 2"):
        for tok in b.toks[start:]:
            if tok.tag in ("V", "AUX"):
                tok.f["pm"] = "1"
    b.combos.append(f"vo:{verb}+{comp}")
    return verb


def t_act(rng: random.Random, tense: str = "", mood: str = "") -> Sentence:
    """Everyday actions in every tense, affirmative, negative and questions.

    ``tense``/``mood`` force a variant; the error sampler uses that to reach rarer contexts
    (past with a time marker, wh-questions with do) without wasting draws.
    """
    b = Builder(rng)
    forced_past = tense == "past" and not mood
    tense = tense or rng.choice(TENSES)
    mood = mood or rng.choices(("stmt", "yn", "wh"), (0.6, 0.15, 0.25))[0]
    neg = mood == "stmt" and rng.random() < 0.25
    kind = rng.choice(("act", "act", "place"))
    subj = pick_subject(rng, question=mood != "stmt")
    wh = ""
    if mood == "wh":
        options = ["when", "why", "where"]
        options += ["what", "who"] if kind == "act" else ["what time"]
        if tense == "pres":
            options.append("how often")
        wh = rng.choice(options)
    time = rng.choice(PAST_MARKERS) if forced_past else pick_time(rng, tense)
    front = mood == "stmt" and time is not None and rng.random() < 0.25
    if wh in ("when", "what time"):
        time = None
    clause(b, subj, tense, neg=neg, q=mood != "stmt", wh=wh, kind=kind, time=time, front=front)
    return b.done(f"{kind}.{tense}.{'neg' if neg else 'aff'}.{mood}",
                  "." if mood == "stmt" else "?")


def t_freq(rng: random.Random) -> Sentence:
    """Present routines with a frequency adverb before the verb (I usually walk to work)."""
    b = Builder(rng)
    kind = rng.choice(("act", "place"))
    subj = pick_subject(rng)
    clause(b, subj, "pres", kind=kind, freq=rng.choice(FREQUENCY), time=pick_time(rng, "pres", 0.4))
    return b.done(f"freq.{kind}")


def _ref_pronoun(rng: random.Random, subj: Subj, fresh: float = 0.3) -> Subj:
    """The pronoun that refers back to ``subj`` (or, with probability ``fresh``, a new
    subject)."""
    if rng.random() < fresh:
        return pick_subject(rng)
    if subj.words[0] in ("I", "you", "we", "they", "he", "she"):
        return subj
    if subj.person == "3p":
        return PRONOUNS["they"]
    return PRONOUNS["he" if subj.gender == "m" else "she"]


def t_coord(rng: random.Random) -> Sentence:
    """Two short clauses joined by and/but (I like coffee but my sister prefers tea)."""
    b = Builder(rng)
    tense = rng.choice(("pres", "past", "past", "will", "prog"))
    conj = rng.choice(("and", "but"))
    subj = pick_subject(rng)
    neg1 = conj == "but" and rng.random() < 0.3
    clause(b, subj, tense, neg=neg1)
    b.add(conj, "CONJ")
    neg2 = conj == "but" and not neg1 and rng.random() < 0.5
    clause(b, _ref_pronoun(rng, subj), tense, neg=neg2, time=pick_time(rng, tense, 0.3))
    return b.done(f"coord.{conj}.{tense}")


REASON_IT = ("raining", "very cold", "late", "very hot", "snowing")
REASON_ADJ = ("tired", "sick", "very busy", "hungry", "very happy")


def reason(b: Builder, subj: Subj, tense: str) -> None:
    """A short because-clause; "it" is the dummy subject a learner tends to drop."""
    t = "past" if tense == "past" else "pres"
    r = b.rng.random()
    if r < 0.45:
        b.add("it", "S", person="3s", dummy="1")
        b.add(be_form(t, "3s"), "V", lemma="be", person="3s", form=t)
        b.phrase(b.rng.choice(REASON_IT))
    elif r < 0.85:
        b.verb(_ref_pronoun(b.rng, subj), "be", t)
        b.phrase(b.rng.choice(REASON_ADJ))
    else:
        b.phrase(b.rng.choice(("the shop", "the museum", "the restaurant")))
        b.add(be_form(t, "3s"), "V", lemma="be", person="3s", form=t)
        b.phrase("closed")


def t_because(rng: random.Random) -> Sentence:
    b = Builder(rng)
    tense = rng.choice(("past", "past", "pres", "will"))
    subj = pick_subject(rng)
    clause(b, subj, tense, neg=rng.random() < 0.3, time=pick_time(rng, tense, 0.3))
    b.add("because", "CONJ")
    reason(b, subj, tense)
    return b.done(f"sub.because.{tense}")


def t_when(rng: random.Random) -> Sentence:
    """When-clauses: childhood memories, habits and weather (When it rains, I stay at home)."""
    b = Builder(rng)
    subj = pick_subject(rng)
    variant = rng.choice(("child", "rain", "habit"))
    if variant == "child":
        b.add("when", "CONJ")
        b.subject(subj)
        b.add("was" if subj.person in ("1s", "3s") else "were", "V", lemma="be")
        b.phrase("children" if subj.person in ("1p", "2", "3p") else "a child")
        b.punct(",")
        start = len(b.toks)
        clause(b, _ref_pronoun(rng, subj, fresh=0.0), "past")
        for tok in b.toks[start:]:
            if tok.tag in ("V", "AUX"):
                tok.f["pm"] = "1"
    elif variant == "rain":
        b.add("when", "CONJ")
        b.add("it", "S", person="3s", dummy="1")
        b.add(rng.choice(("rains", "snows")), "V", lemma="rain", person="3s", form="s3")
        b.punct(",")
        clause(b, subj, "pres", kind="place")
    else:
        clause(b, subj, "pres", freq=rng.choice(FREQUENCY[:4]))
        b.add("when", "CONJ")
        b.verb(_ref_pronoun(rng, subj), "be", "pres")
        b.phrase(rng.choice(("sad", "tired", "happy", "bored", "hungry", "nervous")))
    return b.done(f"sub.when.{variant}")


def t_if(rng: random.Random) -> Sentence:
    """First conditional (If it rains tomorrow, we will stay at home)."""
    b = Builder(rng)
    subj = pick_subject(rng)
    b.add("if", "CONJ")
    if rng.random() < 0.5:
        b.add("it", "S", person="3s", dummy="1")
        b.add("rains", "V", lemma="rain", person="3s", form="s3")
        b.phrase(rng.choice(("tomorrow", "on|p=in {day}", "this weekend")))
    else:
        s1 = pick_subject(rng)
        b.subject(s1)
        b.add(present_form("have", s1.person), "V", lemma="have", person=s1.person,
              form="s3" if s1.person == "3s" else "base")
        b.phrase(rng.choice(("time", "money", "a car", "a free day")))
    b.punct(",")
    clause(b, subj, rng.choice(("will", "will", "can")))
    return b.done("sub.if")


def t_that(rng: random.Random) -> Sentence:
    """Reported opinions (I think that my sister works too much)."""
    b = Builder(rng)
    subj = pick_subject(rng)
    verb = rng.choice(("think", "know", "say", "hope"))
    b.subject(subj)
    b.add(present_form(verb, subj.person), "V", lemma=verb, person=subj.person,
          form="s3" if subj.person == "3s" else "base")
    b.add("that", "CONJ")
    tense = rng.choice(("pres", "past", "will", "going"))
    clause(b, pick_subject(rng), tense, neg=rng.random() < 0.2, time=pick_time(rng, tense, 0.4))
    return b.done(f"sub.that.{tense}")


def t_be_adj(rng: random.Random) -> Sentence:
    """How people feel (My brother is very tired today)."""
    b = Builder(rng)
    subj = pick_subject(rng)
    tense = rng.choice(("pres", "pres", "past"))
    b.verb(subj, "be", tense, neg=rng.random() < 0.2)
    if rng.random() < 0.4:
        b.add("very", "ADV")
    b.phrase(rng.choice(("tired", "busy", "happy", "sad", "hungry", "angry", "nervous",
                         "excited", "bored", "sick", "late", "ready")))
    time = pick_time(rng, "past" if tense == "past" else "prog", 0.5)
    start = len(b.toks)
    if time:
        b.phrase(time)
        if time in PAST_MARKERS or time.startswith("in 2"):
            for tok in b.toks[:start]:
                if tok.tag == "V":
                    tok.f["pm"] = "1"
    return b.done(f"beadj.{tense}")


Template = Callable[[random.Random], Sentence]


def t_act_past(rng: random.Random) -> Sentence:
    return t_act(rng, tense="past")


def t_act_wh(rng: random.Random) -> Sentence:
    return t_act(rng, tense=rng.choice(("pres", "past")), mood="wh")


# Variants of general templates that only the error sampler draws (weight 0 for correct
# sentences, which get these contexts from the general templates at their natural rate).
SAMPLER_ONLY = {"act_past": (2.0, t_act_past), "act_wh": (2.0, t_act_wh)}
