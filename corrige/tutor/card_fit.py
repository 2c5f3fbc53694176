"""Does a rule card teach this edit? Same category, and an example that goes the same way.

Retrieval ranks cards by the words of the sentence and the edit; words shared with the wrong card
can win ("a party in Friday" has the "in" of "interested in"). A card shown beside an edit must
teach that edit, or it teaches the opposite: "interested in, nunca on" beside in → on. So a card
fits an edit when it is of the edit's category and one of its examples' edits goes the same way:

* the same words (``in → on`` and ``in Saturday → on Saturday``'s ``in → on``);
* function words (prepositions, articles, auxiliaries, pronouns) swapped, added or dropped:
  the same word put in (``at → on`` fits "on + days", ``on → in`` does not), or for a word
  dropped, the same word taken out;
* a change of case only (``italian → Italian``) and another such change;
* content words changed in form: the same change at the same place, ignoring the stem
  (``speak → speaks`` fits ``work → works``; not ``don't → doesn't``, whose words are auxiliaries;
  ``days → day`` does not fit ``friend → friends``), a doubled letter counting as one kind of
  change (``realy → really`` fits ``diferent → different``; ``writting → writing`` does not),
  and a word for one of another stem fitting the same only where the same word is put in, in any
  form (``made → did`` fits *make my homework → do my homework*; ``make → do`` does not fit *do a
  mistake → make a mistake* nor *make a question → ask a question*) or both are pasts made regular
  (``runned → ran`` fits ``goed → went``);
* several words: the same words put in and taken out, a content word changed in form counting
  by the ending it gains or loses (``more tall → taller`` fits ``more big → bigger``: "more"
  out, a word that gains "-er"; ``to swim → swimming`` fits ``to read → reading``).

A card may also say where it holds (`Card.words`, `Card.cue`): the "good → better" card fits only
an edit that puts in better, best, worse…, the "When I was…" card only a sentence with "when"
(a cue may name the edit's place: `<edit>` stands for its words, so the "can go" card wants
"can" right before them), the "Are there…?" card only a question, and each capital-letter card only its own words (days
and months, "I", languages and nationalities): a case change looks the same for all of them.

Where no card fits, none is shown: no card is better than a wrong one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from corrige.tutor.function_words import FUNCTION_WORDS
from corrige.tutor.knowledge import Card

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")

Change = tuple[str, str]  # (original, replacement), lower case, as the edit's words


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _is_function(words: list[str]) -> bool:
    return bool(words) and all(w in FUNCTION_WORDS for w in words)


def _shape(original: str, replacement: str) -> tuple[str, str, str] | None:
    """How one word became another, without its stem: the letters taken out and put in, and where
    (``speak → speaks``: ("", "s", "end")); a letter doubled or undoubled is ("double", "", where).
    None when the two share no stem (``goed → went``)."""
    a, b = original, replacement
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    if prefix + suffix < 2:
        return None
    out, put = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    where = "end" if suffix == 0 else "start" if prefix == 0 else "middle"
    changed, word, at = (put, b, prefix) if not out else (out, a, prefix) if not put else ("", "", -1)
    if len(changed) == 1 and at >= 0 and ((at > 0 and word[at - 1] == changed) or word[at + 1 : at + 2] == changed):
        return ("double" if put else "undouble", "", where)
    return (out, put, where)


@functools.lru_cache(maxsize=4096)
def _lemma(word: str) -> str:
    """The word's dictionary form (made → make, told → tell), or the word."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word)
    for pos in ("VERB", "AUX", "NOUN", "ADJ"):
        if pos in lemmas:
            return lemmas[pos][0]
    return word


def same_way(edit: Change, example: Change) -> bool:
    """`edit` and an example's edit go the same way (module docstring)."""
    if edit == example:
        return True
    (eo, er), (xo, xr) = edit, example
    if eo == er and xo == xr:  # both a change of case only (the words are compared in lower case)
        return True
    e_old, e_new, x_old, x_new = _words(eo), _words(er), _words(xo), _words(xr)
    if _is_function(e_old + e_new) or _is_function(x_old + x_new):
        if e_new or x_new:
            return bool(e_new) and e_new[-len(x_new) :] == x_new if x_new else False
        return e_old == x_old  # a word dropped: the same word
    if len(e_old) == len(e_new) == len(x_old) == len(x_new) == 1:  # one word for another
        shape = _shape(e_old[0], e_new[0])
        if shape is None:  # whole words: the same word put in (any form), or both a past made regular
            return _shape(x_old[0], x_new[0]) is None and (
                _lemma(e_new[0]) == _lemma(x_new[0]) or (_regularised(e_old[0], e_new[0]) and _regularised(*example))
            )
        return shape == _shape(x_old[0], x_new[0])
    edit_sign = _several(e_old, e_new)
    return edit_sign != ((), (), ()) and edit_sign == _several(x_old, x_new)


