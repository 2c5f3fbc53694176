"""Verb-centred templates: verb patterns (agree, tell, want, -ing, modals), collocations,
uncountable objects, purpose and the present perfect with since/for.

Flags set here (read by ``error_rules.py``): ``vp`` verb-pattern error, ``vl`` the verb a
learner uses instead, ``wo`` the object of "want", ``cl`` collocation verb, ``purpose`` the
"to" of purpose, ``perf`` a perfect with since/for.
"""

from __future__ import annotations

import random

from corrige.synth import lexicon as lx
from corrige.synth.grammar import PRONOUNS, Builder, Sentence, Subj, pick_subject
from corrige.synth.morphology import verb_form
from corrige.synth.templates import PAST_MARKERS, clause, pick_time, pick_verb

OBJECT_PRONOUNS = ("me", "you", "him", "her", "us", "them")


def t_agree(rng: random.Random) -> Sentence:
    """"agree" is a verb, not "be agree" (estar de acuerdo)."""
    b = Builder(rng)
    mood = rng.choices(("aff", "neg", "q"), (0.5, 0.3, 0.2))[0]
    subj = pick_subject(rng, question=mood == "q")
    tense = rng.choice(("pres", "pres", "pres", "past"))
    b.verb(subj, "agree", tense, neg=mood == "neg", q=mood == "q", vp="agree")
    if rng.random() < 0.9:
        b.add("with", "PREP")
        obj = rng.choice(("you", "me", "{p} brother", "{p} sister", "the teacher", "{name}",
                          "{p} parents", "him", "her", "the plan"))
        if obj == "{name}":
            obj = rng.choice(lx.MALE_NAMES + lx.FEMALE_NAMES)
        b.possessive_owner(subj, b.phrase(obj, subj))
    return b.done(f"vp.agree.{tense}.{mood}", "?" if mood == "q" else ".")


THAT_CLAUSES = ("she was tired", "the shop was closed", "he was busy", "the film was very good",
                "the exam was easy", "it was too late", "the party was great",
                "the restaurant was very expensive", "they were on holiday")


def t_tell(rng: random.Random) -> Sentence:
    """"tell somebody" (not "say somebody")."""
    b = Builder(rng)
    subj = pick_subject(rng)
    b.verb(subj, "tell", "past", vl="say")
    b.add(rng.choice(OBJECT_PRONOUNS[:-1] if subj.words[0] != "I" else ("you", "him", "her")),
          "OP")
    b.add("that", "CONJ")
    b.phrase(rng.choice(THAT_CLAUSES))
    return b.done("vp.tell")


# Things nobody wants somebody else to do.
UNWANTED = frozenset({"lose", "forget", "catch", "find", "need", "want", "arrive"})


def t_want(rng: random.Random) -> Sentence:
    """"want somebody to do" (not "want that somebody does")."""
    b = Builder(rng)
    subj = pick_subject(rng)
    tense = rng.choice(("pres", "pres", "past"))
    b.verb(subj, rng.choice(("want", "want", "ask")) if tense == "past" else "want", tense)
    obj = rng.choice(OBJECT_PRONOUNS + ("{name}",))
    if obj == "{name}":
        obj = rng.choice(lx.MALE_NAMES + lx.FEMALE_NAMES)
    if obj == "me" and subj.words[0] == "I" or obj == "us" and subj.words[0] == "we":
        obj = "you"
    b.add(obj, "OP", wo="1", main=tense)
    b.add("to", "TO")
    verb, comp = pick_verb(rng, rng.choice(("act", "place")), "pres")
    while verb in UNWANTED:
        verb, comp = pick_verb(rng, rng.choice(("act", "place")), "pres")
    b.add(verb_form(verb, "base").split()[0], "V", lemma=verb, form="base")
    if " " in verb:
        b.add(verb.split()[1], "PRT")
    owner = {"me": "my", "you": "your", "us": "our", "them": "their", "him": "his"}.get(
        obj, "his" if obj in lx.MALE_NAMES else "her")
    b.phrase(comp, Subj((obj,), "3s", "", owner, obj))
    b.combos.append(f"vo:{verb}+{comp}")
    return b.done(f"vp.want.{tense}")


def t_ing(rng: random.Random) -> Sentence:
    """Verbs followed by -ing (I enjoy reading), where learners write "to read"."""
    b = Builder(rng)
    subj = pick_subject(rng)
    verb, tense, neg = rng.choice((("enjoy", "pres", False), ("enjoy", "past", False),
                                   ("avoid", "pres", False), ("finish", "past", False),
                                   ("mind", "pres", True), ("enjoy", "pres", True)))
    b.verb(subj, verb, tense, neg=neg)
    inner, comp = pick_verb(rng, rng.choice(("act", "place")), "prog")
    b.add(verb_form(inner, "ing").split()[0], "V", lemma=inner, form="ing", vp="to")
    if " " in inner:
        b.add(inner.split()[1], "PRT")
    b.possessive_owner(subj, b.phrase(comp, subj))
    b.combos.append(f"vo:{inner}+{comp}")
    return b.done(f"vp.ing.{verb}")


