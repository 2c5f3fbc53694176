"""Words a Spanish speaker puts where Spanish puts them: "I like very much football" (me gusta
mucho el fútbol), "Can you explain me the problem?" (¿me puedes explicar el problema?), "I want
that you come" (quiero que vengas), "Do you know where is the station?" (¿sabes dónde está la
estación?) and "What means this word?" (¿qué significa esta palabra?). English wants the object
right after its verb, then "very much", then "to me"; after "want" the person, then "to" and the
verb; and a question inside a sentence in a statement's order.

The rules that move an object move a short one, up to the end of its clause, and only after the
verbs that take it; an object that goes on into another clause ("I like very much that you came")
is left alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from lemminflect import getAllLemmas, getInflection

from corrige.tutor import pattern_words as shared
from corrige.tutor.edits import Edit, Token

LIKING_VERBS = frozenset("like likes liked love loves loved enjoy enjoys enjoyed".split())
NOT_AN_OBJECT = shared.BE_FORMS | frozenset("has have had will would can could should must do does did".split())
# adverbs that go after the object of these verbs ("me gusta mucho el fútbol": I like football very
# much; "hablo muy bien inglés": I speak English very well)
_LIKING = (("very", "much"), ("so", "much"), ("a", "lot"))
_WELL = (("very", "well"), ("really", "well"), ("so", "well"), ("well",), ("fluently",), ("very", "fluently"))
_USE = (("effectively",), ("properly",), ("correctly",), ("responsibly",), ("efficiently",), ("wisely",))
ADVERBS_AFTER_OBJECT = {
    **dict.fromkeys(LIKING_VERBS, _LIKING),
    **dict.fromkeys(
        """speak speaks spoke play plays played know knows knew describe describes described cook cooks
        cooked understand understands understood explain explains explained sing sings sang write writes
        wrote""".split(),
        _WELL,
    ),
    # "usar bien estas herramientas": use these tools effectively
    **dict.fromkeys("use uses used".split(), _USE),
}
EXPLAIN_FORMS = frozenset("explain explains explained explaining".split())
OBJECT_PRONOUNS = frozenset("me us him".split())
# "her" and "them" are the people only before what is explained ("explained her the situation"),
# not in "explained her problem" (hers) or "explain them to me" (the things)
AFTER_HER = frozenset("the a an this these those everything all it".split())
# words an object of a few words does not hold: another clause or subject begins at them
CLAUSE_WORDS = frozenset(
    """and but or because when while if that so than where which who how why what i you he she we they
    it""".split()
)
LONGEST_OBJECT = 6  # words
# a conjunction and a subject after an object: the object ended ("football and I play")
JOINING = frozenset("and but because so when while".split())


def _object_end(tokens: Sequence[Token], words: list[str], start: int) -> int | None:
    """Where an object that starts at `start` ends: at the clause's end (a punctuation mark, the
    sentence's end, or a conjunction before a new subject), if it is one to six words with no other
    clause in them; None otherwise."""
    end = start
    while end < len(words) and (tokens[end].is_word or _in_a_list(tokens, words, start, end)):
        if end > start and words[end] in JOINING and shared.word_after(words, end + 1) in shared.SUBJECT_PRONOUNS:
            return end  # "football and I play...": the next clause starts
        listed = words[end] in ("and", "or") and end > start and _names_a_thing(tokens, words, end + 1)
        if (words[end] in CLAUSE_WORDS and not listed) or end - start >= LONGEST_OBJECT:
            return None
        end += 1
    ends_clause = end == len(words) or words[end] in shared.ENDS_A_PHRASE
    return end if end > start and ends_clause else None


def _in_a_list(tokens: Sequence[Token], words: list[str], start: int, end: int) -> bool:
    """A comma inside a list the object is ("Spanish, English and Portuguese"): a thing after it
    and an "and" later before the clause ends."""
    if words[end] != "," or end == start or not _names_a_thing(tokens, words, end + 1):
        return False
    rest = words[end + 1 : end + LONGEST_OBJECT]
    return "and" in rest and not {",", ".", ";"} & set(rest[: rest.index("and")])


def _names_a_thing(tokens: Sequence[Token], words: list[str], k: int) -> bool:
    """Whether the word at `k`, after "and", goes on the object ("English and French", "nature and
    hiking"), not a new verb ("football and play tennis") or subject."""
    if k >= len(words) or not tokens[k].is_word or words[k] in shared.SUBJECT_PRONOUNS:
        return False
    word, lemmas = words[k], getAllLemmas(words[k])
    gerund = word.endswith("ing") and "VERB" in lemmas  # "nature and hiking"
    return tokens[k].text[:1].isupper() or gerund or ("NOUN" in lemmas and not shared.is_base_verb(word))


def adverb_after_object(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I like very much football → I like football very much; we enjoyed so much the trip → the
    trip so much."""
    if not ADVERBS_AFTER_OBJECT.keys() & set(words):
        return
    for i in range(len(words) - 2):
        size = _adverb_after(words, i)
        if not size:
            continue
        start = i + 1 + size  # the object's first word
        end = _object_end(tokens, words, start)
        if end is not None:
            moved = f"{shared.span_text(tokens, text, start, end)} {shared.span_text(tokens, text, i + 1, start)}"
            yield shared.replace_tokens(tokens, i + 1, end, moved, "adverb_position", text)


TIME_STARTS = frozenset("last yesterday today tonight tomorrow this next every at on in during for when".split())


def _adverb_after(words: list[str], i: int) -> int:
    """How many words of an adverb of degree or manner stand right after the verb at `i`, before
    its object ("like very much football", "speak very well English"); 0 for none."""
    for adverb in ADVERBS_AFTER_OBJECT.get(words[i], ()):
        after = shared.word_after(words, i + 1 + len(adverb))
        # "played really well last night": a time, not an object
        if (
            tuple(words[i + 1 : i + 1 + len(adverb)]) == adverb
            and after != "of"
            and after not in NOT_AN_OBJECT | TIME_STARTS
        ):
            return len(adverb)  # not "like a lot of things", "the film we enjoyed a lot was French"
    return 0


def object_before_to_me(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Can you explain me the problem? → explain the problem to me ("explain me how it works",
    with a question word, is `patterns.verb_patterns`': explain to me how)."""
    for i in range(len(words) - 2):
        her = words[i + 1] in ("her", "them") and words[i + 2] in AFTER_HER
        if words[i] not in EXPLAIN_FORMS or not (words[i + 1] in OBJECT_PRONOUNS or her):
            continue
        end = _thing_explained_end(tokens, words, i + 2)
        if end is not None:
            moved = f"{shared.span_text(tokens, text, i + 2, end)} to {shared.span_text(tokens, text, i + 1, i + 2)}"
            yield shared.replace_tokens(tokens, i + 1, end, moved, "verb_pattern", text)


def _thing_explained_end(tokens: Sequence[Token], words: list[str], start: int) -> int | None:
    """Where the thing explained that starts at `start` ends: one word ("everything", "it"), or a
    noun phrase up to the preposition, time or clause after it ("explained me the rules on the
    first day" → "explained the rules to me on the first day"); None for anything longer."""
    if words[start] in WHOLE_THINGS:
        return start + 1
    after = shared.word_after(words, start + 1)
    if words[start] == "that" and (after in NOUN_OPENERS or after in shared.SUBJECT_PRONOUNS or after in CLAUSE_WORDS):
        return None  # "explained me that the dog was new": a clause, not "that thing"
    if words[start] not in NOUN_OPENERS:
        return _object_end(tokens, words, start)
    end = start + 1
    while end < len(words) and tokens[end].is_word and words[end] not in AFTER_A_THING:
        if words[end] in CLAUSE_WORDS or words[end] in shared.SUBJECT_PRONOUNS:
            return None  # "explained me that he was lost": a clause, `patterns.verb_patterns`'
        end += 1
        if end - start > LONGEST_OBJECT:
            return None
    return end if end > start + 1 else None


# a thing explained in one word, and what may follow a noun phrase explained ("the rules on Monday")
WHOLE_THINGS = frozenset("everything something anything it".split())
AFTER_A_THING = shared.ENDS_A_PHRASE | frozenset(
    "in on at during for with from to yesterday today tomorrow because when before after again".split()
)
# quiero que vengas: I want you to come
WANTING = frozenset("want wants wanted need needs needed".split())
NOUN_OPENERS = frozenset("the a my your his her our its their these those this that some any all basic special".split())
OBJECT_OF = {"i": "me", "you": "you", "he": "him", "she": "her", "we": "us", "they": "them", "it": "it"}


def _base_form(verb: str) -> str | None:
    """The base form of a verb given as its base or its -s form ("come", "comes" → "come")."""
    lemmas = getAllLemmas(verb).get("VERB", ())
    if verb in lemmas:
        return verb
    return next((lemma for lemma in lemmas if verb in getInflection(lemma, "VBZ")), None)


def object_and_to(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I want that you come → I want you to come; I would like that you send me → I would like you
    to send me: after want (or would like), the person and "to" with the verb, not a "that" clause."""
    for i in range(len(words) - 3):
        # "the needs that we have" is a noun's: not after a determiner
        verb = words[i] in WANTING and (i == 0 or words[i - 1] not in NOUN_OPENERS)
        wanting = verb or (words[i] == "like" and i > 0 and (words[i - 1] == "would" or words[i - 1].endswith("'d")))
        if not wanting or words[i + 1] != "that" or words[i + 2] not in OBJECT_OF:
            continue
        base = _base_form(words[i + 3])
        if base is not None and base not in ("will", "would", "can", "could", "should", "must", "may", "might"):
            replacement = f"{OBJECT_OF[words[i + 2]]} to {base}"
            yield shared.replace_tokens(tokens, i + 1, i + 4, replacement, "verb_pattern", text)


# ¿sabes dónde está la estación?: do you know where the station is? (a question inside a sentence
# keeps a statement's order); not "who"/"which", which may be the subject ("I know who is coming")
ASKING = frozenset(
    "know knows knew tell told wonder wondering wondered ask asked asking understand remember sure idea".split()
)
QUESTION_OPENERS = frozenset("where what when why how".split())
PHRASE_OPENERS = frozenset("the a an my your his her our their this that these those".split())
OBJECTS = frozenset("me us him her them you".split())
DO_FORMS = frozenset("do does did".split())
# adverbs that stand between "have" and its participle ("I have never seen")
FREQUENCY_ADVERBS = frozenset("never already always just ever".split())
MODALS = frozenset("would could should might must may will can".split())
PERFECT_HAVE = frozenset("have has had".split())


def _asked_before(words: list[str], i: int) -> bool:
    """Whether a verb that asks or knows stands right before `words[i]` (its object between)."""
    j = i - 1 - (i >= 2 and words[i - 1] in OBJECTS)
    return j >= 0 and words[j] in ASKING


def question_inside(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """Do you know where is the station? → where the station is; I don't know what is the
    problem → what the problem is; can you tell me what time is it? → what time it is."""
    for i in range(1, len(words) - 2):
        if words[i] not in QUESTION_OPENERS or not _asked_before(words, i):
            continue
        if words[i : i + 4] == ["what", "time", "is", "it"]:
            yield shared.replace_tokens(tokens, i + 2, i + 4, "it is", "word_order", text)
            continue
        if words[i + 1] in DO_FORMS:
            yield from _without_do(tokens, words, i + 1, text)
            continue
        if words[i + 1] not in shared.BE_FORMS or shared.word_after(words, i + 2) not in PHRASE_OPENERS:
            continue
        end = _object_end(tokens, words, i + 2)
        if end is None or end - (i + 2) > 4 or not _ends_in_noun(tokens, words, end - 1):
            continue
        moved = f"{shared.span_text(tokens, text, i + 2, end)} {shared.span_text(tokens, text, i + 1, i + 2)}"
        yield shared.replace_tokens(tokens, i + 1, end, moved, "word_order", text)


def _without_do(tokens: Sequence[Token], words: list[str], k: int, text: str) -> Iterator[Edit]:
    """Tell me what do you think → what you think; I don't know where does he live → where he
    lives; do you know what did she say → what she said: a question inside a sentence has no "do"."""
    subject, verb = shared.word_after(words, k + 1), shared.word_after(words, k + 2)
    if subject not in shared.SUBJECT_PRONOUNS or not shared.is_base_verb(verb) or verb in ("be", "do"):
        return
    third = subject in ("he", "she", "it")
    if words[k] == "did":
        forms = getInflection(verb, "VBD")
    elif words[k] == "does":
        forms = getInflection(verb, "VBZ") if third else ()
    else:
        forms = () if third else (verb,)
    if forms:
        form = forms[0]
        yield shared.replace_tokens(tokens, k, k + 3, f"{tokens[k + 1].text} {form}", "word_order", text)


def _ends_in_noun(tokens: Sequence[Token], words: list[str], k: int) -> bool:
    """A noun phrase's last word: a noun that is no adjective ("what is the best" may be right as it
    is), or a name (the capital of France)."""
    lemmas = getAllLemmas(words[k])
    return ("NOUN" in lemmas and "ADJ" not in lemmas) or tokens[k].text[:1].isupper()


def what_does_it_mean(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """What means this word? → What does this word mean? (¿Qué significa esta palabra?): a question
    about a meaning takes "does"."""
    if words[:2] != ["what", "means"] or words[-1:] != ["?"]:
        return
    end = len(words) - 1
    if 2 < end <= 6 and words[2] in PHRASE_OPENERS and all(tokens[k].is_word for k in range(2, end)):
        moved = f"does {shared.span_text(tokens, text, 2, end)} mean"
        yield shared.replace_tokens(tokens, 1, end, moved, "question_order", text)


def what_is_it_called(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """How is called this in English? → What is this called in English?; How is it called? → What
    is it called? (¿Cómo se llama?): a name is asked with "what", its noun before "called"."""
    if words[:1] != ["how"] or words[-1:] != ["?"] or len(words) < 4 or words[1] not in ("is", "was"):
        return
    if words[2] in ("it", "this", "that") and words[3] == "called":
        yield shared.replace_tokens(tokens, 0, 1, "what", "question_order", text)
    elif words[2] == "called":
        end = next((k for k in range(3, len(words)) if not tokens[k].is_word or words[k] in ("in", "at")), None)
        if end is not None and 3 < end <= 6:
            moved = f"what {words[1]} {shared.span_text(tokens, text, 3, end)} called"
            yield shared.replace_tokens(tokens, 0, end, moved, "question_order", text)


def adverb_before_auxiliary(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I never had felt so afraid → I had never felt; the thief already had escaped → had already
    escaped: these adverbs go after "have" in a perfect; and "Always I go" → "I always go" (the
    adverb before the verb, after its subject)."""
    if not FREQUENCY_ADVERBS & set(words):
        return
    if len(words) > 2 and words[0] in ("always", "never") and words[1] in shared.PAST_SUBJECTS:
        if "VERB" in getAllLemmas(words[2]):
            subject = tokens[1].text if words[1] == "i" else words[1]
            yield shared.replace_tokens(tokens, 0, 2, f"{subject} {words[0]}", "word_order", text)
    for i in range(len(words) - 2):
        if words[i] in FREQUENCY_ADVERBS and words[i + 1] in PERFECT_HAVE and _participle(words[i + 2]):
            if i > 0 and words[i - 1] in MODALS:
                continue  # "I would never have finished": after a modal the adverb may come first
            moved = f"{shared.span_text(tokens, text, i + 1, i + 2)} {tokens[i].text}"
            yield shared.replace_tokens(tokens, i, i + 2, moved, "word_order", text)


def _participle(word: str) -> bool:
    return any(word in getInflection(v, "VBN") for v in getAllLemmas(word).get("VERB", ()))


def also_before_participle(tokens: Sequence[Token], words: list[str], text: str) -> Iterator[Edit]:
    """I have worked also in projects → I have also worked ("también he trabajado"): "also" goes
    between "have" and its participle."""
    for i in range(len(words) - 2):
        if words[i] in PERFECT_HAVE and words[i + 2] == "also" and _participle(words[i + 1]):
            moved = f"{tokens[i + 2].text} {tokens[i + 1].text}"
            yield shared.replace_tokens(tokens, i + 1, i + 3, moved, "adverb_position", text)


WORD_ORDER_RULES = (
    adverb_after_object,
    also_before_participle,
    object_before_to_me,
    object_and_to,
    question_inside,
    what_does_it_mean,
    what_is_it_called,
    adverb_before_auxiliary,
)
