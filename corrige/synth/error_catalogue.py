"""The learner-error catalogue and exact error injection.

Each category (``categories.py`` has ids, Spanish labels and CEFR levels) has a rule
(``error_rules.py``) that turns a clean structured sentence into the learner's version. This
module applies one or several rules to the same sentence, renders both versions and produces
the exact edits and the gloss, so that:

* the correction is always the clean sentence the error came from;
* each gloss item is ``label: original → replacement`` with the words as they appear, an
  empty side widened with the next word (or the previous one at the end);
* several errors in one sentence never touch each other (at least one unchanged word between
  them), so each stays a separate edit and a separate gloss item.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from corrige.synth.error_rules import RULES, Change, Rule
from corrige.synth.grammar import PUNCT_TAG, Sentence, render, render_text
from corrige.tutor.answer_text import GlossItem, render_gloss
from corrige.tutor.categories import BY_ID, SYNTHETIC_CATEGORY_IDS, Category
from corrige.tutor.edits import Edit


@dataclass(frozen=True)
class ErrorCategory:
    """A category with the rule that produces it."""

    id: str
    label: str
    level: str
    description: str
    rule: Rule

    def propose(self, sentence: Sentence, rng: random.Random) -> Change | None:
        """Where and how this error would be made in ``sentence`` (None if not applicable)."""
        return self.rule(sentence, rng)

    def apply(self, sentence: Sentence, rng: random.Random) -> tuple[str, list[Edit]] | None:
        """The erroneous sentence and its exact edits, or None if not applicable."""
        injected = inject(sentence, [self.id], rng)
        return (injected.source, list(injected.edits)) if injected else None


def _build(category: Category) -> ErrorCategory:
    return ErrorCategory(category.id, category.label, category.level, category.description, RULES[category.id])


# Only the categories the template grammar can make; the rest come from real sentences
# (corrige.corpus).
CATALOGUE: dict[str, ErrorCategory] = {cid: _build(BY_ID[cid]) for cid in SYNTHETIC_CATEGORY_IDS}


@dataclass(frozen=True)
class Injected:
    """A clean sentence with errors injected."""

    source: str
    corrected: str
    gloss: str
    edits: tuple[Edit, ...]

    @property
    def categories(self) -> list[str]:
        return [e.category for e in self.edits]


def applicable(sentence: Sentence, rng: random.Random) -> list[str]:
    """Category ids whose rule finds a context in ``sentence``."""
    return [cid for cid, cat in CATALOGUE.items() if cat.propose(sentence, rng) is not None]


def _widen(change: Change, toks: Sequence) -> Change:
    """Give an empty side a neighbouring word (next, else previous) so neither side is empty."""
    if change.words and change.end > change.start:
        return change
    i, j = change.start, change.end
    if j < len(toks) and toks[j].tag != PUNCT_TAG:
        return Change(i, j + 1, (*change.words, toks[j].text))
    return Change(i - 1, j, (toks[i - 1].text, *change.words))


Plan = list[tuple[Change, str]]


def plan(sentence: Sentence, category_ids: Sequence[str], rng: random.Random) -> Plan | None:
    """Where each error goes, or None if one does not apply or two would touch."""
    changes: Plan = []
    for cid in category_ids:
        change = CATALOGUE[cid].propose(sentence, rng)
        if change is None:
            return None
        changes.append((_widen(change, sentence.toks), cid))
    changes.sort(key=lambda c: c[0].start)
    return changes if compatible(changes) else None


def compatible(changes: Plan) -> bool:
    """At least one unchanged token between consecutive changes (sorted by start), so that
    they stay separate edits instead of merging into one."""
    ordered = sorted((c for c, _ in changes), key=lambda c: (c.start, c.end))
    return all(b.start > a.end for a, b in zip(ordered, ordered[1:], strict=False))


def inject(sentence: Sentence, category_ids: Sequence[str], rng: random.Random) -> Injected | None:
    """Inject one error of each category; None if one does not apply or they collide."""
    changes = plan(sentence, category_ids, rng)
    return realise(sentence, changes) if changes else None


def realise(sentence: Sentence, changes: Plan) -> Injected | None:
    """Render a plan: the erroneous sentence, the correction, exact edits and gloss."""
    toks = sentence.toks
    changes = sorted(changes, key=lambda c: c[0].start)

    # Walk the clean tokens, replacing changed spans; remember which output words each
    # change produced so their character spans can be read after rendering.
    words: list[str] = []
    punct: list[bool] = []
    produced: list[tuple[int, int]] = []
    k = 0
    for change, _ in changes:
        for t in toks[k : change.start]:
            words.append(t.text)
            punct.append(t.tag == PUNCT_TAG)
        first = len(words)
        words.extend(change.words)
        punct.extend([False] * len(change.words))
        produced.append((first, len(words)))
        k = change.end
    for t in toks[k:]:
        words.append(t.text)
        punct.append(t.tag == PUNCT_TAG)

    source, spans = render(words, punct)
    corrected = render_text([t.text for t in toks])
    if source == corrected:
        return None
    edits = []
    items = []
    for (change, cid), (first, last) in zip(changes, produced, strict=True):
        start, end = spans[first][0], spans[last - 1][1]
        original = source[start:end]
        # Changes never contain punctuation, so the clean side is its words joined by
        # spaces (capitalised when it opens the sentence).
        replacement = " ".join(t.text for t in toks[change.start : change.end])
        if change.start == 0:
            replacement = replacement[0].upper() + replacement[1:]
        if original == replacement:
            return None
        edits.append(Edit(start, end, original, replacement, cid))
        items.append(GlossItem(CATALOGUE[cid].label, original, replacement))
    return Injected(source, corrected, render_gloss(items), tuple(edits))
