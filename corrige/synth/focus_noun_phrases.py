"""Templates around noun phrases: adjectives before nouns, "there is/are", comparatives and
superlatives, negatives with any-, and adjective + preposition pairs.

Flags set here (read by ``error_rules.py``): ``there`` a plural "there are", ``cmp`` a comparative
or superlative adjective (``base`` its positive form), ``npi`` the negative word a learner
would use instead of any-, ``p`` the preposition a learner would write.
"""

from __future__ import annotations

import random

from corrige.synth import lexicon as lx
from corrige.synth.grammar import Builder, Sentence, Subj, pick_subject
from corrige.synth.morphology import (
    article_for,
    be_form,
    comparative,
    plural,
    present_form,
    superlative,
)
from corrige.synth.templates import pick_time

NP_VERBS: dict[str, tuple[str, ...]] = {
    "car": ("buy", "have", "want", "sell", "drive"), "bike": ("buy", "have", "want", "ride"),
    "phone": ("buy", "have", "want", "need"), "computer": ("buy", "have", "need"),
    "jacket": ("buy", "wear", "want"), "dress": ("buy", "wear"), "shirt": ("buy", "wear"),
    "bag": ("buy", "have", "find"), "umbrella": ("buy", "find", "have"), "hat": ("wear", "buy"),
    "watch": ("buy", "have", "want"), "house": ("buy", "have", "want"), "flat": ("rent", "have",
    "want", "find"), "sofa": ("buy", "have"), "book": ("read", "buy", "write"),
    "novel": ("read", "write"), "film": ("watch", "see"), "song": ("sing", "write"),
    "story": ("read", "write", "tell"), "game": ("play", "buy"), "apple": ("eat", "buy"),
    "cake": ("eat", "make", "buy"), "sandwich": ("eat", "make"), "orange": ("eat", "buy"),
    "tomato": ("buy", "grow"), "egg": ("buy", "eat"), "friend": ("have", "meet"),
    "teacher": ("have",), "neighbour": ("have",), "dog": ("have", "want", "see"),
    "cat": ("have", "want"), "horse": ("have", "ride", "see"), "restaurant": ("know",),
    "hotel": ("know", "find"), "museum": ("visit",), "city": ("visit",), "village": ("visit",),
    "town": ("visit",), "park": ("know",), "shoe": ("buy", "wear", "want"), "bed": ("buy",),
    "cafe": ("know",), "chair": ("buy", "need"), "girl": ("meet",), "boy": ("meet",),
}
PERSON_NOUNS = frozenset({"friend", "teacher", "neighbour", "girl", "boy", "man", "woman"})


def t_adjnp(rng: random.Random) -> Sentence:
    """Objects with one adjective before the noun (She bought a red jacket)."""
    b = Builder(rng)
    noun = rng.choice(tuple(NP_VERBS))
    verb = rng.choice(NP_VERBS[noun])
    adj = rng.choice(lx.ADJ_GROUPS[rng.choice(lx.DESCRIBABLE[noun])])
    pl = rng.random() < 0.45 and verb not in ("rent", "drive") and noun not in ("city", "flat")
    if noun == "shoe":
        pl = True
    subj = pick_subject(rng)
    tense = rng.choice(("pres", "past", "past", "will", "going")) if verb != "know" else "pres"
    neg = rng.random() < 0.15
    b.verb(subj, verb, tense, neg=neg)
    start = len(b.toks)
    if pl:
        det = rng.choice(("", "", "two", "some", "three"))
        if verb in ("sell", "wear"):
            det = rng.choice((det, "{p}"))
        words = f"{det} {adj} {plural(noun)}".split()
    else:
        det = rng.choice((article_for(adj), article_for(adj), "the"))
        if verb in ("sell", "wear", "ride", "drive"):
            det = rng.choice((det, "{p}"))
        if noun in PERSON_NOUNS:
            det = article_for(adj)
        words = [det, adj, noun]
    b.phrase(" ".join(words), subj)
    b.possessive_owner(subj, start)
    time = pick_time(rng, tense, 0.35)
    if time:
        b.phrase(time)
    b.combos.append(f"vo:{verb}+{noun}")
    return b.done(f"adjnp.{tense}.{'pl' if pl else 'sg'}")


