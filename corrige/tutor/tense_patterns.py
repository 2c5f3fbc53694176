"""Tenses Spanish carries into English where English wants another: a present or a present
perfect in a story already set in the past ("Yesterday I go", "I go to the cinema yesterday",
"I went out and I see a friend", "Last summer we have visited London"), a present with "since"
a time ("I live here since 2015": "desde"), and a future in a clause of time or condition
("When I will arrive": "cuando llegue" takes a present subjunctive, English a present).

Each rule wants the time said in the same clause (yesterday, last week, two days ago, since
2015, a "will" in the main clause) and a subject pronoun before the verb, so that what is
changed is the verb's tense and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection

from corrige.tutor.edits import Edit, Token
from corrige.tutor.function_words import FUNCTION_WORDS
from corrige.tutor.pattern_words import (
    DAYS,
    PAST_PERIODS,
    PAST_SUBJECTS,
    TIME_UNITS,
    base_of_past,
    is_age,
    is_base_verb,
    is_number,
    is_plural_noun,
    is_third_person_form,
    past_of,
    replace_tokens,
    span_text,
    word_after,
)


def past_marker(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Yesterday I go → went; Last year we play → played: a sentence that opens in the past,
    its subject pronoun, then a verb of the list in the present."""
    if words[:1] == ["yesterday"]:
        i = 1
    elif words[:1] == ["last"] and word_after(words, 1) in PAST_PERIODS:
        i = 2
    else:
        return
    i += word_after(words, i) == ","
    past = past_of(word_after(words, i + 1)) if word_after(words, i) in PAST_SUBJECTS else None
    if past:
        yield replace_tokens(tokens, i + 1, i + 2, past, "past_marker", text)


# words that let a present perfect stand beside a past time ("since last year", "never ... ago")
_LENGTH_STARTS = frozenset("a an many several some ages years months weeks days hours long".split())
_PERFECT_FRIENDS = frozenset("since for already yet ever never just before recently lately".split())
PLURAL_PRONOUNS = frozenset("i you we they these those".split())
_CLAUSE_BREAKS = frozenset("and but because when while that which who where if although ; :".split())


@lru_cache(maxsize=4096)
def _past_of_participle(word: str) -> str | None:
    """The simple past of a verb given as its past participle ("visited", "seen" → "saw"); None
    for "been" (was, were or went: `_past_of_been`) and words that are not participles."""
    if word == "been":
        return None
    for lemma in getAllLemmas(word).get("VERB", ()):
        participle = getInflection(lemma, "VBN")
        past = getInflection(lemma, "VBD")
        if participle and past and word == participle[0]:
            return past[0]
    return None


