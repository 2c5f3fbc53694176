"""Does the gloss describe the edits the answer really makes?

The model writes the corrected sentence and its Spanish gloss in one go, and the two can
disagree: "sin errores" over a changed sentence, an item naming a replacement the sentence
does not contain ("is → has heed"), or an item cut off mid-word ("→ the football very mu").
A learner must never read an explanation of an edit that was not made, so the tutor abstains
when this check finds a disagreement.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from lemminflect import getAllLemmas

from corrige.tutor.answer_text import NO_ERRORS_GLOSS, GlossItem, render_gloss, split_gloss
from corrige.tutor.categories import LABELS, OTHER, id_of
from corrige.tutor.edit_labels import name_edit
from corrige.tutor.edits import Edit, Token, apply_edits, tokenize
from corrige.tutor.plausibility import FUNCTION_WORDS as PLAUSIBLE_FUNCTION_WORDS


def gloss_disagreement(source: str, corrected: str, gloss: str, edits: Sequence[Edit]) -> str | None:
    """Why the gloss does not describe `source` → `corrected`, or None when it does.

    A changed sentence needs a gloss whose every item has a known label, names words that
    occur in the source (its original) and in the correction (its replacement), and whose
    items explain every edit (no edit left in the `other` category).
    """
    if not edits:
        return None
    if gloss.strip() == NO_ERRORS_GLOSS:
        return "gloss_says_no_errors"
    items = split_gloss(gloss)
    if not items:
        return "gloss_unparsable"
    source_tokens, corrected_words = tokenize(source), _words(corrected)
    source_words = [t.text for t in source_tokens]
    for item in items:
        if id_of(item.label) == OTHER:
            return "gloss_unknown_label"
        if item.original == item.replacement:
            return "gloss_names_no_change"
        named = _words(item.original)
        if not _contains(source_words, named) or not _contains(corrected_words, _words(item.replacement)):
            return "gloss_names_missing_edit"
        if named and not _at_an_edit(source_tokens, named, edits):
            return "gloss_names_missing_edit"  # "a very → very" where "a very" was left as it was
    if any(e.category == OTHER for e in edits):
        return "edit_unexplained"
    unnamed = _words_no_item_names(items, edits)
    if unnamed - SMALL_WORDS:
        return "edit_partly_explained"  # "to wear → wear" beside "to wear trainers → wear train"
    if unnamed:
        return GLOSS_CUT_SHORT  # "had 17 years → was 17" beside "years → years old"
    return None


# an item cut short may leave out one of these ("was 17" for "was 17 years old"): the edits are
# the model's, its gloss is then written from them (`agent`); a content word left out is not
SMALL_WORDS = PLAUSIBLE_FUNCTION_WORDS
GLOSS_CUT_SHORT = "gloss_cut_short"


def _words_no_item_names(items: Sequence[GlossItem], edits: Sequence[Edit]) -> set[str]:
    """The words an edit puts in that no item's replacement has, and those it takes out that no
    item's original has: an item may name a move loosely ("your job → is your job" for "your job
    is → is your job"), but a word the answer changed and no item names is not explained."""
    named_in = Counter(w.lower() for item in items for w in _words(item.replacement))
    named_out = Counter(w.lower() for item in items for w in _words(item.original))
    unnamed: set[str] = set()
    for e in edits:
        before, after = (
            Counter(w.lower() for w in _words(e.original)),
            Counter(w.lower() for w in _words(e.replacement)),
        )
        unnamed |= set((after - before) - named_in) | set((before - after) - named_out)
    return unnamed


def _words(text: str) -> list[str]:
    return [t.text for t in tokenize(text)]


def _contains(words: Sequence[str], part: Sequence[str]) -> bool:
    """Is `part` a contiguous run of `words` (whole tokens, so a word cut short never matches)?"""
    n = len(part)
    return n > 0 and any(list(words[i : i + n]) == list(part) for i in range(len(words) - n + 1))