def t_modal(rng: random.Random) -> Sentence:
    """Modals take a bare infinitive (can swim, not can to swim)."""
    b = Builder(rng)
    subj = pick_subject(rng)
    modal = rng.choice(("can", "can", "should", "must"))
    neg = rng.random() < 0.25
    main = len(b.toks) + len(subj.words)
    clause(b, subj, modal, neg=neg)
    b.toks[main].f["vp"] = "modal"
    return b.done(f"vp.modal.{modal}")


COLLOCATIONS = (
    ("take", "a photo", "make"), ("take", "photos of the city", "make"),
    ("take", "a lot of photos", "make"), ("do", "{p} homework", "make"),
    ("make", "a mistake", "do"), ("make", "a lot of mistakes", "do"), ("have", "a party", "do"),
    ("ask", "a question", "make"), ("ask", "a lot of questions", "make"),
    ("tell", "the truth", "say"), ("tell", "a lie", "say"), ("pay", "attention", "put"),
    ("do", "the shopping", "make"), ("miss", "the bus", "lose"), ("miss", "the train", "lose"),
    ("spend", "time with {p} family", "pass"), ("make", "a lot of noise", "do"),
    ("do", "exercise", "make"), ("have", "a good time", "pass"), ("do", "sport", "make"),
    ("do", "the housework", "make"),
)


def t_colloc(rng: random.Random) -> Sentence:
    """Verb + noun collocations (take a photo, do homework, make a mistake)."""
    b = Builder(rng)
    verb, obj, wrong = rng.choice(COLLOCATIONS)
    tense = rng.choice(("pres", "past", "past", "will", "going", "prog", "perf"))
    mood = rng.choices(("stmt", "neg", "q"), (0.7, 0.15, 0.15))[0]
    subj = pick_subject(rng, question=mood == "q")
    b.verb(subj, verb, tense, neg=mood == "neg", q=mood == "q", cl=wrong)
    b.possessive_owner(subj, b.phrase(obj, subj))
    time = pick_time(rng, tense, 0.4)
    if time:
        start = len(b.toks)
        b.phrase(time)
        if time in PAST_MARKERS:
            for tok in b.toks[:start]:
                if tok.tag in ("V", "AUX"):
                    tok.f["pm"] = "1"
    return b.done(f"colloc.{tense}.{mood}", "?" if mood == "q" else ".")


# (verb, tense, object with slots); {o} is an object pronoun, {q} a quantity.
UNCOUNT = (
    ("give", "past", "{o} some {good} advice about {topic}"),
    ("give", "pres", "{o} {good} advice"), ("need", "pres", "{q} information about {topic}"),
    ("find", "past", "{q} information about {topic}"),
    ("send", "past", "{o} {q} information about {topic}"),
    ("buy", "past", "{q} {new} furniture for {room}"), ("need", "pres", "{q} {new} furniture"),
    ("have", "pres", "{q} homework {when}"), ("give", "past", "{o} {q} homework {when}"),
    ("have", "pres", "{len} {colour} hair"), ("take", "past", "{q} luggage on holiday"),
    ("carry", "pres", "{q} luggage"), ("spend", "past", "{q} money on {things}"),
    ("save", "past", "{q} money for the trip"), ("need", "pres", "{q} money {when}"),
    ("buy", "pres", "{q} bread {when}"), ("eat", "pres", "{q} bread for breakfast"),
)
UNCOUNT_SLOTS: dict[str, tuple[str, ...]] = {
    "{good}": ("good", "useful", "great", "very good"), "{q}": ("some", "a lot of", "more"),
    "{topic}": ("the course", "the trip", "the hotel", "the exam", "the job", "{city}",
                "the flights", "the museum"),
    "{new}": ("new", "old", "modern", "cheap", "second-hand"),
    "{room}": ("the living room", "the kitchen", "the flat", "the new house", "the office"),
    "{when}": ("today", "this week", "for tomorrow", "every day", "this month", "on {day}"),
    "{len}": ("long", "short"), "{colour}": ("black", "brown", "blonde", "grey", "red", "dark"),
    "{things}": ("clothes", "books", "food", "the holiday", "taxis"),
}


def t_uncount(rng: random.Random) -> Sentence:
    """Uncountable nouns (advice, information, furniture), which learners pluralise."""
    b = Builder(rng)
    if rng.random() < 0.15:
        b.phrase("there")
        b.add(rng.choice(("is", "was")), "V", lemma="be", person="3s")
        b.phrase(rng.choice(("a lot of", "too much")) + " traffic " + rng.choice((
            "in {city}", "in the city centre", "in the morning", "today", "on the motorway",
            "in {city} in the morning")))
        return b.done("uncount.traffic")
    verb, tense, obj = rng.choice(UNCOUNT)
    subj = pick_subject(rng)
    if tense == "pres" and rng.random() < 0.3:
        tense = "past"
    neg = rng.random() < 0.15 and "{q}" not in obj
    b.verb(subj, verb, tense, neg=neg)
    pron = rng.choice([p for p in ("me", "us", "him", "her") if p != subj.obj])
    words = []
    for word in obj.replace("{o}", pron).split():
        words.append(rng.choice(UNCOUNT_SLOTS[word]) if word in UNCOUNT_SLOTS else word)
    b.possessive_owner(subj, b.phrase(" ".join(words), subj))
    return b.done(f"uncount.{verb}.{tense}")


