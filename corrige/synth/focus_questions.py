"""Question templates: wh-questions with be and continuous tenses, and indirect questions
("Do you know where the station is?", "Can you explain to me how this works?").

Flags set here (read by ``error_rules.py``): ``op`` the fronted operator of a question (set by the
builder), ``emb`` the subject and verb of an indirect question, ``vp`` the "to" of "explain to".
"""

from __future__ import annotations

import random

from corrige.synth import lexicon as lx
from corrige.synth.grammar import Builder, Sentence, Subj, pick_subject
from corrige.synth.morphology import be_form, verb_form
from corrige.synth.templates import clause, pick_time

EMBEDDED_BE = (("where", "the station"), ("where", "the bank"), ("what time", "it"),
               ("where", "my keys"), ("who", "that man"), ("where", "the toilets"),
               ("how old", "{kin}"), ("where", "the museum"), ("what", "his name"),
               ("where", "the bus stop"), ("where", "the nearest pharmacy"),
               ("where", "the post office"), ("who", "that woman"), ("what", "her name"),
               ("why", "{name} angry"), ("why", "{name} sad"), ("where", "{kin}"),
               ("what", "the problem"), ("how much", "this jacket"), ("how much", "the ticket"))
EMBEDDED_DO = (("where", "{name}", "live"), ("what time", "{event}", "start"),
               ("when", "{shop}", "open"), ("what", "this word", "mean"),
               ("where", "{name}", "work"), ("what time", "the train", "leave"),
               ("how", "this machine", "work"), ("why", "{name}", "study {lang}"),
               ("when", "{shop}", "close"), ("what time", "the bus", "leave"),
               ("where", "{kin}", "work"), ("what", "{name}", "want"),
               ("what time", "{kin}", "get up"), ("where", "{name}", "buy bread"))
EMBEDDED_SLOTS: dict[str, tuple[str, ...]] = {
    "{event}": ("the film", "the class", "the match", "the party", "the concert", "the exam"),
    "{shop}": ("the shop", "the museum", "the bank", "the supermarket", "the library"),
    "{kin}": ("your sister", "your brother", "your mother", "your father", "your son"),
}


def embedded(b: Builder, rng: random.Random) -> None:
    """An indirect question in statement order (where the station is), flagged ``emb``."""
    names = lx.MALE_NAMES + lx.FEMALE_NAMES
    if rng.random() < 0.5:
        wh, np = rng.choice(EMBEDDED_BE)
        b.add(wh, "WH")
        words = np.split()
        adj = words.pop() if words[0] == "{name}" else ""
        for word in words:
            if word in EMBEDDED_SLOTS:
                b.add(rng.choice(EMBEDDED_SLOTS[word]), "S", emb="1")
            else:
                b.add(rng.choice(names) if word == "{name}" else word, "S", emb="1")
        person = "3p" if np.endswith(("keys", "toilets")) else "3s"
        b.add(be_form("pres", person), "V", lemma="be", person=person, form="pres", emb="1")
        if adj:
            b.phrase(adj)
        return
    wh, np, verb = rng.choice(EMBEDDED_DO)
    b.add(wh, "WH")
    if np == "{name}":
        np = rng.choice(names)
    for word in np.split():
        b.add(rng.choice(EMBEDDED_SLOTS[word]) if word in EMBEDDED_SLOTS else word, "S", emb="1")
    head, _, rest = verb.partition(" ")
    b.add(verb_form(head, "s3"), "V", lemma=head, person="3s", form="s3", emb="1")
    if rest:
        b.phrase(rest)


def t_embedded(rng: random.Random) -> Sentence:
    """Indirect questions (Do you know where the station is?)."""
    b = Builder(rng)
    prefix, mark = rng.choice((("do you know", "?"), ("can you tell me", "?"),
                               ("I don't know", "."), ("could you tell me", "?"),
                               ("I don't remember", ".")))
    b.phrase(prefix)
    embedded(b, rng)
    return b.done(f"embedded.{prefix.split()[0].lower()}", mark)