def _at_an_edit(tokens: Sequence[Token], part: Sequence[str], edits: Sequence[Edit]) -> bool:
    """Whether some place where the words `part` stand in the source touches an edit: the gloss
    item names words the answer changed, not words it left alone. The spaces around the words
    count as theirs: "has → has had" is an edit that puts "had" in after "has", which may start at
    the next word."""
    n = len(part)
    for i in range(len(tokens) - n + 1):
        if [t.text for t in tokens[i : i + n]] == list(part):
            start = tokens[i - 1].end if i > 0 else 0
            end = tokens[i + n].start if i + n < len(tokens) else tokens[-1].end
            if any(e.start <= end and e.end >= start for e in edits):
                return True
    return False


def explain(edits: Sequence[Edit]) -> str:
    """The gloss of `edits`, each item its category's label and the edit's own words."""
    return render_gloss([GlossItem(_label(e), e.original, e.replacement) for e in edits])


QUANTIFIERS = frozenset("much many less fewer few little".split())


def _label(e: Edit) -> str:
    """The category's label, or a more exact one its category teaches as well: "superlativo" for
    a comparative edit that writes a superlative (most nice → nicest), "cuantificador" for a
    quantity word that changes with the noun's number (much → many), "adverbio en -ly" for an
    adjective made its adverb (bad → badly), "determinante" for a determiner that is no article."""
    if e.category == "comparative" and _is_superlative(e.replacement):
        return "superlativo"
    if e.category == "noun_number" and {e.original.lower(), e.replacement.lower()} <= QUANTIFIERS:
        return "cuantificador"  # much → many: the word that counts changes, not the noun
    if e.category == "determiner" and _no_article_in(e):
        return "determinante"  # the → your, of teenagers → teenagers: a possessive, a quantity's "of"
    if e.category == "word_confusion" and _is_adverb_of(e.original.lower(), e.replacement.lower()):
        return "adverbio en -ly"  # slept very bad → badly: the adjective made its adverb
    return LABELS[e.category]


ARTICLE_WORDS = frozenset("a an the".split())
OTHER_DETERMINERS = frozenset("my your his her its our their this that these those some any every each no".split())


def _no_article_in(e: Edit) -> bool:
    """An edit of a determiner that is no article: none on either side, or one put in place of one
    (the → your)."""
    old, new = set(e.original.lower().split()), set(e.replacement.lower().split())
    added = new - old
    return not (old | new) & ARTICLE_WORDS or (bool(added & OTHER_DETERMINERS) and not added & ARTICLE_WORDS)


def _is_adverb_of(old: str, new: str) -> bool:
    """ "very bad" → "very badly", "serious" → "seriously", "easy" → "easily"."""
    a, b = old.split(), new.split()
    if len(a) != len(b) or not a or a[:-1] != b[:-1]:
        return False
    return b[-1] in (a[-1] + "ly", a[-1][:-1] + "ily")


def _is_superlative(words: str) -> bool:
    return any(w in ("most", "least", "best", "worst") or _is_short_superlative(w) for w in words.lower().split())


def _is_short_superlative(word: str) -> bool:
    """nicest, biggest (not honest, modest: adjectives of their own)."""
    return word.endswith("est") and any(lemma != word for lemma in getAllLemmas(word).get("ADJ", ()))


def keep_explained(source: str, edits: Sequence[Edit], gloss: str) -> tuple[str, str, list[Edit]] | None:
    """The correction cut down to the edits its gloss explains, with a gloss rebuilt from them.

    Each kept edit keeps the label the model gave it (found where the gloss item's original
    words occur in the source) and is described by its own words, so a garbled or cut-off
    item text never reaches the learner. None when no edit is explained.
    """
    kept = [e for e in edits if e.category != OTHER]
    if not kept:
        return None
    return apply_edits(source, kept), explain(kept), kept


def gloss_from_words(source: str, edits: Sequence[Edit], partial: bool = False) -> tuple[str, str, list[Edit]] | None:
    """The correction with a gloss written from the edits themselves (`edit_labels.name_edit`),
    each item in the edit's own words. An edit that cannot be named makes it None, or with
    ``partial`` is left out (the learner's words stay there); None when no edit is named."""
    named = []
    for edit in edits:
        before = [t.text for t in tokenize(source[: edit.start]) if t.is_word][-1:]
        category = name_edit(edit.original, edit.replacement, before[0] if before else "")
        if category is None and not partial:
            return None
        if category is not None:
            named.append(replace(edit, category=category))
    if not named:
        return None
    return apply_edits(source, named), explain(named), named