THERE_NOUNS: dict[str, tuple[str, ...]] = {
    "restaurant": ("in my street", "near here", "in the city centre", "in {city}"),
    "park": ("in {city}", "near my house", "in my town"), "museum": ("in {city}", "in my town"),
    "shop": ("in my street", "near here", "in {city}"), "bar": ("in my street", "in {city}"),
    "student": ("in my class", "in the library", "in the classroom"),
    "book": ("on the table", "in my bag", "on the shelf"),
    "apple": ("in the fridge", "on the table", "in the kitchen"), "egg": ("in the fridge",),
    "car": ("in the street", "in the car park", "in front of my house"),
    "tree": ("in the garden", "in the park", "in my street"),
    "chair": ("in the kitchen", "in the classroom", "in the living room"),
    "dog": ("in the park", "in my building", "on the beach"),
    "cafe": ("near my house", "in the city centre", "in {city}"),
    "hotel": ("near the beach", "in {city}", "in the city centre"),
    "beach": ("in {country}", "near {city}"), "church": ("in my town", "in {city}"),
    "bridge": ("in {city}",), "person": ("in the park", "at the party", "in the street",
                                         "on the bus", "in the shop", "at the beach"),
    "bedroom": ("in my flat", "in my house", "in the hotel"),
    "mistake": ("in your homework", "in the letter", "in this email"),
    "question": ("in the exam", "about the course"), "tourist": ("in {city}", "in the summer"),
    "flower": ("in the garden", "on the table"), "cat": ("in the garden", "in my street"),
    "bus": ("to the airport", "to {city}"), "computer": ("in the office", "in the library"),
    "child": ("in the park", "in my building", "at the party"),
    "window": ("in the kitchen", "in my room"), "supermarket": ("near here", "in my street"),
}


def t_there(rng: random.Random) -> Sentence:
    """There is/are with singular, plural and uncountable nouns."""
    b = Builder(rng)
    noun = rng.choice(tuple(THERE_NOUNS))
    place = rng.choice(THERE_NOUNS[noun])
    pl = rng.random() < 0.75
    tense = rng.choice(("pres", "pres", "past"))
    mood = rng.choices(("aff", "neg", "q", "howmany"), (0.6, 0.15, 0.15, 0.1))[0]
    if not pl and mood == "howmany":
        mood = "aff"
    be = be_form(tense, "3p" if pl else "3s", neg=mood == "neg")
    flags = {"lemma": "be", "person": "3p" if pl else "3s", "form": tense}
    if pl:
        flags["there"] = "pl"
    if mood == "howmany":
        b.add("how many", "WH")
        b.phrase(plural(noun))
    if mood in ("q", "howmany"):
        b.add(be, "V", op="1", **flags)
        b.add("there", "X")
    else:
        b.add("there", "X")
        b.add(be, "V", **flags)
    adj = ""
    if noun in lx.DESCRIBABLE and rng.random() < 0.35:
        adj = rng.choice(lx.ADJ_GROUPS[rng.choice(lx.DESCRIBABLE[noun])]) + " "
    if mood != "howmany":
        if pl:
            quant = "any" if mood in ("neg", "q") else rng.choice(
                ("two", "three", "many", "some", "a lot of", "five", "ten", "lots of",
                 "too many", "four", "twenty"))
            b.phrase(f"{quant} {adj}{plural(noun)}")
        else:
            b.phrase(f"{article_for(adj or noun)} {adj}{noun}")
    b.phrase(place)
    return b.done(f"there.{'pl' if pl else 'sg'}.{tense}.{mood}",
                  "?" if mood in ("q", "howmany") else ".")


CMP_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "people": (("tall", "short", "old", "young", "strong", "rich"), ()),
    "cities": (("big", "small", "old", "cheap", "expensive", "beautiful", "hot", "cold",
                "modern", "nice", "warm"), lx.CITIES),
    "countries": (("big", "small", "hot", "cold", "cheap", "warm"), lx.COUNTRIES),
    "transport": (("fast", "slow", "cheap", "expensive", "comfortable", "dangerous"),
                  ("trains", "planes", "cars", "bikes", "buses", "taxis")),
    "animals": (("big", "small", "fast", "slow", "strong"),
                ("dogs", "cats", "horses", "elephants", "mice", "rabbits", "lions")),
    "languages": (("easy", "difficult", "interesting", "useful"), lx.LANGUAGES),
    "things": (("good", "cheap", "fast", "small", "big", "expensive", "bad", "new", "nice"),
               ("phone", "computer", "flat", "car", "bike", "house", "laptop", "kitchen")),
    "this": ((), tuple(n for n in lx.DESCRIBABLE if n not in ("shoe",))),
}