def t_explain(rng: random.Random) -> Sentence:
    """"explain to me" (not "explain me") before an indirect question."""
    b = Builder(rng)
    if rng.random() < 0.5:
        b.phrase(rng.choice(("can you", "could you")))
        b.add("explain", "V", lemma="explain", form="base")
        mark = "?"
    else:
        subj = pick_subject(rng)
        b.subject(subj)
        b.add("explained", "V", lemma="explain", form="past")
        mark = "."
        if subj.words[0] in ("I", "we"):
            b.add("to", "X", vp="")
            b.add(rng.choice(("him", "her", "them")), "OP")
            embedded(b, rng)
            return b.done("vp.explain.stmt")
    b.add("to", "X", vp="")
    b.add(rng.choice(("me", "us")), "OP")
    embedded(b, rng)
    return b.done(f"vp.explain.{'q' if mark == '?' else 'stmt'}", mark)


# (question word, tense, subject, rest); "{s}" picks a subject, {adj} a feeling.
WH_BE = (
    ("where", "pres", "{s}", "{now}"), ("why", "pres", "{s}", "{very} {adj}"),
    ("why", "past", "{s}", "{very} {adj} {then}"), ("where", "pres", "{s}", "from"),
    ("what", "pres", "your {thing}", ""), ("what", "pres", "the capital of {country}", ""),
    ("when", "pres", "{event}", ""), ("what time", "pres", "{event}", ""),
    ("how", "pres", "{s}", "{now}"), ("what time", "pres", "it", ""),
    ("who", "pres", "your favourite {artist}", ""), ("who", "pres", "that {person}", ""),
    ("where", "past", "{s}", "{then}"), ("where", "pres", "{place}", ""),
    ("how", "past", "{event}", ""), ("how old", "pres", "{s}", ""),
)
WH_SLOTS: dict[str, tuple[str, ...]] = {
    "{now}": ("", "now", "today", "right now", "at the moment"),
    "{very}": ("", "so", "very"),
    "{adj}": ("tired", "angry", "sad", "late", "happy", "nervous", "busy", "worried"),
    "{then}": ("yesterday", "last night", "last week", "on {day}"),
    "{thing}": ("name", "favourite food", "phone number", "address", "job", "favourite film",
                "surname", "favourite colour"),
    "{event}": ("your birthday", "the exam", "the party", "the meeting", "the film",
                "your English class", "the match", "the concert", "the next train"),
    "{artist}": ("singer", "actor", "writer", "teacher", "footballer"),
    "{person}": ("man", "woman", "boy", "girl"), "{country}": lx.COUNTRIES,
    "{place}": ("the station", "the bank", "the toilet", "my keys", "the museum",
                "the nearest supermarket", "the bus stop", "your parents", "my glasses"),
}
PLURAL_WHO = ("my keys", "your parents", "my glasses")


def t_whbe(rng: random.Random) -> Sentence:
    """Wh-questions with be (Where is your sister? Why were you late yesterday?), where
    learners keep statement order."""
    b = Builder(rng)
    if rng.random() < 0.3:
        wh = rng.choice(("what", "where", "why", "who"))
        clause(b, pick_subject(rng, question=True), "prog", q=True, wh=wh,
               time=pick_time(rng, "prog", 0.3))
        return b.done(f"whbe.prog.{wh}", "?")
    wh, tense, who, rest = rng.choice(WH_BE)
    b.add(wh, "WH")

    def fill(text: str) -> str:
        return " ".join(rng.choice(WH_SLOTS[w]) if w in WH_SLOTS else w for w in text.split())

    if who == "{s}":
        subj = pick_subject(rng, question=True)
    else:
        who = fill(who)
        person = "2" if who == "you" else ("3p" if who in PLURAL_WHO else "3s")
        subj = Subj(tuple(who.split()), person, "", "", "")
    main = b.verb(subj, "be", tense, q=True)
    rest = fill(rest)
    if rest.split()[-1:] in (["yesterday"], ["night"], ["week"]):
        b.toks[main].f["pm"] = "1"
    if rest:
        b.phrase(rest)
    return b.done(f"whbe.{wh}.{tense}", "?")
