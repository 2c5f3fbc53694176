"""Which rule card is right for one edit (`expected_cards`): the card of its category whose sub-rule
matches the edit and its context (preposition "with → to" after "married" →
`preposition_married_to`), one matcher per category (`SUB_RULES`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lemminflect import getAllLemmas

from corrige.synth import lexicon as lx
from corrige.tutor.function_words import FUNCTION_WORDS
from corrige.tutor.knowledge import Card

_VOWEL_PASTS = {
    "drank",
    "swam",
    "sang",
    "began",
    "wrote",
    "drove",
    "rode",
    "spoke",
    "broke",
    "chose",
    "woke",
    "won",
    "ran",
    "came",
    "got",
    "forgot",
    "ate",
    "gave",
    "took",
    "flew",
    "drew",
    "grew",
    "wore",
    "knew",
    "saw",
    "sat",
}
_OUGHT_PASTS = {"bought", "brought", "thought", "taught", "caught", "fought"}
_SAME_PASTS = {"read", "put", "cut", "hit", "cost", "let", "set", "shut"}
_BE = {"is", "are", "am", "was", "were", "isn't", "aren't", "wasn't", "weren't"}
_WEATHER = re.compile(r"\b(rain|rains|raining|snow|snows|snowing|windy|sunny|cold|hot|cloudy|warm|wet|foggy)\b")
_EMBEDDING = re.compile(r"\b(know|tell|told|explain|explained|wonder|ask|asked|understand)\b")
_DAYS = {d.lower() for d in lx.DAYS} | {d.lower() + "s" for d in lx.DAYS}
_MONTHS = {m.lower() for m in lx.MONTHS}
_LANGUAGE_SUBJECTS = {w.lower() for w in lx.LANGUAGES + lx.SCHOOL_SUBJECTS}


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", text.lower())


def _context(sentence: str, original: str, before: int = 25, after: int = 25) -> tuple[str, str]:
    """(text before, text after) the edit, lowercased, ``before``/``after`` characters wide."""
    low, orig = sentence.lower(), original.lower()
    found = re.search(rf"(?<!\w){re.escape(orig)}(?!\w)", low)  # the word, not its letters inside another ("noise")
    pos = found.start() if found else low.find(orig)
    if pos < 0:
        return low, low
    return low[max(0, pos - before) : pos], low[pos + len(orig) : pos + len(orig) + after]


def _past_irregular(o: str, r: str, s: str) -> str | None:
    w = r.lower()
    if w in _OUGHT_PASTS:
        return "past_irregular_ought"
    if w in _SAME_PASTS:
        return "past_irregular_same_form"
    if w in _VOWEL_PASTS:
        return "past_irregular_vowel"
    return "past_irregular_frequent"


def _third_person(o: str, r: str, s: str) -> str | None:
    first = _words(r)[0]
    if first in ("does", "doesn't"):
        return "third_person_does"
    if first in ("has", "hasn't"):
        return "third_person_has"
    return "third_person_s"


def _a_an(o: str, r: str, s: str) -> str | None:
    return "a_an_vowel_sound" if _words(r)[0] == "an" else "a_an_consonant_sound"


def _profession(o: str, r: str, s: str) -> str | None:
    before, _ = _context(s, o)
    words = _words(r)
    adjectives = {a for group in lx.ADJ_GROUPS.values() for a in group} | {n.lower() for n in lx.NATIONALITIES}
    if len(words) > 2 and words[1] in adjectives | _LANGUAGE_SUBJECTS or (len(words) == 2 and words[1] in adjectives):
        return "profession_article_adjective"
    if before.rstrip().endswith(" as"):
        return "profession_article_as"
    return "profession_article_be"


def _generic(o: str, r: str, s: str) -> str | None:
    noun = _words(r)[-1]
    if noun in lx.SPORTS:
        return "generic_the_sports"
    if noun in lx.MEALS:
        return "generic_the_meals"
    if noun in _LANGUAGE_SUBJECTS:
        return "generic_the_languages"
    if noun in lx.ABSTRACT_NOUNS:
        return "generic_the_abstract"
    return None


def _age(o: str, r: str, s: str) -> str | None:
    return "age_be_past" if _words(r)[0] in ("was", "were") else "age_be"


def _adjective_plural(o: str, r: str, s: str) -> str | None:
    """Before a noun (reds dresses) or not (are very difficults and …, are talls.)."""
    _, after = _context(s, o)
    following = _words(after)[:1]
    before_noun = bool(following) and after.strip()[0].isalpha() and following[0] not in FUNCTION_WORDS
    return "adjective_plural_noun" if before_noun else "adjective_plural_predicate"


def _adjective_order(o: str, r: str, s: str) -> str | None:
    return "adjective_order_before_noun"


_INTENSIFIERS = {"very", "so", "too", "really", "quite", "more", "most", "less", "a", "bit", "little", "much"}


def _adjective_follows(after: str) -> bool:
    """Is the first word after the intensifiers an adjective (… is very important to …)?"""
    words = [w for w in _words(after) if w not in _INTENSIFIERS]
    return bool(words) and "ADJ" in getAllLemmas(words[0])


def _missing_subject(o: str, r: str, s: str) -> str | set[str] | None:
    _, after = _context(s, o, after=40)
    if _words(o)[0] in ("takes", "took", "depends", "depended"):
        return "missing_subject_it_takes"
    weather = bool(_WEATHER.search(o.lower()) or _WEATHER.search(after))
    if o[:1].islower():  # inside the sentence: after because / if / when
        if weather:
            return {"missing_subject_clause", "missing_subject_weather"}
        # "because is impossible to sleep": the clause card, or "it is + adjetivo", which teaches it as well
        if _words(o)[0] in ("is", "was") and _adjective_follows(after):
            return {"missing_subject_clause", "missing_subject_it_adjective"}
        return "missing_subject_clause"
    return "missing_subject_weather" if weather else "missing_subject_it_adjective"


def _double_negation(o: str, r: str, s: str) -> str | None:
    before, _ = _context(s, o, before=40)
    return "double_negation_never" if re.search(r"\bnever\b", before) else "double_negation_any"


def _comparative(o: str, r: str, s: str) -> str | None:
    w = _words(r)[-1]
    if w in {"better", "best", "worse", "worst", "further", "furthest"}:
        return "comparative_irregular"
    return "comparative_est" if w.endswith("est") else "comparative_er"


_PREPOSITION_CUES: tuple[tuple[str, str], ...] = (
    (r"\bmarried\b", "preposition_married_to"),
    (r"\binterested\b", "preposition_interested_in"),
    (r"\b(good|bad)\b\s*$", "preposition_good_at"),
    (r"\bafraid\b", "preposition_afraid_of"),
    (r"\bdifferent\b", "preposition_different_from"),
    (r"\bdepend", "preposition_depend_on"),
    (r"\barriv", "preposition_arrive_at"),
    (r"\b(think|thinks|thought|thinking|dream|dreams|dreamt|dreamed|dreaming)\b", "preposition_think_about"),
    (
        r"\b(wait|waits|waited|waiting|listen|listens|listened|listening|look|looks|looked|looking)\b",
        "preposition_verb_needs",
    ),
)


# what starts a period of time: since three years, during two hours, since a long time
_PERIOD_STARTS = set(
    "a an one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty".split()
)
_PERIOD_STARTS |= {"several", "many", "some", "long", "ages"}


def _preposition(o: str, r: str, s: str) -> str | set[str] | None:
    before, after = _context(s, o, before=20, after=20)
    rw, ow = _words(r), _words(o)
    first_after = (_words(after)[:1] or [""])[0]
    if rw == ["for"] and ow in (["since"], ["during"]) and (first_after in _PERIOD_STARTS or first_after.isdigit()):
        return "preposition_for_period"  # since three years, during two hours → for
    if "home" in rw or "home" in ow:  # to home, in home: the home card; arrive's card says "arrive home" too
        arrive = re.search(r"\barriv", before) or re.search(r"\barriv", o.lower())
        return {"preposition_home", "preposition_arrive_at"} if arrive else "preposition_home"
    nxt = (rw[1:] or _words(after)[:1] or [""])[0]
    if (
        rw == ["on"] and nxt in _DAYS
    ):  # before a day the preposition is on, whatever verb came before (arrive … in Monday)
        return "preposition_on_days"
    for pattern, card in _PREPOSITION_CUES:
        if re.search(pattern, before.rstrip()) or re.search(pattern, o.lower()):
            return card
    if rw[0] == "by":
        return "preposition_by_transport"
    if nxt in _DAYS:
        return "preposition_on_days"
    if nxt in _MONTHS or nxt in ("night", "weekend") or (nxt == "the" and "weekend" in after[:15]):
        return "preposition_at_in_time"
    return None


_MODALS = {"can", "can't", "must", "mustn't", "should", "shouldn't", "could", "couldn't", "will", "might"}


def _verb_pattern(o: str, r: str, s: str) -> str | None:
    ow, rw = _words(o), _words(r)
    before, _ = _context(s, o)
    previous = (_words(before) or [""])[-1]  # the word just before the edit
    if "agree" in ow or "agree" in rw or "agrees" in rw:
        return "verb_pattern_agree"
    if any(w.startswith("explain") for w in ow + [previous]):
        return "verb_pattern_explain_to"
    if ow and ow[0] in ("said", "say", "says"):
        return "verb_pattern_tell_say"
    if ow and ow[0] == "that":
        return "verb_pattern_want_to"
    if ow and ow[0] in _MODALS or ow[:1] == ["to"] and previous in _MODALS:
        return "verb_pattern_modal"
    if rw and rw[-1].endswith("ing"):
        return "verb_pattern_ing"
    return None


def _collocation(o: str, r: str, s: str) -> str | None:
    verb = _words(r)[0]
    _, after = _context(s, o, after=30)
    if verb in ("take", "takes", "took", "taken", "taking"):
        return "collocation_take_photo"
    if verb.startswith("miss"):
        return "collocation_miss_train"
    if verb in ("spend", "spends", "spent", "spending"):
        return "collocation_spend_time"
    if verb in ("have", "has", "had", "having"):
        return "collocation_have_party"
    if verb in ("tell", "tells", "told", "telling"):
        return "collocation_tell_truth"
    if verb.startswith("ask") or verb in ("pay", "pays", "paid", "paying"):
        return "collocation_ask_question"
    if verb in ("do", "does", "did", "done", "doing"):
        return "collocation_do_tasks"
    if verb in ("make", "makes", "made", "making"):
        return "collocation_make_mistake"
    return None


_INFORMATION = {"information", "advice", "homework", "news", "knowledge", "research"}
_FURNITURE = {"furniture", "luggage", "equipment", "traffic"}


def _uncountable(o: str, r: str, s: str) -> str | None:
    noun = _words(r)[-1]
    if noun in _INFORMATION:
        return "uncountable_information"
    if noun in _FURNITURE:
        return "uncountable_furniture"
    return "uncountable_mass"


def _there(o: str, r: str, s: str) -> str | set[str] | None:
    past = _words(r)[0] in ("were", "weren't")
    if s.rstrip().endswith("?"):
        return {"there_are_question", "there_were_past"} if past else "there_are_question"
    return "there_were_past" if past else "there_are_plural"


def _purpose(o: str, r: str, s: str) -> str | None:
    return "purpose_to_infinitive"


def _present_perfect(o: str, r: str, s: str) -> str | None:
    low = s.lower()
    if "how long" in low:
        return "present_perfect_how_long"
    if re.search(r"\bsince\b", low):
        return "present_perfect_since"
    if re.search(r"\bfor\b", low):
        return "present_perfect_for"
    return None


def _past_marker(o: str, r: str, s: str) -> str | None:
    if _words(o)[0] in ("do", "does", "don't", "doesn't"):
        return "past_marker_did"
    if re.match(r"\s*when\b", s.lower()):
        return "past_marker_when"
    return "past_marker_simple"


def _question_no_do(o: str, r: str, s: str) -> str | None:
    return {"do": "question_do_present", "does": "question_does_third", "did": "question_did_past"}.get(_words(r)[0])


def _question_order(o: str, r: str, s: str) -> str | None:
    before, _ = _context(s, o, before=40)
    rw = _words(r)
    if _EMBEDDING.search(before) and not s.lower().startswith(("where", "what", "when", "why", "how", "who")):
        return "question_order_embedded"
    if rw and rw[0] in ("do", "does", "did"):
        return "question_order_do"
    if rw and rw[0] in _BE or (rw and rw[-1] in _BE and len(rw) == 2):
        return "question_order_be"
    return None


def _possessive(o: str, r: str, s: str) -> str | None:
    return "possessive_owner" if _words(r)[0] in ("his", "her") else "possessive_its_their"


def _capitalisation(o: str, r: str, s: str) -> str | None:
    w = _words(r)[0]
    if w in _DAYS or w in _MONTHS:
        return "capitalisation_days_months"
    if w == "i":
        return "capitalisation_i"
    if re.match(r"\W*" + re.escape(o) + r"\b", s) and o[:1].islower():
        return "capitalisation_sentence_start"  # the sentence's first word, in lower case
    return "capitalisation_nationalities"


def _people(o: str, r: str, s: str) -> str | None:
    return "people_plural_be" if _words(r)[0] in _BE else "people_plural_verb"


def _adverb(o: str, r: str, s: str) -> str | None:
    return "adverb_very_much" if "very much" in o.lower() else "adverb_frequency"


SUB_RULES: dict[str, Callable[[str, str, str], str | set[str] | None]] = {
    "past_irregular": _past_irregular,
    "third_person": _third_person,
    "a_an": _a_an,
    "profession_article": _profession,
    "generic_the": _generic,
    "age_have": _age,
    "adjective_plural": _adjective_plural,
    "adjective_order": _adjective_order,
    "missing_subject": _missing_subject,
    "double_negation": _double_negation,
    "comparative": _comparative,
    "preposition": _preposition,
    "verb_pattern": _verb_pattern,
    "collocation": _collocation,
    "uncountable": _uncountable,
    "there_is_plural": _there,
    "purpose_for": _purpose,
    "present_perfect": _present_perfect,
    "past_marker": _past_marker,
    "question_no_do": _question_no_do,
    "question_order": _question_order,
    "possessive_his_her": _possessive,
    "capitalisation": _capitalisation,
    "people_plural": _people,
    "adverb_position": _adverb,
}


def expected_cards(
    category: str, original: str, replacement: str, sentence: str, cards: Sequence[Card]
) -> tuple[frozenset[str], bool]:
    """The acceptable card ids for one edit and whether a sub-rule was pinned.

    Unpinned (no matcher, or the matcher could not decide): every card of the category.
    """
    ids = {c.id for c in cards}
    rule = SUB_RULES.get(category)
    picked = rule(original, replacement, sentence) if rule and original and replacement else None
    if picked:
        chosen = {picked} if isinstance(picked, str) else set(picked)
        unknown = chosen - ids
        if unknown:
            raise KeyError(f"sub-rule matcher for {category} names unknown cards {sorted(unknown)}")
        return frozenset(chosen), True
    return frozenset(c.id for c in cards if c.category == category), False