def _cmp_adj(b: Builder, adj: str, kind: str) -> None:
    form = comparative(adj) if kind == "er" else superlative(adj)
    if form.startswith(("more ", "most ")):
        b.phrase(form)
    else:
        b.add(form, "ADJ", cmp=kind, base=adj)


def t_cmp(rng: random.Random) -> Sentence:
    """Comparatives (Madrid is bigger than Seville, My new phone is better than my old one)."""
    b = Builder(rng)
    kind = rng.choice(tuple(CMP_KINDS))
    adjs, items = CMP_KINDS[kind]
    adj = rng.choice(adjs) if adjs else ""
    tense = rng.choice(("pres", "pres", "pres", "past"))
    q = rng.random() < 0.15
    if kind == "people":
        subj = pick_subject(rng, question=q)
        other = rng.choice(("me", "you", "{p} brother", "{p} sister", "{p} father", "{p} cousin"))
        if other == "you" and subj.words[0] == "you" or other == "me" and subj.words[0] == "I":
            other = "{p} mother"
    elif kind == "things":
        item = rng.choice(items)
        subj = Subj(("my", "new", item), "3s", "", "its", "it")
        other = f"my old {item}"
    elif kind == "this":
        item = rng.choice(items)
        adjs = tuple(a for g in lx.DESCRIBABLE[item] for a in lx.ADJ_GROUPS[g] if a in
                     lx.SHORT_ADJECTIVES or a in lx.LONG_ADJECTIVES) or ("nice",)
        adj = rng.choice(adjs)
        subj = Subj(("this", item), "3s", "", "its", "it")
        other = rng.choice(("that one", f"the other {item}", f"my old {item}"))
    else:
        first, second = rng.sample(items, 2)
        pl = kind == "transport"
        subj = Subj((first,), "3p" if pl else "3s", "", "their" if pl else "its", "it")
        other = second
    b.verb(subj, "be", tense, q=q)
    _cmp_adj(b, adj, "er")
    b.add("than", "PREP")
    b.possessive_owner(subj, b.phrase(other, subj))
    return b.done(f"cmp.{kind}.{tense}", "?" if q else ".")


PLACE_TAILS = ("in {city}", "in the city centre", "in my town", "in the world", "in {country}",
               "near here", "in this street")
SUPERLATIVES = (
    ("this", ("restaurant", "cafe", "bar"), ("good", "cheap", "expensive", "nice", "bad"),
     PLACE_TAILS),
    ("this", ("hotel", "building", "street", "shop"), ("cheap", "good", "big", "old", "new",
                                                        "expensive", "modern"), PLACE_TAILS),
    ("this", ("park", "beach", "museum", "church", "bridge"), ("big", "nice", "beautiful", "old",
                                                                "small", "famous"), PLACE_TAILS),
    ("{city}", ("city",), ("big", "beautiful", "old", "expensive", "nice", "cheap", "hot",
                           "cold"), ("in the world", "in {country}", "in Europe")),
    ("{s}", ("person", "child", "man", "woman"), ("old", "young", "tall", "strong", "rich"),
     ("in {p} family", "in {p} village", "in the office", "in {p} street")),
    ("{s}", ("student", "player", "girl", "boy"), ("good", "young", "tall", "fast", "bad"),
     ("in {p} class", "in the team", "in {p} school")),
    ("it", ("day", "holiday", "summer", "night", "trip"), ("good", "bad", "hot", "cold", "long",
                                                           "nice"), ("of {p} life",)),
)


def t_sup(rng: random.Random) -> Sentence:
    """Superlatives (This is the cheapest hotel in the city centre)."""
    b = Builder(rng)
    first, nouns, adjs, tails = rng.choice(SUPERLATIVES)
    noun, tail = rng.choice(nouns), rng.choice(tails)
    tense = "past" if first == "it" else rng.choice(("pres", "pres", "past"))
    subj = pick_subject(rng, third=True) if first == "{s}" else Subj(
        (first,), "3s", "", "my", "it")
    if first == "{city}":
        subj = Subj((rng.choice(lx.CITIES),), "3s", "", "its", "it")
    b.verb(subj, "be", tense)
    b.add("the", "DET")
    _cmp_adj(b, rng.choice(adjs), "est")
    b.add(noun, "N", number="sg")
    b.phrase(tail, subj if first == "{s}" else Subj(("I",), "1s", "", "my", "me"))
    return b.done(f"sup.{noun}.{tense}")