def perfect_with_past_time(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Last summer we have visited London → visited; I have seen him two days ago → saw: a present
    perfect in the clause of a finished time (yesterday, last week, ... ago), where Spanish's
    "hemos visitado" reads as English's past. Not beside since/for/never..., where the perfect fits."""
    if "yesterday" not in words and "ago" not in words and "last" not in words and "when" not in words:
        return
    marks = _past_times(words) + _past_whens(words)
    for i in range(len(words) - 2):
        if words[i] not in PAST_SUBJECTS or words[i + 1] not in ("have", "has", "'ve"):
            continue
        if _perfect_friend_near(words, i):
            continue
        past = _past_of_been(words, i) if words[i + 2] == "been" else _past_of_participle(words[i + 2])
        if past is not None and any(_one_clause(words, i, i + 2, k) for k in marks):
            yield replace_tokens(tokens, i + 1, i + 3, past, "past_marker", text)


def _perfect_friend_near(words: list[str], i: int) -> bool:
    """Whether a word that a perfect goes with (since, for, never, so far...) is in the clause of the
    verb at `i`, its ends told by a comma too ("…two months ago, so I
    expected" has no "so far")."""
    breaks = _CLAUSE_BREAKS | {","}
    lo = max((k for k in range(i) if words[k] in breaks), default=-1) + 1
    hi = next((k for k in range(i, len(words)) if words[k] in breaks), len(words))
    clause = words[lo:hi]
    pairs = set(zip(clause, [*clause[1:], "."], strict=True))
    if ("so", "far") in pairs or any(w == "for" and _is_length(clause[k + 1 : k + 3]) for k, w in enumerate(clause)):
        return True
    return bool((_PERFECT_FRIENDS - {"for"}) & set(clause))


def _is_length(after: list[str]) -> bool:
    """Whether "for" before the words `after` says how long ("for two years", "for a long time",
    "for the last few days", "for ages"), not for whom ("for my family", "for the concert")."""
    first = after[0] if after else "."
    if first == "the":
        return after[1:2] in (["last"], ["past"], ["whole"])
    return is_number(first) or first in _LENGTH_STARTS


def _past_times(words: list[str]) -> list[int]:
    """Where a finished time is said: yesterday, ... ago, last week (not "the last week", the
    week just gone, which a perfect may take: "I have been ill the last week")."""
    marks = [k for k, w in enumerate(words) if w in ("yesterday", "ago")]
    marks += [
        k
        for k, w in enumerate(words)
        if w == "last" and word_after(words, k + 1) in PAST_PERIODS and (k == 0 or words[k - 1] != "the")
    ]
    return marks


def _past_whens(words: list[str]) -> list[int]:
    """Where a "when" opens a finished time: "when I was a child", "when we went there" (I have seen
    it when I was a child → saw)."""
    return [
        k
        for k, w in enumerate(words)
        if w == "when"
        and word_after(words, k + 1) in PAST_SUBJECTS
        and (word_after(words, k + 2) in ("was", "were") or base_of_past(word_after(words, k + 2)) is not None)
    ]


def _one_clause(words: list[str], first: int, last: int, k: int) -> bool:
    """Whether the time word at `k` is in the clause of the verb group `words[first:last + 1]`."""
    lo, hi = (k, first) if k < first else (last, k)
    return not _CLAUSE_BREAKS & set(words[lo:hi])


def _past_of_been(words: list[str], i: int) -> str:
    """ "I have been in London last year" → was; "we have been to Paris" → went (to)."""
    if word_after(words, i + 3) == "to":
        return "went"
    return "was" if words[i] in ("i", "he", "she") else "were"


# the auxiliary of a present perfect after each subject pronoun
PERFECT_AUXILIARY = {"i": "have", "you": "have", "we": "have", "they": "have", "he": "has", "she": "has"}
# a subject and its "be" written as one, with its own "have": "it's raining since" → "it has been"
CONTRACTED_BE = {
    "i'm": ("I", "have"),
    "you're": ("you", "have"),
    "we're": ("we", "have"),
    "they're": ("they", "have"),
    "he's": ("he", "has"),
    "she's": ("she", "has"),
    "it's": ("it", "has"),
}
PRESENT_BE = {"i": "am", "you": "are", "we": "are", "they": "are", "he": "is", "she": "is", "it": "is"}
MONTHS = frozenset("january february march april may june july august september october november december".split())


def _since_a_time(words: list[str], k: int) -> bool:
    """Whether "since" at `k` starts a time (a year, a length of time, last ..., a month or a day),
    not a reason ("since it was late")."""
    after = word_after(words, k + 1)
    year = after.isdigit() and len(after) == 4
    length = is_number(after) and word_after(words, k + 2) in TIME_UNITS and word_after(words, k + 3) != "ago"
    childhood = after in PAST_SUBJECTS and word_after(words, k + 2) in ("was", "were") and _a_childhood(words, k + 3)
    childhood = childhood or (  # since I was ten
        after in PAST_SUBJECTS and word_after(words, k + 2) in ("was", "were") and is_age(word_after(words, k + 3))
    )
    start = words[k + 1 : k + 3] in SINCE_STARTS or after in ("then", "childhood")
    return year or length or childhood or start or after in ("last", "yesterday") or after in MONTHS or after in DAYS


# "since that day", "since primary school": a time where a clause would follow "since" a reason
SINCE_STARTS = (
    ["that", "day"],
    ["that", "moment"],
    ["that", "time"],
    ["the", "beginning"],
    ["the", "first"],
    ["this", "morning"],
    ["this", "afternoon"],
    ["primary", "school"],
    ["secondary", "school"],
    ["high", "school"],
)


def _a_childhood(words: list[str], k: int) -> bool:
    """ "a child", "young", "at school"... at `k`: "since I was a child" is a time ("desde niño")."""
    return word_after(words, k) in CHILDHOOD_WORDS or (words[k : k + 2] in CHILDHOODS)


CHILDHOOD_WORDS = frozenset("young little small children kids babies teenagers students born".split())


CHILDHOODS = (
    ["a", "child"],
    ["a", "kid"],
    ["a", "baby"],
    ["a", "boy"],
    ["a", "girl"],
    ["a", "teenager"],
    ["at", "school"],
)


def _perfect_of(subject: str, verb: str) -> str | None:
    """The present perfect of a subject's present-tense verb ("i", "live" → "have lived"; "she",
    "is" → "has been"; "he", "works" → "has worked"), or None when the verb is not that tense."""
    aux = PERFECT_AUXILIARY[subject]
    if verb == PRESENT_BE[subject]:
        return f"{aux} been"
    if verb == ("has" if aux == "has" else "have"):
        return f"{aux} had"
    lemmas = getAllLemmas(verb).get("VERB", ())
    if aux == "has":  # he works: the lemma whose -s form this is
        lemma = next((form for form in lemmas if verb in getInflection(form, "VBZ")), None)
    else:  # I work: the base form itself
        lemma = verb if verb in lemmas else None
    participle = getInflection(lemma, "VBN") if lemma else None
    return f"{aux} {participle[0]}" if participle else None


RELATIVE_SUBJECTS = frozenset("who which that".split())
PERFECT_ADVERBS = frozenset("not never already just always ever".split())


# what follows a noun that is the subject's head, not a verb ("service has", "transport is")
NOUN_HEAD_FOLLOWERS = frozenset("has have is are was were will can could would should must".split())


def _other_subject(tokens: Sequence[Token], words: list[str], i: int) -> bool:
    """Whether `words[i]` is a subject other than a pronoun before its present verb: a relative
    (who, which), a noun, or a name; the verb a present that agrees with it."""
    word, verb = words[i], word_after(words, i + 1)
    if i > 0 and words[i - 1] in PERFECT_AUXILIARY:
        return False  # "I work like an accountant": "work" is the pronoun's verb, no subject
    if not (verb in ("is", "are") or is_third_person_form(verb) or is_base_verb(verb)):
        return False
    if word_after(words, i + 2) in NOUN_HEAD_FOLLOWERS:
        return False  # "The bus service has been", "public transport has improved": a noun, then its verb
    if word in RELATIVE_SUBJECTS:
        return True
    lemmas = getAllLemmas(word)
    return tokens[i].is_word and word not in FUNCTION_WORDS and ("NOUN" in lemmas or tokens[i].text[:1].isupper())


def _one_thing_before(words: list[str], i: int) -> bool:
    """Whether the clause before `words[i]` ("don't") names one thing and no one else: "the heater
    in my apartment don't work" (→ hasn't), not "the kids in my street don't" nor "we don't"."""
    nouns = []
    for word in reversed(words[:i]):
        if word in _CLAUSE_BREAKS or word == ",":
            break
        if word in PLURAL_PRONOUNS or is_plural_noun(word):
            return False
        if word not in FUNCTION_WORDS and "NOUN" in getAllLemmas(word):
            nouns.append(word)
    return bool(nouns)


def _participle_of_base(word: str) -> str | None:
    """work → worked, see → seen: the participle of a verb's base form (None for anything else)."""
    if word not in getAllLemmas(word).get("VERB", ()):
        return None
    participle = getInflection(word, "VBN")
    return participle[0] if participle else None


def _is_participle(word: str) -> bool:
    return any(word in getInflection(lemma, "VBN") for lemma in getAllLemmas(word).get("VERB", ()))


def present_since(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I live here since 2015 → have lived; She is married since 2010 → has been married; I work
    here since two years → have worked (and "for", by `since_for`): Spanish keeps the present
    with "desde" and "desde hace", English takes the present perfect. Only a subject pronoun and
    its verb in the clause of a "since" that starts a time; not in a question (Do you live...)."""
    if "since" not in words or "until" in words or "till" in words:
        return  # "I am available since June until September": a stretch, not "desde"
    k = next((k for k, w in enumerate(words) if w == "since" and _since_a_time(words, k)), None)
    if k is None:
        return
    for i in range(max(0, k - 10), k - 1):
        subject, verb = words[i], words[i + 1]
        if subject in ("don't", "doesn't") and not (_CLAUSE_BREAKS | {","}) & set(words[i + 2 : k]):
            # the heating doesn't work since Sunday → hasn't worked (the auxiliary agrees for it)
            participle = _participle_of_base(verb)
            if participle is not None:
                have = "hasn't" if subject == "doesn't" or _one_thing_before(words, i) else "haven't"
                yield replace_tokens(tokens, i, i + 2, f"{have} {participle}", "present_perfect", text)
                return
            continue
        if subject in CONTRACTED_BE and verb.endswith("ing") and "VERB" in getAllLemmas(verb):
            # it's raining since this morning → it has been raining, I'm living here since → I have been
            if not (_CLAUSE_BREAKS | {","}) & set(words[i + 2 : k]):
                pronoun, have = CONTRACTED_BE[subject]
                yield replace_tokens(tokens, i, i + 2, f"{pronoun} {have} been {verb}", "present_perfect", text)
                return
            continue
        going_on = word_after(words, i + 2)
        if subject == "it" and verb == "is" and going_on.endswith("ing") and "VERB" in getAllLemmas(going_on):
            # it is raining since this morning → it has been raining ("it is" apart, as "it's" above)
            if not (_CLAUSE_BREAKS | {","}) & set(words[i + 3 : k]):
                yield replace_tokens(tokens, i + 1, i + 3, f"has been {going_on}", "present_perfect", text)
                return
            continue
        if subject not in PERFECT_AUXILIARY and _other_subject(tokens, words, i):
            # who lives in London since → who has lived, the metro is stopped since → has been stopped
            if NOUN_HEAD_FOLLOWERS & set(words[i + 2 : k]):
                continue  # another verb before "since": "public transport in Valencia has improved"
            subject = "he" if verb == "is" or is_third_person_form(verb) else "they"
        if subject not in PERFECT_AUXILIARY or (i > 0 and words[i - 1] in ("do", "does", "did")):
            continue
        if _CLAUSE_BREAKS & set(words[i + 2 : k]) or "," in words[i + 2 : k]:
            continue
        after = word_after(words, i + 3) if word_after(words, i + 2) in PERFECT_ADVERBS else word_after(words, i + 2)
        if verb in ("have", "has") and _is_participle(after):
            return  # already a present perfect (I have lived, it has not worked, I have never been)
        perfect = _perfect_of(subject, verb)
        if perfect is not None:
            yield replace_tokens(tokens, i + 1, i + 2, perfect, "present_perfect", text)
            return


# verbs of events, whose present in a story set in the past is a slip ("and I see a film"); not
# states, which may still hold ("I moved here and I like it", "she went home and she knows it")
EVENT_VERBS = frozenset(
    """go say make get come eat drink watch speak write take see buy visit leave give open close start
    finish play""".split()
)
# words that make a present right beside a past time: a habit, a plan, a question's doubt
_NOT_A_STORY = frozenset(
    "will 'll going every usually always often sometimes never today tonight tomorrow next now ?".split()
)
_STORY_LINKS = frozenset(", and then so but".split())


def present_in_past_clause(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I go to the cinema yesterday → went; we play football last Sunday → played: a subject
    pronoun at the start of a clause, its verb in the present, a finished time later in the same
    clause ("Yesterday I go", with the time first, is `past_marker`'s)."""
    if "yesterday" not in words and "ago" not in words and "last" not in words:
        return  # no finished time: the common case, told cheaply
    if (
        _NOT_A_STORY & set(words)
        or _PERFECT_FRIENDS & set(words)
        or ("so", "far") in zip(words, words[1:], strict=False)
    ):
        return
    marks = _past_times(words)
    for i in range(len(words) - 1):
        if words[i] not in PAST_SUBJECTS or (i > 0 and words[i - 1] not in _STORY_LINKS):
            continue
        past = past_of(words[i + 1])
        if past is not None and any(k > i + 1 and _one_clause(words, i, i + 1, k) for k in marks):
            yield replace_tokens(tokens, i + 1, i + 2, past, "past_marker", text)


def present_after_past(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I went to the cinema and I see a good film → saw: a story's first clause in the past (a
    subject pronoun and its verb), then "and" a subject pronoun and a verb of an event in the
    present."""
    if ("and" not in words and "then" not in words) or _NOT_A_STORY & set(words):
        return
    opened = any(
        words[i] in PAST_SUBJECTS and base_of_past(words[i + 1]) is not None for i in range(min(len(words) - 1, 4))
    )
    if not opened:
        return
    for i in range(2, len(words) - 1):
        if words[i - 1] not in ("and", "then") or words[i] not in PAST_SUBJECTS:
            continue
        verb = words[i + 1]
        lemmas = getAllLemmas(verb).get("VERB", ())
        if EVENT_VERBS & set(lemmas) and (past := past_of(verb)) is not None:
            yield replace_tokens(tokens, i + 1, i + 2, past, "past_marker", text)


# conjunctions that start a clause of time or condition, whose verb is in the present in English
TIME_CLAUSE_OPENERS = frozenset("when if before after until once unless".split())
# "I don't know when he will come", "tell me if it will rain": a question reported, future right
_REPORTED = frozenset(
    """know knows knew tell told ask asked wonder wondering sure certain idea say said decide check
    whether see find remember doubt""".split()
)


def _present_of(subject: str, verb: str) -> str | None:
    """The present tense of base verb `verb` after `subject` ("he", "arrive" → "arrives")."""
    if verb == "be":
        return PRESENT_BE[subject]
    if verb not in getAllLemmas(verb).get("VERB", ()):
        return None
    if subject in ("he", "she", "it"):
        forms = getInflection(verb, "VBZ")
        return forms[0] if forms else None
    return verb


def future_in_time_clause(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """When I will arrive, I will call you → When I arrive; I will call you when I will arrive →
    when I arrive; If it will rain, we will stay → If it rains: a clause of time or condition
    opened by when/if/before/after/until/once/unless (or "as soon as") takes a present where the
    main clause has the future. Only at the sentence's start or after a main clause with "will",
    and not after a verb that reports a question ("I don't know when he will come" is right)."""
    if "will" not in words:
        return
    for k, word in enumerate(words):
        if word in TIME_CLAUSE_OPENERS:
            s = k + 1
        elif words[k : k + 3] == ["as", "soon", "as"]:
            s = k + 3
        else:
            continue
        if word_after(words, s) not in PRESENT_BE or word_after(words, s + 1) != "will":
            continue
        before = words[:k]
        if k > 0 and ("will" not in before and not any(w.endswith("'ll") for w in before) or _REPORTED & set(before)):
            continue
        if word == "if" and (words[s] == "you" or word_after(words, s + 2) in WILLING_IT_VERBS):
            continue  # "If you will wait here", "if it will help": willingness, a result; English
        present = _present_of(words[s], word_after(words, s + 2))
        if present is not None:
            yield replace_tokens(tokens, s + 1, s + 3, present, "verb_tense", text)


# "If it will help, I'll lend you the money": a "will" after "if" that is the main clause's result
WILLING_IT_VERBS = frozenset("help make save".split())


FIRST_TIME_OPENERS = (["it's", "the", "first", "time"], ["is", "the", "first", "time"])
PAST_FIRST_TIME = ["was", "the", "first", "time"]


def first_time(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """It's the first time I visit London → I have visited: "es la primera vez que visito" takes
    English's present perfect; It was the first time that I see snow → saw, a story's past."""
    if "first" not in words:
        return
    for k in range(len(words) - 5):
        past = words[k : k + 4] == PAST_FIRST_TIME
        if words[k : k + 4] not in FIRST_TIME_OPENERS and not past:
            continue
        s = k + 4 + (words[k + 4] == "that")
        subject, verb = word_after(words, s), word_after(words, s + 1)
        if verb in ("have", "has", "had") or subject not in PERFECT_AUXILIARY:
            continue  # a perfect already (I have seen, I have ever travelled), or "have" a thing
        if past:  # It was the first time I see snow → had seen (before that moment)
            # only a present ("I see"), which has a past of its own: "I saw" is a story's past already
            base = verb if is_base_verb(verb) else next(iter(getAllLemmas(verb).get("VERB", ())), None)
            participle = _participle_of_base(base) if base and past_of(verb) is not None else None
            if participle is not None:
                yield replace_tokens(tokens, s + 1, s + 2, f"had {participle}", "verb_tense", text)
            continue
        perfect = _perfect_of(subject, verb)
        if perfect is not None:
            yield replace_tokens(tokens, s + 1, s + 2, perfect, "present_perfect", text)


def had_already(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """When we arrived, the party has already started → had already started: before a moment in the
    past, what was finished by then takes the past perfect."""
    if words[:1] != ["when"] or "," not in words:
        return
    comma = words.index(",")
    if not any(base_of_past(w) is not None for w in words[1:comma]):
        return
    for k in range(comma + 1, len(words) - 2):
        if words[k] in ("has", "have") and words[k + 1] in ("already", "just") and _is_participle(words[k + 2]):
            yield replace_tokens(tokens, k, k + 1, "had", "verb_tense", text)
            return


def past_for_perfect(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I didn't see her since last year → haven't seen; I didn't finish yet → haven't finished; I
    lived in Madrid since 2010 → have lived; Did you finish yet? → Have you finished: a past with
    "since" a time, or "yet", in its clause takes the present perfect ("desde", "todavía"). Not
    beside "until" (since 2010 until 2015, a finished stretch)."""
    if ("since" not in words and "yet" not in words) or _A_STORY & set(words):
        return  # "When I saw him, he didn't know yet": a story's past, whose perfect is "had"
    for i in range(len(words) - 2):
        if words[i] == "did" and words[i + 1] in PERFECT_AUXILIARY and "yet" in _clause_from(words, i):
            participle = getInflection(words[i + 2], "VBN") if is_base_verb(words[i + 2]) else ()
            if participle:
                aux = PERFECT_AUXILIARY[words[i + 1]]
                subject = span_text(tokens, text, i + 1, i + 2)
                yield replace_tokens(tokens, i, i + 3, f"{aux} {subject} {participle[0]}", "present_perfect", text)
                return
        if words[i] not in PERFECT_AUXILIARY or (i > 0 and words[i - 1] in ("do", "does", "did")):
            continue
        clause = _clause_from(words, i)
        since = any(w == "since" and _since_a_time(words, i + k) for k, w in enumerate(clause))
        if not since and ("yet" not in clause or words[i + 2] in STATES):
            continue  # "I didn't know it yet" may tell a story
        aux, verb = PERFECT_AUXILIARY[words[i]], words[i + 1]
        if any(w in ("was", "were") for j, w in enumerate(words) if j != i + 1):
            return  # "It was a camera, the one that I wanted since last year": a story's "had wanted"
        if verb == "didn't" and is_base_verb(words[i + 2]) and (participle := getInflection(words[i + 2], "VBN")):
            yield replace_tokens(tokens, i + 1, i + 3, f"{aux}n't {participle[0]}", "present_perfect", text)
        elif since and verb in ("was", "were"):
            yield replace_tokens(tokens, i + 1, i + 2, f"{aux} been", "present_perfect", text)
        elif since and (base := base_of_past(verb)) and (participle := getInflection(base, "VBN")):
            yield replace_tokens(tokens, i + 1, i + 2, f"{aux} {participle[0]}", "present_perfect", text)
        return


# words of a story told in the past, or of a finished stretch ("since 2010 until 2015")
_A_STORY = frozenset("when had then yesterday ago until till".split())
STATES = frozenset("know understand realise realize believe think remember".split())


def _clause_from(words: list[str], i: int) -> list[str]:
    """The words from `i` to the end of their clause (a conjunction or a comma)."""
    end = next((k for k in range(i + 1, len(words)) if words[k] in _CLAUSE_BREAKS or words[k] == ","), len(words))
    return words[i:end]


TENSE_RULES = (
    past_marker,
    perfect_with_past_time,
    present_since,
    past_for_perfect,
    present_in_past_clause,
    present_after_past,
    future_in_time_clause,
    first_time,
    had_already,
)