def _regularised(old: str, new: str) -> bool:
    """Whether `old` is `new`'s verb given a regular past (goed → went, writed → wrote), not another
    verb's past (passed → had)."""
    return old.endswith("ed") and old.startswith(_lemma(new).rstrip("e"))


def _stem_pair(old: str, new: str) -> bool:
    """Two content words of one stem (tall, taller; go, going; easy, easier)."""
    if old in FUNCTION_WORDS or new in FUNCTION_WORDS:
        return False
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    return prefix >= 3 or prefix == min(len(old), len(new)) >= 2


def _several(old: list[str], new: list[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """A change of several words: the words taken out and put in, a content word changed in form
    as the ending it gains or loses (tall → taller: "+er") rather than as two words."""
    removed = [w for w in old if w not in new]
    added = [w for w in new if w not in old]
    forms = []
    for a in list(added):
        b = next((r for r in removed if _stem_pair(r, a)), None)
        if b is not None:
            removed.remove(b)
            added.remove(a)
            forms.append(f"+{a[-2:]}" if len(a) > len(b) else f"-{b[-2:]}")
    return tuple(sorted(set(removed))), tuple(sorted(set(added))), tuple(sorted(forms))


@functools.lru_cache(maxsize=512)
def example_changes(card: Card) -> tuple[Change, ...]:
    """The word changes of a card's examples (wrong → right)."""
    return tuple(change for example in _changes_by_example(card) for change in example)


@functools.lru_cache(maxsize=512)
def _changes_by_example(card: Card) -> tuple[tuple[Change, ...], ...]:
    from corrige.tutor.edits import diff_edits

    return tuple(
        tuple((e.original.lower(), e.replacement.lower()) for e in diff_edits(ex.wrong, ex.right))
        for ex in card.examples
    )


def with_fitting_example_first(card: Card, changes: Iterable[Change]) -> Card:
    """`card` with its first example (the one a response shows) one that goes the way of one of
    `changes`: beside *it's → its* the card shows *eating it's food → its food*, not *Its very
    cold → It's*, which teaches the opposite."""
    wanted = [(o.lower(), r.lower()) for o, r in changes]
    by_example = _changes_by_example(card)
    # the same words first (during → for beside "waited during two hours"), then the same way
    for goes in (lambda change, x: change == x, same_way):
        k = next((k for k, ex in enumerate(by_example) if any(goes(c, x) for c in wanted for x in ex)), None)
        if k is not None:
            if k == 0:
                return card
            examples = (card.examples[k], *card.examples[:k], *card.examples[k + 1 :])
            return card.model_copy(update={"examples": examples})
    return card


@functools.lru_cache(maxsize=256)
def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


EDIT_MARK = "<edit>"


def _at_edit(cue: str, original: str) -> str:
    """The cue with its `<edit>` standing for the edit's own words: a cue may say what stands right
    before the edit ("can" before "to swim"), not just somewhere in the sentence."""
    return cue.replace(EDIT_MARK, re.escape(original)) if EDIT_MARK in cue else cue


def fits(card: Card, category: str, original: str, replacement: str, sentence: str | None = None) -> bool:
    """The card teaches this edit: its category, an example that goes the same way, and where the
    card names them, one of its words put in and its cue in the sentence (where the cue says `<edit>`, the
    edit's words stand there; not checked when the sentence is not given)."""
    if card.category != category:
        return False
    if card.words and not set(_words(replacement)) & set(card.words):
        return False
    if card.cue and sentence is not None and not _cue(_at_edit(card.cue, original)).search(sentence):
        return False
    change = (original.lower(), replacement.lower())
    return any(same_way(change, example) for example in example_changes(card))


def fitting(
    cards: Iterable[Card], category: str, original: str, replacement: str, sentence: str | None = None
) -> list[Card]:
    """The cards, in their order, that teach the edit."""
    return [c for c in cards if fits(c, category, original, replacement, sentence)]