NPI = (
    ("anything", "nothing", ("eat", "buy", "say", "do", "hear", "understand", "drink", "cook")),
    ("anybody", "nobody", ("know", "see", "call", "meet")),
    ("anyone", "no one", ("know", "see", "invite")),
    ("anywhere", "nowhere", ("go",)),
)
NOT_PERF_NPI = frozenset({"know", "understand", "say"})


def t_negany(rng: random.Random) -> Sentence:
    """Negatives with any- words (I didn't buy anything), where Spanish uses "nada"."""
    b = Builder(rng)
    subj = pick_subject(rng)
    variant = rng.choice(("word", "word", "word", "any", "never"))
    tense = rng.choice(("pres", "past", "past", "will", "perf"))
    if variant == "any":
        b.verb(subj, "have", tense if tense != "perf" else "pres", neg=True)
        b.add("any", "DET", npi="no")
        b.phrase(rng.choice(("money", "time", "brothers", "friends in {city}", "homework",
                             "questions", "children", "plans for the weekend", "milk",
                             "eggs in the fridge", "bread", "sisters", "free time",
                             "problems", "pets", "money for the trip", "coffee")))
        return b.done("negany.any")
    word, neg_word, verbs = rng.choice(NPI[:1] if variant == "never" else NPI)
    verb = rng.choice(verbs[:3] if variant == "never" else verbs)
    if variant == "never":
        tense = "pres"
        b.subject(subj)
        b.add("never", "ADV")
        b.add(present_form(verb, subj.person), "V", lemma=verb, person=subj.person,
              form="s3" if subj.person == "3s" else "base")
    else:
        if tense == "perf" and verb in NOT_PERF_NPI:
            tense = "past"
        b.verb(subj, verb, tense, neg=True)
    b.add(word, "X", npi=neg_word)
    tails = {"anything": ("about {city}", "for breakfast", "at the party", "today", "",
                          "about football", "about history", "in the shop", "on {day}",
                          "at the supermarket", "this morning", "about the exam"),
             "anybody": ("at the party", "in {city}", "in my class", "", "at work", "on {day}",
                         "in the office"),
             "anyone": ("at the party", "in {city}", "", "at school", "at the weekend"),
             "anywhere": ("last summer", "at the weekend", "on holiday", "", "on {day}",
                          "this year", "after work")}
    time = rng.choice(tails[word])
    if variant == "never":
        time = rng.choice(("", "for breakfast", "at the supermarket", "in the shop"))
    if tense == "perf" and time not in ("today", ""):
        time = "this week"
    b.phrase(time)
    return b.done(f"negany.{variant}.{tense}")


ADJ_PREPS = (
    ("married", "to", "with", ("a {prof}", "{name}")),
    ("interested", "in", "on", ("history", "art", "music", "football", "politics", "science",
                                "photography", "{lang}")),
    ("good", "at", "in", ("maths", "football", "cooking", "drawing", "languages", "chess",
                          "tennis", "music")),
    ("afraid", "of", "to", ("dogs", "the dark", "spiders", "planes")),
)


def t_prep(rng: random.Random) -> Sentence:
    """Adjective + preposition pairs (married to, interested in, good at, different from)."""
    b = Builder(rng)
    if rng.random() < 0.2:
        a, c = rng.sample(lx.NATIONALITIES[:10], 2)
        b.phrase(f"{a} food", None)
        b.add("is", "V", lemma="be", person="3s", form="pres")
        b.add("very", "ADV")
        b.add("different", "ADJ")
        b.add("from", "PREP", p="of")
        b.phrase(f"{c} food")
        return b.done("prep.different")
    adj, prep, wrong, objs = rng.choice(ADJ_PREPS)
    subj = pick_subject(rng)
    while adj == "married" and subj.person not in ("1s", "3s"):
        subj = pick_subject(rng)
    tense = rng.choice(("pres", "pres", "past"))
    q = rng.random() < 0.15
    if q:
        subj = pick_subject(rng, question=True)
    b.verb(subj, "be", tense, q=q, neg=not q and rng.random() < 0.15)
    if adj != "married" and rng.random() < 0.3:
        b.add("very", "ADV")
    b.add(adj, "ADJ")
    b.add(prep, "PREP", p=wrong)
    obj = rng.choice(objs)
    if obj == "a {prof}":
        prof = rng.choice(lx.PROFESSIONS)
        obj = f"{article_for(prof)} {prof}"
    elif obj == "{name}":
        obj = rng.choice(lx.MALE_NAMES if subj.gender == "f" else lx.FEMALE_NAMES)
    b.phrase(obj, subj)
    return b.done(f"prep.{adj}.{tense}", "?" if q else ".")