PURPOSES: dict[str, tuple[str, ...]] = {
    "the supermarket": ("buy bread", "buy some milk", "buy fruit"),
    "the library": ("study", "return a book", "read the newspaper"),
    "the station": ("buy a ticket", "catch the train", "meet {p} cousin"),
    "the park": ("play football", "run", "meet {p} friends"),
    "the bank": ("open an account", "get some money"), "the gym": ("do exercise", "swim"),
    "{city}": ("visit {p} grandparents", "see a concert", "learn {lang}", "find a job"),
    "{country}": ("learn {lang}", "visit {p} family", "work"),
    "the shop": ("buy a present", "buy a new phone"), "the beach": ("swim", "relax"),
}


def t_purpose(rng: random.Random) -> Sentence:
    """Purpose with to + infinitive (I went to the bank to get some money)."""
    b = Builder(rng)
    subj = pick_subject(rng)
    variant = rng.random()
    if variant < 0.7:
        place = rng.choice(tuple(PURPOSES))
        tense = rng.choice(("past", "past", "going", "will", "pres", "prog"))
        b.verb(subj, "go", tense)
        b.phrase("to " + place, subj)
        purpose = rng.choice(PURPOSES[place])
    else:
        verb, obj, purpose = rng.choice((
            ("save", "money", "buy a new car"), ("use", "{p} phone", "take photos"),
            ("study", "{lang}", "get a better job"), ("come", "here", "learn {lang}"),
            ("work", "at the weekend", "pay for {p} studies"), ("need", "money", "buy a flat")))
        tense = rng.choice(("pres", "past", "prog" if verb not in ("need", "come") else "past"))
        b.verb(subj, verb, tense)
        b.phrase(obj, subj)
    b.add("to", "TO", purpose="1")
    verb, _, rest = purpose.partition(" ")
    b.add(verb, "V", lemma=verb, form="base")
    start = b.phrase(rest, subj) if rest else len(b.toks)
    b.possessive_owner(subj, start)
    return b.done(f"purpose.{tense}")


PERF = (
    ("live", ("in {city}", "here", "in this flat", "in {country}")),
    ("work", ("here", "at the hospital", "in a bank", "for this company", "as a teacher")),
    ("study", ("{lang}", "at this school", "music")), ("know", ("{name}", "{p} best friend")),
    ("have", ("a dog", "this car", "{p} phone", "a cat")), ("be", ("in {city}", "here", "ill")),
    ("play", ("the guitar", "tennis", "the piano")), ("teach", ("{lang}", "maths")),
    ("be", ("married",)),
)
SINCE_FOR = ("since {year}", "since {month}", "since last year", "since last summer",
             "since Christmas", "for two years", "for three months", "for ten years",
             "for a long time", "for a week", "since {day}", "for many years")


def t_perf(rng: random.Random) -> Sentence:
    """Present perfect with since/for, where Spanish uses the present (vivo aquí desde 2015)."""
    b = Builder(rng)
    mood = rng.choices(("aff", "neg", "q"), (0.65, 0.15, 0.2))[0]
    if mood == "neg":
        subj = pick_subject(rng)
        b.verb(subj, rng.choice(("see", "call", "visit")), "perf", neg=True)
        b.possessive_owner(subj, b.phrase(rng.choice(("{p} cousins", "{p} grandparents",
                                                      "{p} aunt", "{p} uncle")), subj))
        b.toks[len(subj.words)].f["perf"] = "1"
        b.phrase(rng.choice(("since Christmas", "since {day}", "since the summer",
                             "for a long time", "since last year")))
        return b.done("perf.since.neg")
    verb, comps = rng.choice(PERF)
    comp = rng.choice(comps)
    if mood == "q":
        b.add("how long", "WH")
        subj = pick_subject(rng, question=True)
    else:
        subj = pick_subject(rng)
    if comp == "married" and subj.person in ("1s", "3s") and mood != "q":
        subj = PRONOUNS["we"] if rng.random() < 0.5 else Subj(("my", "parents"), "3p", "",
                                                              "their", "them")
    op = len(b.toks)
    b.verb(subj, verb, "perf", q=mood == "q")
    b.toks[op if mood == "q" else op + len(subj.words)].f["perf"] = "1"
    if comp == "{name}":
        comp = rng.choice(lx.MALE_NAMES + lx.FEMALE_NAMES)
    b.possessive_owner(subj, b.phrase(comp, subj))
    if mood != "q":
        b.phrase(rng.choice(SINCE_FOR))
    return b.done(f"perf.since.{verb}.{mood}", "?" if mood == "q" else ".")
